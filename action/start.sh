#!/usr/bin/env bash
# Service mode: `orbtest up` in the background, waited for, and its addresses exported to the job's later steps.
set -euo pipefail
state="${RUNNER_TEMP:-/tmp}/orbtest-up"
rm -rf "$state"
mkdir -p "$state"
dir="${INPUT_REPORT_DIR:-orbtest-report}"
eval "flags=(${INPUT_FLAGS:-})"
args=(up --ready-file "$state/ready.json" "${flags[@]}")
if [ "${INPUT_JUDGE:-false}" = "true" ]; then
  mkdir -p "$dir"
  args+=(--judge "$(cd "$dir" && pwd)/judge.json")
fi
nohup node "$ORBTEST_CLI" "${args[@]}" > "$state/up.log" 2>&1 < /dev/null &
pid=$!
echo "$pid" > "$state/pid"
deadline=$(( $(date +%s) + ${INPUT_TIMEOUT:-30} ))
until [ -f "$state/ready.json" ]; do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "::error title=orbtest::orbtest up stopped before it was ready; its log:"
    cat "$state/up.log"
    exit 1
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "::error title=orbtest::orbtest up was not ready within ${INPUT_TIMEOUT:-30} s; its log:"
    cat "$state/up.log"
    kill -TERM "$pid" 2>/dev/null || true
    exit 1
  fi
  sleep 0.1
done
# What the later steps need: where the fakes are, and the demo app's token (test data; masked all the same).
node --input-type=module - "$state/ready.json" >> "$GITHUB_ENV" <<'JS'
import { readFileSync } from 'node:fs'
const ready = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const lines = [`ORBTEST_CONTROL_URL=${ready.control.url}`]
if (ready.orbtile !== undefined) lines.push(`ORBTILE_DISCOVERY=${ready.orbtile.discovery}`)
if (ready.orb !== undefined) {
  lines.push(`ORB_URL=${ready.orb.url}`)
  const state = await (await fetch(`${ready.control.url}/control/orb/state`)).json()
  // Every demo app's token by its id (ORB_TOKEN_APP_DEMO, ORB_TOKEN_APP_LITE, …); ORB_TOKEN is the demo app's.
  for (const app of state.apps) {
    process.stderr.write(`::add-mask::${app.token}\n`)
    lines.push(`ORB_TOKEN_${app.id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}=${app.token}`)
  }
  const app = state.apps.find((a) => a.id === 'app_demo') ?? state.apps[0]
  if (app !== undefined) lines.push(`ORB_TOKEN=${app.token}`, `ORB_APP_ID=${app.id}`)
}
process.stdout.write(`${lines.join('\n')}\n`)
JS
{
  echo "ORBTEST_STATE=$state"
  echo "ORBTEST_REPORT_DIR=$dir"
  echo "ORBTEST_JUDGE=${INPUT_JUDGE:-false}"
  echo "ORBTEST_UPLOAD=${INPUT_UPLOAD:-true}"
  echo "ORBTEST_ARTIFACT=${INPUT_ARTIFACT:-}"
} >> "$GITHUB_ENV"
echo "orbtest up is ready (pid $pid)$([ "${INPUT_JUDGE:-false}" = "true" ] && echo ", judging the adapter rules on its traffic"):"
sed -n '/^orbtest /,/^Ready/p' "$state/up.log" | grep -v ' token '
