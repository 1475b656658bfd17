#!/usr/bin/env bash
# Runs the tests (already built) and, when any fail, repeats the failing assertions at the end of the output, where
# a CI log's tail shows them.
#
# Without arguments, the XCTest cases run several at a time (TEST_WORKERS processes, default 4) and, beside them,
# the Swift Testing suites (in their own process): most cases wait on real time (a ride played at its own pace, a
# server's reply deadline), not on the two cores. Each part's output is shown once it is over; the XCTest cases'
# times are kept in xctest-timings.xml beside the test binary (Docs/testing.md). With arguments (a --filter),
# `swift test` runs them as it always does.
set -uo pipefail
swift=${SWIFT:-swift}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

failures() {
    grep -hE ": error: |Fatal error|Test Case .* failed|✘ (Test|Suite)" "$@" | sort -u | head -40
}

if [ "$#" -gt 0 ]; then
    "$swift" test --skip-build "$@" 2>&1 | tee "$logs/all"
    status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
        echo
        echo "== failing tests (repeated from above) =="
        failures "$logs/all"
    fi
    exit "$status"
fi

binary=$("$swift" build --show-bin-path)/cyclelogPackageTests.xctest
started=$SECONDS
"$swift" test --skip-build --disable-swift-testing --parallel --num-workers "${TEST_WORKERS:-4}" \
    --xunit-output "$(dirname "$binary")/xctest-timings.xml" > "$logs/xctest" 2>&1 &
xctest=$!
# Its suites side by side: a test that waits on a program or a server does so on a thread of its own
# (Tests/TestSupport/OffThePool.swift), never on one of the concurrency pool's two threads. The recorder's scenarios
# (LiveRecordingTests) run in a process of their own: they wait in real time for the recorder's tasks to come to
# rest, and a suite's synchronous work (a replay, SQLite) is seconds on one of the two threads of a shared pool.
scenarios='^LiveRecordingTests\.'
"$binary" --testing-library swift-testing --skip "$scenarios" > "$logs/swift-testing" 2>&1 &
testing=$!
"$binary" --testing-library swift-testing --filter "$scenarios" > "$logs/swift-testing-scenarios" 2>&1 &
testing_scenarios=$!
wait "$testing"
testing_status=$?
wait "$testing_scenarios" || testing_status=1
testing_seconds=$((SECONDS - started))
wait "$xctest"
xctest_status=$?
xctest_seconds=$((SECONDS - started))

cat "$logs/xctest" "$logs/swift-testing-scenarios" "$logs/swift-testing"
echo "== XCTest: status $xctest_status after ${xctest_seconds}s; Swift Testing: status $testing_status after" \
    "${testing_seconds}s =="
if [ "$xctest_status" -ne 0 ] || [ "$testing_status" -ne 0 ]; then
    echo
    echo "== failing tests (repeated from above) =="
    failures "$logs/xctest" "$logs/swift-testing-scenarios" "$logs/swift-testing"
    exit 1
fi
