#!/usr/bin/env python3
"""Turns the real rides in ../shared/data/rides into the notification streams three real sensors would have sent
(a power meter with crank data, a CSC wheel sensor, a heart-rate strap), written as a cyclelog journal and as a
btsnoop capture. Independent of cyclelog's own code: the byte layouts come from the GATT Specification Supplement, btsnoop's layout and the Core Specification.

Power is the record's watts, held for the second it belongs to; crank and wheel event times are the exact times
at which the integrated cadence and the FIT's own distance cross whole revolutions (1/1024 s clocks). Sensors send
at irregular intervals: power 2-4 Hz (a fixed 4 Hz for the benchmark), CSC about 2 Hz, heart rate about 1 Hz.

  scripts/make-ride-fixtures.py                 regenerate Fixtures/rides (committed)
  scripts/make-ride-fixtures.py --bench DIR     a 4-hour, three-sensor ride for `make bench` (not committed)
"""
import argparse
import csv
import datetime
import json
import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RIDES = os.path.join(ROOT, "..", "shared", "data", "rides")
WHEEL_M = 2.105
EPOCH_OFFSET_US = 0x00DCDDB30F2F8000  # btsnoop's epoch, 1 Jan 0 AD (Wireshark's wiretap/btsnoop.c)

POWER = ("C0:11:22:33:44:55", "Power meter")
CSC = ("D4:22:33:44:55:66", "Speed sensor")
HRM = ("E8:33:44:55:66:77", "Heart rate strap")


def load_ride(name):
    """Per whole second since the first record: watts, heart rate, cadence (None when absent), FIT distance."""
    records = {}
    with open(os.path.join(RIDES, name + ".records.csv")) as f:
        for row in csv.DictReader(f):
            value = lambda key: float(row[key]) if row[key] != "" else None
            records[int(row["seconds"])] = (value("watts"), value("heart_rate"), value("cadence"))
    import fitdecode  # PyPI; only needed to regenerate

    distances, first = {}, None
    with fitdecode.FitReader(os.path.join(RIDES, name + ".fit")) as fit:
        for frame in fit:
            if isinstance(frame, fitdecode.FitDataMessage) and frame.name == "record":
                stamp = frame.get_value("timestamp")
                first = first or stamp
                if frame.has_field("distance") and frame.get_value("distance") is not None:
                    distances[int((stamp - first).total_seconds())] = frame.get_value("distance")
    device = json.load(open(os.path.join(RIDES, name + ".device.json")))
    start = device["fit_session_summary_from_device"][0]["start_time"]
    start_s = datetime.datetime.strptime(start, "%Y-%m-%d %H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()
    timer = device["timer_events_seconds_since_first_record"]
    return records, distances, int(start_s), timer


class Revolutions:
    """Cumulative revolutions and the time of the last one, from a rate that is constant within each second."""

    def __init__(self, rate_at):
        self.rate_at = rate_at  # revolutions per second during whole second s
        self.position = 0.0
        self.time = 0.0
        self.count = 0
        self.last_event = 0.0

    def advance(self, until):
        while self.time < until:
            second = math.floor(self.time)
            end = min(until, second + 1)
            rate = self.rate_at(second)
            if rate > 0:
                target = self.position + rate * (end - self.time)
                while math.floor(target) > self.count:
                    self.count += 1
                    self.last_event = self.time + (self.count - self.position) / rate
                self.position = target
            self.time = end


def streams(records, distances, duration, power_interval, seed):
    """(offset seconds, sensor, characteristic, value bytes) in time order."""
    rng = random.Random(seed)
    out = []
    crank = Revolutions(lambda s: (records.get(s, (None, None, None))[2] or 0) / 60)
    seconds = sorted(distances)

    def distance_rate(s):
        if s in distances and s + 1 in distances:
            return max(0.0, distances[s + 1] - distances[s]) / WHEEL_M
        return 0.0

    wheel = Revolutions(distance_rate)
    t = rng.uniform(0, 0.5)
    while t < duration:
        second = math.floor(t)
        crank.advance(t)
        watts = records.get(second, (0, None, None))[0]
        if watts is not None:
            value = struct.pack("<HhHH", 0x0020, int(watts), crank.count & 0xFFFF, round(crank.last_event * 1024) & 0xFFFF)
            out.append((t, POWER[0], 0x2A63, value))
        t += power_interval(rng)
    t = rng.uniform(0, 0.5)
    while t < duration:
        wheel.advance(t)
        value = struct.pack("<BIH", 0x01, wheel.count, round(wheel.last_event * 1024) & 0xFFFF)
        out.append((t, CSC[0], 0x2A5B, value))
        t += rng.uniform(0.4, 0.6)
    t = rng.uniform(0, 0.5)
    last_hr = None
    while t < duration:
        heart_rate = records.get(math.floor(t), (None, None, None))[1] or last_hr
        if heart_rate is not None:
            out.append((t, HRM[0], 0x2A37, struct.pack("<BB", 0x06, int(heart_rate))))
            last_hr = heart_rate
        t += rng.uniform(0.9, 1.1)
    out.sort(key=lambda item: item[0])
    return out


def iso(us):
    return datetime.datetime.fromtimestamp(us // 1_000_000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (us % 1_000_000)


def write_journal(path, start_us, notifications, controls, name):
    lines = ["# cyclelog journal 1", "# generated by scripts/make-ride-fixtures.py from " + name]
    for index, (address, label) in enumerate((POWER, CSC, HRM)):
        lines.append("%s connect %s %s" % (iso(start_us - 2_000_000 + index * 100_000), address, label))
    for index, (address, label) in enumerate((POWER, CSC, HRM)):
        lines.append("%s read %s 2a19 %02x" % (iso(start_us - 1_500_000 + index * 100_000), address, 90 - 10 * index))
    events = [(round(offset * 1_000_000), "notify %s %04x %s" % (sensor, uuid, value.hex())) for offset, sensor, uuid, value in notifications]
    events += [(round(offset * 1_000_000), text) for offset, text in controls]
    events.sort(key=lambda item: item[0])
    for offset, text in events:
        lines.append("%s %s" % (iso(start_us + offset), text))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Btsnoop:
    """H4 (1002) or Linux monitor (2001) records (btsnoop, HCI ACL)."""

    def __init__(self, path, datalink):
        self.file = open(path, "wb")
        self.datalink = datalink
        self.file.write(b"btsnoop\x00" + struct.pack(">II", 1, datalink))

    def record(self, time_us, kind, received, data):
        if self.datalink == 1002:
            flags = (1 if received else 0) | (2 if kind in ("command", "event") else 0)
            data = bytes([{"command": 1, "acl": 2, "event": 4}[kind]]) + data
        else:
            flags = {"command": 2, "event": 3}.get(kind) or (5 if received else 4)
        self.file.write(struct.pack(">IIIIq", len(data), len(data), flags, 0, time_us + EPOCH_OFFSET_US) + data)

    def att(self, time_us, handle, pdu, received):
        l2cap = struct.pack("<HH", len(pdu), 0x0004) + pdu
        # 27-octet ACL payloads, as a controller without Data Length Extension delivers them.
        for offset in range(0, len(l2cap), 27):
            chunk = l2cap[offset:offset + 27]
            boundary = 0x1 if offset else (0x2 if received else 0x0)
            self.record(time_us, "acl", received, struct.pack("<HH", handle | boundary << 12, len(chunk)) + chunk)

    def connect(self, time_us, handle, address):
        peer = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
        self.record(time_us, "event", True, bytes([0x3E, 19, 0x01, 0x00]) + struct.pack("<H", handle) + b"\x00\x01" + peer + bytes.fromhex("18000000f40100"))

    def disconnect(self, time_us, handle):
        self.record(time_us, "event", True, bytes([0x05, 4, 0x00]) + struct.pack("<H", handle) + b"\x13")

    def discover(self, time_us, handle, service, characteristic):
        """Primary services, then the characteristic declarations of the sensor's service, then its CCCD write."""
        self.att(time_us, handle, bytes.fromhex("100100ffff0028"), False)
        self.att(time_us + 1000, handle, b"\x11\x06" + struct.pack("<HHHHHH", 0x0001, 0x000B, 0x1800, 0x000C, 0x0016, service), True)
        self.att(time_us + 2000, handle, struct.pack("<BHHH", 0x08, 0x000C, 0x0016, 0x2803), False)
        decls = struct.pack("<HBHH", 0x000D, 0x10, 0x000E, characteristic) + struct.pack("<HBHH", 0x0010, 0x02, 0x0011, 0x2A19)
        self.att(time_us + 3000, handle, b"\x09\x07" + decls, True)
        self.att(time_us + 4000, handle, b"\x0a\x11\x00", False)  # Read battery level
        self.att(time_us + 5000, handle, b"\x0b\x5a", True)
        self.att(time_us + 6000, handle, b"\x12\x0f\x00\x01\x00", False)
        self.att(time_us + 7000, handle, b"\x13", True)

    def close(self):
        self.file.close()


SERVICE_OF = {0x2A63: 0x1818, 0x2A5B: 0x1816, 0x2A37: 0x180D}


def write_btsnoop(path, datalink, start_us, notifications, duration):
    snoop = Btsnoop(path, datalink)
    handles = {}
    for index, (address, _) in enumerate((POWER, CSC, HRM)):
        handle = 0x0040 + index
        handles[address] = handle
        time_us = start_us - 2_000_000 + index * 100_000
        snoop.connect(time_us, handle, address)
        snoop.discover(time_us + 10_000, handle, SERVICE_OF[(0x2A63, 0x2A5B, 0x2A37)[index]], (0x2A63, 0x2A5B, 0x2A37)[index])
    for offset, sensor, _uuid, value in notifications:
        snoop.att(start_us + round(offset * 1_000_000), handles[sensor], b"\x1b\x0e\x00" + value, True)
    for address, handle in handles.items():
        snoop.disconnect(start_us + round(duration * 1_000_000) + 500_000, handle)
    snoop.close()


def controls_for(timer, duration, name):
    """Journal controls from the device's timer start/stop events: start, pauses, resumes, end."""
    controls = [(0.0, "start outdoor name=" + name)]
    for event in timer[1:]:
        if event["event_type"] == "start":
            controls.append((float(event["seconds"]), "resume"))
        elif event["seconds"] < duration - 1:
            controls.append((float(event["seconds"]), "pause"))
    controls.append((float(duration), "end"))
    return controls


def pause_fill(records, timer):
    """While the timer is stopped the rider stands: 0 W, cadence 0, heart rate held (sensors keep sending)."""
    stops = [e["seconds"] for e in timer if e["event_type"] == "stop_all"]
    starts = [e["seconds"] for e in timer if e["event_type"] == "start"]
    for stop in stops:
        resume = min([s for s in starts if s > stop], default=None)
        if resume is None:
            continue
        for second in range(stop, resume):
            if second not in records:
                records[second] = (0.0, None, 0.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", metavar="DIR", help="write a 4-hour ride for the benchmark into DIR instead")
    args = parser.parse_args()
    if args.bench:
        name = "sweatpy_4078723797"
        records, distances, start_s, _ = load_ride(name)
        length = max(records) + 1
        hours4 = 4 * 3600
        # Ride it twice over: the second lap continues the distance.
        total = distances[max(distances)]
        for s in range(length, hours4):
            records[s] = records[s - length]
            distances[s] = distances.get(s - length, 0) + total
        records = {s: v for s, v in records.items() if s < hours4}
        notes = streams(records, distances, hours4, lambda rng: 0.25, seed=7)
        os.makedirs(args.bench, exist_ok=True)
        write_btsnoop(os.path.join(args.bench, "four-hours.btsnoop"), 2001, start_s * 1_000_000, notes, hours4)
        print(len(notes))
        return
    rides = [
        ("sweatpy_4078723797", 1002, "Road ride, Gauge pedals"),
        ("fitparse_Edge810-Vector-2013-08-16-15-35-10", 2001, "Hard ride, Vector pedals"),
        ("sweatpy_2020-06-01-16-52-40", None, "Intervals with a pause"),
        ("sweatpy_6449921903_ACTIVITY", None, "Wattbike, two pauses"),
    ]
    out = os.path.join(ROOT, "Fixtures", "rides")
    references = {}
    for index, (name, datalink, title) in enumerate(rides):
        records, distances, start_s, timer = load_ride(name)
        pause_fill(records, timer)
        duration = max(e["seconds"] for e in timer)
        notes = streams(records, distances, duration, lambda rng: rng.uniform(0.25, 0.3), seed=index + 1)
        start_us = start_s * 1_000_000
        write_journal(os.path.join(out, name + ".journal"), start_us, notes, controls_for(timer, duration, title), name)
        if datalink:
            write_btsnoop(os.path.join(out, name + ".btsnoop"), datalink, start_us, notes, duration)
        print("%s: %d notifications over %d s" % (name, len(notes), duration))
        references[name] = reference_values(name)
    with open(os.path.join(out, "references.json"), "w") as f:
        json.dump(references, f, indent=2, sort_keys=True)
        f.write("\n")


def reference_values(name):
    """The expected values, copied from the independent oracle and the device's own FIT session (not from cyclelog):
    timer-time basis (pauses removed) where the ride was paused, as the devices compute it."""
    gapdrop = os.path.join(RIDES, name + ".oracle.gapdrop.json")
    oracle = json.load(open(gapdrop if os.path.exists(gapdrop) else os.path.join(RIDES, name + ".oracle.json")))
    session = json.load(open(os.path.join(RIDES, name + ".device.json")))["fit_session_summary_from_device"][0]
    return {
        "source": os.path.basename(gapdrop if os.path.exists(gapdrop) else name + ".oracle.json") + " + " + name + ".device.json",
        "normalizedPowerWatts": oracle["normalized_power_watts"]["numpy_reference_trainingpeaks"],
        "workJoules": oracle["extras"]["work_kj"] * 1000,
        "powerCurveWatts": {d: v["numpy_reference"] for d, v in oracle["mmp_watts"].items()},
        "distanceMeters": session["total_distance"],
        "elapsedSeconds": session["total_elapsed_time"],
        "timerSeconds": session["total_timer_time"],
    }


if __name__ == "__main__":
    main()
