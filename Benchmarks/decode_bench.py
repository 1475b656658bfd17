#!/usr/bin/env python3
"""`cyclelog decode` as a user runs it (`make bench`): 1 000 000 real Cycling Power Measurement payloads (the
conformant ones of Fixtures/captures, over and over) as hex lines, decoded by the release binary as a whole
process — JSON and the readable table — and, in the same run, by pycycling 0.4.1 in a Python loop printing
json.dumps of each measurement. Best and median of N runs, and each one's peak memory."""
import os
import subprocess
import sys

import results as record
from results import CYCLELOG, ROOT

BENCH = os.path.join(ROOT, ".build", "bench")
LINES = 1_000_000
RUNS = 5


def payloads():
    found = []
    with open(os.path.join(ROOT, "Fixtures", "captures", "cycling-power-measurement.tsv")) as f:
        for line in f.readlines()[1:]:
            columns = line.rstrip("\n").split("\t")
            if len(columns) > 6 and columns[2] == "2a63" and columns[6] == "conformant":
                found.append(columns[5])
    return found


def main():
    os.makedirs(BENCH, exist_ok=True)
    source = os.path.join(BENCH, "cp-lines.txt")
    corpus = payloads()
    with open(source, "w") as f:
        for index in range(LINES):
            f.write(corpus[index % len(corpus)] + "\n")
    rows = [
        ("cyclelog decode 2a63 --json", [CYCLELOG, "decode", "2a63", "--json"]),
        ("cyclelog decode 2a63 (table)", [CYCLELOG, "decode", "2a63"]),
        ("pycycling 0.4.1 + json.dumps", [sys.executable, os.path.join(ROOT, "Benchmarks", "peers",
                                                                      "pycycling_decode_lines.py")]),
    ]
    print("\n`decode` of %d Cycling Power payloads (%d distinct, real) from a file, whole process; best / median,"
          " peak memory" % (LINES, len(corpus)))
    results = {}
    for label, command in rows:
        results[label] = record.measure(command, RUNS, source=source)
        fastest, median, peak = results[label]
        print("  %-32s %7.3f s / %7.3f s  %6.1f MB" % (label, fastest, median, peak))
    ours, peer = results[rows[0][0]][1], results[rows[2][0]][1]
    table = results[rows[1][0]][1]
    print("  cyclelog --json is %.1f× pycycling (medians); the table takes %.2f× the JSON's time" % (peer / ours,
                                                                                                  table / ours))
    # Streaming: ten times the lines through a pipe must not take more memory than one time from the file.
    feeder = subprocess.Popen(["cat"] + [source] * 10, stdout=subprocess.PIPE)
    piped_mb = record.peak_megabytes_of([CYCLELOG, "decode", "2a63", "--json"], feeder.stdout)
    feeder.stdout.close()
    feeder.wait()
    print("  %d lines through a pipe: peak %.1f MB (%d lines from the file: %.1f MB)" % (
        LINES * 10, piped_mb, LINES, results[rows[0][0]][2]))
    targets = {rows[0][0]: ("≤ 0.25 s", ours <= 0.25), rows[1][0]: ("≤ 2× the JSON", table <= 2 * ours)}
    for label, _ in rows:
        fastest, median, peak = results[label]
        target, met = targets.get(label, ("", None))
        record.add("decode, 1 M lines", label, fastest, median, peak_mb=peak, target=target, met=met)
    record.add("decode, 1 M lines", "--json against pycycling (medians)", median=round(peer / ours, 1), unit="×",
               target="≥ 30×", met=peer / ours >= 30)
    record.add("decode, 1 M lines", "10 M lines through a pipe", peak_mb=piped_mb, target="flat",
               met=piped_mb <= results[rows[0][0]][2] * 1.1)


if __name__ == "__main__":
    main()
