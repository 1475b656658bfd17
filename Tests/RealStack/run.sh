#!/usr/bin/env bash
# `make test-vm`: cyclelog on the real Linux Bluetooth stack. Boots the distribution kernel under qemu (software
# emulation; virtme-ng, with this machine's filesystem), where guest.sh starts a system bus, bluetoothd 5.66 and
# btvirt's virtual controllers and drive.py rides twice with emulated sensors (btvirt's, then bumble's) and the
# release cyclelog binary. check.py then judges the output folder (logs, btmon capture, databases, journals) from
# outside the VM.
#   Tests/RealStack/run.sh [OUT]      (default OUT: .build/test-vm)
# A run that cannot complete (the VM, bluetoothd or the emulated air failing) is retried once, and says so; a
# failed check is not retried. Never skips: without what it needs it installs it, or fails with the logs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$ROOT/.build/test-vm}
RIDE=sweatpy_4078723797
FROM_SECOND=1800  # 30 minutes into the ride: steady riding, 300-400 W at 95-105 rpm
SECONDS=0

"$ROOT/scripts/setup.sh" --vm || exit 1
(cd "$ROOT" && swift build -c release --static-swift-stdlib --product cyclelog) || exit 1
CYCLELOG=$ROOT/.build/release/cyclelog
KERNEL=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$KERNEL" ] || { echo "test-vm: no distribution kernel in /boot (linux-image-amd64)" >&2; exit 1; }
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
echo "test-vm: setup and build took ${SECONDS} s"

boot() {
    rm -rf "$OUT" && mkdir -p "$OUT"
    "$PYTHON" "$HERE/emulated_sensors.py" "$ROOT/Fixtures/rides/$RIDE.journal" --from-second "$FROM_SECOND" \
        --seconds 400 > "$OUT/streams.json" || return 1
    local started=$SECONDS
    timeout 800 vng -r "$KERNEL" --disable-kvm -m 1G -p 2 --rwdir "$OUT" -- \
        "$HERE/guest.sh" "$OUT" "$CYCLELOG" "$PYTHON" > "$OUT/vm.log" 2>&1
    echo "test-vm: the VM ran for $((SECONDS - started)) s"
    grep -E '^\[(guest|drive)\]' "$OUT/vm.log"
    [ "$(cat "$OUT/guest.status" 2>/dev/null)" = 0 ]
}

if ! boot; then
    echo "test-vm: the run did not complete; its logs:"
    for log in vm.log record.log; do
        echo "---- $log (last 40 lines)"
        tail -40 "$OUT/$log" 2>/dev/null
    done
    echo "test-vm: retrying once (the first attempt's output is kept in $OUT.first-attempt)"
    rm -rf "$OUT.first-attempt" && mv "$OUT" "$OUT.first-attempt"
    if ! boot; then
        echo "---- vm.log (last 60 lines)"; tail -60 "$OUT/vm.log" 2>/dev/null
        echo "---- record.log (last 20 lines)"; tail -20 "$OUT/record.log" 2>/dev/null
        echo "---- bluetoothd.log (last 40 lines)"; tail -40 "$OUT/bluetoothd.log" 2>/dev/null
        echo "test-vm: FAILED: the run did not complete twice (output in $OUT)"
        exit 1
    fi
    echo "test-vm: the retry completed"
fi
python3 "$HERE/check.py" --out "$OUT" --cyclelog "$CYCLELOG" --ride "$RIDE"
status=$?
echo "test-vm: $([ $status = 0 ] && echo PASSED || echo FAILED) in ${SECONDS} s (output in $OUT)"
exit $status
