#!/usr/bin/env bash
# The action's first step: finds or makes the orbtest it runs, and names it in $GITHUB_ENV (ORBTEST_CLI) for the
# steps after it, the stop action's included.
set -euo pipefail
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
  echo "::error title=orbtest::orbtest needs Node 20 or later on the runner; add actions/setup-node before it"
  exit 1
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${INPUT_ORBTEST:-}" ]; then
  # A version or a tarball: installed outside the workspace, once per job for the same input.
  prefix="${RUNNER_TEMP:-/tmp}/orbtest-install"
  cli="$prefix/node_modules/orbtest/dist/cli/orbtest.js"
  if [ ! -f "$cli" ] || [ "$(cat "$prefix/.input" 2>/dev/null)" != "$INPUT_ORBTEST" ]; then
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save "$INPUT_ORBTEST" >&2
    printf '%s' "$INPUT_ORBTEST" > "$prefix/.input"
  fi
elif [ -f "$here/dist/cli/orbtest.js" ]; then
  cli="$here/dist/cli/orbtest.js"
else
  # The action's own checkout holds the sources: install and build them once.
  (cd "$here" && npm ci --no-audit --no-fund >&2 && npm run build >&2)
  cli="$here/dist/cli/orbtest.js"
fi
echo "ORBTEST_CLI=$cli" >> "$GITHUB_ENV"
echo "orbtest $(node "$cli" --version), from $cli"
