#!/usr/bin/env python3
"""Drives headless Chromium (Debian's) over the DevTools protocol through the mirror's ride history (`/history`)
as a rider at a laptop or a phone would: pairs through the QR code's URL, opens the rides, one ride and the
fitness page at a phone's, a tablet's, a desktop's and a TV's width (screenshots kept), reads every number the ride page shows, and
picks a range on the ride's chart by zooming into a lap's seconds and dragging across the whole picture. Prints
what it saw as JSON; the Swift test compares it with `cyclelog show --json`.

usage: history_check.py PAIR_URL ARTEFACTS_FOLDER RIDE_ID LAP_NUMBER
"""
import json
import os
import sys
import time

from page_check import Browser

SIZES = [("phone", 390, 844, True), ("tablet", 820, 1180, True), ("desktop", 1440, 900, False),
         ("tv", 1920, 1080, False)]
# How far the page reaches past the screen's right edge (tables scroll inside their own box instead).
OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def numbers(browser, selector):
    """Every `data-key` number inside `selector`: key → raw value (None for null)."""
    pairs = browser.evaluate(
        f"[...document.querySelectorAll({json.dumps(selector + ' [data-key]')})]"
        ".map(e => [e.dataset.key, e.dataset.value])")
    return {key: (None if value == "null" else value) for key, value in pairs}


def drag(browser, start_x, end_x, y):
    """A real pointer drag: press, move in steps, release."""
    browser.call("Input.dispatchMouseEvent", type="mousePressed", x=start_x, y=y, button="left", clickCount=1)
    for step in range(1, 11):
        x = start_x + (end_x - start_x) * step / 10
        browser.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y, button="left", buttons=1)
    browser.call("Input.dispatchMouseEvent", type="mouseReleased", x=end_x, y=y, button="left", clickCount=1)


def main():
    pair_url, artefacts, ride_id, lap_number = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    base = pair_url.split("/pair?")[0]
    os.makedirs(artefacts, exist_ok=True)
    report = {"screenshots": []}
    browser = Browser()
    try:
        browser.pair(pair_url)
        # A rider in Berlin: the pages show times in the browser's zone, named.
        browser.call("Emulation.setTimezoneOverride", timezoneId="Europe/Berlin")
        for name, width, height, mobile in SIZES:
            browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                         mobile=mobile)
            browser.call("Page.navigate", url=base + "/history#/")
            browser.wait_for("the rides", "document.querySelector('#rides tbody tr') !== null")
            report.setdefault("rideRows", browser.evaluate("document.querySelectorAll('#rides tbody tr').length"))
            report.setdefault("dateHeading", browser.evaluate("document.querySelector('#rides th').textContent"))
            report.setdefault("dates", browser.evaluate(
                "[...document.querySelectorAll('#rides tbody tr')].map(r => r.cells[0].textContent)"))
            report.setdefault("caption", browser.evaluate("document.querySelector('#rides caption').textContent"))
            browser.wait_for("the sparklines", "[...document.querySelectorAll('img.spark')].every(i => i.complete)")
            report[f"sparklines-{name}"] = browser.evaluate(
                "[...document.querySelectorAll('img.spark')].filter(i => i.naturalWidth > 0 && i.alt).length")
            report[f"overflow-rides-{name}"] = browser.evaluate(OVERFLOW)
            report["screenshots"].append(browser.screenshot(os.path.join(artefacts, f"history-rides-{name}.png")))
            # The keyboard reaches every ride: the links are in the tab order.
            report.setdefault("rideLinks", browser.evaluate(
                "[...document.querySelectorAll('#rides a')].filter(a => a.tabIndex >= 0).length"))

            browser.evaluate(f"location.hash = '#/ride/{ride_id}'")
            browser.wait_for("the ride's chart", "document.querySelector('#chart svg') !== null")
            report[f"tiles-{name}"] = numbers(browser, "main > .grid")
            report.setdefault("shownTiles", browser.evaluate(
                "Object.fromEntries([...document.querySelectorAll('main > .grid [data-key]')]"
                ".map(e => [e.dataset.key, e.textContent]))"))
            report.setdefault("eventTimes", browser.evaluate(
                "[...document.querySelectorAll('#events tbody tr')].map(r => r.cells[1]?.textContent)"))
            report[f"laps-{name}"] = browser.evaluate("document.querySelectorAll('#laps tbody tr').length")
            report.setdefault("trainer", browser.evaluate("document.getElementById('trainer')?.textContent"))
            if name == "desktop":
                browser.evaluate("document.getElementById('trainer')?.scrollIntoView({block: 'center'})")
                report["screenshots"].append(browser.screenshot(os.path.join(artefacts, "history-trainer-desktop.png")))
            report["chartLabel"] = browser.evaluate("document.getElementById('chart').getAttribute('aria-label')")
            report[f"overflow-ride-{name}"] = browser.evaluate(OVERFLOW)
            report["screenshots"].append(browser.screenshot(os.path.join(artefacts, f"history-ride-{name}.png")))

            # Zoom into the lap's seconds, then drag across the whole plot: the range is exactly those seconds.
            lap = browser.evaluate(
                f"(() => {{ const r = document.querySelector('#laps tr[data-lap=\"{lap_number}\"]');"
                " return [+r.dataset.from, +r.dataset.to]; })()")
            report["lapSeconds"] = lap
            browser.evaluate(
                f"(() => {{ const f = document.getElementById('range'); f.from.value = {lap[0]}; f.to.value = {lap[1]};"
                " document.getElementById('zoom').click(); })()")
            browser.wait_for("the zoomed chart", f"document.querySelector('#chart svg')?.dataset.from === '{float(lap[0])}'")
            box = browser.evaluate(
                "(() => { const s = document.querySelector('#chart svg'); s.scrollIntoView({block: 'center'});"
                " const r = s.getBoundingClientRect(), k = r.width / s.viewBox.baseVal.width;"
                " return [r.left + (+s.dataset.plotLeft) * k, r.left + (+s.dataset.plotLeft + +s.dataset.plotWidth) * k,"
                " r.top + r.height / 2]; })()")
            # A little beyond each edge: a drag past the plot's ends stops at them.
            drag(browser, box[0] - 3, box[1] + 3, box[2])
            browser.wait_for("the range's statistics", "document.getElementById('rangeGrid') !== null")
            report[f"range-{name}"] = numbers(browser, "#rangeGrid")
            report["screenshots"].append(browser.screenshot(os.path.join(artefacts, f"history-range-{name}.png")))

            browser.evaluate("location.hash = '#/fitness'")
            browser.wait_for("the fitness page", "document.querySelector('#history') !== null"
                             " && document.querySelector('.chart img')?.complete")
            report[f"fitness-{name}"] = numbers(browser, "main > .grid")
            report["powerCurveAlt"] = browser.evaluate("document.querySelector('.chart img').alt")
            report["powerCurveLoaded"] = browser.evaluate("document.querySelector('.chart img').naturalWidth > 0")
            report["screenshots"].append(browser.screenshot(os.path.join(artefacts, f"history-fitness-{name}.png")))
        report["errors"] = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
        report["requestsElsewhere"] = browser.evaluate(
            f"performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith({json.dumps(base)}))")
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
