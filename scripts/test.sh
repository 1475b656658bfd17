#!/usr/bin/env bash
# `make test` once the tests are built: the Swift tests (scripts/swift-test.sh), the desktop item's check
# (Tests/DesktopItem/desktop_check.py) and, beside them at the lowest
# priority, the Wireshark conformance, the service files, the manual pages and the library's documentation one
# after the other, and the fuzzers built and each run for 3 s (Fuzz/run.sh). The Swift tests mostly wait on real
# time (a ride played at its own pace, a server's deadline): they keep about one of the two cores busy, and the rest
# take what is left (a process at nice 19 gets the CPU when nothing else wants it). Every part runs whatever the
# others did; their reports come after the tests', and the status fails if any part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
logs=.build/test-logs
rm -rf "$logs"
mkdir -p "$logs"

# Each background part in a process group of its own, which an interrupted run stops whole (a script's background
# jobs ignore Ctrl-C).
setsid nice -n 19 Fuzz/run.sh 3 > "$logs/fuzz" 2>&1 &
fuzz=$!
setsid nice -n 19 bash -c '
    failed=0
    python3 Tests/Conformance/tshark_conformance.py --cyclelog .build/debug/cyclelog || failed=1
    python3 Tests/ServiceFiles/check_service_files.py --cyclelog .build/debug/cyclelog || failed=1
    python3 scripts/make-man.py --bin .build/debug --check || failed=1
    make --no-print-directory docs SWIFT="$0" || failed=1
    exit $failed' "$swift" > "$logs/checks" 2>&1 &
checks=$!
trap 'kill -- -"$fuzz" -"$checks" 2>/dev/null; exit 130' INT TERM

failed=()
SWIFT="$swift" scripts/swift-test.sh || failed+=("the Swift tests")
# The desktop item against a real panel and notification daemon under Xvfb, after the Swift tests (whose rides it
# would otherwise share the cores with while it waits on the panel's start).
python3 Tests/DesktopItem/desktop_check.py "$PWD" .build/artefacts/desktop || failed+=("the desktop item")
wait "$checks" || failed+=("the conformance, service files, manual pages or documentation")
cat "$logs/checks"
wait "$fuzz" || failed+=("the fuzzers")
cat "$logs/fuzz"
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'make test: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
