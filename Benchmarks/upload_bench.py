#!/usr/bin/env python3
"""The uploads' benchmark (`make bench`): the release `cyclelog-sync` uploading rides to the stand-in of
intervals.icu's API (Tests/ServiceStandIn, on 127.0.0.1, its FIT check left out so that the client is measured,
not Garmin's SDK in Python).

- the first upload of 100 one-hour rides (a real ride's first hour, each copy a day later), each ride's FIT export
  built, its row written before the request and after the answer; beside it the peer, curl sending the same 100 FIT
  files (exported by `cyclelog export`) as the same multipart uploads in one process, one connection per request
  as cyclelog-sync makes them (a kept connection makes the stand-in's Python server answer each request about
  40 ms late, TCP's delayed acknowledgement, which would measure the server);
- an upload run with nothing to do over those 100 rides, as every sync runs it — target ≤ 1 s.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import results
from history_bench import DAY_US, shifted
from results import ROOT
from sync_bench import one_hour

SYNC = os.environ.get("CYCLELOG_SYNC_BINARY", os.path.join(ROOT, ".build", "release", "cyclelog-sync"))
CYCLELOG = results.CYCLELOG
STANDIN = os.path.join(ROOT, "Tests", "ServiceStandIn", "training_services.py")
RIDE = os.path.join(ROOT, "Fixtures", "rides", "sweatpy_4078723797.journal")
RIDES = int(os.environ.get("UPLOAD_BENCH_RIDES", "100"))
RUNS = int(os.environ.get("UPLOAD_BENCH_RUNS", "3"))
KEY = "benchkey0123456789"


class StandIn:
    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, STANDIN, "--port", "0", "--api-key", KEY, "--athlete", "i1", "--trust-files"], stdout=subprocess.PIPE,
            text=True)
        self.port = json.loads(self.process.stdout.readline())["port"]
        self.address = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.process.terminate()
        self.process.wait()


def timed(command):
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit("upload bench: %s failed (%d): %s" % (" ".join(command), result.returncode, result.stderr[-500:]))
    return elapsed, result.stdout


def main():
    with tempfile.TemporaryDirectory(prefix="cyclelog-upload-bench-") as folder:
        with open(RIDE) as file:
            ride = one_hour(file.read().splitlines())
        paths = []
        for day in range(RIDES):
            path = os.path.join(folder, "ride-%03d.journal" % day)
            with open(path, "w") as file:
                file.write("\n".join(shifted(ride, day * DAY_US)) + "\n")
            paths.append(path)
        template = os.path.join(folder, "template.sqlite")
        subprocess.run([CYCLELOG, "replay", "--db", template] + paths, check=True, stdout=subprocess.DEVNULL)
        exports = os.path.join(folder, "exports")
        subprocess.run([CYCLELOG, "export", "--db", template, "--since", "1990-01-01", "-o", exports], check=True,
                       stdout=subprocess.DEVNULL)
        key = os.path.join(folder, "key")
        with open(key, "w") as file:
            file.write(KEY + "\n")
        os.chmod(key, 0o600)

        first, idle, peer = [], [], []
        for run in range(RUNS):
            database = os.path.join(folder, "run-%d" % run, "cyclelog.sqlite")
            os.makedirs(os.path.dirname(database))
            shutil.copy(template, database)
            standin = StandIn()
            try:
                subprocess.run([SYNC, "account", "add", "intervals", "--db", database, "--athlete", "i1",
                                "--api-key-file", key, "--address", standin.address, "--since", "1990-01-01"],
                               check=True, stdout=subprocess.DEVNULL)
                seconds, output = timed([SYNC, "upload", "--db", database])
                if output.count("uploaded to intervals.icu") != RIDES:
                    sys.exit("upload bench: not every ride was uploaded:\n" + output[-500:])
                first.append(seconds)
                idle.append(timed([SYNC, "upload", "--db", database])[0])
                # The peer: the same files as the same requests, from one curl process.
                command = ["curl", "-sS"]
                for index, name in enumerate(sorted(os.listdir(exports))):
                    if index:
                        command += ["--next"]
                    command += ["-o", "/dev/null", "-H", "Connection: close", "-u", "API_KEY:" + KEY, "-F", "file=@" + os.path.join(exports, name),
                                "%s/api/v1/athlete/i1/activities?external_id=peer-%d" % (standin.address, index)]
                peer.append(timed(command)[0])
            finally:
                standin.stop()
        for label, times, target in [
            ("first upload of %d one-hour rides (intervals.icu stand-in)" % RIDES, first, None),
            ("curl, the same %d FIT files as the same uploads" % RIDES, peer, None),
            ("an upload run with nothing to do over %d rides" % RIDES, idle, 1),
        ]:
            times.sort()
            best, median = times[0], times[len(times) // 2]
            results.add("Uploads", label, best, median, target="" if target is None else "≤ %d s" % target,
                        met=None if target is None else median <= target)
            print("upload bench: %s: best %.2f s, median %.2f s" % (label, best, median))


if __name__ == "__main__":
    main()
