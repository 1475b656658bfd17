#!/usr/bin/env python3
"""Imports every real third-party workout file in ../shared/data/thirdparty/workouts (.zwo, .erg, .mrc, FIT
workouts) with `cyclelog workouts import`, and judges each against what an independent reading of the file says:

- .zwo: Python's own XML parser; a step per Warmup, Ramp, Cooldown, SteadyState, FreeRide, MaxEffort, two per
  IntervalsT repetition; durations rounded to the second; a step of 0 s left out;
- .erg/.mrc: the course points; a step between each two points at different times;
- FIT: fitdecode; repeat steps expanded (a block repeated `repeat_steps` times in all);
then the steps cyclelog stored (`workouts show ID --text`) must be as many, as long in total, and the traps listed
in HAND below (read from the files by hand) must be read as they are meant. Every file is then written as FIT
(and as .zwo where the format holds it) and imported again: a .zwo comes back as the same workout, a FIT file
with the same lengths, and Garmin's FIT SDK reads each FIT file written without an error.

  check_workouts.py --cyclelog .build/debug/cyclelog [--data ../shared/data/thirdparty/workouts]
Prints one line per file and 'N passed, N failed'; exits 1 on any failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import fitdecode
from garmin_fit_sdk import Decoder, Stream

# Traps, read by hand in the files: file -> list of (step number from 1, the step's canonical line).
HAND = {
    # A Cooldown whose PowerLow is above its PowerHigh (0.75449997 → 0.30449998): it starts at 75.45 %.
    "zwo/cf-SanJoaquin-5.zwo": [(29, "step cooldown 480s 75.45%..30.45%")],
    # 480.00003 s read as 480 s; PowerHigh 0.70000005 as 70 %; a text at the step's start.
    "zwo/zwofactory-Day_6-LONG_day.zwo": [(54, "step cooldown 480s 75%..70%")],
    # SteadyState with PowerLow != PowerHigh is a range.
    "zwo/gc-FTPTest.zwo": [(2, "step active 20s 80%-100%"), (14, "step active 1200s free scored")],
    # IntervalsT with on-ramps (PowerOnLow/PowerOnHigh) and off-ramps (PowerOffLow/PowerOffHigh).
    "zwo/gc-Mayfield.zwo": [(2, "step active 60s 140%..160%"), (3, "step rest 30s 50%..80%"),
                            (4, "step active 60s 140%..160%")],
    # IntervalsT with OnPower and OffPower, one of them with Repeat="1".
    "zwo/qz-Easy_intervals.zwo": [(3, "step active 60s 125%"), (4, "step rest 180s 73%")],
    # Cadence="-1" is no cadence; Cadence="110" is one.
    "zwo/zwp-szrgwo-021.zwo": [(1, "step warmup 360s 40%..90% cadence=71"), (2, "step active 180s 95% cadence=110")],
    # Over-unders: OnPower below OffPower, 420.00003 s read as 420 s, cadences on and off.
    "zwo/zwofactory-17-Spiked_Tempo.zwo": [(7, "step active 420s 83.47% cadence=90"),
                                           (8, "step rest 180s 95.42% cadence=95")],
    # TrainerRoad's power_lap target, watts stored + 1000, an open step ended by a lap.
    "fit/fittool-trainerroad_744490.fit": [
        (1, "step warmup 600s 158W-205W"),
        (2, "step rest open 1W-158W"),
    ],
    # Stages' power_3s target in watts + 1000; its cadence and heart-rate targets are developer fields numbered
    # like the standard ones, which are not the standard fields.
    "fit/fittool-stagesLink_25622166.fit": [(2, "step active 1200s 190W-202W name=Threshold")],
    # Garmin's SDK sample: a repeat step (3 times in all), a declared step count (4) that is wrong, zones.
    "fit/fitparse-WorkoutRepeatSteps.fit": [(2, "step active 500m 106%-120% name=B1_"), (7, "step active 500m 76%-90% name=B2_")],
    "fit/fitparse-WorkoutCustomTargetValues.fit": [(2, "step active 500m 300W-310W name=B1_")],
    # Percent of FTP in an .mrc whose column is called FTP.
    "mrc/trwc-over-unders.mrc": [(1, "step active 300s 40%"), (2, "step active 60s 95%")],
    "erg/gc-FTPCheckup.erg": [(1, "step active 120s 130W")],
}


def zwo_expected(path):
    root = ET.parse(path).getroot()
    steps, seconds = 0, 0
    for element in root.find("workout"):
        name = element.tag.lower()
        if name == "intervalst":
            repeat = int(round(float(element.get("Repeat", "1"))))
            on, off = round(float(element.get("OnDuration"))), round(float(element.get("OffDuration")))
            steps += repeat * ((on > 0) + (off > 0))
            seconds += repeat * (on + off)
        else:
            duration = round(float(element.get("Duration")))
            steps += duration > 0
            seconds += duration
    return steps, seconds


def erg_expected(path):
    points, section = [], ""
    with open(path, encoding="utf-8", errors="replace") as file:
        for line in file:
            line = line.strip()
            if line.startswith("["):
                section = "" if line.upper().startswith("[END") else line.upper()
                continue
            words = line.split()
            if section == "[COURSE DATA]" and len(words) >= 2 and words[1].upper() != "LAP":
                points.append(round(float(words[0]) * 60))
    steps = sum(1 for a, b in zip(points, points[1:]) if b > a)
    return steps, points[-1] - points[0]


def fit_expected(path):
    records = []
    with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
        for frame in reader:
            if isinstance(frame, fitdecode.FitDataMessage) and frame.name == "workout_step":
                records.append({field.name: field.raw_value for field in frame.fields})
    expanded, starts = [], []
    for record in records:
        starts.append(len(expanded))
        if record.get("duration_type") == 6:
            block = expanded[starts[record["duration_value"] if "duration_value" in record else record["duration_step"]]:]
            times = record.get("target_value", record.get("repeat_steps"))
            expanded += block * (times - 1)
        else:
            expanded.append(record)
    seconds = sum(round(r["duration_time"] / 1000) for r in expanded
                  if r.get("duration_type") == 0 and r.get("duration_time") is not None)
    return len(expanded), seconds


def canonical_steps(cyclelog, db, workout_id):
    text = subprocess.run([cyclelog, "workouts", "show", workout_id, "--text", "--db", db],
                          capture_output=True, text=True, check=True).stdout
    return [line for line in text.splitlines() if line.startswith("step ")]


def timed_seconds(steps):
    return sum(int(line.split()[2][:-1]) for line in steps if line.split()[2].endswith("s"))


def check(cyclelog, data, relative, folder):
    path = os.path.join(data, relative)
    db = os.path.join(folder, "library.sqlite")
    if os.path.exists(db):
        os.remove(db)
    run = subprocess.run([cyclelog, "workouts", "import", path, "--db", db], capture_output=True, text=True)
    if run.returncode != 0:
        return f"refused: {run.stderr.strip()}"
    workout_id = run.stdout.split()[0]
    steps = canonical_steps(cyclelog, db, workout_id)
    kind = relative.split("/")[0]
    count, seconds = {"zwo": zwo_expected, "erg": erg_expected, "mrc": erg_expected, "fit": fit_expected}[kind](path)
    if len(steps) != count:
        return f"{len(steps)} steps, the file has {count}"
    if timed_seconds(steps) != seconds:
        return f"{timed_seconds(steps)} s of timed steps, the file has {seconds}"
    for number, line in HAND.get(relative, []):
        if steps[number - 1] != line:
            return f"step {number} is '{steps[number - 1]}', the file means '{line}'"
    # Written out and read again.
    out = os.path.join(folder, "out")
    for extension in ("zwo", "fit"):
        target = f"{out}.{extension}"
        exported = subprocess.run([cyclelog, "workouts", "export", workout_id, "-o", target, "--db", db],
                                  capture_output=True, text=True)
        if exported.returncode != 0:
            if extension == "zwo" and "cannot be written as a .zwo file" in exported.stderr:
                continue  # watts, distances or open steps: no form in a .zwo, and said so
            return f"export {extension}: {exported.stderr.strip()}"
        again = subprocess.run([cyclelog, "workouts", "import", target, "--db", db], capture_output=True, text=True)
        if again.returncode != 0:
            return f"its own {extension} refused: {again.stderr.strip()}"
        if extension == "zwo" and kind == "zwo" and "already in the library" not in again.stdout:
            return "written as .zwo and read again, it is not the same workout"
        if extension == "fit":
            # Garmin's own SDK reads the file we wrote without an error, with as many steps.
            decoder = Decoder(Stream.from_file(target))
            if not decoder.check_integrity():
                return "the FIT workout written fails Garmin's SDK integrity check"
            messages, errors = Decoder(Stream.from_file(target)).read()
            if errors or len(messages.get("workout_step_mesgs", [])) != len(steps):
                return f"Garmin's SDK reads the FIT workout written with {errors or 'a different step count'}"
            back_id = again.stdout.split()[0]
            back = canonical_steps(cyclelog, db, back_id)
            if [line.split()[2] for line in back] != [line.split()[2] for line in steps]:
                return "written as FIT and read again, its lengths differ"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cyclelog", required=True)
    parser.add_argument("--data", default="../shared/data/thirdparty/workouts")
    arguments = parser.parse_args()
    files = sorted(
        os.path.join(kind, name)
        for kind in ("zwo", "erg", "mrc", "fit") if os.path.isdir(os.path.join(arguments.data, kind))
        for name in os.listdir(os.path.join(arguments.data, kind)))
    passed = failed = 0
    with tempfile.TemporaryDirectory() as folder:
        for relative in files:
            problem = check(arguments.cyclelog, arguments.data, relative, folder)
            print(f"{'FAIL' if problem else 'ok  '} {relative}" + (f": {problem}" if problem else ""))
            failed += bool(problem)
            passed += not problem
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


main()
