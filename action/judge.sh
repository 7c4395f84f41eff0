#!/usr/bin/env bash
# Judge mode: the client suite on the client, its reports in a folder, a summary on the job's page, the outputs set.
# The step fails when a required rule failed (exit 1) or the run could not start (exit 2).
set -uo pipefail
dir="${INPUT_REPORT_DIR:-orbtest-report}"
mkdir -p "$dir"
# An earlier run's reports in the same folder must not stand for this one.
rm -f "$dir/junit.xml" "$dir/report.json" "$dir/report.html" "$dir/report.tap"
case "${INPUT_SUITE:-orbtile}" in
  orbtile) suite=(--client orbtile) ;;
  orb) suite=(--client orb) ;;
  orb-webhook) suite=(--client orb --webhook) ;;
  *)
    echo "::error title=orbtest::suite takes orbtile, orb or orb-webhook, not '${INPUT_SUITE}'"
    exit 2
    ;;
esac
# The inputs are the workflow's own text, read as shell words so that quoting works as in a terminal.
eval "flags=(${INPUT_FLAGS:-})"
eval "client=(${INPUT_CLIENT} ${INPUT_ARGS:-})"
artifact="${INPUT_ARTIFACT:-}"
[ -n "$artifact" ] || artifact="orbtest-${INPUT_SUITE:-orbtile}"
{
  echo "report-dir=$dir"
  echo "artifact=$artifact"
} >> "$GITHUB_OUTPUT"
node "$ORBTEST_CLI" conformance "${suite[@]}" "${flags[@]}" \
  --junit "$dir/junit.xml" --json "$dir/report.json" --html "$dir/report.html" -- "${client[@]}" | tee "$dir/report.tap"
status=${PIPESTATUS[0]}
echo "exit-code=$status" >> "$GITHUB_OUTPUT"
if [ -f "$dir/report.json" ]; then
  node "$ORBTEST_CLI" summary "$dir/report.json" --github || true
else
  printf '## orbtest: the %s suite could not run its client\n\nExit code %s; the log of this step says why.\n' \
    "${INPUT_SUITE:-orbtile}" "$status" >> "$GITHUB_STEP_SUMMARY"
fi
if [ "$status" -eq 1 ]; then
  echo "::error title=orbtest::the client broke a required rule of the ${INPUT_SUITE:-orbtile} suite: see the job summary and the reports in $dir"
elif [ "$status" -ne 0 ]; then
  echo "::error title=orbtest::the ${INPUT_SUITE:-orbtile} suite could not judge the client (exit $status): see this step's log"
fi
exit "$status"
