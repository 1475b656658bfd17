#!/usr/bin/env python3
"""Drives headless Chromium through the mirror's page while the recorder rides a structured workout on the
stand-in's trainer: the workout panel shows the step, its target, the time left, the next target and the
profile with the ride's position; Skip and +5 % reach the recorder. Prints what it saw as JSON; the Swift test
compares it with what the trainer was sent.

usage: workout_page_check.py PAIR_URL ARTEFACTS_FOLDER
"""
import json
import os
import sys

from page_check import Browser


def main():
    pair_url, artefacts = sys.argv[1], sys.argv[2]
    os.makedirs(artefacts, exist_ok=True)
    browser = Browser()
    report = {}
    try:
        browser.open_portrait(pair_url)
        browser.wait_for("the workout panel",
                         "document.getElementById('workoutBox')?.classList.contains('hidden') === false"
                         " && (document.getElementById('workoutStep')?.textContent || '').startsWith('step 1')")
        report["name"] = browser.text("workoutName")
        report["step"] = browser.text("workoutStep")
        report["target"] = browser.text("workoutTarget")
        report["next"] = browser.text("workoutNext")
        report["left"] = browser.text("workoutLeft")
        report["segments"] = browser.evaluate("document.querySelectorAll('#workoutProfile polygon').length")
        report["positionShown"] = browser.evaluate("!!document.getElementById('workoutPosition')")
        report["buttonHeights"] = browser.heights(("workoutSkip", "workoutEasier", "workoutHarder"))
        browser.evaluate("document.getElementById('workoutBox').scrollIntoView({block: 'center'})")
        browser.screenshot(f"{artefacts}/mirror-workout-portrait.png")
        browser.tap("#workoutSkip")
        browser.wait_for("the second step", "document.getElementById('workoutStep').textContent.startsWith('step 2')")
        report["targetAfterSkip"] = browser.text("workoutTarget")
        browser.tap("#workoutHarder")
        browser.wait_for("105 %", "document.getElementById('workoutIntensity').textContent === '105'")
        report["targetAfterHarder"] = browser.text("workoutTarget")
        browser.screenshot(f"{artefacts}/mirror-workout-skipped-portrait.png")
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
