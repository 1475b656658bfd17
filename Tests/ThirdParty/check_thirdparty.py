#!/usr/bin/env python3
"""Imports every real third-party FIT file in ../shared/data/thirdparty/fit with `cyclelog import --json`, one file
at a time into a fresh database, and judges the outcome against what fitdecode (an independent decoder) reads in
the file itself:

- a file fitdecode cannot read (bad CRC, cut short, not FIT), a FIT file that is not an activity, one without
  records, or one whose sessions are all other sports is refused by name (exit status 1, the file's path and
  "nothing was imported"), and nothing is stored;
- every other file imports one ride, or one per cycling session of a multisport file;
- each ride has the device's own elapsed time, timer (moving) time, distance and work where the session message
  has them, unless cyclelog names a correction, whose reason is then checked in the file (a timer longer than
  elapsed, an elapsed time spanning a clock jump, work that counts implausible power);
- each lap the device wrote has the device's elapsed time and an average power where the device measured one;
- moving time never exceeds elapsed time; a heart rate of 0 is never averaged; no power above 3000 W and no heart
  rate outside 25-250 bpm is kept, and the maximum equals the session's maximum wherever that is plausible.

  check_thirdparty.py --cyclelog .build/debug/cyclelog [--data ../shared/data/thirdparty/fit]
Prints one line per file and 'N passed, N failed'; exits 1 on any failure.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import fitdecode

# FIT profile `sport` values that are not rides (the same list the importer refuses).
OTHER_SPORTS = {1, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24}
SPORT_NUMBERS = {"running": 1, "cycling": 2, "transition": 3, "fitness_equipment": 4, "swimming": 5,
                 "basketball": 6, "soccer": 7, "tennis": 8, "american_football": 9, "training": 10, "walking": 11,
                 "cross_country_skiing": 12, "alpine_skiing": 13, "snowboarding": 14, "rowing": 15,
                 "mountaineering": 16, "hiking": 17, "multisport": 18, "paddling": 19, "flying": 20,
                 "e_biking": 21, "motorcycling": 22, "boating": 23, "driving": 24, "generic": 0}
TWELVE_HOURS = 12 * 3600


def sport_number(value):
    if value is None:
        return None
    return value if isinstance(value, int) else SPORT_NUMBERS.get(value, -1)


def read(path):
    """What the file says: (problem or None, file type, sessions, laps, record times, record powers, record HRs)."""
    sessions, laps, times, powers, heart_rates, file_type = [], [], [], [], [], None
    try:
        with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
            for frame in reader:
                if not isinstance(frame, fitdecode.FitDataMessage):
                    continue
                if frame.name == "file_id" and file_type is None and frame.has_field("type"):
                    file_type = frame.get_raw_value("type")
                elif frame.name == "session":
                    sessions.append({field.name: field.value for field in frame.fields})
                elif frame.name == "lap":
                    laps.append({field.name: field.value for field in frame.fields})
                elif frame.name == "record" and frame.has_field("timestamp"):
                    times.append(frame.get_raw_value("timestamp"))
                    powers.append(frame.get_value("power") if frame.has_field("power") else None)
                    heart_rates.append(frame.get_value("heart_rate") if frame.has_field("heart_rate") else None)
    except Exception as error:  # fitdecode's own refusal: damaged, cut short, not FIT
        return str(error) or type(error).__name__, None, [], [], [], [], []
    return None, file_type, sessions, laps, times, powers, heart_rates


def has_clock_jump(times):
    """A step of more than 12 h forward or back between consecutive records (the time-jump rule's clock fault)."""
    return any(abs(b - a) > TWELVE_HOURS for a, b in zip(times, times[1:]))


def check_file(cyclelog, path, failures):
    name = os.path.basename(path)
    problem, file_type, sessions, laps, times, powers, heart_rates = read(path)
    sports = [sport_number(s.get("sport")) for s in sessions]
    rides = [s for s, sport in zip(sessions, sports) if sport not in OTHER_SPORTS]
    multisport = any(sport in OTHER_SPORTS for sport in sports)
    refuse = (problem is not None or (file_type is not None and file_type != 4) or not times
              or (sessions and not rides))
    with tempfile.TemporaryDirectory() as folder:
        database = os.path.join(folder, "rides.sqlite")
        run = subprocess.run([cyclelog, "import", "--json", "--db", database, path], capture_output=True, text=True)
        listed = subprocess.run([cyclelog, "list", "--json", "--db", database], capture_output=True, text=True)
    stored = json.loads(listed.stdout or "[]")

    def fail(message):
        failures.append(f"{name}: {message}")

    if refuse:
        why = problem or ("not an activity" if file_type not in (None, 4) else
                          "no records" if not times else "sports " + ", ".join(str(s.get("sport")) for s in sessions))
        if run.returncode != 1 or path not in run.stderr or "nothing was imported" not in run.stderr:
            fail(f"should be refused by name ({why}); exit {run.returncode}: {run.stderr.strip()[:300]}")
        if stored:
            fail("a refused file stored a ride")
        return "refused (" + why[:60] + ")"
    if run.returncode != 0:
        return fail(f"a ride was refused: {run.stderr.strip()[:300]}")
    summaries = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    expected_rides = len(rides) if multisport else 1
    if len(summaries) != expected_rides:
        return fail(f"{len(summaries)} rides imported, the file has {expected_rides}")
    for description, holds in SPECIFIC.get(name, []):
        if not holds(summaries[0]):
            fail(f"expected {description}")
    for number, summary in enumerate(summaries):
        if multisport:
            session_list = [rides[number]]
        else:
            session_list = sessions
        check_ride(summary, session_list, times, powers, heart_rates, fail)
        check_laps(summary, session_list, laps, multisport, fail)
    return f"{len(summaries)} ride(s)"


def check_laps(summary, sessions, laps, multisport, fail):
    """The device's laps within the ride, each with the device's elapsed time, and an average power wherever the
    device measured power in the lap (a lap without one would mean its seconds were taken off the timer)."""
    if multisport:
        start = sessions[0].get("start_time")
        end = start.timestamp() + (sessions[0].get("total_elapsed_time") or 0) if start else None
        laps = [lap for lap in laps if start and lap.get("start_time")
                and start.timestamp() <= lap["start_time"].timestamp() <= end]
    if not laps or len(summary["laps"]) != len(laps):
        return  # no lap messages, or laps cyclelog joined or split around a clock fault (checked by the totals)
    for number, (ours, device) in enumerate(zip(summary["laps"], laps), start=1):
        device_elapsed = device.get("total_elapsed_time")
        if device_elapsed is not None and abs(ours["elapsedSeconds"] - device_elapsed) > 0.01:
            fail(f"lap {number}: elapsed {ours['elapsedSeconds']} s, the device says {device_elapsed} s")
        if (device.get("avg_power") or 0) > 0 and ours.get("averagePowerWatts") is None:
            fail(f"lap {number}: no average power, the device measured {device['avg_power']} W")


def total(sessions, key):
    values = [s.get(key) for s in sessions if s.get(key) is not None]
    return sum(values) if values else None


def check_ride(summary, sessions, times, powers, heart_rates, fail):
    corrections = " ".join(summary.get("corrections", []))
    rejected = summary.get("rejectedSeconds", {})
    elapsed, moving = summary["elapsedSeconds"], summary["movingSeconds"]
    if moving > elapsed + 1e-6:
        fail(f"moving {moving} s above elapsed {elapsed} s")
    device_elapsed = total(sessions, "total_elapsed_time")
    device_timer = total(sessions, "total_timer_time")
    if device_timer is not None and device_elapsed is not None and device_timer > device_elapsed + 0.5:
        # A timer longer than the ride contradicts itself: the records' span decides which total is wrong.
        span = times[-1] - times[0] + 1 if times else 0
        if abs(device_timer - span) < abs(device_elapsed - span):
            if "is shorter than its timer time" not in corrections:
                fail(f"elapsed {device_elapsed} s below the timer's {device_timer} s, the records' {span} s: "
                     "the elapsed time was not set aside")
            # The ride ends at the timer's stop, which may come a little after the last record.
            if not span - 1 <= elapsed <= span + 60:
                fail(f"elapsed {elapsed} s, the records span {span} s")
            if abs(moving - min(device_timer, elapsed)) > 0.01:
                fail(f"moving {moving} s, the device's timer says {device_timer} s")
        elif "timer time" not in corrections or abs(elapsed - device_elapsed) > 0.01:
            fail(f"timer {device_timer} s above elapsed {device_elapsed} s, which the records' {span} s bear out: "
                 "the timer was not set aside")
        elif moving > elapsed + 0.01:
            fail(f"moving {moving} s above elapsed {elapsed} s")
    elif "elapsed time" in corrections and "spans a clock fault" in corrections:
        if not has_clock_jump(times):
            fail("elapsed corrected for a clock fault the records do not show")
    elif device_elapsed is not None and abs(elapsed - device_elapsed) > 0.01:
        fail(f"elapsed {elapsed} s, the device says {device_elapsed} s")
    if "timer time" in corrections:
        if not (device_timer is not None and device_elapsed is not None and device_timer > device_elapsed):
            fail("timer corrected although the device's timer is not longer than its elapsed time")
    elif device_timer is not None and "elapsed time" not in corrections and abs(moving - device_timer) > 0.01:
        fail(f"moving {moving} s, the device's timer says {device_timer} s")
    distance = total(sessions, "total_distance")
    if distance is not None and abs(summary["distanceMeters"] - distance) > 0.01:
        fail(f"distance {summary['distanceMeters']} m, the device says {distance} m")
    work = total(sessions, "total_work")
    if "work" in corrections:
        if not rejected.get("powerWatts"):
            fail("work corrected without rejected power")
    elif work and summary["workJoules"] is not None and abs(summary["workJoules"] - work) > 0.5:
        fail(f"work {summary['workJoules']} J, the device says {work} J")
    average_heart_rate = summary.get("averageHeartRateBPM")
    if average_heart_rate is not None and not 25 <= average_heart_rate <= 250:
        fail(f"average heart rate {average_heart_rate} bpm")
    maximum_power = summary.get("maximumPowerWatts")
    if maximum_power is not None and maximum_power > 3000:
        fail(f"maximum power {maximum_power} W kept")
    if any(p is not None and p > 3000 for p in powers) and not rejected.get("powerWatts"):
        fail("power above 3000 W in the records, none rejected")
    # The highest power in the records (some devices' session maximum comes from data the records do not hold:
    # ELEMNT and Edge files say 668 W where their highest record is 648 W); with nothing rejected, the ride's
    # maximum is one of the record values and no record on the ride's seconds is higher.
    recorded = [p for p in powers if p is not None]
    if recorded and maximum_power is not None and not rejected.get("powerWatts"):
        if maximum_power not in recorded:
            fail(f"maximum power {maximum_power} W is no record's value")
        if maximum_power > max(recorded):
            fail(f"maximum power {maximum_power} W above the records' {max(recorded)} W")
    maximum_heart_rate = summary.get("maximumHeartRateBPM")
    if maximum_heart_rate is not None and not 25 <= maximum_heart_rate <= 250:
        fail(f"maximum heart rate {maximum_heart_rate} bpm kept")
    if any(h is not None and h > 250 for h in heart_rates) and not rejected.get("heartRateBPM"):
        fail("heart rate above 250 bpm in the records, none rejected")


# What the issue that brought these files in measured by hand, per file: the 4 s at 21 733 W of the o_synce ride
# are rejected and its average is 160.0 W without them; NP counts the Stages ride's gaps as the average does, so it
# is not below it; the triathlon's bike leg (24 061 power records) is a ride.
SPECIFIC = {
    "GoldenCheetah__test_rides_20130717_143733.fit": [
        ("rejectedSeconds.powerWatts == 4", lambda s: s["rejectedSeconds"].get("powerWatts") == 4),
        # 160.0 W is the mean of the plausible records; cyclelog's mean is over seconds, where a record holds until
        # the next (5637 records over 6254 s), which moves it by a tenth of a watt, not by the 15 W of the spikes.
        ("averagePowerWatts within 0.5 W of 160.0", lambda s: abs(s["averagePowerWatts"] - 160.0) < 0.5),
        ("maximumPowerWatts <= 3000", lambda s: s["maximumPowerWatts"] <= 3000),
    ],
    "GoldenCheetah__test_rides_Garmin830_with_Stages.fit": [
        ("normalizedPowerWatts >= averagePowerWatts", lambda s: s["normalizedPowerWatts"] >= s["averagePowerWatts"]),
    ],
    "GoldenCheetah__test_rides_MultiSport-2019-11-24.fit": [
        ("one ride of over 6 hours", lambda s: s["elapsedSeconds"] > 6 * 3600),
    ],
}


def judge(cyclelog, path):
    failures = []
    outcome = check_file(cyclelog, path, failures)
    return os.path.basename(path), outcome, failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cyclelog", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--data", default=os.path.join(here, "..", "..", "..", "shared", "data", "thirdparty", "fit"))
    arguments = parser.parse_args()
    if not os.path.isdir(arguments.data):
        print(f"third-party files: {arguments.data} is missing (shared/ beside the clone); 0 passed, 1 failed")
        return 1
    files = sorted(f for f in os.listdir(arguments.data) if f.lower().endswith(".fit"))
    passed = failed = 0

    # Each file in its own database, one at a time per core, each in a process of its own: reading a file with
    # fitdecode is Python's own work, which threads of one interpreter would take turns at.
    cyclelog = os.path.abspath(arguments.cyclelog)
    with concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(judge, [cyclelog] * len(files), [os.path.join(arguments.data, f) for f in files]))
    for file, outcome, failures in results:
        if failures:
            failed += 1
            for failure in failures:
                print("FAIL " + failure)
        else:
            passed += 1
            print(f"ok   {file}: {outcome}")
    print(f"third-party files: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
