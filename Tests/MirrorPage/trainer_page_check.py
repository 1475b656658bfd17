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

from page_check import PORTRAIT, Browser


def main():
    pair_url, artefacts = sys.argv[1], sys.argv[2]
    os.makedirs(artefacts, exist_ok=True)
    browser = Browser()
    report = {}
    try:
        browser.call("Page.enable")
        browser.size(*PORTRAIT)
        browser.call("Page.navigate", url=pair_url)
        # Null-safe: the first looks may come before the page (after the pairing's redirect) is there.
        browser.wait_for("the trainer panel",
                         "document.getElementById('trainerBox')?.classList.contains('hidden') === false"
                         " && (document.getElementById('trainerState')?.textContent || '').startsWith('controlled')")
        report["shownAtFirst"] = browser.evaluate("document.getElementById('trainerTarget').textContent")
        report["buttonHeights"] = {name: browser.evaluate(
            f"document.getElementById('{name}').getBoundingClientRect().height")
            for name in ("trainerUp", "trainerDown", "trainerErg", "trainerSim", "trainerFree")}
        browser.tap("#trainerUp")
        browser.wait_for("ERG at 210 W", "document.getElementById('trainerTarget').textContent === 'ERG 210 W'")
        report["shownAfterUp"] = browser.evaluate("document.getElementById('trainerTarget').textContent")
        browser.evaluate("document.getElementById('trainerBox').scrollIntoView({block: 'center'})")
        browser.screenshot(f"{artefacts}/mirror-trainer-portrait.png")
        browser.tap("#trainerSim")
        browser.wait_for("the refusal", "document.getElementById('info').textContent.startsWith('Sim: ')")
        report["refusalShown"] = browser.evaluate("document.getElementById('info').textContent")
        report["refusalInThePanel"] = browser.evaluate("document.getElementById('trainerMessage').textContent")
        browser.screenshot(f"{artefacts}/mirror-trainer-refused-portrait.png")
        browser.tap("#trainerFree")
        browser.wait_for("the trainer free", "document.getElementById('trainerTarget').textContent === 'free'")
        report["shownAfterFree"] = browser.evaluate("document.getElementById('trainerTarget').textContent")
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
