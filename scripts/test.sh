#!/usr/bin/env bash
# `make test` once the tests are built: the Swift tests (scripts/swift-test.sh), the Wireshark conformance, the
# service files, the manual pages and the library's documentation, one after the other; beside them, at the lowest
# priority, the fuzzers built and each run for 3 s (Fuzz/run.sh). The Swift tests mostly wait on real time (a ride
# played at its own pace, a server's deadline): they keep about one of two cores busy, and the fuzzers take what
# is left without taking it from them (a process at nice 19 gets the CPU only when nothing else wants it). Every
# part runs whatever the others did; the fuzzers' report comes last, and the status fails if any part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
fuzz_log=.build/fuzz-smoke.log
# In a process group of its own, which an interrupted run stops whole (a script's background jobs ignore Ctrl-C).
setsid nice -n 19 Fuzz/run.sh 3 > "$fuzz_log" 2>&1 &
fuzz=$!
trap 'kill -- -"$fuzz" 2>/dev/null; exit 130' INT TERM

failed=()
part() {
    local name=$1
    shift
    "$@" || failed+=("$name")
}
part "the Swift tests" env SWIFT="$swift" scripts/swift-test.sh
part "the Wireshark conformance" python3 Tests/Conformance/tshark_conformance.py --cyclelog .build/debug/cyclelog
part "the service files" python3 Tests/ServiceFiles/check_service_files.py --cyclelog .build/debug/cyclelog
part "the manual pages" python3 scripts/make-man.py --bin .build/debug --check
part "the documentation" make --no-print-directory docs SWIFT="$swift"
wait "$fuzz" || failed+=("the fuzzers")
cat "$fuzz_log"
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'make test: failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
