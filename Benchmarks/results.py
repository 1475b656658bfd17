"""What the benchmark scripts share: the binary they measure, how they measure a whole process, and the figures of
one `make bench` run, collected by each script and printed together at the end by `summary.py` (one table with
cyclelog and its peers, measured in the same run, and the machine)."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CYCLELOG_BINARY measures another build (an earlier one, beside this one).
CYCLELOG = os.environ.get("CYCLELOG_BINARY", os.path.join(ROOT, ".build", "release", "cyclelog"))
RESULTS = os.path.join(ROOT, ".build", "bench", "results.jsonl")


def measure(command, runs, source=None, prepare=None):
    """Best and median seconds over `runs` runs of `command` as a whole process (`source` as its standard input,
    `prepare` called before each run), and the peak resident memory (MB) of one more run. A run that fails ends
    the benchmark."""
    times = []
    for _ in range(runs):
        if prepare:
            prepare()
        with open(source or os.devnull, "rb") as stdin:
            start = time.perf_counter()
            status = subprocess.call(command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        if status != 0:
            sys.exit("%s failed (status %d)" % (command[0], status))
    if prepare:
        prepare()
    times.sort()
    with open(source or os.devnull, "rb") as stdin:
        return times[0], times[len(times) // 2], peak_megabytes_of(command, stdin)


def measure_interleaved(commands, runs, prepare=None):
    """Best and median seconds of each of `commands` (label, command) as a whole process over `runs` rounds, each
    round running every command once in turn, so that a drift of the machine's speed falls on all of them alike;
    and the peak resident memory (MB) of one more run of each. `prepare` (label → function) is called before each
    run of that command, untimed. A run that fails ends the benchmark."""
    prepare = prepare or {}
    times = {label: [] for label, _ in commands}
    for _ in range(runs):
        for label, command in commands:
            if label in prepare:
                prepare[label]()
            start = time.perf_counter()
            status = subprocess.call(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[label].append(time.perf_counter() - start)
            if status != 0:
                sys.exit("%s failed (status %d)" % (command[0], status))
    figures = {}
    for label, command in commands:
        ordered = sorted(times[label])
        if label in prepare:
            prepare[label]()
        with open(os.devnull, "rb") as stdin:
            figures[label] = ordered[0], ordered[len(ordered) // 2], peak_megabytes_of(command, stdin)
    return figures


def peak_megabytes_of(command, stdin):
    """The peak resident memory (MB) of one run of `command` reading `stdin`, as GNU time reports it. Not the
    rusage of a child of this process: a child forked from Python starts with Python's pages, and the kernel keeps
    that high-water mark through exec, so every figure would carry this interpreter's size."""
    with tempfile.NamedTemporaryFile("r") as report:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name] + command, stdin=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return int(report.read().split()[-1]) / 1024


def add(capability, label, best=None, median=None, unit="s", peak_mb=None, target="", met=None):
    """One row: `best` and `median` in `unit` ("s", "ms", or any unit of a single value given as `median`)."""
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps({"capability": capability, "label": label, "best": best, "median": median, "unit": unit,
                            "peak_mb": peak_mb, "target": target, "met": met}) + "\n")



def serving_port(log, address="127.0.0.1"):
    """The port a starting `cyclelog-mirror` announces in its log ("serving http://ADDRESS:PORT")."""
    announced = "serving http://%s:" % address
    for _ in range(300):
        text = open(log).read()
        if announced in text:
            return int(text.split(announced)[1].split()[0])
        time.sleep(0.1)
    sys.exit("cyclelog-mirror did not start: " + open(log).read())


@contextlib.contextmanager
def history_server(mirror, database, folder):
    """`mirror` serving the history of `database` on a private session bus (no recorder on it), with a device paired
    to read: yields (its port, the device's token, the server's process), and stops both at the end."""
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    address = bus.stdout.readline().strip()
    environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, CYCLELOG_CONTROL_BUS=address)
    log = os.path.join(folder, "mirror.log")
    server = subprocess.Popen([mirror, "serve", "--listen", "127.0.0.1:0", "--state-dir",
                               os.path.join(folder, "state"), "--db", database], env=environment,
                              stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        port = serving_port(log)
        token = json.loads(subprocess.run([mirror, "pair", "--name", "bench", "--types", "read,hr,intake", "--token", "--json"],
                                          env=environment, check=True, capture_output=True, text=True).stdout)["token"]
        yield port, token, server
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(20)
        bus.terminate()
        bus.wait()
