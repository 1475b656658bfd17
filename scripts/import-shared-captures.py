#!/usr/bin/env python3
"""Turns the third-party payload excerpts in shared/data/captures into Fixtures/captures/*.tsv.

Each output row is one characteristic value: where it came from (file and line), the device, the
characteristic, the direction, the time if the source gave one, the payload as lower-case hex, whether
the device is conformant, and the third party's own decode copied verbatim (not ground truth).
The payload bytes are copied, never retyped: every row can be traced back to its source line.

Usage: scripts/import-shared-captures.py [SHARED_CAPTURES_DIR] [OUTPUT_DIR]
"""
import csv
import os
import re
import sys

COLUMNS = ["source_line", "device", "characteristic", "direction", "time", "payload_hex", "conformance",
           "third_party_decode"]


def hex_of(tokens):
    return "".join("%02x" % int(t, 16) for t in tokens)


def row(src, line_no, device, char, direction, time, payload, conformance="conformant", decode=""):
    return {"source_line": "%s:%d" % (src, line_no), "device": device, "characteristic": char,
            "direction": direction, "time": time, "payload_hex": payload, "conformance": conformance,
            "third_party_decode": decode}


def stages(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or line.startswith("timestamp"):
                continue
            ts, _dec, hx, cad = line.rstrip("\n").split("\t")
            rows.append(row("cp_stages_sc3_tmiw.tsv", n, "Stages SC3 indoor bike", "2a63", "notify", ts, hx,
                            decode="TrackMyIndoorWorkout cadence %s rpm" % cad))
    return rows


def cp_samples(path):
    rows, section = [], ""
    lines = open(path).read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("# === "):
            section = line
            continue
        if line.startswith("#") or not line.strip():
            continue
        if "SRM PM9" in section and re.fullmatch(r"([0-9A-F]{2} ?)+", line.strip()):
            rows.append(row("cp_samples_issues_and_tests.txt", n, "SRM PM9", "2a63", "notify", "",
                            hex_of(line.split())))
        elif "4iiii" in section and re.fullmatch(r"([0-9A-F]{2} ?)+", line.strip()):
            decode = "poster: " + "; ".join(lines[n:n + 2])
            rows.append(row("cp_samples_issues_and_tests.txt", n, "4iiii crank power meter", "2a63", "notify", "",
                            hex_of(line.split()), decode=decode))
        elif "PowerTap" in section and re.match(r"^[0-9a-f]{1,2}( [0-9a-f]{1,2})+", line):
            tokens = line.split("<--")[0].split()
            if "0x2a63" in line:
                rows.append(row("cp_samples_issues_and_tests.txt", n, "PowerTap P1 pedals", "2a63", "notify", "",
                                hex_of(tokens), decode="SmartSpin2k: " + line.split("<--")[1].strip()))
            else:
                rows.append(row("cp_samples_issues_and_tests.txt", n,
                                "SmartSpin2k re-encoded CP notification (not device data)", "2a63", "notify", "",
                                hex_of(tokens), decode="SmartSpin2k CPMC sent"))
        elif "Assioma" in section and line.startswith("static uint8_t"):
            tokens = re.findall(r"0x([0-9a-f]{2})", line.split("//")[0])
            rows.append(row("cp_samples_issues_and_tests.txt", n, "Favero Assioma Uno", "2a63", "notify", "",
                            hex_of(tokens), decode="SmartSpin2k: " + line.split("CPS:")[1].strip()))
    return rows


def csc(path):
    rows = []
    lines = open(path).read().split("\n")
    for n, line in enumerate(lines, 1):
        m = re.match(r"I (\S+) Notification received from 00002a5b.*value: \(0x\) ([0-9A-F-]+)", line)
        if m:
            decode = []
            for follow in lines[n:n + 4]:
                if follow.startswith("I ") or follow.startswith("#"):
                    break
                decode.append(re.sub(r'^A \S+ "|"? received$', "", follow.strip()))
            rows.append(row("csc_samples_nrfconnect.txt", n, "Zwift Hub trainer", "2a5b", "notify", m.group(1),
                            hex_of(m.group(2).split("-")),
                            decode=("nRF Connect: " + " ".join(decode)) if decode else ""))
        m = re.match(r"Raw value: \(0x\) ([0-9A-F-]+)", line)
        if m:
            decode = " ".join(l.strip() for l in lines[n - 5:n - 1]).replace("Parsed value: ", "")
            rows.append(row("csc_samples_nrfconnect.txt", n, "Wahoo speed/cadence sensor", "2a5b", "notify", "",
                            hex_of(m.group(1).split("-")), decode="nRF Connect: " + decode))
    return rows


def hrm(path):
    rows, name = [], ""
    devices = {"byteHrmSampleData": "HRM (TrackMyIndoorWorkout byteHrmSampleData)",
               "moreHrmSampleData": "HRM (TrackMyIndoorWorkout moreHrmSampleData)",
               "polarH7SampleData": "Polar H7"}
    lines = open(path).read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        m = re.match(r"(\w+) = ", line)
        if m:
            name = m.group(1)
        for lst in ([] if "Client Rec'd" in line else re.findall(r"\[(\d+(?:, \d+)+)\]", line)):
            rows.append(row("hrm_samples.txt", n, devices[name], "2a37", "notify", "",
                            "".join("%02x" % int(v) for v in lst.split(","))))
        m = re.match(r"(\S+) ->  -> Client Rec'd Raw Heart Rate Measurement Data: \[\d+\] \[ ([0-9A-F ]+) \]", line)
        if m:
            rows.append(row("hrm_samples.txt", n, "HRM seen in a Zwift Hub session (peripheral not named)", "2a37",
                            "notify", m.group(1), hex_of(m.group(2).split()),
                            decode="simcline: " + lines[n].split("-> ", 1)[1].strip()))
    return rows


def ftms_tmiw(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#") or line.startswith("source_file"):
                continue
            src, device, conformance, _dec, hx, _flags, _len, expected = line.rstrip("\n").split("\t")
            conf = "conformant" if conformance.startswith("conformant") else "nonconformant: " + conformance.split(
                ": ", 1)[1]
            rows.append(row("ftms_indoor_bike_data_tmiw.tsv", n, device, "2ad2", "notify", "", hx, conf,
                            "TrackMyIndoorWorkout (%s): %s" % (src, expected)))
    return rows


def ftms_simcline(path):
    rows, device = [], ""
    kinds = [("Raw FTM Indoor Bike Data", "2ad2", "notify"),
             ("Raw FTM Control Point Response Data", "2ad9", "indicate"),
             ("Raw FTM Machine Status Data", "2ada", "notify"),
             ("Raw FTM Training Status Data", "2ad3", "notify"),
             ("Raw Heart Rate Measurement Data", "2a37", "notify"),
             ("Control Point:", "2ad9", "write")]
    lines = open(path).read().split("\n")
    for n, line in enumerate(lines, 1):
        if line.startswith("# === "):
            device = {"1": "Elite trainer", "2": "Jetblack Volt trainer", "3": "Zwift Hub trainer"}[line[6]]
            continue
        if line.startswith("#"):
            continue
        for marker, char, direction in kinds:
            if marker in line:
                payload = re.findall(r"\[ ([0-9A-F ]+) \]", line)[-1]
                time = line.split(" ->")[0] if re.match(r"\d\d:\d\d", line) else ""
                decode, conformance = "", "conformant"
                if char == "2ad2" and n < len(lines) and "Speed" in lines[n]:
                    decode = "simcline: " + lines[n].split("->", 1)[-1].strip()
                if direction == "write":
                    conformance = "client write by simcline (not device data)"
                rows.append(row("ftms_indoor_bike_data_simcline_logs.txt", n, device if direction != "write"
                                else "simcline FTMS client", char, direction, time, hex_of(payload.split()),
                                conformance, decode))
                break
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "data", "captures")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "Fixtures", "captures")
    outputs = {
        "cycling-power-measurement.tsv": stages(os.path.join(src, "cp_stages_sc3_tmiw.tsv"))
        + cp_samples(os.path.join(src, "cp_samples_issues_and_tests.txt")),
        "csc-measurement.tsv": csc(os.path.join(src, "csc_samples_nrfconnect.txt")),
        "heart-rate-measurement.tsv": hrm(os.path.join(src, "hrm_samples.txt")),
        "fitness-machine.tsv": ftms_tmiw(os.path.join(src, "ftms_indoor_bike_data_tmiw.tsv"))
        + ftms_simcline(os.path.join(src, "ftms_indoor_bike_data_simcline_logs.txt")),
    }
    os.makedirs(out, exist_ok=True)
    for name, rows in outputs.items():
        with open(os.path.join(out, name), "w", newline="") as f:
            writer = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE,
                                    quotechar=None)
            writer.writeheader()
            writer.writerows(rows)
        print("%s: %d values" % (name, len(rows)))


if __name__ == "__main__":
    main()
