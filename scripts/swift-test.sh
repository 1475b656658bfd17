#!/usr/bin/env bash
# Runs the XCTests (already built) and, when any fail, repeats the failing assertions at the end of the output,
# where a CI log's tail shows them.
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${SWIFT:-swift}" test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "== failing tests (repeated from above) =="
    grep -E ": error: |Fatal error|Test Case .* failed" "$log" | sort -u | head -40
fi
exit "$status"
