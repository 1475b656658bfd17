#!/usr/bin/env bash
# `make test-vm`: cyclelog on the real Linux Bluetooth stack. Boots the distribution kernel under qemu (software
# emulation; virtme-ng, with this machine's filesystem), where guest.sh starts a system bus, bluetoothd 5.66 and
# btvirt's virtual controllers and drive.py rides with emulated sensors (btvirt's, then bumble's) and the debug
# cyclelog binary. check.py then judges the output folder (logs, btmon capture, databases, journals) from
# outside the VM.
#   Tests/RealStack/run.sh [OUT]      (default OUT: .build/test-vm; TEST_VM_ONLY=service or main runs that VM only;
#                                      TEST_VM_HUB_RECONNECTS=N: the hub's app comes back N times, default 3;
#                                      TEST_VM_HUB_SOAK=N: then stays while it receives N notifications, default 0)
# Then a second VM boots with systemd as PID 1 (service_guest.sh) and runs cyclelog.service as `make install`
# leaves it; check_service.py judges that run's output folder (OUT-service).
# A run that cannot complete (the VM, bluetoothd or the emulated air failing) is retried once, and says so; a
# failed check is not retried. Never skips: without what it needs it installs it, or fails with the logs.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$ROOT/.build/test-vm}
SERVICE_OUT=$OUT-service
RIDE=sweatpy_4078723797
FROM_SECOND=1800  # 30 minutes into the ride: steady riding, 300-400 W at 95-105 rpm
# Each of the hub's app's returns takes about 10 s under emulation: the sensors play for that much longer.
HUB_RECONNECTS=${TEST_VM_HUB_RECONNECTS:-3}
[[ $HUB_RECONNECTS =~ ^[0-9]+$ ]] || { echo "test-vm: TEST_VM_HUB_RECONNECTS must be a number" >&2; exit 64; }
# The soak plays the ride 3 times its pace, the app receiving about 17 notifications a ride second: the sensors play
# a ride second more for 4 of them, with room to spare (the window ends 100 minutes in; the ride has 2 h 19 min).
HUB_SOAK=${TEST_VM_HUB_SOAK:-0}
[[ $HUB_SOAK =~ ^[0-9]+$ ]] || { echo "test-vm: TEST_VM_HUB_SOAK must be a number" >&2; exit 64; }
RIDE_SECONDS=$((400 + 10 * HUB_RECONNECTS + HUB_SOAK / 4))
(( RIDE_SECONDS <= 6000 )) \
    || { echo "test-vm: the ride is not that long: fewer returns or a shorter soak" >&2; exit 64; }
SECONDS=0

"$ROOT/scripts/setup.sh" --vm || exit 1
# The project's Python environment (scripts/setup.sh), as the Makefile's targets have it: virtme-ng, bumble and
# dbus-fast are there.
export PATH="$ROOT/.venv/bin:$PATH"
# The debug builds the tests run (made by `make test` already; the VM sees the toolchain's libraries on this
# filesystem): what runs here is the code on the real stack, not the optimiser, and a release build would add up to
# ten minutes to every run (`make bench` and `make release` build it). One `swift build` (`make build`) makes the
# four: cyclelog-desktop's only for its manual page, which make-man.py writes from the same folder.
(cd "$ROOT" && swift build) || exit 1
CYCLELOG=$ROOT/.build/debug/cyclelog
MIRROR=$ROOT/.build/debug/cyclelog-mirror
SYNC=$ROOT/.build/debug/cyclelog-sync
KERNEL=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$KERNEL" ] || { echo "test-vm: no distribution kernel in /boot (linux-image-amd64)" >&2; exit 1; }
PYTHON=$(python3 -c 'import sys; print(sys.executable)')
echo "test-vm: setup and build took ${SECONDS} s"

# The rider's phone for the trainer ride (phone.py): Chromium on the host, at the host's speed, started before the
# VM boots. The VM's user-mode network (qemu's slirp) forwards a port of the host's loopback to the mirror in the
# guest (10.0.2.15:8787), and shows the host's loopback to the guest as 10.0.2.2, where phone.py listens for what to
# tap (slirp's `restrict=on` would close that way too; nothing in the guest reaches anywhere else).
boot() {
    rm -rf "$OUT" && mkdir -p "$OUT"
    "$PYTHON" "$HERE/emulated_sensors.py" "$ROOT/Fixtures/rides/$RIDE.journal" --from-second "$FROM_SECOND" \
        --seconds "$RIDE_SECONDS" > "$OUT/streams.json" || return 1
    local phone_port page_port phone
    read -r phone_port page_port < <("$PYTHON" -c 'import socket
s = [socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*(x.getsockname()[1] for x in s))')
    "$PYTHON" "$HERE/phone.py" "$phone_port" "$page_port" "$OUT/phone" > "$OUT/phone.log" 2>&1 &
    phone=$!
    for wait in $(seq 120); do
        grep -q "Chromium ready" "$OUT/phone.log" && break
        kill -0 "$phone" 2>/dev/null || break
        sleep 0.5
    done
    grep -q "Chromium ready" "$OUT/phone.log" || { cat "$OUT/phone.log"; kill "$phone"; return 1; }
    local started=$SECONDS
    # A whole run takes 650–780 s under software emulation on two cores; the limit is for a VM that hangs.
    timeout $((1000 + 10 * HUB_RECONNECTS + HUB_SOAK / 5)) vng -r "$KERNEL" --disable-kvm -m 1G -p 2 --rwdir "$OUT" \
        --qemu-opts="-device virtio-net-pci,netdev=phone -netdev user,id=phone,hostfwd=tcp:127.0.0.1:$page_port-:8787" \
        -- "$HERE/guest.sh" "$OUT" "$CYCLELOG" "$PYTHON" "$MIRROR" "10.0.2.2:$phone_port" \
        "$HUB_RECONNECTS" "$HUB_SOAK" \
        > "$OUT/vm.log" 2>&1
    echo "test-vm: the VM ran for $((SECONDS - started)) s"
    kill "$phone"
    wait "$phone"
    grep -E '^\[(guest|drive)\]' "$OUT/vm.log"
    [ "$(cat "$OUT/guest.status" 2>/dev/null)" = 0 ]
}

# An empty PostgreSQL 15 cluster in DIR, as the service VM's shared store starts (peer authentication, UTF-8): made
# by the postgres user when this runs as root, else by the user itself (the VM hands it to postgres either way), in a
# folder of its own under /tmp, which the postgres user can reach.   cluster DIR
cluster() {
    local made initdb=(/usr/lib/postgresql/15/bin/initdb -A peer -E UTF8 --no-sync)
    made=$(mktemp -d) && chmod 0755 "$made" || return 1
    if [ "$(id -u)" = 0 ]; then
        install -d -o postgres -g postgres -m 0700 "$made/data" \
            && runuser -u postgres -- "${initdb[@]}" -D "$made/data" > "$made/initdb.log" 2>&1
    else
        "${initdb[@]}" -D "$made/data" > "$made/initdb.log" 2>&1
    fi || { cat "$made/initdb.log"; rm -rf "$made"; return 1; }
    cp -a "$made/data" "$1" && rm -rf "$made"
}

# virtme-ng starts systemd from a shell (init=/bin/sh -- -c "... exec /sbin/init"). systemd takes the guest for a
# container (the host's /.dockerenv is in the guest's root, when the host is one) and then reads its options from
# its own arguments rather than the kernel's command line; both kinds read SYSTEMD_PROC_CMDLINE first, which the
# kernel hands to init as an environment variable. It sets systemd.run= for the generators through
# systemd.setenv= (in single quotes, which the kernel leaves alone and systemd takes off): service_guest.sh runs as
# kernel-command-line.service once the system is initialised. The same masks systemd-tmpfiles-setup.service: over
# the host's root it walks the host's /tmp to empty it (the root is read-only: it empties nothing), 40 s and more
# under emulation; service_guest.sh makes what it would have made in the folders the guest has of its own.
MASKED="systemd.mask=systemd-tmpfiles-setup.service systemd.mask=avahi-daemon.service systemd.mask=avahi-daemon.socket"
boot_service() {
    rm -rf "$SERVICE_OUT" && mkdir -p "$SERVICE_OUT"
    "$PYTHON" "$HERE/emulated_sensors.py" "$ROOT/Fixtures/rides/$RIDE.journal" --from-second "$FROM_SECOND" \
        --seconds 400 > "$SERVICE_OUT/streams.json" || return 1
    # The manual pages `make install` puts in place, written here: in the VM, without KVM, running each program's
    # help 60 times takes minutes.
    python3 "$ROOT/scripts/make-man.py" --bin "$(dirname "$MIRROR")" --out "$SERVICE_OUT/man" > /dev/null || return 1
    # So are the binaries without their symbols (as a package ships them; the VM installs them into its memory)
    # and the shared store's PostgreSQL cluster, which initdb takes a minute to make without KVM.
    mkdir -p "$SERVICE_OUT/bin" && strip -o "$SERVICE_OUT/bin/cyclelog" "$CYCLELOG" \
        && strip -o "$SERVICE_OUT/bin/cyclelog-mirror" "$MIRROR" && strip -o "$SERVICE_OUT/bin/cyclelog-sync" "$SYNC" \
        || return 1
    cluster "$SERVICE_OUT/postgres-cluster" || return 1
    printf 'BIN=%q\nPYTHON=%q\nMAN_PAGES=%q\nCLUSTER=%q\n' "$SERVICE_OUT/bin" "$PYTHON" "$SERVICE_OUT/man" \
        "$SERVICE_OUT/postgres-cluster" > "$SERVICE_OUT/settings"
    local started=$SECONDS
    timeout 900 vng -r "$KERNEL" --disable-kvm -m 1G -p 2 --systemd --rwdir "$SERVICE_OUT" \
        -a "SYSTEMD_PROC_CMDLINE=\"systemd.setenv=SYSTEMD_PROC_CMDLINE='systemd.run=$HERE/service_guest.sh $MASKED'\"" \
        > "$SERVICE_OUT/vm.log" 2>&1
    echo "test-vm: the systemd VM ran for $((SECONDS - started)) s"
    grep -aE '^\[(service|drive)\]' "$SERVICE_OUT/guest.log"
    [ "$(cat "$SERVICE_OUT/guest.status" 2>/dev/null)" = 0 ]
}

# Boots with BOOT; a run that cannot complete is retried once, with its logs shown.   twice BOOT DIR
twice() {
    local boot=$1 dir=$2
    "$boot" && return 0
    echo "test-vm: the run did not complete; its logs:"
    for log in vm.log guest.log record.log; do
        echo "---- $log (last 40 lines)"
        tail -40 "$dir/$log" 2>/dev/null
    done
    echo "test-vm: retrying once (the first attempt's output is kept in $dir.first-attempt)"
    rm -rf "$dir.first-attempt" && mv "$dir" "$dir.first-attempt"
    if "$boot"; then
        echo "test-vm: the retry completed"
        return 0
    fi
    echo "---- vm.log (last 60 lines)"; tail -60 "$dir/vm.log" 2>/dev/null
    echo "---- guest.log (last 40 lines)"; tail -40 "$dir/guest.log" 2>/dev/null
    echo "---- record.log (last 20 lines)"; tail -20 "$dir/record.log" 2>/dev/null
    echo "---- bluetoothd.log (last 40 lines)"; tail -40 "$dir/bluetoothd.log" 2>/dev/null
    echo "test-vm: FAILED: the run did not complete twice (output in $dir)"
    return 1
}

status=0
if [ "${TEST_VM_ONLY:-}" != service ]; then
    twice boot "$OUT" || exit 1
    python3 "$HERE/check.py" --out "$OUT" --cyclelog "$CYCLELOG" --ride "$RIDE" || status=1
fi
if [ "${TEST_VM_ONLY:-}" != main ]; then
    twice boot_service "$SERVICE_OUT" || exit 1
    python3 "$HERE/check_service.py" --out "$SERVICE_OUT" --cyclelog "$CYCLELOG" || status=1
fi
echo "test-vm: $([ $status = 0 ] && echo PASSED || echo FAILED) in ${SECONDS} s (output in $OUT, $SERVICE_OUT)"
exit $status
