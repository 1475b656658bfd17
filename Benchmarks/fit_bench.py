#!/usr/bin/env python3
"""FIT export and import benchmark (`make bench`): the 4-hour, three-sensor ride of the replay benchmark, stored
once, then `cyclelog export` of it to FIT and `cyclelog import` of that file into a fresh database, each as a whole
release process, best and median of N; beside them fitdecode and Garmin's FIT SDK for Python reading the same file
in the same run. Targets: export ≤ 30 ms, import ≤ 40 ms (medians)."""
import os
import subprocess
import sys
import tempfile

import results
from replay_bench import BENCH, CAPTURE, RUNS
from results import CYCLELOG, ROOT, measure

REAL_RIDE = os.path.join(ROOT, "Fixtures", "rides", "fit", "sweatpy_4078723797.fit")


def main():
    if not os.path.exists(CAPTURE):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make-ride-fixtures.py"), "--bench", BENCH],
                       check=True, capture_output=True)
    folder = tempfile.mkdtemp(prefix="cyclelog-fit-bench-")
    stored = os.path.join(folder, "stored.sqlite")
    subprocess.run([CYCLELOG, "replay", "--db", stored, CAPTURE], check=True, stdout=subprocess.DEVNULL)
    exported = os.path.join(folder, "four-hours.fit")
    fresh = os.path.join(folder, "fresh.sqlite")

    def remove_fresh():
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(fresh + suffix):
                os.remove(fresh + suffix)

    rows = [
        ("cyclelog export → FIT", measure([CYCLELOG, "export", "1", "--db", stored, "-o", exported], RUNS), 0.030),
        ("cyclelog import → fresh database",
         measure([CYCLELOG, "import", "--db", fresh, exported], RUNS, prepare=remove_fresh), 0.040),
    ]
    records = subprocess.run(
        [sys.executable, "-c", "import fitdecode,sys\n"
         "n=0\n"
         "with fitdecode.FitReader(sys.argv[1]) as r:\n"
         "    n=sum(1 for f in r if f.frame_type==fitdecode.FIT_FRAME_DATA and f.name=='record')\n"
         "print(n)", exported], check=True, capture_output=True, text=True).stdout.strip()
    peers = [
        ("fitdecode (Python) reading the file", measure(
            [sys.executable, "-c", "import fitdecode,sys\nfor f in fitdecode.FitReader(sys.argv[1]): pass", exported],
            runs=3)),
        ("garmin-fit-sdk (Python) reading the file", measure(
            [sys.executable, "-c", "from garmin_fit_sdk import Decoder, Stream\nimport sys\n"
             "Decoder(Stream.from_file(sys.argv[1])).read()", exported], runs=3)),
    ]
    print("\nFIT export and import of a 4-hour ride (%s records, %.0f kB; whole process; best / median, peak memory)"
          % (records, os.path.getsize(exported) / 1000))
    for label, (fastest, median, peak) in [row[:2] for row in rows] + peers:
        print("  %-42s %6.3f s / %6.3f s  %6.1f MB" % (label, fastest, median, peak))
    for label, (_, median, _), target in rows:
        print("  %-42s %s (target ≤ %d ms)" % (label, "met" if median <= target else "MISSED", target * 1000))
    for label, (fastest, median, peak), target in rows:
        results.add("FIT, 4-hour ride", label, fastest, median, peak_mb=peak, target="≤ %d ms" % (target * 1000),
                    met=median <= target)
    for label, (fastest, median, peak) in peers:
        results.add("FIT, 4-hour ride", label, fastest, median, peak_mb=peak)
    if os.path.exists(REAL_RIDE):
        remove_fresh()
        real = measure([CYCLELOG, "import", "--db", fresh, REAL_RIDE], RUNS, prepare=remove_fresh)
        print("  %-42s %6.3f s / %6.3f s  %6.1f MB" % ("cyclelog import of a real 2 h 19 min Edge file", *real))
    subprocess.run(["rm", "-rf", folder], check=True)


if __name__ == "__main__":
    main()
