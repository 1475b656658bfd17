#!/usr/bin/env python3
"""Trainer-control benchmark (`make bench`): the release `cyclelog record --control erg` steering the stand-in's
emulated smart trainer (FTMS, its power a first-order lag with a time constant of 1 s) on a private dbus-daemon.

TRAINER_BENCH_STEPS (default 40) target changes, one every 6 s, each sent as the recorder's D-Bus `Control`
(`target`, watts) by this script: from the call's sending to the control-point write the stand-in logs (both
CLOCK_REALTIME on one machine) is the latency; the trainer's own power 5 s after each step, against the step's
target, is how well it follows; the recorder's CPU over the steps comes from /proc. Targets: p99 ≤ 50 ms; within
±5 % of the target 5 s after ≥ 95 % of the steps; under 1 % of one core.

Peer in the same run: pycycling 0.4.1's FitnessMachineService over bleak 0.22.3 — a Python FTMS client that talks to
BlueZ over D-Bus as cyclelog does — connected to the same kind of trainer on the same stand-in, its
`set_target_power` timed from the call to the write the stand-in logs. Steps of at most 100 W, so that none is
ramped (a larger one is spread over 2 s by design)."""
import asyncio
import importlib.util
import os
import signal
import sys
import time
import uuid

import results
from live_bench import StandIn, verdict, wait_for_line
from results import CYCLELOG

STEPS = int(os.environ.get("TRAINER_BENCH_STEPS", "40"))
STEP_SECONDS = 6.0
TRAINER = {"address": "F1:22:33:44:55:66", "name": "KICKR", "service": "1826", "measurement": "2ad2", "rateHz": 4,
           "battery": 100, "trainer": {"targets": ["power", "resistance", "sim"], "tauSeconds": 1.0}}
# Alternating, each step under 100 W.
TARGETS = [180, 260, 200, 290, 220, 150, 240, 170]


def logged(sent_log):
    """(time, kind, bytes) of the stand-in's log: kind `write` or a characteristic."""
    entries = []
    for line in open(sent_log):
        words = line.split()
        if len(words) >= 4 and words[2] != "event":
            entries.append((float(words[0]), words[2], bytes.fromhex(words[3])))
    return entries


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def control_target(address, watts):
    """The recorder's `Control(requestId, "target", 0, {"watts": w})` over the private bus, on a connection made
    beforehand; returns the time (CLOCK_REALTIME) the call was sent, once it is answered."""
    from dbus_fast import Message, MessageType, Variant
    from dbus_fast.aio import MessageBus
    bus = await MessageBus(bus_address=address).connect()
    try:
        sent = time.time()
        reply = await bus.call(Message(
            destination="org.cyclelog.Recorder", path="/org/cyclelog/Recorder", interface="org.cyclelog.Recorder1",
            member="Control", signature="ssta{sv}",
            body=[str(uuid.uuid4()), "target", 0, {"watts": Variant("d", float(watts))}]))
        if reply.message_type == MessageType.ERROR:
            sys.exit("trainer bench: Control refused: %s" % reply.body)
        return sent
    finally:
        bus.disconnect()


def cyclelog_run():
    with StandIn([TRAINER]) as stand_in:
        database = os.path.join(stand_in.folder, "trainer.sqlite")
        log = os.path.join(stand_in.folder, "record.log")
        record = stand_in.start([CYCLELOG, "record", "--plain", "--sensor", "KICKR", "--control", "erg",
                                 "--target-watts", "150", "--db", database], log)
        wait_for_line(stand_in.sent_log, " write 05", 30, record)
        time.sleep(2)
        print("trainer bench: %d target changes, one every %.0f s (TRAINER_BENCH_STEPS)" % (STEPS, STEP_SECONDS),
              flush=True)
        steps = []
        cpu_before, wall_before = cpu_seconds(record.pid), time.monotonic()
        for index in range(STEPS):
            watts = TARGETS[index % len(TARGETS)]
            sent = asyncio.run(control_target(stand_in.address, watts))
            steps.append((sent, watts))
            time.sleep(max(0.0, sent + STEP_SECONDS - time.time()))
        cpu = cpu_seconds(record.pid) - cpu_before
        wall = time.monotonic() - wall_before
        record.send_signal(signal.SIGTERM)
        record.wait(30)
        entries = logged(stand_in.sent_log)
    latencies, followed = [], 0
    for sent, watts in steps:
        expected = bytes([0x05]) + int(watts).to_bytes(2, "little", signed=True)
        write = next((at for at, kind, value in entries if kind == "write" and at >= sent and value == expected), None)
        if write is None:
            sys.exit("trainer bench: the write of %d W never reached the trainer" % watts)
        latencies.append((write - sent) * 1000)
        data = [value for at, kind, value in entries if kind == "2ad2" and at <= sent + 5]
        power = int.from_bytes(data[-1][6:8], "little", signed=True) if data else None
        if power is not None and abs(power - watts) <= 0.05 * watts:
            followed += 1
    return latencies, followed, 100 * cpu / wall


async def pycycling_steps(count, device=None):
    """pycycling over bleak: connect to the trainer (`device`, a scan's, or found by a scan of its own), Request
    Control, then `count` set_target_power calls, each followed by its indication; the call times (CLOCK_REALTIME)
    with their watts."""
    from bleak import BleakClient, BleakScanner
    from pycycling.fitness_machine_service import FitnessMachineService
    # Found by a scan first: the stand-in announces a device once, as it appears, where BlueZ repeats each
    # advertisement, which bleak's search by address waits for.
    found = [device] if device else [
        device for device in await BleakScanner.discover(timeout=3) if device.address == TRAINER["address"]]
    if not found:
        raise RuntimeError("the trainer was not found by a scan")
    async with BleakClient(found[0], timeout=20) as client:
        service = FitnessMachineService(client)
        answered = asyncio.Event()
        service.set_control_point_response_handler(lambda _: answered.set())
        await service.enable_control_point_indicate()
        await service.request_control()
        await asyncio.wait_for(answered.wait(), 5)
        calls = []
        for index in range(count):
            answered.clear()
            watts = TARGETS[index % len(TARGETS)]
            sent = time.time()
            await service.set_target_power(watts)
            calls.append((sent, watts))
            await asyncio.wait_for(answered.wait(), 5)
            await asyncio.sleep(0.2)
        return calls


def peer_run():
    """The peer's latencies (ms), or the reason it was not measured."""
    missing = [name for name in ("pycycling", "bleak") if importlib.util.find_spec(name) is None]
    if missing:
        return None, "not measured (%s missing; scripts/setup.sh --bench installs them)" % " and ".join(missing)
    with StandIn([TRAINER]) as stand_in:
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = stand_in.address
        try:
            calls = asyncio.run(asyncio.wait_for(pycycling_steps(STEPS), 120))
        except Exception as error:  # the peer's own failure is reported, not ours
            return None, "not measured (pycycling over bleak failed: %s)" % error
        entries = logged(stand_in.sent_log)
    latencies = []
    for sent, watts in calls:
        expected = bytes([0x05]) + int(watts).to_bytes(2, "little", signed=True)
        write = next((at for at, kind, value in entries if kind == "write" and at >= sent and value == expected), None)
        if write is not None:
            latencies.append((write - sent) * 1000)
    return latencies, None


def main():
    latencies, followed, core_percent = cyclelog_run()
    peer, why_not = peer_run()
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    share = 100 * followed / len(latencies)
    print("| trainer control, %d steps, emulated trainer (τ = 1 s) | value | target |" % STEPS)
    print("|---|---|---|")
    print("| target → control-point write p50 / p99 / max (cyclelog, D-Bus Control) | %.1f / %.1f / %.1f ms "
          "| p99 ≤ 50 ms (%s) |" % (p50, p99, max(latencies), verdict(p99 <= 50)))
    if peer:
        print("| set_target_power → write p50 / p99 / max (pycycling 0.4.1 over bleak 0.22.3) | %.1f / %.1f / "
              "%.1f ms | |" % (percentile(peer, 0.5), percentile(peer, 0.99), max(peer)))
    else:
        print("| pycycling 0.4.1 over bleak 0.22.3 | %s | |" % why_not)
    print("| steps with the trainer within ±5 %% of the target 5 s after | %d of %d (%.0f %%) | ≥ 95 %% (%s) |"
          % (followed, len(latencies), share, verdict(share >= 95)))
    print("| recorder CPU in ERG over the steps | %.2f %% of one core | < 1 %% (%s) |"
          % (core_percent, verdict(core_percent < 1)))
    results.add("trainer, target → write", "p50 / p99 over %d steps (D-Bus Control)" % STEPS, best=p50 / 1000,
                median=p99 / 1000, unit="s", target="p99 ≤ 50 ms", met=p99 <= 50)
    if peer:
        results.add("trainer, target → write", "pycycling 0.4.1 over bleak: p50 / p99",
                    best=percentile(peer, 0.5) / 1000, median=percentile(peer, 0.99) / 1000, unit="s")
    results.add("trainer, following", "steps within ±5 % after 5 s", median=round(share, 1), unit="%",
                target="≥ 95 %", met=share >= 95)
    results.add("trainer, ERG", "recorder CPU", median=round(core_percent, 2), unit="% of a core",
                target="< 1 %", met=core_percent < 1)


if __name__ == "__main__":
    main()
