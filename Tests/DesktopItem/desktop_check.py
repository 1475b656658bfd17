#!/usr/bin/env python3
"""The desktop item against a real status area and a real notification daemon: Debian's xfce4-panel (its systray
plugin is the StatusNotifierWatcher and host) and xfce4-notifyd, on a private session bus under Xvfb.

The BlueZ stand-in plays a power meter and a heart-rate strap; `cyclelog record --wait` records from it; two
`cyclelog-desktop` follow it, one with the default types (no heart rate) and one granted `control,hr`. The check
starts the desktop items before the panel (each must say once that there is no status area and register when one
starts), starts a ride from the item's menu (dbusmenu `Event` "clicked", as the panel sends it), presses Lap and
End there, restarts the panel and the recorder, and reads what the items publish and what reached the notification
daemon (`dbus-monitor`). Screenshots go to ARTEFACTS.

usage: desktop_check.py REPO ARTEFACTS [BIN]     (BIN: where the programs are, .build/debug by default)
Prints one line per check ("ok" / "FAILED") and the CPU the item used while the ride streamed (over
DESKTOP_CPU_SECONDS, 10 by default; the benchmark takes longer), then a line "report {JSON}"; exits 1 if any check
failed.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO, ARTEFACTS = sys.argv[1], sys.argv[2]
BIN = sys.argv[3] if len(sys.argv) > 3 else os.path.join(REPO, ".build/debug")
CYCLELOG = os.path.join(BIN, "cyclelog")
DESKTOP = os.path.join(BIN, "cyclelog-desktop")
JOURNAL = os.path.join(REPO, "Fixtures/rides/sweatpy_2020-06-01-16-52-40.journal")
WATCHER = "org.kde.StatusNotifierWatcher"
failures = []
processes = []


def check(what, condition, detail=""):
    print(("ok     " if condition else "FAILED ") + what + ("" if condition or not detail else f": {detail}"),
          flush=True)
    if not condition:
        failures.append(what)


def start(arguments, log, **extra):
    process = subprocess.Popen(arguments, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=dict(ENV, **extra),
                               start_new_session=True)
    processes.append(process)
    return process


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_for(what, condition, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            value = condition()
            if value:
                return value
        except (subprocess.CalledProcessError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    check(what, False, f"not within {seconds} s")
    # What follows depends on it: stop here, with the logs.
    raise SystemExit(1)


def busctl(verb, *arguments):
    # `--` before the arguments: a -1 among them is not an option.
    out = subprocess.run(["busctl", f"--address={BUS}", "--json=short", verb, "--"] + list(arguments), capture_output=True,
                         text=True, timeout=10, check=True).stdout
    return json.loads(out) if out.strip() else None


def prop(name, path, interface, member):
    return busctl("get-property", name, path, interface, member)["data"]


def owner(name):
    try:
        return busctl("call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "GetNameOwner", "s", name)["data"][0]
    except subprocess.CalledProcessError:
        return None


def item_name(pid):
    return f"org.kde.StatusNotifierItem-{pid}-1"


def registered():
    """The bus names of the items the status area shows (it keeps them as NAME/PATH)."""
    items = prop(WATCHER, "/StatusNotifierWatcher", WATCHER, "RegisteredStatusNotifierItems")
    return {item.split("/", 1)[0] for item in items}


def title(pid):
    return prop(item_name(pid), "/StatusNotifierItem", "org.kde.StatusNotifierItem", "Title")


def tooltip(pid):
    value = prop(item_name(pid), "/StatusNotifierItem", "org.kde.StatusNotifierItem", "ToolTip")
    return value[2] + "\n" + value[3]


def menu(pid):
    """The menu's items as {label: (id, enabled)}, submenus flattened."""
    layout = busctl("call", item_name(pid), "/MenuBar", "com.canonical.dbusmenu", "GetLayout", "iias", "0", "-1",
                    "0")["data"][1]
    items = {}

    def walk(node):
        for child in node[2]:
            item = child["data"]
            items[item[1]["label"]["data"]] = (item[0], item[1]["enabled"]["data"])
            walk(item)
    walk(layout)
    return items


def click(pid, label):
    item_id = menu(pid)[label][0]
    busctl("call", item_name(pid), "/MenuBar", "com.canonical.dbusmenu", "Event", "isvu", str(item_id), "clicked",
           "s", "", "0")


def recorder_state():
    return prop("org.cyclelog.Recorder", "/org/cyclelog/Recorder", "org.cyclelog.Recorder1", "State")


def notifications():
    """What reached the daemon: (replaces_id, summary, body, actions) of each Notify call, in order."""
    text = open(os.path.join(FOLDER, "monitor.log")).read()
    calls = []
    for block in text.split("method call")[1:]:
        if "member=Notify" not in block:
            continue
        strings = re.findall(r'^\s*string "(.*)"$', block, re.M)
        replaces = re.search(r"^\s*uint32 (\d+)$", block, re.M)
        # app_name, app_icon, summary, body, then the actions (key, label pairs) and the hints' strings.
        calls.append((int(replaces.group(1)), strings[2], strings[3], strings[4:]))
    return calls


def closed_count():
    """How many notifications the daemon closed (expired, or dismissed)."""
    return open(os.path.join(FOLDER, "monitor.log")).read().count("member=NotificationClosed")


def sent_heart_rates():
    values = set()
    for line in open(os.path.join(FOLDER, "sent.log")):
        words = line.split()
        if len(words) >= 4 and words[2] == "2a37":
            data = bytes.fromhex(words[3])
            values.add(data[1] if data[0] & 1 == 0 else data[1] | data[2] << 8)
    return values


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def screenshot(name):
    os.makedirs(ARTEFACTS, exist_ok=True)
    path = os.path.join(ARTEFACTS, name)
    subprocess.run(["import", "-window", "root", path], env=ENV, check=False, timeout=20)
    return path


FOLDER = tempfile.mkdtemp(prefix="cyclelog-desktop-")
BUS = f"unix:path={FOLDER}/bus"
DISPLAY = ":%d" % (90 + os.getpid() % 100)
ENV = dict(os.environ, DISPLAY=DISPLAY, DBUS_SESSION_BUS_ADDRESS=BUS, XDG_CONFIG_HOME=f"{FOLDER}/config",
           XDG_CACHE_HOME=f"{FOLDER}/cache", XDG_DATA_HOME=f"{FOLDER}/data", XDG_RUNTIME_DIR=f"{FOLDER}/run",
           HOME=FOLDER, NO_AT_BRIDGE="1", GTK_A11Y="none")
ENV.pop("SESSION_MANAGER", None)
os.makedirs(f"{FOLDER}/run", mode=0o700)
panel_channel = f"{FOLDER}/config/xfce4/xfconf/xfce-perchannel-xml"
os.makedirs(panel_channel)
# One panel along the top with the status area (the systray plugin) alone in it.
open(f"{panel_channel}/xfce4-panel.xml", "w").write("""<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="32"/>
      <property name="plugin-ids" type="array"><value type="int" value="1"/></property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="systray"/>
  </property>
</channel>
""")
# The bus starts xfconfd (the panel's settings) from Debian's activation files, as a desktop session's would.
open(f"{FOLDER}/bus.conf", "w").write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{BUS}</listen>
  <auth>EXTERNAL</auth>
  <standard_session_servicedirs/>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
</busconfig>
""")
scenario = {"sentLog": f"{FOLDER}/sent.log", "sensors": [
    {"address": "C0:11:22:33:44:01", "name": "Stages Power L", "service": "1818", "measurement": "2a63",
     "journal": JOURNAL, "rateHz": 4, "battery": 80, "reads": {"2a65": "08000000", "2a5d": "05"}},
    {"address": "C0:11:22:33:44:03", "name": "Polar H10", "service": "180d", "measurement": "2a37",
     "journal": JOURNAL, "rateHz": 1, "battery": 95}]}
json.dump(scenario, open(f"{FOLDER}/scenario.json", "w"))

try:
    start(["Xvfb", DISPLAY, "-screen", "0", "1024x300x24", "-nolisten", "tcp"], f"{FOLDER}/xvfb.log")
    start(["dbus-daemon", f"--config-file={FOLDER}/bus.conf", "--nofork", "--nopidfile"], f"{FOLDER}/bus.log")
    wait_for("the private bus", lambda: os.path.exists(f"{FOLDER}/bus") and owner("org.freedesktop.DBus"))
    wait_for("the X server", lambda: subprocess.run(["xdpyinfo"], env=ENV, capture_output=True).returncode == 0)
    start(["dbus-monitor", "--address", BUS, "type='method_call',interface='org.freedesktop.Notifications'",
           "type='signal',interface='org.freedesktop.Notifications',member='NotificationClosed'"],
          f"{FOLDER}/monitor.log")
    # Debian installs the daemon under its multiarch library folder.
    start(glob.glob("/usr/lib/*/xfce4/notifyd/xfce4-notifyd")[:1], f"{FOLDER}/notifyd.log")
    wait_for("xfce4-notifyd on the bus", lambda: owner("org.freedesktop.Notifications"))
    start(["python3", os.path.join(REPO, "Tests/BlueZStandIn/bluez_standin.py"), "--address", BUS, "--scenario",
           f"{FOLDER}/scenario.json"], f"{FOLDER}/standin.log")
    wait_for("the BlueZ stand-in", lambda: owner("org.bluez"))
    database = f"{FOLDER}/rides.sqlite"

    # The items first: no status area yet.
    plain = start([DESKTOP, "--control-bus", BUS, "--db", database], f"{FOLDER}/desktop-plain.log")
    with_hr = start([DESKTOP, "--control-bus", BUS, "--db", database, "--types", "control,hr"],
                    f"{FOLDER}/desktop-hr.log")
    wait_for("both items on the bus", lambda: owner(item_name(plain.pid)) and owner(item_name(with_hr.pid)))
    check("with no recorder the item says so", title(plain.pid) == "cyclelog: no recorder running", title(plain.pid))
    wait_for("the item says there is no status area", lambda: "no status area" in open(
        f"{FOLDER}/desktop-plain.log").read())

    panel = start(["xfce4-panel", "--disable-wm-check"], f"{FOLDER}/panel.log")
    wait_for("the panel's status area (StatusNotifierWatcher)", lambda: owner(WATCHER), seconds=30)
    wait_for("both items registered with the status area once it started",
             lambda: {item_name(plain.pid), item_name(with_hr.pid)} <= registered())
    log = open(f"{FOLDER}/desktop-plain.log").read()
    check("\"no status area\" said once", log.count("no status area") == 1, log)

    record = start([CYCLELOG, "record", "--wait", "--plain", "--bus", BUS, "--control-bus", BUS, "--db", database,
                    "--sensor", "Stages Power L", "--sensor", "Polar H10"], f"{FOLDER}/record.log")
    wait_for("the item following the recorder", lambda: title(plain.pid) == "cyclelog: waiting for a ride")
    items = menu(plain.pid)
    check("the menu offers the suggested workouts and an open ride, enabled",
          all(label in items and items[label][1] for label in ["Start", "Open ride", "Ramp test"]), items)
    check("Pause, Lap and End are there and disabled while waiting",
          all(label in items and not items[label][1] for label in ["Pause", "Lap", "End"]), items)

    wait_for("both sensors streaming", lambda: all(
        sensor[2] == "streaming" for sensor in prop(
            "org.cyclelog.Recorder", "/org/cyclelog/Recorder", "org.cyclelog.Recorder1", "Sensors")))
    click(plain.pid, "Open ride")
    wait_for("the ride started from the item's menu", lambda: recorder_state() == "running")
    wait_for("the live power in the title", lambda: re.fullmatch(r"\d+ W · \d+:\d\d", title(plain.pid)))
    wait_for("the live heart rate in the granted item's title",
             lambda: re.fullmatch(r"\d+ W · \d+ bpm · \d+:\d\d", title(with_hr.pid)))
    # The power shown is the recorder's 3-s power, as it publishes it.
    power_then = prop("org.cyclelog.Recorder", "/org/cyclelog/Recorder", "org.cyclelog.Recorder1", "PowerWatts")
    shown = int(title(plain.pid).split(" W")[0])
    power_after = prop("org.cyclelog.Recorder", "/org/cyclelog/Recorder", "org.cyclelog.Recorder1", "PowerWatts")
    check("the title's power is the recorder's", shown in {round(power_then), round(power_after)},
          f"{shown} vs {power_then}, {power_after}")
    bpm = int(re.search(r"(\d+) bpm", title(with_hr.pid)).group(1))
    check("the granted item's heart rate is one the strap sent", bpm in sent_heart_rates(), bpm)
    plain_text = title(plain.pid) + tooltip(plain.pid)
    check("no heart rate in the item not granted it (title and tooltip)",
          "bpm" not in plain_text and "heart" not in plain_text, plain_text)
    check("the tooltip has power and cadence", "power " in tooltip(plain.pid), tooltip(plain.pid))

    # What the item costs while the ride streams.
    before, started = cpu_seconds(plain.pid), time.time()
    time.sleep(float(os.environ.get("DESKTOP_CPU_SECONDS", "10")))
    share = (cpu_seconds(plain.pid) - before) / (time.time() - started)
    print(f"cpu: the item used {share * 100:.2f} % of a core over {time.time() - started:.0f} s of riding")

    # The panel's own menu for the first item, opened by a click on its icon as a rider would (a picture to look
    # at; the menu's contents are checked above through dbusmenu).
    subprocess.run(["xdotool", "mousemove", "12", "16", "click", "1"], env=ENV, check=False, timeout=10)
    time.sleep(1.5)
    screenshot("desktop-menu.png")
    subprocess.run(["xdotool", "key", "Escape"], env=ENV, check=False, timeout=10)
    click(plain.pid, "Lap")
    wait_for("Lap 2 notified", lambda: any(n[1] == "Lap 2" for n in notifications()))
    time.sleep(1.5)  # the daemon fades its popup in
    shot = screenshot("desktop-lap.png")
    # Pause from the notification: a click on its first button (Pause, Lap, End along its bottom), as a rider's.
    windows = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "xfce4-notifyd"], env=ENV,
                             capture_output=True, text=True, timeout=10).stdout.split()
    check("the notifications are on screen", len(windows) >= 1, windows)
    geometry = subprocess.run(["xdotool", "getwindowgeometry", "--shell", windows[0]], env=ENV, capture_output=True,
                              text=True, timeout=10).stdout
    box = dict(line.split("=") for line in geometry.split())
    x, y = int(box["X"]) + int(box["WIDTH"]) * 19 // 100, int(box["Y"]) + int(box["HEIGHT"]) * 70 // 100
    subprocess.run(["xdotool", "mousemove", str(x), str(y), "click", "1"], env=ENV, check=False, timeout=10)
    wait_for("the ride paused from the notification's button", lambda: recorder_state() == "paused")
    wait_for("Resume offered once paused", lambda: menu(plain.pid).get("Resume", (0, False))[1])
    click(plain.pid, "Resume")
    wait_for("the ride resumed from the menu", lambda: recorder_state() == "running")

    # The panel restarts (a desktop's panel crashes, or is replaced): the items register again.
    stop(panel)
    panel = start(["xfce4-panel", "--disable-wm-check"], f"{FOLDER}/panel2.log")
    wait_for("both items registered again with the restarted status area",
             lambda: {item_name(plain.pid), item_name(with_hr.pid)} <= registered(), seconds=30)

    # End waits 30 s to be undone: the menu offers "Undo end", which takes it back; a second End saves at once.
    click(plain.pid, "End")
    wait_for("Undo end offered", lambda: menu(plain.pid).get("Undo end", (0, False))[1])
    screenshot("desktop-undo.png")
    click(plain.pid, "Undo end")
    wait_for("the ride going on after the End undone", lambda: recorder_state() == "running")
    click(plain.pid, "End")
    wait_for("Undo end offered again", lambda: menu(plain.pid).get("Undo end", (0, False))[1])
    click(plain.pid, "End")
    wait_for("the ride saved notified", lambda: any(
        re.fullmatch(r"Ride \d+ saved", n[1]) for n in notifications()), seconds=30)
    screenshot("desktop-saved.png")
    plain_notes = [n for n in notifications()]
    summaries = [n[1] for n in plain_notes]
    check("started, lap, paused, riding again, ended and saved were notified",
          all(s in summaries for s in ["Ride started", "Lap 2", "Ride paused", "Riding again", "Ride ended"]),
          summaries)
    saved = [n for n in plain_notes if n[1].startswith("Ride ") and n[1].endswith(" saved")]
    check("the saved ride's notification without heart rate says no bpm, the granted one's does",
          any("bpm" not in n[2] for n in saved) and any("bpm" in n[2] for n in saved), saved)
    # Each item replaces its one notification: after its first, a Notify names the id before it, unless the
    # daemon closed that one (it expires after a while).
    replaced = [n[0] for n in plain_notes]
    check("notifications replaced in place, not stacked (a new one only after the last was closed)",
          replaced.count(0) <= 2 + closed_count(), f"{replaced}, {closed_count()} closed")
    check("each ride notification offers the controls that apply",
          any(n[1] == "Ride started" and "pause" in n[3] and "end" in n[3] for n in plain_notes), plain_notes[:3])

    # The recorder goes and comes back: the items follow it.
    stop(record)
    wait_for("no recorder once it ended", lambda: title(plain.pid) == "cyclelog: no recorder running")
    record = start([CYCLELOG, "record", "--wait", "--plain", "--bus", BUS, "--control-bus", BUS, "--db", database,
                    "--sensor", "Stages Power L"], f"{FOLDER}/record2.log")
    wait_for("the items following the restarted recorder",
             lambda: title(plain.pid) == "cyclelog: waiting for a ride" == title(with_hr.pid))
    resident = int(re.search(r"VmHWM:\s+(\d+) kB", open(f"/proc/{plain.pid}/status").read()).group(1)) / 1024
    print("report " + json.dumps({"cpuShare": share, "peakMB": resident, "screenshot": shot}))
finally:
    for process in reversed(processes):
        stop(process)
    if failures:
        print("desktop_check: logs kept in " + FOLDER)
        for name in sorted(os.listdir(FOLDER)):
            if name.endswith(".log") and name != "sent.log":
                print(f"--- {name}\n" + open(os.path.join(FOLDER, name)).read()[-3000:])
    else:
        shutil.rmtree(FOLDER, ignore_errors=True)
    print(f"desktop_check: {len(failures)} checks failed")
sys.exit(1 if failures else 0)
