#!/usr/bin/env python3
"""The ride history benchmark (`make bench`): the release `cyclelog-mirror` serving a database of 1000 short rides,
the 4-hour ride of the replay benchmark and a 12-hour ride (that ride's journal three times over), read-only.
Each figure is a whole HTTP request from a client on the same machine (so an upper bound of the server's time),
best and median of RUNS:

- the rides page's data: `GET /api/v1/workouts` over 1002 rides (target ≤ 100 ms), and again with its ETag (304);
- the 4-hour ride's page: its summary, chart, W′ balance and the 42- and 90-day power curves, one after another
  (target ≤ 150 ms together), and again with their ETags (304);
- one ride's sparkline (each row of the rides page loads one as it comes into view);
- the 12-hour ride's 1 Hz samples (target ≤ 50 ms);
- the mirror's peak resident memory meanwhile (target ≤ 40 MB).
"""
import calendar
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import results
from replay_bench import BENCH, CAPTURE
from mirror_bench import MIRROR, peak_megabytes
from results import CYCLELOG, ROOT

RUNS = int(os.environ.get("HISTORY_BENCH_RUNS", "15"))
SHORT_RIDE = os.path.join(ROOT, "Fixtures", "rides", "sweatpy_2020-06-01-16-52-40.journal")
DAY_US = 86_400_000_000


def iso(us):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(us // 1_000_000)) + ".%06dZ" % (us % 1_000_000)


def parse(stamp):
    seconds = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1_000_000 + int(stamp[20:26])


def shifted(lines, offset_us, skip_head=False):
    """A journal's lines moved in time by `offset_us` (its settings and comments left out with `skip_head`)."""
    out = []
    # A journal has several lines a second: each second is parsed and written once (the benches that build
    # thousands of rides would otherwise spend longer here than cyclelog spends storing them).
    offset_seconds, offset_micro = divmod(offset_us, 1_000_000)
    seconds_of, text_of = {}, {}
    for line in lines:
        if line.startswith("#") or len(line) < 27 or line[26] != "Z":
            if not skip_head:
                out.append(line)
            continue
        stamp = line[:19]
        seconds = seconds_of.get(stamp)
        if seconds is None:
            seconds = seconds_of[stamp] = parse(line[:27]) // 1_000_000 + offset_seconds
        carry, micro = divmod(int(line[20:26]) + offset_micro, 1_000_000)
        text = text_of.get(seconds + carry)
        if text is None:
            text = text_of[seconds + carry] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds + carry))
        out.append("%s.%06dZ%s" % (text, micro, line[27:]))
    return out


def request(port, token, path, tag=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": "Bearer " + token}
    if tag:
        headers["If-None-Match"] = tag
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if response.status not in (200, 304):
        sys.exit("history bench: %s answered %d: %s" % (path, response.status, body[:200]))
    return response.getheader("ETag"), body


def timed(port, token, paths, tags=None, runs=None):
    """Best and median seconds of requesting `paths` one after another, `runs` times (HISTORY_BENCH_RUNS unless
    given); with `tags` (path → ETag), as a browser revalidating what it holds."""
    times = []
    for _ in range(runs or RUNS):
        start = time.perf_counter()
        for path in paths:
            request(port, token, path, (tags or {}).get(path))
        times.append(time.perf_counter() - start)
    times.sort()
    return times[0], times[len(times) // 2]


def main():
    if not os.access(MIRROR, os.X_OK):
        sys.exit("history bench: %s is not built (make bench builds it)" % MIRROR)
    if not os.path.exists(CAPTURE):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-ride-fixtures.py"), "--bench", BENCH],
                       check=True, capture_output=True)
    folder = tempfile.mkdtemp(prefix="cyclelog-history-bench-")
    database = os.path.join(folder, "rides.sqlite")
    short = open(SHORT_RIDE).read().splitlines()
    rides = []
    for day in range(1000):
        path = os.path.join(folder, "ride-%04d.journal" % day)
        with open(path, "w") as file:
            file.write("\n".join(shifted(short, day * DAY_US)) + "\n")
        rides.append(path)
    subprocess.run([CYCLELOG, "replay", "--db", database] + rides, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([CYCLELOG, "replay", "--db", database, CAPTURE], check=True, stdout=subprocess.DEVNULL)
    listed = json.loads(subprocess.run([CYCLELOG, "list", "--json", "--all", "--db", database], check=True,
                                       capture_output=True, text=True).stdout)
    four_hours = next(r["id"] for r in listed if r["source"].endswith(".btsnoop"))
    short_ride = next(r for r in listed if r["source"].endswith(".journal"))
    journal = subprocess.run([CYCLELOG, "show", str(four_hours), "--journal", "--db", database], check=True,
                             capture_output=True, text=True).stdout.splitlines()
    twelve = os.path.join(folder, "twelve-hours.journal")
    with open(twelve, "w") as file:
        # Each copy 4 h 10 min after the one before: the 4-hour ride's last events lie a little past 4 h.
        step = (4 * 3600 + 600) * 1_000_000
        file.write("\n".join(shifted(journal, 1000 * DAY_US) + shifted(journal, 1000 * DAY_US + step, True)
                             + shifted(journal, 1000 * DAY_US + 2 * step, True)) + "\n")
    subprocess.run([CYCLELOG, "replay", "--db", database, twelve], check=True, stdout=subprocess.DEVNULL)
    twelve_hours = next(r["id"] for r in json.loads(subprocess.run(
        [CYCLELOG, "list", "--json", "--all", "--db", database], check=True, capture_output=True, text=True).stdout)
        if r["source"].endswith("twelve-hours.journal"))

    try:
        with results.history_server(MIRROR, database, folder) as (port, token, mirror):
            tag, body = request(port, token, "/api/v1/workouts")
            count = len(json.loads(body))
            # What the ride page asks for: its W′ chart only when the ride has a W′ balance.
            summary = json.loads(request(port, token, "/api/v1/workouts/%d" % four_hours)[1])
            page = ["/api/v1/workouts/%d" % four_hours, "/api/v1/workouts/%d/chart.svg" % four_hours,
                    "/api/v1/power-curve?window=42d", "/api/v1/power-curve?window=90d"]
            if summary["wPrimeBalanceMinimumJoules"] is not None:
                page.append("/api/v1/workouts/%d/wprime.svg" % four_hours)
            rows = [
                ("rides page data, %d rides" % count, timed(port, token, ["/api/v1/workouts"]), 0.100),
                ("… the same, unchanged (304 by ETag)", timed(port, token, ["/api/v1/workouts"],
                                                               {"/api/v1/workouts": tag}), None),
                ("4-hour ride page (%d requests)" % len(page), timed(port, token, page), 0.150),
                ("… the same, unchanged (304 by ETag)",
                 timed(port, token, page, {path: request(port, token, path)[0] for path in page}), None),
                ("a sparkline of the rides page (a %d-min ride)" % (short_ride["elapsedSeconds"] // 60),
                 timed(port, token, ["/api/v1/workouts/%d/sparkline.svg" % short_ride["id"]]), None),
                ("12-hour ride's 1 Hz samples",
                 timed(port, token, ["/api/v1/workouts/%d/samples" % twelve_hours]), 0.050),
            ]
            peak = peak_megabytes(mirror.pid)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print("\nRide history served by cyclelog-mirror (release; whole requests from this machine; best / median of %d)"
          % RUNS)
    for label, (best, median), target in rows:
        verdict = "" if target is None else "  target ≤ %d ms: %s" % (target * 1000, "met" if median <= target
                                                                     else "MISSED")
        print("  %-50s %7.1f ms / %7.1f ms%s" % (label, best * 1000, median * 1000, verdict))
        results.add("History", label, best, median, target="" if target is None else "≤ %d ms" % (target * 1000),
                    met=None if target is None else median <= target)
    print("  %-50s %7.1f MB  target ≤ 40 MB: %s" % ("cyclelog-mirror peak memory", peak,
                                                    "met" if peak <= 40 else "MISSED"))
    results.add("History", "cyclelog-mirror peak memory", median=round(peak, 1), unit="MB", target="≤ 40 MB",
                met=peak <= 40)


if __name__ == "__main__":
    main()
