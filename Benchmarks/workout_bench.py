#!/usr/bin/env python3
"""Structured workouts: a 1000-step .zwo read (and its canonical text and a FIT workout of it), beside Python's
ElementTree reading the same file into a list of steps, as the Python workout tools do; and what a workout costs a
ride: the player's work at every flush of a 4-hour live ride, as a share of a core, and a 4-hour ride's compliance;
and hostile files of every format (size and count extremes), each timed until `cyclelog workouts import` refuses it.
The Swift side runs in process (Benchmarks/WorkoutBenchmark, release build)."""
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from results import ROOT, add

STEPS = 1000


def zwo_file():
    """1000 steps: warm-ups, ramps, steady states with ranges, IntervalsT pairs, free rides; text every tenth."""
    elements, steps, index = [], 0, 0
    while steps < STEPS:
        text = f'<textevent timeoffset="5" message="Step {steps + 1}: hold it"/>' if index % 10 == 0 else ""
        kind = index % 5
        if kind == 0:
            body, count = f'<Warmup Duration="{60 + index % 7}" PowerLow="0.4" PowerHigh="0.{60 + index % 30}"', 1
        elif kind == 1:
            body, count = f'<SteadyState Duration="120" PowerLow="0.88" PowerHigh="0.9{index % 5}" Cadence="90"', 1
        elif kind == 2 and steps + 4 <= STEPS:
            body = f'<IntervalsT Repeat="2" OnDuration="30" OffDuration="30" OnPower="1.2{index % 10}" OffPower="0.5"'
            count = 4
        elif kind == 3:
            body, count = '<FreeRide Duration="45"', 1
        else:
            body, count = f'<Ramp Duration="90" PowerLow="0.{50 + index % 40}" PowerHigh="0.75"', 1
        elements.append(body + (f">{text}</{body[1:].split()[0]}>" if text else "/>"))
        steps += count
        index += 1
    return "<workout_file><name>Thousand</name><workout>\n" + "\n".join(elements) + "\n</workout></workout_file>\n"


def python_steps(data):
    """The peer: ElementTree, then a dict per step (IntervalsT expanded), as zwift-workout tools in Python do."""
    steps = []
    for element in ET.fromstring(data).find("workout"):
        attributes = element.attrib
        if element.tag == "IntervalsT":
            for _ in range(int(attributes.get("Repeat", "1"))):
                steps.append({"seconds": float(attributes["OnDuration"]), "power": float(attributes["OnPower"])})
                steps.append({"seconds": float(attributes["OffDuration"]), "power": float(attributes["OffPower"])})
        else:
            steps.append({"seconds": float(attributes["Duration"]), "low": float(attributes.get("PowerLow", 0)),
                          "high": float(attributes.get("PowerHigh", 0)),
                          "texts": [t.attrib["message"] for t in element]})
    return steps


def fit_workout(steps):
    """A FIT workout of `steps` timed steps (file_id, workout, workout_step messages), with both CRCs."""
    import struct

    def crc(data):
        table = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401, 0xA001, 0x6C00, 0x7800, 0xB401,
                 0x5000, 0x9C01, 0x8801, 0x4400]
        value = 0
        for byte in data:
            for nibble in (byte & 0xF, byte >> 4):
                low = table[value & 0xF]
                value = ((value >> 4) & 0x0FFF) ^ low ^ table[nibble]
        return value
    records = bytearray([0x40, 0, 0]) + struct.pack("<H", 0) + bytes([1, 0, 1, 0]) + bytes([0x00, 5])
    records += bytes([0x41, 0, 0]) + struct.pack("<H", 26) + bytes([1, 4, 1, 0]) + bytes([0x01, 2])
    records += bytes([0x42, 0, 0]) + struct.pack("<H", 27) + bytes([3, 1, 1, 0, 2, 4, 0x86, 3, 1, 0])
    records += (bytes([0x02, 0]) + struct.pack("<I", 60000) + bytes([2])) * steps
    header = bytearray(struct.pack("<BBHI4s", 14, 0x20, 2132, len(records), b".FIT"))
    header += struct.pack("<H", crc(header))
    body = bytes(header) + bytes(records)
    return body + struct.pack("<H", crc(body))


def hostile_files(folder):
    """Size and count extremes of every format a rider may import: each must be refused in words."""
    steady = '<SteadyState Duration="60" Power="0.8"/>'
    files = {
        "FIT, 480 000 steps (3.4 MB)": ("steps.fit", fit_workout(480_000)),
        "FIT, 10 001 steps": ("10001.fit", fit_workout(10_001)),
        ".zwo, a 3.9 MB description": ("description.zwo", ("<workout_file><name>x</name><description>" + "d" * 3_900_000
                                                          + "</description><workout>" + steady
                                                          + "</workout></workout_file>").encode()),
        ".zwo, 40 000 steps": ("steps.zwo", ("<workout_file><name>x</name><workout>" + steady * 40_000
                                             + "</workout></workout_file>").encode()),
        ".zwo, nested a million deep": ("nested.zwo", b"<a>" * 1_000_000),
        ".erg, 250 000 points (3.4 MB)": ("points.erg", ("[COURSE HEADER]\nMINUTES WATTS\n[END COURSE HEADER]\n"
                                                         "[COURSE DATA]\n" + "".join(f"{i / 60:.4f}\t100\n" for i in
                                                                                    range(250_000))
                                                         + "[END COURSE DATA]\n").encode()),
        "any, 50 MB": ("big.zwo", b"<workout_file>" + b" " * 50_000_000),
    }
    for label, (name, data) in files.items():
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        yield label, path


def refusals(cyclelog):
    """Each hostile file imported by the release cyclelog: its time and peak memory until it is refused, and the
    library still listed after it."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        database = os.path.join(folder, "library.sqlite")
        for label, path in hostile_files(folder):
            start = time.perf_counter()
            run = subprocess.run(["/usr/bin/time", "-f", "%M", cyclelog, "workouts", "import", path, "--db", database],
                                 capture_output=True, text=True)
            seconds = time.perf_counter() - start
            peak_mb = int(run.stderr.strip().splitlines()[-1]) / 1024
            listed = subprocess.run([cyclelog, "workouts", "list", "--db", database], capture_output=True)
            rows.append((label, seconds, peak_mb, run.returncode == 1 and "nothing was imported" in run.stderr,
                         listed.returncode == 0))
    return rows


def main():
    binary = os.path.join(ROOT, ".build", "release", "WorkoutBenchmark")
    data = zwo_file().encode()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "thousand.zwo")
        with open(path, "wb") as f:
            f.write(data)
        swift = json.loads(subprocess.run([binary, path], check=True, capture_output=True, text=True).stdout)
    assert len(python_steps(data)) == STEPS
    times = []
    for _ in range(50):
        start = time.perf_counter()
        python_steps(data)
        times.append(time.perf_counter() - start)
    times.sort()
    peer_best, peer_median = times[0] * 1000, times[len(times) // 2] * 1000
    print(f"Structured workouts ({swift['steps']} steps, {swift['bytes']} bytes of .zwo), best of 50, in process")
    print(f"  .zwo read:        {swift['zwoBestMs']:.3f} ms (median {swift['zwoMedianMs']:.3f})"
          f"   Python ElementTree {peer_best:.3f} ms (median {peer_median:.3f})")
    print(f"  canonical text:   {swift['textBestMs']:.3f} ms;  FIT workout ({swift['fitBytes']} bytes): "
          f"{swift['fitBestMs']:.3f} ms")
    share = swift["playerBestMs"] / 1000 / (4 * 3600) * 100
    print(f"  player, {swift['playerTicks']} flushes of a 4-hour ride: {swift['playerBestMs']:.1f} ms in all"
          f" = {share:.5f} % of a core")
    print(f"  compliance of a {swift['complianceSeconds']}-second ride: {swift['complianceBestMs']:.2f} ms")
    add("workouts", "1000-step .zwo read (in process)", best=swift["zwoBestMs"], median=swift["zwoMedianMs"],
        unit="ms", target="≤ 5 ms", met=swift["zwoBestMs"] <= 5)
    add("workouts", "peer: Python ElementTree, same file", best=peer_best, median=peer_median, unit="ms")
    add("workouts", "player over a 4-hour live ride (share of a core)", median=share, unit="%",
        target="not measurable (< 0.01 %)", met=share < 0.01)
    add("workouts", "4-hour ride's compliance", best=swift["complianceBestMs"], unit="ms")
    print("Hostile workout files, `cyclelog workouts import` (release): time and peak memory until refused")
    for label, seconds, peak_mb, refused, listed in refusals(os.path.join(ROOT, ".build", "release", "cyclelog")):
        print(f"  {label:32} {seconds:6.3f} s  {peak_mb:6.1f} MB  {'refused' if refused else 'NOT REFUSED'}"
              f"{'' if listed else '; the library no longer lists'}")
        add("workouts", f"hostile file refused: {label}", best=seconds, unit="s", peak_mb=peak_mb,
            target="≤ 1 s, ≤ 100 MB, library readable", met=seconds <= 1 and peak_mb <= 100 and refused and listed)


if __name__ == "__main__":
    sys.exit(main())
