#!/usr/bin/env python3
"""Sensor-hub benchmark (`make bench`): the release `cyclelog record --bridge` recording the stand-in's power meter
and trainer on one adapter and serving the hub on a second, where the stand-in's app (bluetoothd's side of a GATT
client: Tests/BlueZStandIn, `hub`) subscribes to the hub's power and the Fitness Machine control point and rides
ERG through it, all on a private dbus-daemon.

Two latencies, each on the stand-in's clock (CLOCK_REALTIME on one machine):
- a meter notification in → the hub's re-broadcast out: from the meter's notification the stand-in logs to the hub's
  Cycling Power Measurement with the same power, in order, for every notification while the app listens
  (HUB_BENCH_RATE_HZ, default 50, for HUB_BENCH_SECONDS, default 200: 10 000 notifications). Target: p99 ≤ 50 ms.
- the app's target → the real trainer's control point: from the app's write to the hub's control point to the
  trainer's write of the same request, over HUB_BENCH_STEPS (default 30) targets, one every 1.5 s. Target: p99 ≤
  100 ms.
Then the app's link drops and comes back HUB_BENCH_RECONNECTS (default 50) times: the ride's journal must hold every
notification the meter sent, in order, and `record` must have seen each connection. The hub's power measurements
are read by pycycling's parser too, and must read as the layout says; and each one the app received before the
recorder was stopped must be byte for byte a value of the journal's replay (`cyclelog show 1 --hub`), in order.

Peer in the same run, what an app gets without a hub: pycycling 0.4.1 over bleak 0.22.3 paired to the same kind of
meter and trainer on the same stand-in: the meter's notification to its measurement handler, and its
`set_target_power` call to the trainer's write. The hub's cost is the difference."""
import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import time

import results
from live_bench import RIDE, StandIn, verdict, wait_for_line
from results import CYCLELOG
from trainer_bench import TRAINER, percentile, pycycling_steps

RATE_HZ = float(os.environ.get("HUB_BENCH_RATE_HZ", "50"))
SECONDS = float(os.environ.get("HUB_BENCH_SECONDS", "200"))
STEPS = int(os.environ.get("HUB_BENCH_STEPS", "30"))
STEP_SECONDS = 1.5
RECONNECTS = int(os.environ.get("HUB_BENCH_RECONNECTS", "50"))
METER = {"address": "C0:11:22:33:44:01", "name": "Stages Power L", "service": "1818", "measurement": "2a63",
         "journal": RIDE, "rateHz": RATE_HZ, "battery": 80}
# Alternating, each step under 100 W (a larger one is ramped over 2 s by design).
TARGETS = [180, 260, 200, 290, 220, 150, 240, 170]
APP = "00:AA:02:00:00:06"
SUBSCRIBED_AT = 3.0


def entries(sent_log):
    """(time, address, what, hex) of the stand-in's log."""
    found = []
    for line in open(sent_log):
        words = line.split()
        if len(words) >= 3:
            found.append((float(words[0]), words[1], words[2], words[3] if len(words) > 3 else ""))
    return found


def power(hex_value):
    return int.from_bytes(bytes.fromhex(hex_value)[2:4], "little", signed=True)


def in_order(received, sent):
    """Each received (time, value) matched to the sent one it came from: the stretch of `sent` equal to `received`,
    in order, that starts just before the first arrival. Returns the latencies in ms, or None when no stretch is
    equal (a value lost, added or reordered)."""
    values = [value for _, value in sent]
    wanted = [value for _, value in received]
    starts = [i for i in range(len(values) - len(wanted) + 1) if values[i:i + len(wanted)] == wanted]
    if not starts:
        return None
    start = min(starts, key=lambda i: abs(received[0][0] - sent[i][0]))
    return [(received[k][0] - sent[start + k][0]) * 1000 for k in range(len(received))]


def cyclelog_run():
    # Request Control, then a first target of 100 W: from a free trainer, a larger first step is ramped.
    writes = [{"at": SUBSCRIBED_AT + 1, "value": "00"}, {"at": SUBSCRIBED_AT + 1.5, "value": "056400"}]
    for index in range(STEPS):
        watts = TARGETS[index % len(TARGETS)]
        writes.append({"at": SUBSCRIBED_AT + 2 + index * STEP_SECONDS,
                       "value": (bytes([0x05]) + watts.to_bytes(2, "little")).hex()})
    # Then the app's link drops and comes back RECONNECTS times, once the measured span is over.
    measured = max(SECONDS, writes[-1]["at"] - SUBSCRIBED_AT + 2)
    hub = {"app": APP, "appAt": SUBSCRIBED_AT, "subscribe": ["2a63", "2ad9"], "writes": writes,
           "reconnectAt": SUBSCRIBED_AT + measured, "reconnects": RECONNECTS, "awaySeconds": 0.5, "backSeconds": 1.0}
    with StandIn([METER, TRAINER], extra={"hub": hub}) as stand_in:
        database = os.path.join(stand_in.folder, "hub.sqlite")
        log = os.path.join(stand_in.folder, "record.log")
        record = stand_in.start([CYCLELOG, "record", "--plain", "--adapter", "hci0", "--bridge", "--bridge-adapter",
                                 "hci1", "--sensor", METER["address"], "--sensor", TRAINER["address"], "--db",
                                 database], log)
        wait_for_line(stand_in.sent_log, "%s subscribed" % APP, 60, record)
        print("hub bench: the meter at %.0f Hz for %.0f s, %d targets through the hub (HUB_BENCH_RATE_HZ, "
              "HUB_BENCH_SECONDS, HUB_BENCH_STEPS)" % (RATE_HZ, SECONDS, STEPS), flush=True)
        # Over once the app has come back for the last time (the writes and the measured span come before).
        deadline = time.monotonic() + measured + RECONNECTS * 1.6 + 60
        while sum(line.split()[2:3] == ["connected"] for line in open(stand_in.sent_log)) < 1 + RECONNECTS:
            if time.monotonic() > deadline or record.poll() is not None:
                sys.exit("hub bench: the app did not come back %d times:\n%s" % (RECONNECTS, open(log).read()[-2000:]))
            time.sleep(0.5)
        wait_for_line(stand_in.sent_log, "%s app-written" % APP, 1, record)
        time.sleep(1)
        stopped = time.time()
        record.send_signal(signal.SIGTERM)
        record.wait(30)
        logged = entries(stand_in.sent_log)
        record_log = open(log).read()
        shown = subprocess.run([CYCLELOG, "show", "1", "--journal", "--db", database], capture_output=True, text=True)
        journal = [line.split() for line in shown.stdout.splitlines()]
        exchanges = subprocess.run([CYCLELOG, "show", "1", "--hub", "--db", database], capture_output=True, text=True)
        replayed = [words[3] for words in map(str.split, exchanges.stdout.splitlines())
                    if len(words) == 4 and words[1:3] == ["hub-send", "2a63"]]
    subscribed = next(at for at, address, what, _ in logged if address == APP and what == "subscribed")
    # What the recorder kept while the app came and went: every notification the meter sent before the recorder
    # was stopped, in order, in the ride's journal.
    sent = [value for at, address, what, value in logged
            if address == METER["address"] and what == "2a63" and at < stopped - 0.5]
    kept = [words[4] for words in journal
            if len(words) == 5 and words[1] == "notify" and words[2] == METER["address"] and words[3] == "2a63"]
    joined = record_log.count("an app connected to the hub")
    recording = (len(sent), kept[:len(sent)] == sent, joined)
    meter = [(at, power(value)) for at, address, what, value in logged
             if address == METER["address"] and what == "2a63"]
    announced = [(at, value) for at, address, what, value in logged
                 if address == APP and what == "hub-2a63" and at > subscribed]
    decoded = pycycling_decodes([value for _, value in announced])
    # The app's values before the recorder was stopped (after it, the hub goes on while the ride is saved) against
    # the journal's replay: each one the replay's, at increasing places (the gaps are the app's times away).
    journalled = [value for at, value in announced if at < stopped]
    replay = (len(journalled), replay_matches(journalled, replayed))
    # Measured until the app first leaves, leaving out the first second after subscribing (a notification on its
    # way as the app subscribed).
    away = next((at for at, address, what, _ in logged if address == APP and what == "left"), float("inf"))
    hub = [(at, power(value)) for at, value in announced if subscribed + 1 < at < away]
    notified = in_order(hub, meter)
    if notified is None:
        sys.exit("hub bench: the hub's powers are not the meter's, in order (%d received):\n%s"
                 % (len(hub), record_log[-2000:]))
    asks = [(at, value) for at, address, what, value in logged
            if address == APP and what == "app-write" and value.startswith("05") and value != "056400"]
    steered = write_latencies(logged, asks)
    if len(steered) < len(asks):
        sys.exit("hub bench: %d of the app's targets never reached the trainer:\n%s"
                 % (len(asks) - len(steered), record_log[-2000:]))
    return notified, steered, decoded, recording, replay


def replay_matches(received, replayed):
    """How many of `received`, in order, are found in `replayed` at increasing places."""
    place, equal = 0, 0
    for value in received:
        try:
            place = replayed.index(value, place) + 1
        except ValueError:
            continue
        equal += 1
    return equal


def write_latencies(logged, asks):
    """For each ask (time, the request's hex), the ms until the trainer logged the same write; asks it never got
    are left out."""
    writes = [(at, value) for at, address, what, value in logged if address == TRAINER["address"] and what == "write"]
    latencies = []
    for asked, request in asks:
        write = next((at for at, value in writes if at >= asked and value == request), None)
        if write is not None:
            latencies.append((write - asked) * 1000)
    return latencies


def pycycling_decodes(values):
    """The app's side read by another decoder: pycycling's Cycling Power Measurement parser, against the layout
    (CPS 3.2: flags, then the power, then with flag 0x20 the crank revolutions and the last crank event's time).
    Returns (values, the ones both read alike), or None without pycycling."""
    if importlib.util.find_spec("pycycling") is None:
        return None
    from pycycling.cycling_power_service import _parse_cycling_power_measurement
    alike = 0
    for value in values:
        data = bytes.fromhex(value)
        theirs = _parse_cycling_power_measurement(bytearray(data))
        flags = int.from_bytes(data[0:2], "little")
        crank = (int.from_bytes(data[4:6], "little"), int.from_bytes(data[6:8], "little")) if flags & 0x20 else None
        if theirs.instantaneous_power == int.from_bytes(data[2:4], "little", signed=True) and (
                crank is None or (theirs.cumulative_crank_revs, theirs.last_crank_event_time) == crank):
            alike += 1
    return len(values), alike


async def pycycling_peer(seconds):
    """pycycling over bleak paired to the meter and the trainer themselves (one scan finds both: the stand-in shows
    a device once): each Cycling Power Measurement's arrival (CLOCK_REALTIME) with its power over at least
    `seconds`, and the trainer's steps (trainer_bench's) meanwhile."""
    from bleak import BleakClient, BleakScanner
    from pycycling.cycling_power_service import CyclingPowerService
    found = {device.address: device for device in await BleakScanner.discover(timeout=3)}
    if METER["address"] not in found or TRAINER["address"] not in found:
        raise RuntimeError("the meter and the trainer were not both found by a scan")
    arrivals = []
    # Both at once, as the hub's app has both: the steps while the meter's notifications arrive.
    async with BleakClient(found[METER["address"]], timeout=20) as client:
        service = CyclingPowerService(client)
        service.set_cycling_power_measurement_handler(
            lambda measurement: arrivals.append((time.time(), measurement.instantaneous_power)))
        await service.enable_cycling_power_measurement_notifications()
        calls = await pycycling_steps(STEPS, found[TRAINER["address"]])
        await asyncio.sleep(max(0.0, seconds - (time.time() - arrivals[0][0]) if arrivals else seconds))
    return arrivals, calls


def peer_run():
    """The peer's latencies (ms) in both directions, or the reason they were not measured."""
    missing = [name for name in ("pycycling", "bleak") if importlib.util.find_spec(name) is None]
    if missing:
        return None, None, "not measured (%s missing; scripts/setup.sh --bench installs them)" % " and ".join(missing)
    with StandIn([METER, TRAINER]) as stand_in:
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = stand_in.address
        try:
            arrivals, calls = asyncio.run(asyncio.wait_for(pycycling_peer(min(SECONDS, 20)), 180))
        except Exception as error:  # the peer's own failure is reported, not ours
            return None, None, "not measured (pycycling over bleak failed: %r)" % error
        logged = entries(stand_in.sent_log)
    meter = [(at, power(value)) for at, address, what, value in logged
             if address == METER["address"] and what == "2a63"]
    notified = in_order(arrivals[1:], meter) if len(arrivals) > 1 else None
    steered = write_latencies(logged, [(sent, (bytes([0x05]) + int(watts).to_bytes(2, "little", signed=True)).hex())
                                       for sent, watts in calls])
    return notified, steered, None


def row(name, values, target=None, limit=None):
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    verdict_text = "" if limit is None else "%s (%s)" % (target, verdict(p99 <= limit))
    print("| %s | %.1f / %.1f / %.1f ms (%d) | %s |" % (name, p50, p99, max(values), len(values), verdict_text))


def main():
    notified, steered, decoded, recording, replay = cyclelog_run()
    peer_notified, peer_steered, why_not = peer_run()
    print("| sensor hub, the stand-in's meter at %.0f Hz and trainer | p50 / p99 / max (count) | target |" % RATE_HZ)
    print("|---|---|---|")
    row("meter notification → the hub's re-broadcast (cyclelog record --bridge)", notified, "p99 ≤ 50 ms", 50)
    if peer_notified:
        row("meter notification → its handler, paired to the meter (pycycling 0.4.1 over bleak 0.22.3)",
            peer_notified)
    row("the app's target → the trainer's control point, through the hub", steered, "p99 ≤ 100 ms", 100)
    if peer_steered:
        row("set_target_power → the trainer's control point, paired to the trainer (pycycling over bleak)",
            peer_steered)
    if why_not:
        print("| pycycling 0.4.1 over bleak 0.22.3 | %s | |" % why_not)
    count, whole, joined = recording
    print("| the ride's journal while the app left and came back %d times: the meter's notifications kept, in order "
          "| %d of %d, the app joined %d times | all (%s) |"
          % (RECONNECTS, count if whole else 0, count, joined, verdict(whole and joined == 1 + RECONNECTS)))
    print("| the hub's power measurements the app received, byte for byte the journal's replay (`show --hub`) "
          "| %d of %d | all (%s) |" % (replay[1], replay[0], verdict(replay[0] == replay[1] > 0)))
    if decoded:
        print("| the hub's power measurements pycycling's parser reads alike (power, crank revolutions and time) "
              "| %d of %d | all (%s) |" % (decoded[1], decoded[0], verdict(decoded[0] == decoded[1] > 0)))
    record("hub, notification → re-broadcast", "notifications", notified, "pycycling paired to the meter",
           peer_notified, 50)
    record("hub, app's target → trainer", "targets", steered, "pycycling paired to the trainer", peer_steered, 100)


def record(capability, what, values, peer_label, peer, limit_ms):
    """Into the results file: ours (p50 as best, p99 as median) against the limit, and the peer's beside them."""
    p99 = percentile(values, 0.99)
    results.add(capability, "p50 / p99 over %d %s" % (len(values), what), best=percentile(values, 0.5) / 1000,
                median=p99 / 1000, unit="s", target="p99 ≤ %d ms" % limit_ms, met=p99 <= limit_ms)
    if peer:
        results.add(capability, peer_label + ": p50 / p99", best=percentile(peer, 0.5) / 1000,
                    median=percentile(peer, 0.99) / 1000, unit="s")

if __name__ == "__main__":
    main()
