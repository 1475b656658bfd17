#!/usr/bin/env python3
"""Drives headless Chromium (Debian's) over the DevTools protocol through the mirror's list of rides when there are
more than a page holds: pairs through the QR code's URL, opens `/history`, reads the rows and the caption, presses
"Older rides" with a real pointer until it is gone, and reads them again (a screenshot of each step kept). Prints
what it saw as JSON; the Swift test compares it with `cyclelog list --all --json`.

usage: history_pages_check.py PAIR_URL ARTEFACTS_FOLDER
"""
import json
import os
import sys

from page_check import Browser

ROWS = "document.querySelectorAll('#rides tbody tr').length"
# Each row's ride id, from its link (an unfinished ride has none).
IDS = ("[...document.querySelectorAll('#rides tbody tr')]"
       ".map(r => { const a = r.querySelector('a'); return a ? Number(a.hash.split('/').pop()) : null; })")
CAPTION = "document.querySelector('#rides caption').textContent"
BUTTON = "document.getElementById('older') !== null"


def main():
    pair_url, artefacts = sys.argv[1], sys.argv[2]
    base = pair_url.split("/pair?")[0]
    os.makedirs(artefacts, exist_ok=True)
    report = {"steps": []}
    browser = Browser()
    try:
        browser.pair(pair_url)
        browser.call("Emulation.setDeviceMetricsOverride", width=1440, height=900, deviceScaleFactor=1, mobile=False)
        browser.call("Page.navigate", url=base + "/history#/")
        browser.wait_for("the rides", "document.querySelector('#rides tbody tr') !== null")
        while True:
            step = len(report["steps"])
            report["steps"].append({"rows": browser.evaluate(ROWS), "caption": browser.evaluate(CAPTION),
                                    "button": browser.evaluate(BUTTON),
                                    "screenshot": browser.screenshot(
                                        os.path.join(artefacts, f"history-pages-{step}.png"))})
            if not report["steps"][-1]["button"] or step > 10:
                break
            rows = report["steps"][-1]["rows"]
            browser.tap("#older")
            browser.wait_for("older rides", f"{ROWS} > {rows} || !({BUTTON})")
        report["ids"] = browser.evaluate(IDS)
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
