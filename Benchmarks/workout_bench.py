#!/usr/bin/env python3
"""Structured workouts: a 1000-step .zwo read (and its canonical text and a FIT workout of it), beside Python's
ElementTree reading the same file into a list of steps, as the Python workout tools do; and what a workout costs a
ride: the player's work at every flush of a 4-hour live ride, as a share of a core, and a 4-hour ride's compliance.
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


if __name__ == "__main__":
    sys.exit(main())
