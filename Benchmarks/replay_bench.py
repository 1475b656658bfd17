#!/usr/bin/env python3
"""Replay benchmark (`make bench`): a 4-hour ride with three sensors (power 4 Hz, CSC 2 Hz, heart rate 1 Hz) as a
Linux-monitor btsnoop capture, replayed by the release `cyclelog` into a fresh database, whole process, best of N;
beside it tshark reading the same file in the same run. Then database bytes per ride-hour against the FIT file of
the ride the capture was made from."""
import os
import shutil
import subprocess
import sys
import tempfile

import results
from results import CYCLELOG, ROOT, measure

BENCH = os.path.join(ROOT, ".build", "bench")
CAPTURE = os.path.join(BENCH, "four-hours.btsnoop")
FIT = os.path.join(ROOT, "..", "shared", "data", "rides", "sweatpy_4078723797.fit")
FIT_SECONDS = 8355.6  # the FIT session's total_elapsed_time
RUNS = 5
# A real 5-minute ride (a Wattbike with two pauses), stored first to measure what the 4-hour ride adds.
FIRST_RIDE = os.path.join(ROOT, "Fixtures", "rides", "sweatpy_6449921903_ACTIVITY.journal")


def main():
    if not os.path.exists(CAPTURE):
        count = subprocess.run(
            [sys.executable, os.path.join(ROOT, "scripts", "make-ride-fixtures.py"), "--bench", BENCH],
            check=True, capture_output=True, text=True).stdout.strip()
        print("generated %s (%s notifications)" % (CAPTURE, count))
    folder = tempfile.mkdtemp(prefix="cyclelog-bench-")
    database = os.path.join(folder, "bench.sqlite")

    def fresh():
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(database + suffix):
                os.remove(database + suffix)

    ours = measure([CYCLELOG, "replay", "--db", database, CAPTURE], RUNS, prepare=fresh)
    size = database_bytes(database)
    rows = [("cyclelog replay → fresh database", ours)]
    if shutil.which("tshark"):
        rows.append(("tshark -r (ATT handle + value fields)",
                     measure(["tshark", "-r", CAPTURE, "-T", "fields", "-e", "btatt.handle", "-e", "btatt.value"], 3)))
    print("\nReplay of a 4-hour, three-sensor ride (%.1f MB btsnoop, whole process; best / median, peak memory)"
          % (os.path.getsize(CAPTURE) / 1e6))
    for label, (fastest, median, peak) in rows:
        print("  %-42s %6.3f s / %6.3f s  %6.1f MB" % (label, fastest, median, peak))
    for label, (fastest, median, peak) in rows:
        mine = label.startswith("cyclelog")
        results.add("replay, 4-hour capture", label, fastest, median, peak_mb=peak,
                    target="≤ 0.15 s, ≤ 40 MB" if mine else "", met=(median <= 0.15 and peak <= 40) if mine else None)
    if len(rows) == 2:
        print("  cyclelog is %.1f× faster than tshark (medians)" % (rows[1][1][1] / rows[0][1][1]))
        results.add("replay, 4-hour capture", "cyclelog against tshark (medians)",
                    median=round(rows[1][1][1] / rows[0][1][1], 1), unit="×", target="≥ 8×",
                    met=rows[1][1][1] / rows[0][1][1] >= 8)
    # The ride's own bytes: what it adds to a database that already holds a ride (an empty database's tables take
    # about 100 kB before the first ride, a fixed cost counted once, not per ride).
    fresh()
    subprocess.run([CYCLELOG, "replay", "--db", database, FIRST_RIDE], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    before = database_bytes(database)
    subprocess.run([CYCLELOG, "replay", "--db", database, CAPTURE], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    own = database_bytes(database) - before
    print("\nStorage per ride-hour (raw journal, 1 Hz samples, summary, power curve, laps, events)")
    fit_per_hour = os.path.getsize(FIT) / FIT_SECONDS * 3600 if os.path.exists(FIT) else None
    for label, stored in (("a fresh database holding only this ride", size), ("the ride's own bytes", own)):
        per_hour = stored / 4
        ratio = " = %.2f× the FIT file" % (per_hour / fit_per_hour) if fit_per_hour else ""
        print("  %-40s %7.1f kB/h%s" % (label, per_hour / 1000, ratio))
        if fit_per_hour:
            results.add("storage per ride-hour", label + " against the FIT file",
                        median=round(per_hour / fit_per_hour, 2), unit="×", target="≤ 1.4×",
                        met=per_hour / fit_per_hour <= 1.4)
    if fit_per_hour:
        print("  %-40s %7.1f kB/h (Garmin Edge 1000, GPS, 1 Hz records)" % ("FIT of the same ride", fit_per_hour / 1000))
    shutil.rmtree(folder)


def database_bytes(database):
    return sum(os.path.getsize(database + s) for s in ("", "-wal") if os.path.exists(database + s))


if __name__ == "__main__":
    main()
