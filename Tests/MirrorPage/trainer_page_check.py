#!/usr/bin/env python3
"""Drives headless Chromium through the mirror's page while the recorder steers a smart trainer in ERG: the
trainer panel shows its mode and target, +10 W and the mode buttons reach the recorder, and a mode the trainer
does not take is refused on the page in the recorder's words. Prints what it saw as JSON; the Swift test compares
it with what the stand-in's trainer was sent.

usage: trainer_page_check.py PAIR_URL ARTEFACTS_FOLDER
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
        # Null-safe: the first looks may come before the page (after the pairing's redirect) is there.
        browser.wait_for("the trainer panel",
                         "document.getElementById('trainerBox')?.classList.contains('hidden') === false"
                         " && (document.getElementById('trainerState')?.textContent || '').startsWith('controlled')")
        report["shownAtFirst"] = browser.text("trainerTarget")
        report["buttonHeights"] = browser.heights(("trainerUp", "trainerDown", "trainerErg", "trainerSim", "trainerFree"))
        browser.tap("#trainerUp")
        browser.wait_for("ERG at 210 W", "document.getElementById('trainerTarget').textContent === 'ERG 210 W'")
        report["shownAfterUp"] = browser.text("trainerTarget")
        browser.evaluate("document.getElementById('trainerBox').scrollIntoView({block: 'center'})")
        browser.screenshot(f"{artefacts}/mirror-trainer-portrait.png")
        browser.tap("#trainerSim")
        browser.wait_for("the refusal", "document.getElementById('info').textContent.startsWith('Sim: ')")
        report["refusalShown"] = browser.text("info")
        report["refusalInThePanel"] = browser.text("trainerMessage")
        browser.screenshot(f"{artefacts}/mirror-trainer-refused-portrait.png")
        browser.tap("#trainerFree")
        browser.wait_for("the trainer free", "document.getElementById('trainerTarget').textContent === 'free'")
        report["shownAfterFree"] = browser.text("trainerTarget")
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
