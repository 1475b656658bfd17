#!/usr/bin/env python3
"""A decade of riding (`make bench`): how cyclelog's cost grows with a rider's history. One database grows to 10,
500 and 5 000 rides (DECADE_BENCH_RIDES), ridden every 0.73 days over ten years: the fixtures' 78-minute and
2 h 19 min rides and a 5-minute one in turn, each one a journal moved to its day and replayed a hundred at a
time (about 1.2 hours a ride). At each size, median and peak memory of RUNS whole processes:

- storing one more ride: the 78-minute ride replayed into a copy of the database, a day after the newest (the FTP
  history brought up to date with it);
- `list` (its first page), `show --json` of the newest 78-minute ride, `ftp`, `upload --status`, `workouts list` (a
  library of LIBRARY_WORKOUTS generated .zwo workouts, imported once);
- the history in `cyclelog-mirror` (a private session bus, a paired device): the rides page's data
  (`/api/v1/workouts?limit=50`, what the page asks first) and a ride's page (its summary, chart and the 42- and
  90-day power curves; the newest 78-minute ride, the same kind at every size), the mirror's peak
  memory after them;
- `cyclelog-sync sync` with nothing to do, against PostgreSQL 15 (sync_bench's server, every ride already pushed),
  and an upload run with nothing to do, to the intervals.icu stand-in (every ride already uploaded: each size's new
  rides are pushed and uploaded before the figures).

The rides are a decade's: each has a lap every 15 minutes; every fourth follows a structured workout (its
`workout` line) on a trainer in ERG (a `trainer erg` line at each of its steps); every tenth is a declared
20-minute FTP test, which the FTP history (`ftp`, the history's curves) reads.

A figure that grows with the rides a command does not show is a cost of the history. The machine's speed drifts
between sizes by more than that, so each figure of a later size is taken in turn with the same command on a copy of
the first size's database, kept as it was, and judged by their ratio. The database's size per ride-hour is printed
beside the FIT files the rides came from.
"""
import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import results
import sync_bench
import upload_bench
from history_bench import DAY_US, iso, parse, shifted, timed
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
SYNC_NOTHING = "sync, nothing to do"
SYNC_EVERY_ROW = "sync, reading every row"


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


def history_figures(databases, folder):
    """Best and median seconds of the rides page's data and of a ride's page, and the mirror's peak MB, for each of
    `databases` (each served by its own mirror, the requests to them in turn): a list of label → figures. The ride is
    the newest made from the first fixture, so that each size shows the same kind of ride."""
    times = [{} for _ in databases]
    with contextlib.ExitStack() as servers:
        served = []
        for number, database in enumerate(databases):
            state = os.path.join(folder, "history-%d" % number)
            os.makedirs(state, exist_ok=True)
            ride = newest_of_first_fixture(database)
            served.append((servers.enter_context(results.history_server(MIRROR, database, state)), {
                "history: rides page data": ["/api/v1/workouts?limit=50"],
                "history: a ride's page": ["/api/v1/workouts/%d" % ride, "/api/v1/workouts/%d/chart.svg" % ride,
                                           "/api/v1/power-curve?window=42d", "/api/v1/power-curve?window=90d"]}))
        for _ in range(RUNS):
            for measured, ((port, token, _), requests) in zip(times, served):
                for label, paths in requests.items():
                    measured.setdefault(label, []).append(timed(port, token, paths, runs=1)[0])
        peaks = [peak_megabytes(mirror.pid) for (_, _, mirror), _ in served]
    return [{label: (min(runs), sorted(runs)[len(runs) // 2], peak) for label, runs in measured.items()}
            for measured, peak in zip(times, peaks)]


def newest_of_first_fixture(database):
    """The id of the newest ride made from RIDES[0] (ride numbers are multiples of len(RIDES)), found from the
    starts: the same kind of ride at every size, where the newest ride is of another fixture at each."""
    with sqlite3.connect(database) as connection:
        newest = connection.execute(
            "SELECT id, startMicroseconds FROM workout ORDER BY startMicroseconds DESC LIMIT ?", (len(RIDES),))
        return next(ride for ride, start_us in newest.fetchall()
                    if round((start_us - FIRST_DAY_US) / STEP_US) % len(RIDES) == 0)


def first_event_us(lines):
    return next(parse(line[:27]) for line in lines if not line.startswith("#") and len(line) > 27
                and line[26] == "Z")


def last_event_us(lines):
    return next(parse(line[:27]) for line in reversed(lines) if not line.startswith("#") and len(line) > 27
                and line[26] == "Z")


# The structured workout every fourth ride follows (its canonical text, escaped onto the `workout` line), and the
# ERG targets of its steps at FTP 250 W: (seconds into the ride, watts).
WORKOUT_LINE = "workout ftp=250 " + "\\n".join([
    "# cyclelog workout 1", "name Decade tempo", "step warmup 600s 50%..75%", "step active 1200s 85%",
    "step rest 300s 55%", "step active 1200s 85%", "step cooldown 600s 60%..40%"])
ERG_STEPS = [(0, 125), (600, 213), (1800, 138), (2100, 213), (3300, 150)]


def enriched(lines, number):
    """`lines` as ride `number` of the decade: laps every 15 minutes, the workout and its ERG targets on every fourth
    ride, `test=20min` on every tenth's start line."""
    start_line = next(index for index, line in enumerate(lines) if line[27:].startswith(" start "))
    start_us = parse(lines[start_line][:27])
    extra = [(start_us + minutes * 60_000_000, "lap") for minutes in range(15, 24 * 60, 15)]
    if number % 4 == 0:
        extra.append((start_us, WORKOUT_LINE))
        extra += [(start_us + seconds * 1_000_000 + 1, "trainer erg %d" % watts) for seconds, watts in ERG_STEPS]
    out = list(lines)
    if number % 10 == 0:
        out[start_line] = out[start_line].replace(" name=", " test=20min name=", 1)
    end_us = last_event_us(lines)
    # Each added line after the ride's lines of its moment and before its end; the ride's own lines keep their order.
    # The times are compared as text (fixed-width UTC, which sorts as the times do): parsing each line's would cost
    # more than the replay that stores the ride.
    pending = [(iso(at), text) for at, text in sorted(extra) if at < end_us]
    merged, next_at = [], 0
    for line in out[start_line + 1:]:
        while next_at < len(pending) and len(line) > 27 and line[26] == "Z" and pending[next_at][0] < line[:27]:
            merged.append(" ".join(pending[next_at]))
            next_at += 1
        merged.append(line)
    return out[:start_line + 1] + merged


def write_rides(folder, journals, first, count):
    """Rides number `first` to `first + count - 1`, each the next fixture moved to its day and `enriched`; their
    paths and hours."""
    paths, hours = [], 0.0
    for number in range(first, first + count):
        lines = journals[number % len(journals)]
        start = first_event_us(lines)
        path = os.path.join(folder, "ride-%05d.journal" % number)
        with open(path, "w") as file:
            file.write("\n".join(enriched(shifted(lines, FIRST_DAY_US + number * STEP_US - start), number)) + "\n")
        paths.append(path)
        hours += (last_event_us(lines) - start) / 3.6e9
    return paths, hours


STORE = "store one more ride"
BASE = "base: "
# What a later size must cost against the first size's database in the same run: a command that shows the same
# thing (a first page, one ride, the FTP in force) as much; storing a ride a little more (its FTP update reads the
# 42 days before it, which a decade fills).
BOUNDS = {STORE: 1.5}
READING_BOUND = 1.25
# The rides page shows up to 50 rides: 10 at the first size, so its ratio has no bound.
UNBOUNDED = {"history: rides page data"}


def fresh_copy(source, target):
    """`target` made a copy of database `source` (its WAL included), anew."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.remove(target + suffix)
    with sqlite3.connect(source) as original, sqlite3.connect(target) as copy:
        original.backup(copy)


def reading_commands(database, scratch, next_ride):
    """(label, command) of each figure that a copy of the first size's database can be measured beside: storing
    `next_ride` into `scratch` (a fresh copy of `database` each run), and the commands that read `database`."""
    newest = str(newest_of_first_fixture(database))
    return [(STORE, [CYCLELOG, "replay", "--db", scratch, next_ride]),
            ("list (first page)", [CYCLELOG, "list", "--db", database]),
            ("show --json (78-min ride)", [CYCLELOG, "show", newest, "--json", "--db", database]),
            ("ftp", [CYCLELOG, "ftp", "--db", database]),
            ("upload --status", [SYNC, "upload", "--status", "--db", database]),
            ("workouts list (%d workouts)" % LIBRARY_WORKOUTS, [CYCLELOG, "workouts", "list", "--db", database]),
            ("upload, nothing to do", [SYNC, "upload", "--db", database])]


def main():
    for program in (CYCLELOG, SYNC, MIRROR):
        if not os.access(program, os.X_OK):
            sys.exit("decade bench: %s is not built (make bench builds it)" % program)
    journals = [open(path).read().splitlines() for path in RIDES]
    folder = tempfile.mkdtemp(prefix="cyclelog-decade-bench-")
    # PostgreSQL runs as nobody, in a folder of this one.
    os.chmod(folder, 0o755)
    database = os.path.join(folder, "rides.sqlite")
    scratch = os.path.join(folder, "scratch.sqlite")
    base, base_scratch = os.path.join(folder, "base.sqlite"), os.path.join(folder, "base-scratch.sqlite")
    rows, stored, hours = [], 0, 0.0
    server = standin = None
    try:
        write_library(os.path.join(folder, "library"))
        subprocess.run([CYCLELOG, "workouts", "import", "--db", database, os.path.join(folder, "library")],
                       check=True, stdout=subprocess.DEVNULL)
        server = sync_bench.Server(folder)
        # Every command below reaches that server (cyclelog-sync reads libpq's variables).
        os.environ.update({key: server.environment[key] for key in ("PGHOST", "PGUSER", "PGDATABASE")})
        subprocess.run([SYNC, "init", "--db", database], check=True, stdout=subprocess.DEVNULL)
        standin = upload_bench.StandIn()
        key = os.path.join(folder, "key")
        with open(key, "w") as file:
            file.write(upload_bench.KEY + "\n")
        os.chmod(key, 0o600)
        subprocess.run([SYNC, "account", "add", "intervals", "--db", database, "--athlete", "i1", "--api-key-file",
                        key, "--address", standin.address, "--since", "1990-01-01"], check=True,
                       stdout=subprocess.DEVNULL)
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
            stored_before, stored = stored, size
            # Every ride on the server and uploaded (a sync uploads too), so that the sync and upload figures have
            # nothing to do.
            started = time.perf_counter()
            synced = subprocess.run([SYNC, "sync", "--db", database], check=True, capture_output=True,
                                    text=True).stdout
            synced_seconds = time.perf_counter() - started
            on_server = int(server.query("SELECT count(*) FROM ride WHERE NOT deleted"))
            if on_server != size:
                sys.exit("decade bench: %d rides on the server, not %d" % (on_server, size))
            uploaded = synced + subprocess.run([SYNC, "upload", "--db", database], check=True, capture_output=True,
                                               text=True).stdout
            print("decade bench: %d rides pushed and %d uploaded in %.1f s" % (
                size - stored_before, uploaded.count("uploaded to intervals.icu"), synced_seconds), file=sys.stderr)
            # The next ride, a day after the newest, stored into a fresh copy each run.
            next_ride = write_rides(folder, journals[:1], size, 1)[0][0]
            figures, at_base = {}, {}
            # Each figure of a later size in turn with the same at the first size's database, kept aside as it was
            # (`base`): the machine's speed drifts between sizes more than a history should cost.
            here = reading_commands(database, scratch, next_ride)
            there = (reading_commands(base, base_scratch, next_ride) if os.path.exists(base)
                     else [(None, None)] * len(here))
            for (label, command), (_, at_first) in zip(here, there):
                commands = [(label, command)] + ([(BASE + label, at_first)] if at_first else [])
                measured = results.measure_interleaved(commands, RUNS, prepare={
                    label: lambda: fresh_copy(database, scratch), BASE + label: lambda: fresh_copy(base, base_scratch)}
                    if label == STORE else None)
                figures[label] = measured[label]
                if BASE + label in measured:
                    at_base[label] = measured[BASE + label]

            def forget_horizon():
                with sqlite3.connect(database) as connection:
                    connection.execute("DELETE FROM pullHorizon")
            # Beside it, the same sync reading every row of the rider's, as a pull without a horizon does (a first
            # pull, or cyclelog-sync before schema v3): in turn, so that the machine's drift falls on both.
            figures.update(results.measure_interleaved(
                [(label, [SYNC, "sync", "--db", database]) for label in (SYNC_NOTHING, SYNC_EVERY_ROW)], RUNS,
                prepare={SYNC_EVERY_ROW: forget_horizon}))
            history = history_figures([database] + ([base] if os.path.exists(base) else []), folder)
            figures.update(history[0])
            if len(history) > 1:
                at_base.update(history[1])
            size_mb = sum(os.path.getsize(database + suffix) for suffix in ("", "-wal")
                          if os.path.exists(database + suffix)) / 1e6
            rows.append((size, hours, built, figures, size_mb, at_base))
            if not os.path.exists(base):
                fresh_copy(database, base)
            print("decade bench: %d rides (%.0f h), the last %d stored in %.1f s" % (
                size, hours, size - (rows[-2][0] if len(rows) > 1 else 0), built), file=sys.stderr)
    finally:
        if standin:
            standin.stop()
        if server:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    fit_mb_per_hour = sum(os.path.getsize(path) for path in FIT) / 1e6 / sum(
        (last_event_us(j) - first_event_us(j)) / 3.6e9 for j in journals)
    labels = list(rows[0][3])
    first = rows[0][0]
    print("\nA decade of riding (release; whole processes; median ms / peak MB of %d runs)" % RUNS)
    print("  %-28s" % "" + "".join("%22s" % ("%d rides" % size) for size, *_ in rows))
    for label in labels:
        cells = "".join("%14.1f ms %4.0f MB" % (figures[label][1] * 1000, figures[label][2])
                        for _, _, _, figures, _, _ in rows)
        print("  %-28s%s" % (label, cells))
        for size, _, _, figures, _, at_base in rows:
            median = figures[label][1]
            target, met = "", None
            if label in at_base:
                # Against the first size's database in the same run: what must not grow with the history.
                bound, ratio = BOUNDS.get(label, READING_BOUND), median / at_base[label][1]
                if label in UNBOUNDED:
                    target = "%.2f× at %d rides in the same run" % (ratio, first)
                else:
                    target, met = "≤ %.3g× at %d rides in the same run: %.2f×" % (bound, first, ratio), ratio <= bound
            elif label == SYNC_NOTHING:
                target, met = "< 50 ms", median < 0.05
            results.add("Decade", "%s, %d rides" % (label, size), figures[label][0], median,
                        peak_mb=round(figures[label][2], 1), target=target, met=met)
    if len(rows) > 1:
        print("\n  against the %d-ride database, in turn in the same run (ratio of medians)" % first)
        for label in rows[1][5]:
            print("  %-28s" % label + "%22s" % "" + "".join(
                "%21.2f×" % (figures[label][1] / at_base[label][1]) for _, _, _, figures, _, at_base in rows[1:]))
    print("  %-28s" % "database MB per ride-hour" + "".join(
        "%22s" % ("%.2f (FIT %.2f)" % (size_mb / hours, fit_mb_per_hour)) for _, hours, _, _, size_mb, _ in rows))
    before = 0
    for size, hours, built, _, size_mb, _ in rows:
        results.add("Decade", "database per ride-hour, %d rides" % size, median=round(size_mb / hours, 3),
                    unit="MB", target="≤ %.2f MB (1.4× FIT)" % (1.4 * fit_mb_per_hour),
                    met=size_mb / hours <= 1.4 * fit_mb_per_hour)
        results.add("Decade", "storing rides %d to %d by replay, per ride" % (before + 1, size),
                    median=built / (size - before))
        before = size


if __name__ == "__main__":
    main()
