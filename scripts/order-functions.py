#!/usr/bin/env python3
"""Writes `Benchmarks/layout/cyclelog.order` and `Benchmarks/layout/cyclelog-mirror.order`: the functions the two
long-running programs run (the recorder recording, the mirror serving), then those a replay adds, in the order
valgrind's callgrind first meets them, for lld's `--symbol-ordering-file` (the Makefile's release link).

Why: the kernel maps a program's code in blocks of 64 kB around each page it touches (fault-around), and the
code a recorder or a mirror runs is spread over 20 to 27 MB of its own, Foundation's, SwiftNIO's and GRDB's. Laid
out together, it touches about a third fewer pages (the README gives the memory with and without). Names that are
no longer in the program are skipped by the linker, so a stale list costs memory, never correctness; regenerate
the lists after changes to those paths (`make release`, then this script; valgrind from Debian). SwiftPM does not
see the lists as inputs of the link: remove `.build/release/cyclelog` and `cyclelog-mirror` before building them
again with new lists.

The run, both programs under callgrind: the release `cyclelog record --wait` with three sensors on the BlueZ
stand-in and a database holding a few real rides; the release mirror serving every page and API of the ride
history (with and without ETags), the live page's stream, pairing and each control of a ride (start, lap, pause,
resume, water, note, end) carried out by the recorder, and refusals (no token, a stranger's Host); then the release
`cyclelog replay` of a real 2 h 19 min capture into a fresh database (its functions after the recorder's), then
`cyclelog decode 2a63` of the real Cycling Power payloads, as a table and as JSON.
"""
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Benchmarks"))
from live_bench import SENSORS, StandIn  # noqa: E402
from results import CYCLELOG, ROOT  # noqa: E402

MIRROR = os.path.join(os.path.dirname(CYCLELOG), "cyclelog-mirror")
RIDES = [os.path.join(ROOT, "Fixtures", "rides", name) for name in
         ("sweatpy_4078723797.btsnoop", "sweatpy_2020-06-01-16-52-40.journal")]


class Client:
    def __init__(self, port, token):
        self.port, self.token = port, token

    def request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        sent = {"Authorization": "Bearer " + self.token} if self.token else {}
        sent.update(headers or {})
        if body is not None:
            sent["Content-Type"] = "application/json"
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=sent)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, response.getheader("ETag"), data


def main():
    for program in (CYCLELOG, MIRROR):
        if not os.access(program, os.X_OK):
            sys.exit("%s is not built: `make release` first" % program)
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is missing: apt-get install valgrind")
    work = tempfile.mkdtemp(prefix="cyclelog-order-")
    # valgrind cannot read the DWARF 5 of Swift's debug information; the symbol table is all it needs.
    for program in (CYCLELOG, MIRROR):
        subprocess.run(["strip", "--strip-debug", "-o", os.path.join(work, os.path.basename(program)), program],
                       check=True)

    def profiled(program, arguments):
        return ["valgrind", "--tool=callgrind", "--demangle=no",
                "--callgrind-out-file=" + os.path.join(work, program + ".callgrind"),
                os.path.join(work, program)] + arguments
    with StandIn(SENSORS) as stand_in:
        environment = dict(os.environ, CYCLELOG_DBUS_ADDRESS=stand_in.address, CYCLELOG_CONTROL_BUS=stand_in.address)
        database = os.path.join(work, "rides.sqlite")
        subprocess.run([CYCLELOG, "replay", "--db", database] + RIDES, check=True, stdout=subprocess.DEVNULL)
        recorder_log = os.path.join(work, "record.log")
        recorder = stand_in.start(profiled("cyclelog", ["record", "--wait", "--plain", "--db", database]),
                                  recorder_log)
        log = os.path.join(work, "mirror.log")
        mirror = stand_in.start(profiled("cyclelog-mirror", ["serve", "--listen", "127.0.0.1:0", "--state-dir",
                                                             os.path.join(work, "state"), "--db", database]), log)
        deadline = time.time() + 300
        while "serving http://127.0.0.1:" not in open(log).read():
            if time.time() > deadline or mirror.poll() is not None:
                sys.exit("the mirror did not start under valgrind: " + open(log).read())
            time.sleep(0.5)
        # The recorder waiting for a ride, its sensors streaming, before the first control.
        time.sleep(20)
        port = int(open(log).read().split("serving http://127.0.0.1:")[1].split()[0])
        offer = json.loads(subprocess.run([MIRROR, "pair", "--name", "order", "--scope", "control", "--token",
                                           "--json"], env=environment, check=True, capture_output=True,
                                          text=True).stdout)
        client = Client(port, offer["token"])
        rides = json.loads(client.request("GET", "/api/v1/workouts")[2])
        for _ in range(2):
            for ride in rides:
                base = "/api/v1/workouts/%d" % ride["id"]
                for path in ["/", "/history", "/api/v1/workouts", "/api/v1/workouts?q=ride&since=2000-01-01",
                             base, base + "/samples", base + "/chart.svg", base + "/sparkline.svg",
                             base + "/wprime", base + "/wprime.svg", base + "/range?from=10&to=600",
                             base + "/export.fit", base + "/export.tcx", base + "/export.csv", base + "/export.journal",
                             "/api/v1/ftp", "/api/v1/ftp?history=1", "/api/v1/power-curve?window=42d",
                             "/api/v1/power-curve?window=90d", "/api/v1/status"]:
                    status, tag, _ = client.request("GET", path)
                    if tag:
                        client.request("GET", path, headers={"If-None-Match": tag})
        # A screen's stream while the ride is controlled from another.
        stream = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        stream.request("GET", "/api/v1/stream", headers={"Authorization": "Bearer " + offer["token"]})
        live = stream.getresponse()
        status = json.loads(client.request("GET", "/api/v1/status")[2])
        suggested = status.get("suggestedWorkouts") or [{"id": None}]
        for number, (command, arguments) in enumerate([
                ("start", {"preset": suggested[0]["id"]} if suggested[0]["id"] else {}), ("lap", {}),
                ("pause", {}), ("resume", {}), ("intake", {"kind": "water", "amount": 250, "unit": "ml"}),
                ("marker", {"text": "gel"}), ("lap", {}), ("end", {})]):
            answer = client.request("POST", "/api/v1/control", {"requestId": "order-%d" % number,
                                                                 "command": command, "args": arguments})
            print("%s: %d %s" % (command, answer[0], answer[2][:120].decode(errors="replace").strip()))
            live.fp.read1(65536)
            time.sleep(2)
        stream.close()
        Client(port, None).request("GET", "/api/v1/workouts")
        Client(port, None).request("POST", "/api/v1/pair", {"code": "000000", "name": "stranger"})
        Client(port, offer["token"]).request("GET", "/", headers={"Host": "rebinding.example"})
        mirror.send_signal(signal.SIGTERM)
        mirror.wait(120)
        recorder.send_signal(signal.SIGTERM)
        recorder.wait(120)
    replay = os.path.join(work, "replay.callgrind")
    subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + replay,
                    os.path.join(work, "cyclelog"), "replay", "--db", os.path.join(work, "replay.sqlite"), RIDES[0]],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # `decode` over real Cycling Power payloads, as a table and as JSON (`make bench` times both).
    lines = os.path.join(work, "lines.txt")
    with open(os.path.join(ROOT, "Fixtures", "captures", "cycling-power-measurement.tsv")) as f, open(lines, "w") as out:
        for line in f.readlines()[1:]:
            columns = line.rstrip("\n").split("\t")
            if len(columns) > 6 and columns[2] == "2a63" and columns[6] == "conformant":
                out.write(columns[5] + "\n")
    decodes = []
    for style in ([], ["--json"]):
        decodes.append(os.path.join(work, "decode%d.callgrind" % len(decodes)))
        with open(lines) as source:
            subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", "--callgrind-out-file=" + decodes[-1],
                            os.path.join(work, "cyclelog"), "decode", "2a63"] + style, stdin=source,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    write_order(CYCLELOG, [os.path.join(work, "cyclelog.callgrind"), replay] + decodes)
    write_order(MIRROR, [os.path.join(work, "cyclelog-mirror.callgrind")])
    shutil.rmtree(work, ignore_errors=True)


def write_order(program, profiles):
    """The functions of `program` that `profiles` saw run, in the order the first names them, then those only the
    next ones name."""
    defined = set()
    for line in subprocess.run(["nm", "--defined-only", program], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            defined.add(fields[2])
    ordered, seen = [], set()
    for profile in profiles:
        for line in open(profile, errors="replace"):
            found = re.match(r"c?fn=\(\d+\) (\S+)", line)
            if found and found.group(1) in defined and found.group(1) not in seen:
                seen.add(found.group(1))
                ordered.append(found.group(1))
    output = os.path.join(ROOT, "Benchmarks", "layout", os.path.basename(program) + ".order")
    with open(output, "w") as file:
        file.write("\n".join(ordered) + "\n")
    print("%s: %d functions" % (os.path.relpath(output, ROOT), len(ordered)))


if __name__ == "__main__":
    main()
