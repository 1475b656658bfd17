#!/usr/bin/env python3
"""The end of `make bench`: every whole-process figure of the run in one table, cyclelog beside its peers, with
the machine it ran on; printed, and written to Benchmarks/results.md (the latest run's table)."""
import json
import os
import platform
import subprocess
import time

from results import RESULTS, ROOT


def machine():
    model = "unknown CPU"
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory = ""
    if os.path.exists("/proc/meminfo"):
        kilobytes = int(open("/proc/meminfo").readline().split()[1])
        memory = ", %.0f GiB" % (kilobytes / 1024 / 1024)
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()
    return "%s, %d cores%s; Linux %s; %s" % (model, os.cpu_count() or 0, memory, platform.release(),
                                              swift[0] if swift else "swift unknown")


def shown(value, unit):
    if value is None:
        return ""
    if unit == "s" and value < 1:
        return "%.1f ms" % (value * 1000)
    if unit == "s":
        return "%.2f s" % value
    number = ("%.3g" % value) if isinstance(value, float) else str(value)
    return number + unit if unit == "×" else number + " " + unit


def main():
    if not os.path.exists(RESULTS):
        return
    rows = [json.loads(line) for line in open(RESULTS)]
    lines = ["make bench, one table (release build, whole process; best / median; peers measured in the same run)",
             "machine: " + machine(), "",
             "| capability | measured | best | median | peak memory | target |",
             "|---|---|---:|---:|---:|---|"]
    for row in rows:
        verdict = "" if row["met"] is None else (" (met)" if row["met"] else " (MISSED)")
        lines.append("| %s | %s | %s | %s | %s | %s%s |" % (
            row["capability"], row["label"], shown(row["best"], row["unit"]), shown(row["median"], row["unit"]),
            "" if row["peak_mb"] is None else "%.1f MB" % row["peak_mb"], row["target"], verdict))
    print("\n" + "\n".join(lines))
    with open(os.path.join(ROOT, "Benchmarks", "results.md"), "w") as page:
        # Durations shortened for this run (the README names their defaults), so the page says what it measured.
        settings = ", ".join("`%s=%s`" % (name, os.environ[name]) for name in sorted(os.environ)
                             if name.endswith(("_BENCH_SECONDS", "_BENCH_WAIT_SECONDS", "_BENCH_PAIRS")))
        page.write("# The latest `make bench`\n\nWritten by `Benchmarks/summary.py` at the end of the run, %s%s; the "
                   "method is in [the benchmarks' README](README.md).\n\n" % (
                       time.strftime("%Y-%m-%d", time.gmtime()), " with " + settings if settings else ""))
        page.write("\n".join(lines[1:]) + "\n")


if __name__ == "__main__":
    main()
