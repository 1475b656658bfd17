#!/usr/bin/env python3
"""The sync benchmark (`make bench`): the release `cyclelog-sync` against PostgreSQL 15 from Debian, started here
as an unprivileged user on a Unix socket in a temporary folder (fsync and every other setting as shipped).

- the first sync of 1000 one-hour rides (the first hour of a real ride with power, speed and heart rate, each copy
  a day later: about 1.7 MB of journal per ride) — target ≤ 60 s; beside it the peer, PostgreSQL's own `psql`
  loading the same journals with `COPY … FROM STDIN` in one run (the floor: the bytes into the same server);
- a sync with nothing to do over those 1000 rides, as the timer runs it every 15 minutes — target ≤ 1 s;
- a saved ride visible on the server: from the moment the ride is stored (its `cyclelog replay` exits, where a
  recorder rewrites its trigger file) to the moment another client sees its row, with `cyclelog-sync sync` started
  at once as `cyclelog-sync.path` starts it — target ≤ 2 s. systemd's own start of the unit is not in this figure:
  the real-stack VM runs the trigger under systemd (Tests/RealStack, `make test-vm`).
"""
import os
import pwd
import shutil
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
RIDES = int(os.environ.get("SYNC_BENCH_RIDES", "1000"))
RUNS = int(os.environ.get("SYNC_BENCH_RUNS", "5"))
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

    def query(self, sql):
        return subprocess.run(["psql", "-AtXq", "-c", sql], env=self.environment, check=True, capture_output=True,
                              text=True).stdout.strip()

    def stop(self):
        as_nobody([os.path.join(POSTGRES, "pg_ctl"), "-D", self.data, "-m", "fast", "stop"], capture_output=True)


def timed(command, environment):
    start = time.perf_counter()
    result = subprocess.run(command, env=environment, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit("sync bench: %s failed (%d): %s" % (" ".join(command), result.returncode, result.stderr[-500:]))
    return elapsed


def copy_peer(server, paths):
    """psql's COPY of the same journal files into a table of one text column, as one whole process."""
    server.query("CREATE TABLE peer_ride (journal text)")
    start = time.perf_counter()
    copy = subprocess.Popen(["psql", "-AtXq", "-c", "COPY peer_ride (journal) FROM STDIN"], env=server.environment,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    for path in paths:
        with open(path, "rb") as file:
            text = file.read()
        # COPY's text format: one row per line, backslash escapes.
        copy.stdin.write(text.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r") + b"\n")
    copy.stdin.close()
    if copy.wait() != 0:
        sys.exit("sync bench: psql COPY failed")
    elapsed = time.perf_counter() - start
    rows = int(server.query("SELECT count(*) FROM peer_ride"))
    server.query("DROP TABLE peer_ride")
    return elapsed, rows


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
        subprocess.run([CYCLELOG, "replay", "--db", database] + paths[:RIDES], check=True, stdout=subprocess.DEVNULL)
        megabytes = sum(os.path.getsize(path) for path in paths[:RIDES]) / 1e6
        timed([SYNC, "init", "--db", database], environment)

        first = timed([SYNC, "sync", "--db", database], environment)
        on_server = int(server.query("SELECT count(*) FROM ride WHERE NOT deleted"))
        if on_server != RIDES:
            sys.exit("sync bench: %d rides on the server after the first sync, not %d" % (on_server, RIDES))
        peer, copied = copy_peer(server, paths[:RIDES])
        if copied != RIDES:
            sys.exit("sync bench: psql copied %d journals, not %d" % (copied, RIDES))

        nothing = sorted(timed([SYNC, "sync", "--db", database], environment) for _ in range(RUNS))

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

    print("\nSync to PostgreSQL 15 (release cyclelog-sync; Unix socket on this machine)")
    rows = [
        ("first sync of %d one-hour rides (%.0f MB of journals)" % (RIDES, megabytes), first, first, 60),
        ("peer: psql COPY of the same journals", peer, peer, None),
        ("a sync with nothing to do (%d rides)" % RIDES, nothing[0], nothing[len(nothing) // 2], 1),
        ("saved ride visible on the server (one-hour ride)", visible[0], visible[len(visible) // 2], 2),
    ]
    for label, best, median, target in rows:
        verdict = "" if target is None else "  target ≤ %d s: %s" % (target, "met" if median <= target else "MISSED")
        print("  %-58s %8.2f s / %8.2f s%s" % (label, best, median, verdict))
        results.add("Sync", label, best, median, target="" if target is None else "≤ %d s" % target,
                    met=None if target is None else median <= target)


if __name__ == "__main__":
    main()
