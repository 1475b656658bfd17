"""The sync benchmark (`make bench`): the release `cyclelog-sync` against PostgreSQL 15 from Debian, started here
as an unprivileged user on a Unix socket in a temporary folder (fsync and every other setting as shipped).

- the first sync of 200 and of 1000 one-hour rides (the first hour of a real ride with power, speed and heart rate,
  each copy a day later: about 1.7 MB of journal per ride) and, in turn with each, the peer: PostgreSQL's own `psql`
  loading the same journals with `COPY … FROM STDIN` in one run (the floor: the bytes into the same server). Each
  run goes into a database of its own on the server, the collector's from a copy of it as replayed; medians of
  SYNC_BENCH_FIRST_RUNS pairs — target ≤ 1.2× COPY. The sync has the server compress what it stores with LZ4
  (Docs/guide/sync.md); COPY leaves the server's default (pglz), and the same COPY with LZ4 is printed beside it;
- a sync with nothing to do over those 1000 rides, as the timer runs it every 15 minutes — target ≤ 50 ms;
- a second collector of the same rider (`join`) pulling those 1000 rides, each rebuilt from its journal, and after
  it psql's `COPY (SELECT journal FROM ride) TO STDOUT` (the floor: the same bytes out, as the sync stored them)
  — target ≤ 1.5× COPY out;
- a saved ride visible on the server: from the moment the ride is stored (its `cyclelog replay` exits, where a
  recorder rewrites its trigger file) to the moment another client sees its row, with `cyclelog-sync sync` started
  at once as `cyclelog-sync.path` starts it — target ≤ 2 s. systemd's own start of the unit is not in this figure:
  the real-stack VM runs the trigger under systemd (Tests/RealStack, `make test-vm`).
"""
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import results
from history_bench import DAY_US, iso, parse, shifted
from results import ROOT

SYNC = os.environ.get("CYCLELOG_SYNC_BINARY", os.path.join(ROOT, ".build", "release", "cyclelog-sync"))
CYCLELOG = results.CYCLELOG
POSTGRES = "/usr/lib/postgresql/15/bin"
RIDE = os.path.join(ROOT, "Fixtures", "rides", "sweatpy_4078723797.journal")
SIZES = sorted(int(n) for n in os.environ.get("SYNC_BENCH_RIDES", "200,1000").split(","))
RIDES = SIZES[-1]
RUNS = int(os.environ.get("SYNC_BENCH_RUNS", "5"))
FIRST_RUNS = int(os.environ.get("SYNC_BENCH_FIRST_RUNS", "3"))
COPY_BOUND = 1.2
PULL_BOUND = 1.5
HOUR_US = 3_600_000_000


def one_hour(lines):
    """The ride's first hour: its events before 60 minutes, then an end control at 60 minutes."""
    events = [line for line in lines if len(line) > 27 and line[26] == "Z"]
    first = parse(events[0][:27])
    kept = [line for line in lines if not (len(line) > 27 and line[26] == "Z") or parse(line[:27]) < first + HOUR_US]
    return kept + [iso(first + HOUR_US) + " end"]


def as_nobody(command, **options):
    nobody = pwd.getpwnam("nobody")
    return subprocess.run(command, user=nobody.pw_uid, group=nobody.pw_gid, check=True, **options)


class Server:
    """PostgreSQL 15 in `folder`, listening only on a Unix socket there."""

    def __init__(self, folder):
        self.data = os.path.join(folder, "postgres")
        os.makedirs(self.data, mode=0o700)
        os.chown(self.data, pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid)
        as_nobody([os.path.join(POSTGRES, "initdb"), "-D", self.data, "-A", "trust", "-U", "cyclelog", "-E", "UTF8"],
                  capture_output=True)
        as_nobody([os.path.join(POSTGRES, "pg_ctl"), "-D", self.data, "-w", "-l", os.path.join(self.data, "log"),
                   "-o", "-k %s -c listen_addresses=''" % self.data, "start"], capture_output=True)
        self.environment = dict(os.environ, PGHOST=self.data, PGUSER="cyclelog", PGDATABASE="postgres")

    def query(self, sql, database="postgres"):
        return subprocess.run(["psql", "-AtXq", "-c", sql], env=self.reaching(database), check=True,
                              capture_output=True, text=True).stdout.strip()

    def reaching(self, database):
        """The environment of a client of `database` on this server."""
        return dict(self.environment, PGDATABASE=database)

    def stop(self):
        as_nobody([os.path.join(POSTGRES, "pg_ctl"), "-D", self.data, "-m", "fast", "stop"], capture_output=True)


def timed(command, environment):
    start = time.perf_counter()
    result = subprocess.run(command, env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit("sync bench: %s failed (%d): %s" % (" ".join(command), result.returncode, result.stderr[-500:]))
    return elapsed


def copy_peer(server, paths, database="postgres", compression=None):
    """psql's COPY of the same journal files into a table of one text column, as one whole process; the values
    compressed by the server's default (pglz) or by `compression` (set for psql's session, as cyclelog-sync sets
    LZ4 for its own)."""
    server.query("CREATE TABLE peer_ride (journal text)", database)
    environment = server.reaching(database)
    if compression:
        environment = dict(environment, PGOPTIONS="-c default_toast_compression=%s" % compression)
    start = time.perf_counter()
    copy = subprocess.Popen(["psql", "-AtXq", "-c", "COPY peer_ride (journal) FROM STDIN"],
                            env=environment, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    for path in paths:
        with open(path, "rb") as file:
            text = file.read()
        copy.stdin.write(text.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r") + b"\n")
    copy.stdin.close()
    if copy.wait() != 0:
        sys.exit("sync bench: psql COPY failed")
    elapsed = time.perf_counter() - start
    rows = int(server.query("SELECT count(*) FROM peer_ride", database))
    server.query("DROP TABLE peer_ride", database)
    return elapsed, rows


def first_syncs(server, collector, paths, keep_last):
    """FIRST_RUNS first syncs of `collector` (a database of len(paths) rides, left as it was) and as many COPYs of
    `paths`, in turn, each into a server database of its own, dropped after; with `keep_last` the last sync goes to
    the server's `postgres` database and its collector is left at `collector`, synced. Sorted seconds of each."""
    pristine = collector + ".replayed"
    with sqlite3.connect(collector) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(collector, pristine)
    syncs, copies, fast_copies = [], [], []
    for run in range(FIRST_RUNS):
        last = keep_last and run == FIRST_RUNS - 1
        database = "postgres" if last else "first_sync_%d" % run
        if not last:
            server.query("CREATE DATABASE %s" % database)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(collector + suffix):
                os.remove(collector + suffix)
        shutil.copy(pristine, collector)
        timed([SYNC, "init", "--db", collector], server.reaching(database))
        syncs.append(timed([SYNC, "sync", "--db", collector], server.reaching(database)))
        on_server = int(server.query("SELECT count(*) FROM ride WHERE NOT deleted", database))
        if on_server != len(paths):
            sys.exit("sync bench: %d rides on the server after the first sync, not %d" % (on_server, len(paths)))
        if not last:
            server.query("DROP DATABASE %s" % database)
        server.query("CREATE DATABASE peer_copy")
        elapsed, copied = copy_peer(server, paths, "peer_copy")
        server.query("DROP DATABASE peer_copy")
        if copied != len(paths):
            sys.exit("sync bench: psql copied %d journals, not %d" % (copied, len(paths)))
        copies.append(elapsed)
        # The same COPY with the compression cyclelog-sync asks for (the server's own work, the same bytes).
        server.query("CREATE DATABASE peer_copy")
        elapsed, copied = copy_peer(server, paths, "peer_copy", compression="lz4")
        server.query("DROP DATABASE peer_copy")
        if copied != len(paths):
            sys.exit("sync bench: psql copied %d journals, not %d" % (copied, len(paths)))
        fast_copies.append(elapsed)
    os.remove(pristine)
    return sorted(syncs), sorted(copies), sorted(fast_copies)


def main():
    for program in (SYNC, CYCLELOG, os.path.join(POSTGRES, "initdb")):
        if not os.access(program, os.X_OK):
            sys.exit("sync bench: %s is missing (make bench builds and installs what it needs)" % program)
    folder = tempfile.mkdtemp(prefix="cyclelog-sync-bench-")
    os.chmod(folder, 0o755)
    server = Server(folder)
    try:
        ride = one_hour(open(RIDE).read().splitlines())
        paths = []
        for day in range(RIDES + RUNS):
            path = os.path.join(folder, "ride-%04d.journal" % day)
            with open(path, "w") as file:
                file.write("\n".join(shifted(ride, day * DAY_US)) + "\n")
            paths.append(path)
        database = os.path.join(folder, "box.sqlite")
        environment = dict(server.environment)
        first = {}
        for size in SIZES:
            collector = os.path.join(folder, "box-%d.sqlite" % size) if size != RIDES else database
            subprocess.run([CYCLELOG, "replay", "--db", collector] + paths[:size], check=True,
                           stdout=subprocess.DEVNULL)
            megabytes = sum(os.path.getsize(path) for path in paths[:size]) / 1e6
            first[size] = megabytes, first_syncs(server, collector, paths[:size], keep_last=size == RIDES)
            if collector != database:
                os.remove(collector)

        nothing = sorted(timed([SYNC, "sync", "--db", database], environment) for _ in range(RUNS))

        # A second collector of the same rider pulling every ride (each rebuilt here from its journal), and beside
        # it psql's COPY of the same journals out of the server (the floor: the bytes out of the same server).
        laptop = os.path.join(folder, "laptop.sqlite")
        timed([SYNC, "join", server.query("SELECT name FROM rider"), "--db", laptop], environment)
        pull = timed([SYNC, "sync", "--db", laptop], environment)
        with sqlite3.connect(laptop) as connection:
            held = connection.execute("SELECT count(*) FROM workout WHERE status = 'complete'").fetchone()[0]
        if held != RIDES:
            sys.exit("sync bench: the second collector holds %d rides after its pull, not %d" % (held, RIDES))
        started = time.perf_counter()
        subprocess.run(["psql", "-AtXq", "-c", "COPY (SELECT journal FROM ride) TO STDOUT"], env=environment,
                       check=True, stdout=subprocess.DEVNULL)
        copy_out = time.perf_counter() - started

        visible = []
        for count, path in enumerate(paths[RIDES:], start=RIDES + 1):
            subprocess.run([CYCLELOG, "replay", "--db", database, path], check=True, stdout=subprocess.DEVNULL)
            saved = time.perf_counter()
            syncing = subprocess.Popen([SYNC, "sync", "--db", database], env=environment,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # Another client asking, as a dashboard would, until the ride is there.
            while int(server.query("SELECT count(*) FROM ride")) < count:
                if syncing.poll() not in (None, 0):
                    sys.exit("sync bench: cyclelog-sync failed (%d)" % syncing.returncode)
                if time.perf_counter() - saved > 60:
                    sys.exit("sync bench: the saved ride never reached the server")
            visible.append(time.perf_counter() - saved)
            syncing.wait(60)
        visible.sort()
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)

    print("\nSync to PostgreSQL 15 (release cyclelog-sync; Unix socket on this machine; best / median)")
    middle = len(nothing) // 2
    for size, (megabytes, (syncs, copies, fast_copies)) in first.items():
        ratio = syncs[len(syncs) // 2] / copies[len(copies) // 2]
        label = "first sync of %d one-hour rides (%.0f MB of journals)" % (size, megabytes)
        print("  %-58s %8.2f s / %8.2f s" % (label, syncs[0], syncs[len(syncs) // 2]))
        print("  %-58s %8.2f s / %8.2f s" % ("peer: psql COPY of the same journals, in turn", copies[0],
                                             copies[len(copies) // 2]))
        print("  %-58s %19.2f×  target ≤ %.1f×: %s" % ("first sync against COPY (medians)", ratio, COPY_BOUND,
                                                     "met" if ratio <= COPY_BOUND else "MISSED"))
        fast = fast_copies[len(fast_copies) // 2]
        print("  %-58s %8.2f s / %8.2f s" % ("peer: the same COPY, compressed with LZ4 as the sync's", fast_copies[0],
                                             fast))
        print("  %-58s %19.2f×" % ("first sync against COPY with LZ4 (medians)", syncs[len(syncs) // 2] / fast))
        results.add("Sync", label, syncs[0], syncs[len(syncs) // 2])
        results.add("Sync", "peer: psql COPY of the same %d journals, in turn" % size, copies[0],
                    copies[len(copies) // 2])
        results.add("Sync", "first sync of %d rides against COPY (medians of %d pairs)" % (size, len(syncs)),
                    median=round(ratio, 2), unit="×", target="≤ %.1f×" % COPY_BOUND, met=ratio <= COPY_BOUND)
        results.add("Sync", "peer: the same COPY compressed with LZ4, as the sync's values are (%d)" % size,
                    fast_copies[0], fast)
        results.add("Sync", "first sync of %d rides against COPY with LZ4" % size,
                    median=round(syncs[len(syncs) // 2] / fast, 2), unit="×")
    label = "a second collector's first pull of the %d rides" % RIDES
    print("  %-58s %8.2f s" % (label, pull))
    print("  %-58s %8.2f s" % ("peer: psql COPY of the same journals out, after it", copy_out))
    print("  %-58s %19.2f×  target ≤ %.1f×: %s" % ("the pull against COPY out", pull / copy_out, PULL_BOUND,
                                                 "met" if pull / copy_out <= PULL_BOUND else "MISSED"))
    results.add("Sync", label, pull, pull)
    results.add("Sync", "peer: psql COPY of the same %d journals out" % RIDES, copy_out, copy_out)
    results.add("Sync", "the pull of %d rides against COPY out" % RIDES, median=round(pull / copy_out, 2), unit="×",
                target="≤ %.1f×" % PULL_BOUND, met=pull / copy_out <= PULL_BOUND)
    label = "a sync with nothing to do (%d rides)" % RIDES
    print("  %-58s %8.3f s / %8.3f s  target ≤ 50 ms: %s" % (label, nothing[0], nothing[middle],
                                                           "met" if nothing[middle] <= 0.05 else "MISSED"))
    results.add("Sync", label, nothing[0], nothing[middle], target="≤ 50 ms", met=nothing[middle] <= 0.05)
    label = "saved ride visible on the server (one-hour ride)"
    print("  %-58s %8.2f s / %8.2f s  target ≤ 2 s: %s" % (label, visible[0], visible[len(visible) // 2],
                                                         "met" if visible[len(visible) // 2] <= 2 else "MISSED"))
    results.add("Sync", label, visible[0], visible[len(visible) // 2], target="≤ 2 s",
                met=visible[len(visible) // 2] <= 2)


if __name__ == "__main__":
    main()
