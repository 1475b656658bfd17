#!/usr/bin/env python3
"""Turns the real notification sequences in Fixtures/captures/*.tsv into one cyclelog journal per device
(Fixtures/journals), in capture order. Where the capture has timestamps they are kept (time of day; the date is
not in every source, so 2000-01-01 is used); elsewhere notifications are one second apart. Only device data that a
workout uses is taken: measurement notifications (CP, CSC, HRM, Indoor Bike Data), not re-encoded or client data."""
import csv
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEASUREMENTS = {"2a63", "2a5b", "2a37", "2ad2"}
BASE = "2000-01-01T"


def main():
    devices = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "Fixtures", "captures", "*.tsv"))):
        with open(path) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row["characteristic"] not in MEASUREMENTS or row["direction"] not in ("notify", "indicate"):
                    continue
                if "not device data" in row["device"] or "client write" in row["conformance"]:
                    continue
                devices.setdefault(row["device"], []).append(row)
    out = os.path.join(ROOT, "Fixtures", "journals")
    os.makedirs(out, exist_ok=True)
    for number, (device, rows) in enumerate(sorted(devices.items()), start=1):
        slug = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")
        address = "02:00:00:00:00:%02X" % number
        lines = ["# cyclelog journal 1", "# %s: real notifications from Fixtures/captures (scripts/make-capture-journals.py)" % device]
        seconds = 8 * 3600.0
        last = None
        for row in rows:
            clock = re.search(r"(\d\d):(\d\d):(\d\d(?:\.\d+)?)(?: ?([AP]M))?$", row["time"])
            if clock:
                # "16:02:00.017", or nRF Connect's "08 October 2022 11:02:03.123 AM": the time of day only.
                h, m, s, half = clock.groups()
                hour = int(h) % 12 + (12 if half == "PM" else 0) if half else int(h)
                stamp = hour * 3600 + int(m) * 60 + float(s)
                # Keep the capture's clock; a sequence that restarts (another excerpt) continues a second later.
                seconds = stamp if last is None or stamp > last else last + 1
            elif last is not None:
                seconds = last + 1
            last = seconds
            whole = int(seconds)
            micros = round((seconds - whole) * 1_000_000)
            time = BASE + "%02d:%02d:%02d.%06dZ" % (whole // 3600, whole // 60 % 60, whole % 60, micros)
            lines.append("# %s — %s" % (row["source_line"], row["conformance"]))
            lines.append("%s notify %s %s %s" % (time, address, row["characteristic"], row["payload_hex"]))
        with open(os.path.join(out, slug + ".journal"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("%s: %d notifications" % (slug, len(rows)))


if __name__ == "__main__":
    main()
