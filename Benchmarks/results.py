"""What the benchmark scripts share: the binary they measure, how they measure a whole process, and the figures of
one `make bench` run, collected by each script and printed together at the end by `summary.py` (one table with
cyclelog and its peers, measured in the same run, and the machine)."""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# CYCLELOG_BINARY measures another build (an earlier one, beside this one).
CYCLELOG = os.environ.get("CYCLELOG_BINARY", os.path.join(ROOT, ".build", "release", "cyclelog"))
RESULTS = os.path.join(ROOT, ".build", "bench", "results.jsonl")


def measure(command, runs, source=None, prepare=None):
    """Best and median seconds over `runs` runs of `command` as a whole process (`source` as its standard input,
    `prepare` called before each run), and the largest peak resident memory (MB) of one run. A run that fails ends
    the benchmark."""
    times, peak = [], 0.0
    for _ in range(runs):
        if prepare:
            prepare()
        with open(source or os.devnull, "rb") as stdin:
            start = time.perf_counter()
            process = subprocess.Popen(command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)  # this child's own peak, not the largest so far
            times.append(time.perf_counter() - start)
            process.returncode = 0
        if status != 0:
            sys.exit("%s failed (status %d)" % (command[0], status))
        peak = max(peak, usage.ru_maxrss / 1024)
    times.sort()
    return times[0], times[len(times) // 2], peak


def add(capability, label, best=None, median=None, unit="s", peak_mb=None, target="", met=None):
    """One row: `best` and `median` in `unit` ("s", "ms", or any unit of a single value given as `median`)."""
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps({"capability": capability, "label": label, "best": best, "median": median, "unit": unit,
                            "peak_mb": peak_mb, "target": target, "met": met}) + "\n")

