#!/bin/bash
# Inside the VM (virtme-ng: the host's filesystem read-only, OUT writable): the real Linux Bluetooth stack.
#   guest.sh OUT CYCLELOG PYTHON MIRROR PHONE HUB_RECONNECTS HUB_SOAK
#   (PHONE: HOST:PORT of the rider's phone, run.sh's phone.py; HUB_RECONNECTS: how often the hub's app comes back;
#   HUB_SOAK: the notifications it receives on one more, long visit, 0 for none)
# Kernel Bluetooth + hci_vhci, a system bus, btmon writing the capture, btvirt's two LE controllers on one
# emulated air (hci0 for cyclelog, hci1 for an emulated sensor), bluetoothd, then drive.py (which adds a third
# controller, bumble's, behind /dev/vhci).
set -u
OUT=$1 CYCLELOG=$2 PYTHON=$3 MIRROR=$4 PHONE=$5 HUB_RECONNECTS=$6 HUB_SOAK=${7:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
exec > >(tee "$OUT/guest.log") 2>&1
echo 1 > "$OUT/guest.status"
step() { echo "[guest] $(cut -d' ' -f1 /proc/uptime) s  $*"; }
fail() { step "FAILED: $*"; exit 1; }

step "kernel $(uname -r)"
mkdir -p /run/dbus
dbus-daemon --system --fork --nopidfile || fail "no system bus"
DBUS_SESSION_BUS_ADDRESS=$(dbus-daemon --session --fork --print-address=1) || fail "no session bus"
export DBUS_SESSION_BUS_ADDRESS

# The user-mode network's one interface, at the address it gives a guest (no DHCP needed): the phone's way in.
nic=$(ls /sys/class/net | grep -v '^lo$' | head -1)
ip link set lo up && ip addr add 10.0.2.15/24 dev "$nic" && ip link set "$nic" up || fail "no network for the phone"
# mDNS on that network, for the hub over DirCon: the multicast group's route (a box has it through its default
# route; the guest has none), avahi-daemon on the system bus, as root (the guest has no avahi user to drop to).
ip route add 224.0.0.0/4 dev "$nic" || fail "no multicast route"
mkdir -p /run/avahi-daemon
avahi-daemon --no-drop-root --no-chroot --daemonize || fail "avahi-daemon did not start"

. "$HERE/controllers.sh"
start_controllers "$OUT" || fail "no virtual controllers"
btmon -w "$OUT/capture.btsnoop" > /dev/null 2>&1 &
step "two virtual controllers"

# One ATT bearer, as most sensors have: the notifications stay on the fixed ATT channel. (With EATT, BlueZ's
# default of three channels, they move to credit-based L2CAP channels; the service VM rides on those.) A device
# seen in a scan is kept 10 minutes rather than BlueZ's 30 s: without KVM, the bumble ride's sensors take longer
# than that to connect and stream between the bystander's discovery and its connection.
printf '[General]\nTemporaryTimeout = 600\n[GATT]\nChannels = 1\n' > "$OUT/main.conf"
/usr/libexec/bluetooth/bluetoothd -n -d -f "$OUT/main.conf" > "$OUT/bluetoothd.log" 2>&1 &
wait_for_adapters || fail "bluetoothd did not show the adapters"
step "bluetoothd $(/usr/libexec/bluetooth/bluetoothd --version) on the bus"

"$PYTHON" "$HERE/drive.py" --cyclelog "$CYCLELOG" --mirror "$MIRROR" --streams "$OUT/streams.json" --out "$OUT" \
    --phone "$PHONE" --hub-reconnects "$HUB_RECONNECTS" --hub-soak "$HUB_SOAK" || fail "the ride did not complete"
sleep 1
pkill -INT btmon
sleep 1
step "done"
echo 0 > "$OUT/guest.status"
