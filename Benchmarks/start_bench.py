#!/usr/bin/env python3
"""Starting rides benchmark (`make bench`): the release `cyclelog record --wait` against the BlueZ stand-in on a
private dbus-daemon, called over D-Bus with dbus-fast (the stand-in's library) as a launcher or a phone would.

- `Start` reply time over START_BENCH_PAIRS (default 200) Start/Cancel pairs: p50 / p99 (target p99 ≤ 20 ms).
- `Start` → its journal line committed to the database (read through WAL with Python's sqlite3), over 20 starts:
  p50 / max (target ≤ 0.6 s: the recorder writes twice a second).
- D-Bus activation cold (the session bus's activation file from `presets install`) → every sensor streaming, over
  5 activations: p50 / max (target ≤ 5 s on the stand-in).
- A ride with three sensors (power 4 Hz, CSC 2 Hz, heart rate 1 Hz) for START_BENCH_RIDE_SECONDS (default 60) with
  a subscriber to `Live`: the recorder's CPU (target < 1 % of one core) and the signals per second, beside
  qdomyos-zwift's web page, which pushes its values once per second (its TemplateInfoSenderBuilder's
  one-second update timer)."""
import asyncio
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import time

import results
from live_bench import SENSORS, StandIn, verdict
from results import CYCLELOG

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

PAIRS = int(os.environ.get("START_BENCH_PAIRS", "200"))
RIDE_SECONDS = float(os.environ.get("START_BENCH_RIDE_SECONDS", "60"))
NAME, PATH, INTERFACE = "org.cyclelog.Recorder", "/org/cyclelog/Recorder", "org.cyclelog.Recorder1"


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class Recorder:
    """Calls on the recorder's object, from one connection."""

    def __init__(self, bus):
        self.bus = bus

    async def call(self, member, signature="", body=(), interface=INTERFACE):
        reply = await self.bus.call(Message(destination=NAME, path=PATH, interface=interface, member=member,
                                            signature=signature, body=list(body)))
        if reply.message_type == MessageType.ERROR:
            raise RuntimeError("%s: %s %s" % (member, reply.error_name, reply.body))
        return reply.body

    async def get(self, name):
        return (await self.call("Get", "ss", [INTERFACE, name], "org.freedesktop.DBus.Properties"))[0].value

    async def wait_until(self, what, condition, seconds=30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if condition(await self.get_all()):
                    return
            except RuntimeError:
                pass  # not on the bus yet
            await asyncio.sleep(0.02)
        sys.exit("start bench: waited in vain for " + what)

    async def get_all(self):
        values = (await self.call("GetAll", "s", [INTERFACE], "org.freedesktop.DBus.Properties"))[0]
        return {key: value.value for key, value in values.items()}


def streaming(properties, count):
    sensors = properties.get("Sensors", [])
    return len(sensors) == count and all(sensor[2] == "streaming" for sensor in sensors)


async def waiting_recorder(stand_in, database):
    """`record --wait` with the three sensors streaming; the process, a bus connection and its caller."""
    record = stand_in.start([CYCLELOG, "record", "--wait", "--plain", "--db", database], database + ".log")
    bus = await MessageBus(bus_address=stand_in.address).connect()
    recorder = Recorder(bus)
    await recorder.wait_until("three sensors streaming", lambda p: streaming(p, 3))
    return record, bus, recorder


async def starts(stand_in, database):
    record, bus, recorder = await waiting_recorder(stand_in, database)
    replies = []
    for _ in range(PAIRS):
        begin = time.perf_counter()
        await recorder.call("Start", "a{sv}", [{}])
        replies.append(time.perf_counter() - begin)
        await recorder.call("Cancel")
        await recorder.wait_until("waiting again", lambda p: p["State"] == "waiting")
    committed = []
    reader = sqlite3.connect("file:%s?mode=ro" % database, uri=True)
    for _ in range(20):
        begin = time.perf_counter()
        workout = (await recorder.call("Start", "a{sv}", [{"name": Variant("s", "bench")}]))[0]
        while not reader.execute("SELECT count(*) FROM journalChunk WHERE workoutId = ?", (workout,)).fetchone()[0]:
            await asyncio.sleep(0.002)
        committed.append(time.perf_counter() - begin)
        await recorder.call("Cancel")
        await recorder.wait_until("waiting again", lambda p: p["State"] == "waiting")
    record.send_signal(signal.SIGTERM)
    record.wait(20)
    bus.disconnect()
    return replies, committed


async def activations(stand_in, database):
    """Cold starts by the bus: the activation file, the environment a desktop session gives, then a call."""
    # A rider's recorder knows its sensors (`cyclelog sensors add`, or an earlier ride): it connects them at once.
    for sensor in SENSORS:
        subprocess.run([CYCLELOG, "sensors", "add", sensor["address"], "--db", database], check=True,
                       stdout=subprocess.DEVNULL)
    data_home = os.path.join(stand_in.folder, "share")
    subprocess.run([CYCLELOG, "presets", "install", "--built-in", "--data-home", data_home], check=True,
                   stdout=subprocess.DEVNULL)
    bus = await MessageBus(bus_address=stand_in.address).connect()
    environment = {"CYCLELOG_DBUS_ADDRESS": stand_in.address, "CYCLELOG_CONTROL_BUS": stand_in.address,
                   "CYCLELOG_DB": database}
    await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                           interface="org.freedesktop.DBus", member="UpdateActivationEnvironment",
                           signature="a{ss}", body=[environment]))
    recorder = Recorder(bus)
    times = []
    for _ in range(5):
        begin = time.perf_counter()
        await recorder.wait_until("the activated recorder's sensors streaming", lambda p: streaming(p, 3))
        times.append(time.perf_counter() - begin)
        pid = (await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                      interface="org.freedesktop.DBus", member="GetConnectionUnixProcessID",
                                      signature="s", body=[NAME]))).body[0]
        os.kill(pid, signal.SIGTERM)
        while True:
            owner = await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                           interface="org.freedesktop.DBus", member="NameHasOwner", signature="s",
                                           body=[NAME]))
            if not owner.body[0]:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)  # the stand-in sees the sensors' links go
    bus.disconnect()
    return times


async def ride_with_live(stand_in, database):
    record, bus, recorder = await waiting_recorder(stand_in, database)
    received = []
    bus.add_message_handler(lambda message: received.append(message) if message.member == "Live" else None)
    await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                           interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                           body=["type='signal',interface='%s',member='Live'" % INTERFACE]))
    await recorder.call("Start", "a{sv}", [{}])
    usage_start = resource_usage(record.pid)
    await asyncio.sleep(RIDE_SECONDS)
    usage_end = resource_usage(record.pid)
    count = len(received)
    await recorder.call("End")
    await asyncio.sleep(1)
    record.send_signal(signal.SIGTERM)
    record.wait(20)
    bus.disconnect()
    return usage_end - usage_start, count


def resource_usage(pid):
    """CPU seconds (user + system) the process has used so far, from /proc."""
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run():
    with StandIn(SENSORS) as stand_in:
        print("start bench: %d Start/Cancel pairs, then 20 starts to their journal line" % PAIRS, flush=True)
        replies, committed = await starts(stand_in, os.path.join(stand_in.folder, "starts.sqlite"))
    with StandIn(SENSORS, service_directories=True) as stand_in:
        print("start bench: 5 cold activations by the session bus", flush=True)
        activated = await activations(stand_in, os.path.join(stand_in.folder, "activated.sqlite"))
    with StandIn(SENSORS) as stand_in:
        print("start bench: a %.0f s ride with a Live subscriber" % RIDE_SECONDS, flush=True)
        cpu, signals = await ride_with_live(stand_in, os.path.join(stand_in.folder, "live.sqlite"))
    p50, p99 = percentile(replies, 0.5) * 1000, percentile(replies, 0.99) * 1000
    committed_p50, committed_max = statistics.median(committed), max(committed)
    activation_p50, activation_max = statistics.median(activated), max(activated)
    core_percent = 100 * cpu / RIDE_SECONDS
    print("| starting rides | value | target |")
    print("|---|---|---|")
    print("| `Start` reply, p50 / p99 over %d | %.1f / %.1f ms | p99 ≤ 20 ms (%s) |" % (PAIRS, p50, p99, verdict(p99 <= 20)))
    print("| `Start` → journal line committed, p50 / max over 20 | %.3f / %.3f s | ≤ 0.6 s (%s) |"
          % (committed_p50, committed_max, verdict(committed_max <= 0.6)))
    print("| activation cold → 3 sensors streaming, p50 / max over 5 | %.2f / %.2f s | ≤ 5 s (%s) |"
          % (activation_p50, activation_max, verdict(activation_max <= 5)))
    print("| recorder CPU riding with a `Live` subscriber, 3 sensors | %.2f %% of one core | < 1 %% (%s) |"
          % (core_percent, verdict(core_percent < 1)))
    print("| `Live` signals per second (qdomyos-zwift's web page: 1 push/s) | %.1f | |" % (signals / RIDE_SECONDS))
    results.add("Start over D-Bus", "reply p99 (p50 %.1f ms)" % p50, median=round(p99, 1), unit="ms",
                target="p99 ≤ 20 ms", met=p99 <= 20)
    results.add("Start over D-Bus", "→ journal line committed, max (p50 %.3f s)" % committed_p50,
                median=round(committed_max, 3), unit="s", target="≤ 0.6 s", met=committed_max <= 0.6)
    results.add("Start over D-Bus", "activation cold → sensors streaming, max (p50 %.2f s)" % activation_p50,
                median=round(activation_max, 2), unit="s", target="≤ 5 s", met=activation_max <= 5)
    results.add("Live signals", "recorder CPU, %% of a core (%.1f signals/s; qdomyos-zwift 1/s)"
                % (signals / RIDE_SECONDS), median=round(core_percent, 2), unit="%", target="< 1 %",
                met=core_percent < 1)


if __name__ == "__main__":
    asyncio.run(run())
