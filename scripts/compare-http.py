#!/usr/bin/env python3
"""What two builds of cyclelog-mirror answer over HTTP for the same database: every history endpoint of the
reference (Docs/guide/second-screen.md) for every ride, with and without queries, the pages, the errors (unknown
ride, a path that is not one, a bad window, a stranger without a token, a trailing slash), each compared by status,
Content-Type, Cache-Control and body. The ETag is left out (it carries each process's own random number), and the
private bus's address in a body.

    scripts/compare-http.py OLD_MIRROR NEW_MIRROR DATABASE [NEW_DATABASE]

NEW_DATABASE, when given, is what the new mirror serves: a copy of DATABASE brought up to the new build's schema
(an older mirror cannot read a database a newer cyclelog has migrated).
"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks"))
import results  # noqa: E402 (the benchmarks' way to serve a database's history)


def answers(mirror, database, paths, folder):
    """(path, with the token) → (status, content type, cache control, body) from `mirror` serving `database`."""
    found = {}
    with results.history_server(mirror, database, folder) as (port, token, _):
        for path, authorised in paths:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {"Authorization": "Bearer " + token} if authorised else {}
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            # The private bus's address (named when no recorder is on it) differs between any two runs.
            body = re.sub(rb"unix:path=[^ :\"]*", b"BUS", response.read())
            found[(path, authorised)] = (response.status, response.getheader("Content-Type"),
                                         response.getheader("Cache-Control"), body)
            connection.close()
    return found


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__.split("\n\n")[1].strip())
    old, new, database = sys.argv[1:4]
    new_database = sys.argv[4] if len(sys.argv) == 5 else database
    rides = json.loads(subprocess.run([os.path.join(os.path.dirname(new), "cyclelog"), "list", "--json", "--all",
                                       "--db", new_database], check=True, capture_output=True, text=True).stdout)
    paths = ["/", "/history", "/api/v1/workouts", "/api/v1/workouts?since=2013-01-01&until=2020-12-31",
             "/api/v1/workouts?q=sweatpy", "/api/v1/workouts?since=yesterday", "/api/v1/workouts?limit=5",
             "/api/v1/workouts?limit=5&after=3", "/api/v1/workouts?limit=0", "/api/v1/ftp",
             "/api/v1/ftp?window=5000d", "/api/v1/power-curve", "/api/v1/power-curve?window=5000d",
             "/api/v1/power-curve?window=forever", "/api/v1/workouts/999999", "/api/v1/workouts/abc",
             "/api/v1/workouts/", "/api/v1/ftp/", "/history/", "/api/v1/workouts/1/", "/api/v1/workouts/1/chart.svg/",
             "//api/v1/workouts", "/api/v1/nothing", "/api/v1/workouts/1/nothing", "/api/v1/status", "/pair"]
    for ride in rides:
        base = "/api/v1/workouts/%d" % ride["id"]
        paths += [base, base + "/chart.svg", base + "/chart.svg?from=60&to=600", base + "/chart.svg?from=-5&to=x",
                  base + "/sparkline.svg", base + "/samples", base + "/export.fit", base + "/export.journal",
                  base + "/wprime.svg", "/history/%d" % ride["id"]]
    requests = [(path, True) for path in paths] + [(path, False) for path in [
        "/", "/api/v1/workouts", "/api/v1/workouts/1", "/api/v1/workouts/", "//api/v1/workouts", "/api/v1/nothing"]]
    with tempfile.TemporaryDirectory() as folder:
        os.makedirs(os.path.join(folder, "old"))
        os.makedirs(os.path.join(folder, "new"))
        before = answers(old, database, requests, os.path.join(folder, "old"))
        after = answers(new, new_database, requests, os.path.join(folder, "new"))
    differences = 0
    for request in requests:
        if before[request] != after[request]:
            differences += 1
            print("differs: GET %s%s: %s → %s" % (request[0], "" if request[1] else " (no token)",
                                                  before[request][:3], after[request][:3]))
    statuses = sorted({answer[0] for answer in after.values()})
    print("%d requests (statuses %s): %d differences" % (len(requests), ", ".join(map(str, statuses)), differences))
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
