#!/usr/bin/env python3
"""Start-up (`make bench`): the release `cyclelog --version` and `cyclelog list` on an empty database, whole process,
best and median of N runs and the peak memory of one. Everything a short command costs before it does its work:
loading the binary and its shared libraries, the runtime's set-up, ArgumentParser, opening SQLite."""
import os
import shutil
import subprocess
import tempfile

import results
from results import CYCLELOG, measure

RUNS = 30


def main():
    folder = tempfile.mkdtemp(prefix="cyclelog-bench-")
    database = os.path.join(folder, "empty.sqlite")
    # A database with no rides, made by a writing command (a reading one leaves a missing file missing).
    subprocess.run([CYCLELOG, "recover", "--db", database], check=True, stdout=subprocess.DEVNULL)
    print("\nStart-up, whole process (%d runs; best / median, peak memory; binary %.0f MB)"
          % (RUNS, os.path.getsize(CYCLELOG) / 1e6))
    for label, command in (("cyclelog --version", [CYCLELOG, "--version"]),
                           ("cyclelog list (empty database)", [CYCLELOG, "list", "--db", database])):
        fastest, median, peak = measure(command, RUNS)
        print("  %-32s %5.1f ms / %5.1f ms  %5.1f MB" % (label, fastest * 1000, median * 1000, peak))
        results.add("start-up", label, fastest, median, peak_mb=peak, target="≤ 10 ms", met=median <= 0.010)
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
