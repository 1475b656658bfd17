#!/usr/bin/env python3
"""Replay benchmark (`make bench`): a 4-hour ride with three sensors (power 4 Hz, CSC 2 Hz, heart rate 1 Hz) as a
Linux-monitor btsnoop capture, replayed by the release `cyclelog` into a fresh database, whole process, best of N;
beside it tshark reading the same file in the same run. Then database bytes per ride-hour against the FIT file of
the ride the capture was made from."""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

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
                    target="≤ 60 ms, ≤ 40 MB" if mine else "", met=(median <= 0.06 and peak <= 40) if mine else None)
    if len(rows) == 2:
        print("  cyclelog is %.1f× faster than tshark (medians)" % (rows[1][1][1] / rows[0][1][1]))
        results.add("replay, 4-hour capture", "cyclelog against tshark (medians)",
                    median=round(rows[1][1][1] / rows[0][1][1], 1), unit="×", target="≥ 15×",
                    met=rows[1][1][1] / rows[0][1][1] >= 15)
    print_stages(database, fresh)
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


# What each stage mark (`CYCLELOG_STAGES=1`, written to standard error) says the replay was doing, in order.
STAGES = [
    ("parsed", "start-up: the process, the runtime, the arguments parsed"),
    ("capture-read", "the capture read into events (a new database created on the other core meanwhile)"),
    ("database-open", "the database open"),
    ("times-checked", "the time-jump rule over every event's time"),
    ("digests", "core 2: the journal's text hashed into the two digests (the ride claimed after them)"),
    ("workout-built", "core 1: the workout built from the events"),
    ("journal-written", "core 2: the journal's pieces written in order, a transaction each (packed by both)"),
    ("workout-prepared", "core 1: the ride's power curve, statistics, laps and packed 1 Hz series made"),
    ("stored", "the last transaction, waiting for the disk; the summary read back (its 1 Hz series as just stored)"),
    ("printed", "the summary printed"),
    ("exit", "the database closed (its log checkpointed), the process gone"),
]


def print_stages(database, fresh):
    """The median time since the process started at which each stage mark came, over 7 runs."""
    marks = {}
    for _ in range(7):
        fresh()
        start = time.clock_gettime(time.CLOCK_MONOTONIC) * 1000
        run = subprocess.run([CYCLELOG, "replay", "--db", database, CAPTURE], check=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env=dict(os.environ, CYCLELOG_STAGES="1"))
        marks.setdefault("exit", []).append(time.clock_gettime(time.CLOCK_MONOTONIC) * 1000 - start)
        for line in run.stderr.splitlines():
            words = line.split()
            if len(words) == 3 and words[0] == "stage":
                marks.setdefault(words[1], []).append(float(words[2]) - start)
    print("\nWhere a replay's time goes (CYCLELOG_STAGES=1; median over 7 runs of the time since the process started "
          "at which each stage ended; the two cores' stages overlap)")
    ended = sorted((statistics.median(marks[mark]), meaning) for mark, meaning in STAGES if mark in marks)
    for milliseconds, meaning in ended:
        print("  %7.1f ms  %s" % (milliseconds, meaning))


def database_bytes(database):
    return sum(os.path.getsize(database + s) for s in ("", "-wal") if os.path.exists(database + s))


if __name__ == "__main__":
    main()
