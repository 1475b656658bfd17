#!/usr/bin/env python3
"""Conformance of `cyclelog decode` against an independent decoder, Wireshark's (tshark 4.0).

Every Cycling Power, CSC and Heart Rate Measurement payload in Fixtures/captures (plus the spec's
all-fields examples) is wrapped in a btsnoop capture after a GATT discovery, tshark decodes it, and each
field tshark reports is compared with `cyclelog decode --json`. Where tshark 4.0 is known to be wrong
(a known dissector error) the field is checked against the published byte layout instead, and the script says so:
  * CPM extreme angles: tshark reads the 3 octets big-endian with the labels swapped.
  * CSC event times: tshark files the wheel and the crank event time under one field
    (btatt.csc_measurement.last_event_time), so they are read from their spec offsets.
Prints one line per payload that disagrees and ends with "N passed, N failed".
"""
import argparse
import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import btsnoop  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# tshark field → our JSON key, per characteristic.
CPM = "btatt.cycling_power_measurement."
CSC = "btatt.csc_measurement."
HRM = "btatt.heart_rate_measurement."
FIELDS = {
    0x2A63: {
        CPM + "flags": "flags",
        CPM + "instantaneous_power": "instantaneousPower",
        CPM + "pedal_power_balance": "pedalPowerBalance",
        CPM + "accumulated_torque": "accumulatedTorque",
        CPM + "wheel_revolution_data_cumulative_wheel_revolutions": "cumulativeWheelRevolutions",
        CPM + "wheel_revolution_data_last_wheel_event_time": "lastWheelEventTime",
        CPM + "crank_revolution_data_cumulative_crank_revolutions": "cumulativeCrankRevolutions",
        CPM + "crank_revolution_data_last_crank_event_time": "lastCrankEventTime",
        CPM + "extreme_force_magnitudes_maximum_force_magnitude": "maximumForceMagnitude",
        CPM + "extreme_force_magnitudes_minimum_force_magnitude": "minimumForceMagnitude",
        CPM + "extreme_torque_magnitudes_maximum_torque_magnitude": "maximumTorqueMagnitude",
        CPM + "extreme_torque_magnitudes_minimum_torque_magnitude": "minimumTorqueMagnitude",
        CPM + "top_dead_spot_angle": "topDeadSpotAngle",
        CPM + "bottom_dead_spot_angle": "bottomDeadSpotAngle",
        CPM + "accumulated_energy": "accumulatedEnergy",
    },
    0x2A5B: {
        CSC + "flags": "flags",
        CSC + "cumulative_wheel_revolutions": "cumulativeWheelRevolutions",
        CSC + "cumulative_crank_revolutions": "cumulativeCrankRevolutions",
    },
    0x2A37: {
        HRM + "flags": "flags",
        HRM + "value.8": "heartRate",
        HRM + "value.16": "heartRate",
        HRM + "energy_expended": "energyExpended",
        HRM + "rr_interval": "rrIntervals",
    },
}

# Spec worked examples that exercise fields the real fixtures lack (every CPM flag, the heart rate's).
SPEC_VECTORS = {
    0x2A63: ["ff1fc800644006341200000008000100 04f4019cff2003e0ffb4a0050a00be006400".replace(" ", ""),
             "2c0896002003 1b00c0f53900".replace(" ", ""), "0000fbff", "03002c0162",
             "3000d204ffffffff033fff07e70f"],
    0x2A5B: ["03ffffffff033fff07e70f", "01ffff00014599", "03c80000010699e1004599", "022a000040"],
    0x2A37: ["002a", "010101", "0f96002301", "164840036003"],
}
CHARACTERISTIC_NAMES = {0x2A63: "2a63", 0x2A5B: "2a5b", 0x2A37: "2a37"}


def fixture_payloads():
    payloads = {uuid: [("spec", hx) for hx in vectors] for uuid, vectors in SPEC_VECTORS.items()}
    for name in ("cycling-power-measurement.tsv", "csc-measurement.tsv", "heart-rate-measurement.tsv"):
        with open(os.path.join(ROOT, "Fixtures", "captures", name)) as f:
            for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                payloads[int(row["characteristic"], 16)].append((row["source_line"], row["payload_hex"]))
    return payloads


def tshark_fields(path, fields):
    command = ["tshark", "-r", path, "-Y", "btatt.opcode == 0x1b", "-T", "fields", "-E", "occurrence=a",
               "-E", "aggregator=,", "-E", "separator=\t", "-e", "btatt.handle"] + [arg for f in fields for arg in ("-e", f)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def ours(cyclelog, uuid, payloads):
    run = subprocess.run([cyclelog, "decode", CHARACTERISTIC_NAMES[uuid], "--json"], input="\n".join(payloads) + "\n",
                         capture_output=True, text=True)
    return [json.loads(line) for line in run.stdout.splitlines()]


def spec_checks(uuid, value):
    """Fields tshark gets wrong, read straight from the spec's byte layout."""
    checks = {}
    if uuid == 0x2A63:
        flags = struct.unpack_from("<H", value)[0]
        offset = 4 + (1 if flags & 0x01 else 0) + (2 if flags & 0x04 else 0) + (6 if flags & 0x10 else 0) \
            + (4 if flags & 0x20 else 0) + (4 if flags & 0x40 else 0) + (4 if flags & 0x80 else 0)
        if flags & 0x100:  # little-endian uint24, max in the low 12 bits, min in the high 12
            packed = value[offset] | value[offset + 1] << 8 | value[offset + 2] << 16
            checks["maximumAngle"] = packed & 0xFFF
            checks["minimumAngle"] = packed >> 12 & 0xFFF
    elif uuid == 0x2A5B:
        flags = value[0]  # CSC Measurement: wheel revs @1 (4), wheel time @5 (2), crank revs, crank time
        if flags & 0x01:
            checks["lastWheelEventTime"] = struct.unpack_from("<H", value, 5)[0]
        if flags & 0x02:
            checks["lastCrankEventTime"] = struct.unpack_from("<H", value, 9 if flags & 0x01 else 3)[0]
    return checks


def parse_number(text):
    return int(text, 16) if text.startswith("0x") else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cyclelog", default=os.path.join(ROOT, ".build", "debug", "cyclelog"))
    args = parser.parse_args()
    if shutil.which("tshark") is None:
        print("conformance: tshark is not installed (scripts/setup.sh installs it)", file=sys.stderr)
        return 2
    version = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print("conformance: %s; known tshark 4.0 errors checked against the spec instead: CPM extreme angles "
          "(read big-endian, labels swapped), CSC event times (one shared field)" % version)
    passed = failed = compared_fields = 0
    payloads = fixture_payloads()
    with tempfile.TemporaryDirectory() as folder:
        capture = os.path.join(folder, "conformance.btsnoop")
        writer = btsnoop.BtsnoopWriter(capture)
        writer.connect_and_discover()
        for uuid, items in payloads.items():
            for _, hx in items:
                writer.notify(uuid, bytes.fromhex(hx))
        writer.close()
        for uuid, items in payloads.items():
            fields = list(FIELDS[uuid])
            value_handle = "0x%04x" % btsnoop.SERVICES[uuid][4]
            theirs = [row for row in tshark_fields(capture, fields) if row[0] == value_handle]
            mine = ours(args.cyclelog, uuid, [hx for _, hx in items])
            if not (len(theirs) == len(mine) == len(items)):
                print("conformance: %04X: %d payloads, tshark decoded %d, cyclelog %d" % (uuid, len(items), len(theirs),
                                                                                          len(mine)))
                failed += len(items)
                continue
            for (source, hx), row, decoded in zip(items, theirs, mine):
                problems = []
                if "error" in decoded:
                    problems.append("cyclelog: %s" % decoded["error"])
                for field, text in zip(fields, row[1:]):
                    if not text:
                        continue
                    key = FIELDS[uuid][field]
                    expected = [parse_number(t) for t in text.split(",")]
                    got = decoded.get(key)
                    got = got if isinstance(got, list) else [got]
                    compared_fields += 1
                    if expected != got:
                        problems.append("%s: tshark %s, cyclelog %s" % (key, expected, got))
                for key, expected in spec_checks(uuid, bytes.fromhex(hx)).items():
                    compared_fields += 1
                    if decoded.get(key) != expected:
                        problems.append("%s: spec %s, cyclelog %s" % (key, expected, decoded.get(key)))
                if problems:
                    failed += 1
                    print("conformance: FAIL %04X %s (%s): %s" % (uuid, hx, source, "; ".join(problems)))
                else:
                    passed += 1
    print("conformance: %d fields compared over %d payloads" % (compared_fields, passed + failed))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
