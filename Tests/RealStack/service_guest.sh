#!/bin/bash
# Inside the second VM: systemd is PID 1 and runs this as kernel-command-line.service (systemd.run=), after
# sysinit.target. It sets up the machine the way a rider's box is set up, then drive.py --service rides against
# cyclelog.service:
# - /etc, /var, /usr/local and /tmp become writable in memory (overlays on tmpfs; the host's files, which are the
#   guest's root, stay as they are), and OUT (virtme's shared folder) is mounted;
# - btvirt's two controllers; the system bus and bluetoothd as systemd starts them on a Debian box
#   (dbus.service, bluetooth.service with its own hardening);
# - `scripts/install-service.sh install` (what `make install` runs): binary, unit, sysusers, udev, D-Bus policy.
# - PostgreSQL 15 as the shared store, and cyclelog-sync.path enabled: each saved ride is pushed as systemd starts
#   cyclelog-sync.service on the recorder's trigger file.
# OUT/settings (written by run.sh) names the folder of the stripped binaries (cyclelog, cyclelog-mirror,
# cyclelog-sync), the Python with the test's packages, the manual pages and the PostgreSQL cluster made for the store.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
step() { echo "[service] $(cut -d' ' -f1 /proc/uptime) s  $*"; }
finish() {
    # PID 1 thinks it is in a container (the host's /.dockerenv is in the guest's root), so its own poweroff
    # would end in "Attempted to kill init": write everything out and power the VM off directly.
    sync
    echo o > /proc/sysrq-trigger
    sleep 60
}
fail() { step "FAILED: $*"; finish; }

OUT=/$(sed -n 's/.* virtme_initmount0=\([^ ]*\).*/\1/p' /proc/cmdline)
mount -t 9p -o trans=virtio,version=9p2000.L virtme.initmount0 "$OUT" || fail "cannot mount the output folder"
# btmgmt stops at the end of its input, before the kernel's answer arrives: its input is the console, as in
# the other VM (systemd gives a service /dev/null).
exec > >(tee "$OUT/guest.log") 2>&1 < /dev/console
echo 1 > "$OUT/guest.status"
. "$OUT/settings"
step "kernel $(uname -r), PID 1 is $(cat /proc/1/comm) $(systemctl --version | head -1 | cut -d' ' -f2)"

# Their upper layers on a tmpfs of their own: in /run's (a tenth of the memory) the binaries would leave systemd
# too little room there to reload its units.
mkdir -p /run/writable && mount -t tmpfs -o size=60% tmpfs /run/writable || fail "no tmpfs for the overlays"
for dir in /etc /var /usr/local; do
    layer=/run/writable$dir
    mkdir -p "$layer/upper" "$layer/work"
    mount -t overlay overlay -o "lowerdir=$dir,upperdir=$layer/upper,workdir=$layer/work" "$dir" \
        || fail "no writable $dir"
done
mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /var/tmp || fail "no /tmp"
# What the masked systemd-tmpfiles-setup.service makes at boot (run.sh says why it is masked), in /run and /var.
systemd-tmpfiles --create --boot --prefix=/run --prefix=/var > "$OUT/tmpfiles.log" 2>&1 \
    || { cat "$OUT/tmpfiles.log"; fail "systemd-tmpfiles could not make /run and /var"; }
systemctl daemon-reload
step "writable /etc, /var, /usr/local, /tmp"

. "$HERE/controllers.sh"
start_controllers "$OUT" || fail "no virtual controllers"
step "two virtual controllers"

# As in guest.sh: one ATT bearer, which btvirt handles best.
printf '[GATT]\nChannels = 1\n' > /etc/bluetooth/main.conf
mkdir -p /var/lib/bluetooth
systemctl start dbus.service bluetooth.service || fail "the system bus or bluetoothd did not start"
wait_for_adapters || fail "bluetoothd did not show the adapters"
step "dbus.service and bluetooth.service running"

# /usr/local lives in this VM's memory: the binaries go in without their symbols (as a package ships them; run.sh
# stripped them), the debug builds would not fit with them.
# A box by the trainer has no desktop: installed without the desktop item (DESKTOP_BINARY empty).
(cd "$ROOT" && BINARY=$BIN/cyclelog MIRROR_BINARY=$BIN/cyclelog-mirror SYNC_BINARY=$BIN/cyclelog-sync DESKTOP_BINARY= \
    MAN_PAGES=$MAN_PAGES scripts/install-service.sh install) > "$OUT/install.log" 2>&1 \
    || { cat "$OUT/install.log"; fail "make install's script failed"; }
rm -rf "$BIN"
step "installed: $(tail -n +1 "$OUT/install.log" | head -1)"

# The shared store as a club or a household runs it: Debian's PostgreSQL 15 on its usual socket folder, the
# recorder's user as a role with peer authentication (no password file: the unit's credential stays empty), the
# schema made by `cyclelog-sync init`; then the sync guide's `systemctl enable --now cyclelog-sync.path`, so that
# each ride the service saves is pushed by cyclelog-sync.service as systemd starts it.
PGBIN=/usr/lib/postgresql/15/bin
STORE=/var/lib/cyclelog-shared-store
# Its cluster as initdb made it (run.sh made it outside the VM).
cp -a "$CLUSTER" "$STORE" && chown -R postgres:postgres "$STORE" && chmod 0700 "$STORE" \
    && install -d -o postgres -g postgres -m 2775 /run/postgresql || fail "no cluster or folders for PostgreSQL"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$STORE" -w -t 300 -l /tmp/postgres.log \
    -o "-k /run/postgresql -c listen_addresses= -c shared_buffers=16MB -c fsync=off" start > /dev/null \
    || { cat /tmp/postgres.log; fail "PostgreSQL did not start"; }
runuser -u postgres -- psql -h /run/postgresql -q -c "CREATE ROLE cyclelog LOGIN" \
    -c "CREATE DATABASE cyclelog OWNER cyclelog" || fail "cannot make the role and database"
install -d -m 0755 /etc/cyclelog
printf 'PGHOST=/run/postgresql\nPGUSER=cyclelog\nPGDATABASE=cyclelog\n' > /etc/cyclelog/sync.env
runuser -u cyclelog -- env PGHOST=/run/postgresql PGUSER=cyclelog PGDATABASE=cyclelog \
    /usr/local/bin/cyclelog-sync init --db /var/lib/cyclelog/cyclelog.sqlite > "$OUT/sync-init.log" 2>&1 \
    || { cat "$OUT/sync-init.log"; fail "cyclelog-sync init failed"; }
systemctl enable --now cyclelog-sync.path || fail "cyclelog-sync.path did not start"
step "PostgreSQL 15 running, schema made, cyclelog-sync.path watching"

"$PYTHON" "$HERE/drive.py" --service --cyclelog /usr/local/bin/cyclelog --streams "$OUT/streams.json" \
    --out "$OUT" || fail "the service run did not complete"
cp /tmp/postgres.log "$OUT/postgres.log"
step "done"
echo 0 > "$OUT/guest.status"
finish
