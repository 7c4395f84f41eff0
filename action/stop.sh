#!/usr/bin/env bash
# The stop action: ends the fakes the action started (SIGTERM, then SIGKILL after 10 s); with judge, the verdicts
# go to the job's summary and the step fails on a violation.
set -uo pipefail
state="${ORBTEST_STATE:-}"
if [ -z "$state" ] || [ ! -f "$state/pid" ]; then
  echo "::error title=orbtest::no fakes to stop: start them first with the orbtest action and start: true"
  exit 2
fi
dir="${ORBTEST_REPORT_DIR:-orbtest-report}"
artifact="${ORBTEST_ARTIFACT:-}"
[ -n "$artifact" ] || artifact="orbtest-judge"
pid=$(cat "$state/pid")
kill -TERM "$pid" 2>/dev/null || echo "orbtest up had already stopped"
for _ in $(seq 1 100); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
status=0
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid" 2>/dev/null || true
  echo "::warning title=orbtest::orbtest up did not stop within 10 s of SIGTERM and was killed"
  status=1
fi
mkdir -p "$dir"
cp "$state/up.log" "$dir/orbtest-up.log" 2>/dev/null || true
{
  echo "report-dir=$dir"
  echo "artifact=$artifact"
  echo "log=$state/up.log"
  echo "upload=${ORBTEST_UPLOAD:-true}"
} >> "$GITHUB_OUTPUT"
if [ "${ORBTEST_JUDGE:-false}" = "true" ]; then
  if [ -f "$dir/judge.json" ]; then
    node "$ORBTEST_CLI" summary "$dir/judge.json" --github || status=$?
    [ "$status" -eq 0 ] || echo "::error title=orbtest::the traffic broke a required adapter rule: see the job summary and $dir/judge.json"
  else
    echo "::error title=orbtest::orbtest up wrote no verdicts; its log:"
    cat "$state/up.log"
    status=1
  fi
fi
echo "broken=$([ "$status" -eq 0 ] && echo false || echo true)" >> "$GITHUB_OUTPUT"
exit "$status"
