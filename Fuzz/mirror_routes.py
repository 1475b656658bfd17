#!/usr/bin/env python3
"""The mirror's routes fuzzed over HTTP (`make fuzz-mirror`): a `cyclelog-mirror` serving a real ride's history,
a read-only device's token, and REQUESTS requests (default 1 000 000) over keep-alive connections from a few
threads, each a route of `/api/v1` with random and extreme values in its path and query (integers at and past
Int64's ends, floats, non-numbers, huge digit strings, percent escapes, control characters), plus paths that are no
route. It checks that every answer is one of the statuses the README documents (200, 304, 400, 401, 404, 409), that
no answer takes longer than 5 s, that the mirror is alive at the end, and that its resident memory stays under
MAX_MB (default 150; the mirror's history figure in `make bench` is about 36 MB). It prints one line every
100 000 requests and a summary; any failure exits 1 with the request that caused it.

    python3 Fuzz/mirror_routes.py [--requests N] [--threads T] [--seed S] [--mirror PATH] [--cyclelog PATH]
"""
import argparse
import http.client
import json
import os
import random
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from live_bench import StandIn  # noqa: E402
from mirror_bench import run, serving_port  # noqa: E402

VALUES = [
    "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "0", "-0",
    "1", "-1", "59", "3600", "100000000000", "1e309", "-1e309", "NaN", "inf", "0.5", "", "abc", "%00", "%FF%FE",
    "%E2%80%AE", "%1B%5B2J", "9" * 400, "0x10", "2024-05-01", "2024-02-30", "0000-01-01", "9999-12-31T23:59:59Z",
    "42d", "0w", "36500d", "5215w", "99999999999999999999w", "%2F..%2F..%2Fetc%2Fpasswd", "1,2", "1;2",
]
ROUTES = [
    "/api/v1/workouts?since={a}&until={b}&q={a}", "/api/v1/workouts?limit={a}&after={b}",
    "/api/v1/workouts?q={b}&limit={b}&after={r}", "/api/v1/workouts/{a}", "/api/v1/workouts/{a}/samples",
    "/api/v1/workouts/{r}/range?from={a}&to={b}", "/api/v1/workouts/{r}/chart.svg?from={a}&to={b}",
    "/api/v1/workouts/{r}/chart.svg?from={a}", "/api/v1/workouts/{r}/wprime?x={a}",
    "/api/v1/workouts/{r}/wprime.svg", "/api/v1/workouts/{r}/sparkline.svg?w={a}",
    "/api/v1/workouts/{a}/export.{k}", "/api/v1/workouts/{r}/export.{k}", "/api/v1/ftp?window={a}",
    "/api/v1/weekly-load?weeks={a}", "/api/v1/weekly-load.svg?weeks={b}", "/api/v1/power-curve?window={a}",
    "/api/v1/power-curve.svg?window={b}", "/api/v1/status?x={a}", "/api/v1/{a}", "/api/v1/workouts/{r}/{a}",
    "/{a}", "/history?{a}={b}",
]
KINDS = ["fit", "tcx", "csv", "journal", "gpx", "", "fit.fit"]
ALLOWED = {200, 304, 400, 401, 404, 409, 503}


def resident_megabytes(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Worker(threading.Thread):
    """Sends its share of requests over one keep-alive connection (a new one when the mirror closes it)."""

    def __init__(self, port, token, count, seed, failures):
        super().__init__(daemon=True)
        self.port, self.token, self.count = port, token, count
        self.random = random.Random(seed)
        self.failures = failures
        self.done = 0
        self.slowest = 0.0

    def path(self):
        pick = self.random.choice
        return pick(ROUTES).format(a=pick(VALUES), b=pick(VALUES), r=pick(["1", "1", "2", pick(VALUES)]),
                                   k=pick(KINDS))

    def run(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Authorization": "Bearer " + self.token, "Host": "127.0.0.1:%d" % self.port}
        for _ in range(self.count):
            if self.failures:
                return
            path = self.path()
            started = time.monotonic()
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                # One retry on a fresh connection: an idle keep-alive connection may be closed by the mirror.
                try:
                    connection.request("GET", path, headers=headers)
                    response = connection.getresponse()
                    response.read()
                    status = response.status
                except (OSError, http.client.HTTPException):
                    self.failures.append("%s: no answer (%s)" % (path, error))
                    return
            elapsed = time.monotonic() - started
            self.slowest = max(self.slowest, elapsed)
            if status not in ALLOWED:
                self.failures.append("%s: status %d" % (path, status))
            if elapsed > 5:
                self.failures.append("%s: %.1f s" % (path, elapsed))
            self.done += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=int(os.environ.get("MIRROR_FUZZ_REQUESTS", "1000000")))
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--mirror", default=os.path.join(ROOT, ".build", "release", "cyclelog-mirror"))
    parser.add_argument("--cyclelog", default=os.path.join(ROOT, ".build", "release", "cyclelog"))
    parser.add_argument("--max-mb", type=float, default=float(os.environ.get("MAX_MB", "150")))
    arguments = parser.parse_args()

    with StandIn([]) as bus:
        environment = dict(os.environ, CYCLELOG_CONTROL_BUS=bus.address, CYCLELOG_DBUS_ADDRESS=bus.address)
        database = os.path.join(bus.folder, "rides.sqlite")
        rides = os.path.join(ROOT, "Fixtures", "rides")
        run([arguments.cyclelog, "replay", "--db", database, os.path.join(rides, "sweatpy_6449921903_ACTIVITY.journal"),
             os.path.join(rides, "sweatpy_2020-06-01-16-52-40.journal")], environment)
        log = os.path.join(bus.folder, "mirror.log")
        mirror = bus.start([arguments.mirror, "serve", "--listen", "127.0.0.1:0", "--db", database, "--state-dir",
                            os.path.join(bus.folder, "state")], log)
        port = serving_port(log)
        token = json.loads(run([arguments.mirror, "pair", "--name", "fuzz", "--types", "read", "--token", "--json"],
                               environment))["token"]
        failures = []
        share = arguments.requests // arguments.threads
        workers = [Worker(port, token, share + (1 if index < arguments.requests % arguments.threads else 0),
                          arguments.seed + index, failures) for index in range(arguments.threads)]
        started = time.monotonic()
        for worker in workers:
            worker.start()
        highest, next_line = 0.0, 100_000
        while any(worker.is_alive() for worker in workers):
            time.sleep(0.5)
            if mirror.poll() is not None:
                failures.append("the mirror ended with status %d" % mirror.returncode)
                break
            highest = max(highest, resident_megabytes(mirror.pid))
            done = sum(worker.done for worker in workers)
            if done >= next_line:
                print("mirror fuzz: %d requests, %.0f s, resident %.1f MB" % (done, time.monotonic() - started,
                                                                                 resident_megabytes(mirror.pid)),
                      flush=True)
                next_line += 100_000
        for worker in workers:
            worker.join()
        done = sum(worker.done for worker in workers)
        seconds = time.monotonic() - started
        alive = mirror.poll() is None
        if alive:
            highest = max(highest, resident_megabytes(mirror.pid))
        if highest > arguments.max_mb:
            failures.append("the mirror grew to %.1f MB (at most %.0f MB)" % (highest, arguments.max_mb))
        if not alive and not any("ended" in failure for failure in failures):
            failures.append("the mirror ended with status %d" % mirror.returncode)
        print("mirror fuzz: %d requests in %.0f s (%.0f a second), slowest %.2f s, highest resident %.1f MB, %s"
              % (done, seconds, done / max(seconds, 1e-9), max(worker.slowest for worker in workers), highest,
                 "the mirror still serving" if alive else "THE MIRROR ENDED"))
        if failures:
            for failure in failures[:20]:
                print("mirror fuzz: FAILED " + failure)
            print(open(log).read()[-2000:])
            sys.exit(1)


if __name__ == "__main__":
    main()
