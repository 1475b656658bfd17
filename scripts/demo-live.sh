#!/usr/bin/env bash
# A DEMONSTRATION of live recording on a machine without Bluetooth hardware (`make demo-live`).
#
# Nothing here touches the rider's own database, devices or buses: a private dbus-daemon stands for the system
# bus, the BlueZ stand-in the tests use (Tests/BlueZStandIn) owns org.bluez on it and plays three sensors from the
# demo ride's capture (Fixtures/rides/sweatpy_4078723797.journal: the notifications a real ride's power meter,
# speed sensor and heart-rate strap would have sent) at the rate each sent them, `cyclelog record` records it with
# its dashboard in this terminal, and `cyclelog-mirror` serves it to a paired screen. Everything lives in one
# temporary folder, removed at the end unless DEMO_KEEP=1.
#
#   DEMO_LISTEN   where the mirror listens (default 127.0.0.1:8787; 0.0.0.0:8787 lets a phone on the network in)
#   DEMO_KEEP=1   keep the folder (its demo.sqlite holds the ride) instead of removing it
#   DEMO_SECONDS  end the ride by itself after this many seconds (for scripts; default: when you press e)
#   DEMO_FROM_MINUTE  where in the 2 h 19 min ride the sensors start (default 20: past the roll-out)
#   DEMO_TRAINER=1  a smart trainer as well (the tests' emulated FTMS trainer), steered in ERG from 180 W: +/- on the
#                 dashboard, `cyclelog target 250 --control-bus unix:path=…/bus`, or the phone's trainer panel
#   DEMO_WORKOUT=ID  ride a structured workout of the library (`cyclelog workouts list`: sweet-spot-2x20 …) at an
#                 FTP of 250 W, its targets driving the trainer with DEMO_TRAINER=1: n, b, x, +/- on the dashboard
set -euo pipefail
cd "$(dirname "$0")/.."

cyclelog=.build/debug/cyclelog
mirror=.build/debug/cyclelog-mirror
journal=$PWD/Fixtures/rides/sweatpy_4078723797.journal
listen=${DEMO_LISTEN:-127.0.0.1:8787}
for program in "$cyclelog" "$mirror"; do
    [ -x "$program" ] || { echo "demo-live: $program is missing: run \`make build\` first" >&2; exit 1; }
done
python3 -c "import dbus_fast" 2>/dev/null || {
    echo "demo-live: the BlueZ stand-in needs dbus-fast (scripts/setup.sh installs it)" >&2; exit 1; }

folder=$(mktemp -d "${TMPDIR:-/tmp}/cyclelog-demo.XXXXXX")
bus="unix:path=$folder/bus"
pids=()
finish() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "${DEMO_KEEP:-0}" = 1 ]; then
        echo "demo-live: kept $folder (the ride is in $folder/demo.sqlite: cyclelog list --db $folder/demo.sqlite)"
    else
        rm -rf "$folder"
    fi
}
trap finish EXIT
trap 'exit 130' INT TERM

# The bus: a session-type daemon on a socket of its own.
dbus-daemon --session --address="$bus" --nofork --nopidfile >"$folder/bus.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -S "$folder/bus" ] && break; sleep 0.05; done

# The sensors: each plays its own notifications from the capture, at the rate it sent them there.
python3 - "$journal" "$folder" "${DEMO_FROM_MINUTE:-20}" "${DEMO_TRAINER:-0}" <<'EOF'
import json, sys
from datetime import datetime
journal, folder, minute = sys.argv[1], sys.argv[2], float(sys.argv[3])
counts, start, end = {}, None, None
for line in open(journal):
    words = line.split()
    if len(words) >= 5 and words[1] == "notify":
        counts[words[3]] = counts.get(words[3], 0) + 1
    if len(words) >= 2 and words[1] in ("start", "end"):
        time = datetime.fromisoformat(words[0].replace("Z", "+00:00"))
        start, end = (time, end) if words[1] == "start" else (start, time)
seconds = (end - start).total_seconds()
sensors = [
    ("C0:11:22:33:44:55", "Demo power meter", "1818", "2a63", {"2a65": "08000000", "2a5d": "05"}),
    ("D4:22:33:44:55:66", "Demo speed sensor", "1816", "2a5b", {"2a5c": "0100"}),
    ("E8:33:44:55:66:77", "Demo heart-rate strap", "180d", "2a37", {}),
]
scenario = {"sensors": [
    {"address": address, "name": name, "service": service, "measurement": uuid, "journal": journal,
     "rateHz": counts[uuid] / seconds, "skipSeconds": 60 * minute, "battery": 80, "reads": reads}
    for address, name, service, uuid, reads in sensors]}
if sys.argv[4] == "1":
    scenario["sensors"].append({"address": "F1:22:33:44:55:66", "name": "Demo smart trainer", "service": "1826",
                                "measurement": "2ad2", "rateHz": 4, "battery": 100,
                                "trainer": {"targets": ["power", "resistance", "sim", "spindown"]}})
json.dump(scenario, open(folder + "/scenario.json", "w"), indent=1)
EOF
python3 Tests/BlueZStandIn/bluez_standin.py --address "$bus" --scenario "$folder/scenario.json" \
    >"$folder/standin.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do
    dbus-send --bus="$bus" --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
        string:org.bluez 2>/dev/null | grep -q "boolean true" && break
    sleep 0.05
done

# The mirror: the demo ride's history and the live ride, to a paired screen.
"$mirror" --control-bus "$bus" --listen "$listen" --state-dir "$folder/state" --db "$folder/demo.sqlite" \
    >"$folder/mirror.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q "serving http" "$folder/mirror.log" 2>/dev/null && break; sleep 0.05; done
grep -q "serving http" "$folder/mirror.log" || { cat "$folder/mirror.log" >&2; exit 1; }

cat <<EOF
==============================================================================
 DEMONSTRATION - no Bluetooth hardware. The sensors are a stand-in for BlueZ,
 playing a real ride's capture in real time on a private D-Bus:
   ${journal#"$PWD/"}
 Nothing goes to your own database; the ride is stored in
   $folder/demo.sqlite
==============================================================================
EOF
# The mirror's advice names its own option; in the demo, DEMO_LISTEN sets it. The demo's screen is the rider's own
# and is given every type, heart rate by name (`pair` alone gives no heart rate).
"$mirror" pair --control-bus "$bus" --name "demo screen" --types control,hr |
    sed 's/start it with `cyclelog-mirror --listen 0.0.0.0:8787`/run the demo as `DEMO_LISTEN=0.0.0.0:8787 make demo-live`/'
echo "The ride history of the demo: the same address, /history (after pairing)."
echo "Another screen, or this one again (a link pairs once, within 120 s), while the demo runs:"
echo "  .build/debug/cyclelog-mirror pair --control-bus '$bus' [--types control,hr]"
echo "Starting the recorder: the dashboard follows. Keys: space pause/resume, l lap, e end and save, u undo, c cancel."

arguments=(record --bus "$bus" --control-bus "$bus" --db "$folder/demo.sqlite")
if [ "${DEMO_TRAINER:-0}" = 1 ]; then
    arguments+=(--control erg --target-watts 180 --name "Demo replay: its power meter does not follow the trainer")
    echo "The power meter replays a recorded ride: it does not follow the trainer's targets, so how closely ERG was"
    echo "held (\"ERG within … W of its target\") is the replay's, not a rider's. The ride's name says so too."
fi
sleep 3
if [ -n "${DEMO_WORKOUT:-}" ]; then
    arguments+=(--workout "$DEMO_WORKOUT" --ftp 250)
fi
if [ -n "${DEMO_SECONDS:-}" ]; then
    ( sleep "$DEMO_SECONDS"; "$cyclelog" end --control-bus "$bus" >/dev/null ) &
    pids+=($!)
fi
"$cyclelog" "${arguments[@]}"
"$cyclelog" list --db "$folder/demo.sqlite"
