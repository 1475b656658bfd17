#!/usr/bin/env python3
"""tshark decoding a btsnoop capture of the same CP, CSC and HRM notifications (repeated to COUNT).
Usage: tshark_bench.py FILE COUNT — prints JSON {"notifications": n, "seconds": s, "payloadsPerSecond": r}."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Conformance"))
import btsnoop  # noqa: E402


def main():
    notifications = [(int(uuid, 16), bytes.fromhex(hx)) for uuid, hx in (line.split() for line in open(sys.argv[1]))
                     if uuid in ("2a63", "2a5b", "2a37")]
    count = int(sys.argv[2])
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "bench.btsnoop")
        writer = btsnoop.BtsnoopWriter(path)
        writer.connect_and_discover()
        for index in range(count):
            writer.notify(*notifications[index % len(notifications)])
        writer.close()
        start = time.perf_counter()
        fields = ["btatt.cycling_power_measurement.instantaneous_power", "btatt.csc_measurement.cumulative_crank_revolutions",
                  "btatt.heart_rate_measurement.value.8"]
        subprocess.run(["tshark", "-r", path, "-T", "fields"] + [a for f in fields for a in ("-e", f)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
    print(json.dumps({"notifications": count, "seconds": seconds, "payloadsPerSecond": count / seconds}))


if __name__ == "__main__":
    main()
