#!/usr/bin/env python3
"""A decade of riding (`make bench`): how cyclelog's cost grows with a rider's history. One database grows to 10,
500 and 5 000 rides (DECADE_BENCH_RIDES), ridden every 0.73 days over ten years: the fixtures' 78-minute and
2 h 19 min rides and a 5-minute one in turn, each one a journal moved to its day and replayed a hundred at a
time (about 1.2 hours a ride). At each size, median and peak memory of RUNS whole processes:

- storing one more ride: the 78-minute ride replayed into a copy of the database, a day after the newest (the FTP
  history brought up to date with it);
- `list` (its first page), `show last --json`, `ftp`, `upload --status`, `workouts list` (a library of
  LIBRARY_WORKOUTS generated .zwo workouts, imported once);
- the history in `cyclelog-mirror` (a private session bus, a paired device): the rides page's data
  (`/api/v1/workouts?limit=50`, what the page asks first) and the newest ride's page (its summary, chart and the
  42- and 90-day power curves), the mirror's peak memory after them.

A figure that grows with the rides a command does not show is a cost of the history; the database's size per
ride-hour is printed beside the FIT files the rides came from.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import results
from history_bench import DAY_US, parse, request, shifted, timed
from mirror_bench import MIRROR, peak_megabytes
from results import CYCLELOG, ROOT

SYNC = os.path.join(os.path.dirname(CYCLELOG), "cyclelog-sync")
RUNS = int(os.environ.get("DECADE_BENCH_RUNS", "5"))
SIZES = [int(n) for n in os.environ.get("DECADE_BENCH_RIDES", "10,500,5000").split(",")]
RIDES = [os.path.join(ROOT, "Fixtures", "rides", name) for name in (
    "fitparse_Edge810-Vector-2013-08-16-15-35-10.journal", "sweatpy_4078723797.journal",
    "sweatpy_6449921903_ACTIVITY.journal")]
# The FIT files the fixture rides were made from, for the size per ride-hour.
FIT = [os.path.join(ROOT, "Fixtures", "rides", "fit", name) for name in (
    "fitparse_Edge810-Vector-2013-08-16-15-35-10.fit", "sweatpy_4078723797.fit",
    "sweatpy_6449921903_ACTIVITY.fit")]
FIRST_DAY_US = parse("2016-01-04T06:00:00.000000Z")
STEP_US = int(0.73 * DAY_US)
LIBRARY_WORKOUTS = 100


def write_library(folder):
    """LIBRARY_WORKOUTS .zwo workouts of 8 to 27 steps (warm-up, intervals, cool-down), each its own name."""
    os.makedirs(folder)
    for number in range(LIBRARY_WORKOUTS):
        intervals = "".join(
            '    <SteadyState Duration="%d" Power="%.2f"/>\n    <SteadyState Duration="120" Power="0.55"/>\n'
            % (60 + 30 * (step % 5), 0.85 + 0.05 * (step % 6)) for step in range(3 + number % 10))
        with open(os.path.join(folder, "workout-%03d.zwo" % number), "w") as file:
            file.write('<workout_file>\n  <name>Decade %03d</name>\n  <sportType>bike</sportType>\n  <workout>\n'
                       '    <Warmup Duration="600" PowerLow="0.45" PowerHigh="0.70"/>\n%s'
                       '    <Cooldown Duration="300" PowerLow="0.60" PowerHigh="0.40"/>\n  </workout>\n'
                       '</workout_file>\n' % (number, intervals))


def history_figures(database, folder):
    """Best and median seconds of the rides page's data and of the newest ride's page, and the mirror's peak MB."""
    with results.history_server(MIRROR, database, folder) as (port, token, mirror):
        ride = json.loads(request(port, token, "/api/v1/workouts?limit=1")[1])[0]["id"]
        page = ["/api/v1/workouts/%d" % ride, "/api/v1/workouts/%d/chart.svg" % ride,
                "/api/v1/power-curve?window=42d", "/api/v1/power-curve?window=90d"]
        figures = {"history: rides page data": timed(port, token, ["/api/v1/workouts?limit=50"], runs=RUNS),
                   "history: newest ride's page": timed(port, token, page, runs=RUNS)}
        peak = peak_megabytes(mirror.pid)
    return {label: (best, median, peak) for label, (best, median) in figures.items()}


def first_event_us(lines):
    return next(parse(line[:27]) for line in lines if not line.startswith("#") and len(line) > 27
                and line[26] == "Z")


def last_event_us(lines):
    return next(parse(line[:27]) for line in reversed(lines) if not line.startswith("#") and len(line) > 27
                and line[26] == "Z")


def write_rides(folder, journals, first, count):
    """Rides number `first` to `first + count - 1`, each the next fixture moved to its day; their paths and hours."""
    paths, hours = [], 0.0
    for number in range(first, first + count):
        lines = journals[number % len(journals)]
        start = first_event_us(lines)
        path = os.path.join(folder, "ride-%05d.journal" % number)
        with open(path, "w") as file:
            file.write("\n".join(shifted(lines, FIRST_DAY_US + number * STEP_US - start)) + "\n")
        paths.append(path)
        hours += (last_event_us(lines) - start) / 3.6e9
    return paths, hours


def main():
    for program in (CYCLELOG, SYNC, MIRROR):
        if not os.access(program, os.X_OK):
            sys.exit("decade bench: %s is not built (make bench builds it)" % program)
    journals = [open(path).read().splitlines() for path in RIDES]
    folder = tempfile.mkdtemp(prefix="cyclelog-decade-bench-")
    database = os.path.join(folder, "rides.sqlite")
    scratch = os.path.join(folder, "scratch.sqlite")
    rows, stored, hours = [], 0, 0.0
    try:
        write_library(os.path.join(folder, "library"))
        subprocess.run([CYCLELOG, "workouts", "import", "--db", database, os.path.join(folder, "library")],
                       check=True, stdout=subprocess.DEVNULL)
        for size in SIZES:
            # A hundred journals at a time (5 000 would be 10 GB), each batch stored by one replay.
            built = 0.0
            for first in range(stored, size, 100):
                paths, added_hours = write_rides(folder, journals, first, min(100, size - first))
                started = time.perf_counter()
                subprocess.run([CYCLELOG, "replay", "--db", database] + paths, check=True, stdout=subprocess.DEVNULL)
                built += time.perf_counter() - started
                for path in paths:
                    os.remove(path)
                hours += added_hours
            stored = size
            # The next ride, a day after the newest, stored into a fresh copy each run.
            next_ride = write_rides(folder, journals[:1], size, 1)[0][0]

            def fresh_copy():
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(scratch + suffix):
                        os.remove(scratch + suffix)
                with sqlite3.connect(database) as source, sqlite3.connect(scratch) as copy:
                    source.backup(copy)
            figures = {"store one more ride": results.measure(
                [CYCLELOG, "replay", "--db", scratch, next_ride], RUNS, prepare=fresh_copy)}
            for label, command in (("list (first page)", [CYCLELOG, "list"]),
                                   ("show last --json", [CYCLELOG, "show", "last", "--json"]),
                                   ("ftp", [CYCLELOG, "ftp"]), ("upload --status", [SYNC, "upload", "--status"]),
                                   ("workouts list (%d workouts)" % LIBRARY_WORKOUTS, [CYCLELOG, "workouts", "list"])):
                figures[label] = results.measure(command + ["--db", database], RUNS)
            figures.update(history_figures(database, folder))
            size_mb = sum(os.path.getsize(database + suffix) for suffix in ("", "-wal")
                          if os.path.exists(database + suffix)) / 1e6
            rows.append((size, hours, built, figures, size_mb))
            print("decade bench: %d rides (%.0f h), the last %d stored in %.1f s" % (
                size, hours, size - (rows[-2][0] if len(rows) > 1 else 0), built), file=sys.stderr)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    fit_mb_per_hour = sum(os.path.getsize(path) for path in FIT) / 1e6 / sum(
        (last_event_us(j) - first_event_us(j)) / 3.6e9 for j in journals)
    labels = list(rows[0][3])
    print("\nA decade of riding (release; whole processes; median ms / peak MB of %d runs)" % RUNS)
    print("  %-28s" % "" + "".join("%22s" % ("%d rides" % size) for size, *_ in rows))
    for label in labels:
        cells = "".join("%14.1f ms %4.0f MB" % (figures[label][1] * 1000, figures[label][2])
                        for _, _, _, figures, _ in rows)
        print("  %-28s%s" % (label, cells))
        smallest = rows[0][3][label][1]
        for size, _, _, figures, _ in rows:
            # What must not grow with the history: storing one more ride.
            bounded = label == "store one more ride" and size > rows[0][0]
            results.add("Decade", "%s, %d rides" % (label, size), figures[label][0], figures[label][1],
                        peak_mb=round(figures[label][2], 1),
                        target="≤ 1.5× at %d rides" % rows[0][0] if bounded else "",
                        met=figures[label][1] <= 1.5 * smallest if bounded else None)
    print("  %-28s" % "database MB per ride-hour" + "".join(
        "%22s" % ("%.2f (FIT %.2f)" % (size_mb / hours, fit_mb_per_hour)) for _, hours, _, _, size_mb in rows))
    before = 0
    for size, hours, built, _, size_mb in rows:
        results.add("Decade", "database per ride-hour, %d rides" % size, median=round(size_mb / hours, 3),
                    unit="MB", target="≤ %.2f MB (1.4× FIT)" % (1.4 * fit_mb_per_hour),
                    met=size_mb / hours <= 1.4 * fit_mb_per_hour)
        results.add("Decade", "storing rides %d to %d by replay, per ride" % (before + 1, size),
                    median=built / (size - before))
        before = size


if __name__ == "__main__":
    main()
