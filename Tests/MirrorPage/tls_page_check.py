#!/usr/bin/env python3
"""The mirror's page over HTTPS in headless Chromium (Debian's), as a phone that trusts the authority that signed
the mirror's certificate: Chromium on Linux reads the authorities a user added from the NSS database in
`~/.pki/nssdb`, made here with NSS's `certutil`. Opens the QR code's https link, waits for the page to show what
the stream sent, and reports what a rider would depend on: a secure page (the only kind that may keep the screen
on), no word about TLS missing, the device cookie Secure, HttpOnly and SameSite=Strict; then it taps the first
suggested workout's Start (a control sent over HTTPS) and reads the live power the page shows until three values have
shown, at most 12 s (pushed over HTTPS). Up to the ride shown running, on a slow network, where opening the stream takes longer than the page first
waits for it. Then a browser that does not trust that authority opens the same address. Prints what it saw as JSON; the
Swift test judges it.

usage: tls_page_check.py PAIR_URL CA_CERTIFICATE ARTEFACTS_FOLDER
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

from page_check import Browser

SLOW_NETWORK_MS = 2000


def home_trusting(authority):
    """A HOME whose NSS database trusts `authority` to identify web sites (or trusts nothing added, when None)."""
    home = tempfile.mkdtemp(prefix="cyclelog-home-")
    database = "sql:" + os.path.join(home, ".pki", "nssdb")
    os.makedirs(os.path.join(home, ".pki", "nssdb"))
    subprocess.run(["certutil", "-N", "--empty-password", "-d", database], check=True)
    if authority:
        subprocess.run(["certutil", "-A", "-d", database, "-n", "cyclelog test authority", "-t", "C,,",
                        "-i", authority], check=True)
    return home


def open_page(browser, url):
    """Navigates and returns Chromium's error for the navigation (None when the page loaded)."""
    browser.call("Page.enable")
    return browser.call("Page.navigate", url=url).get("errorText")


def main():
    pair_url, authority, artefacts = sys.argv[1:4]
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(pair_url))
    report = {}
    trusted_home, stranger_home = home_trusting(authority), home_trusting(None)
    try:
        browser = Browser(home=trusted_home)
        try:
            browser.size(390, 844)
            # A phone on a slow network: every answer starts 2 s after its request, so the stream takes longer to
            # open than the 1.5 s after which the page tries again.
            browser.call("Network.enable")
            browser.call("Network.emulateNetworkConditions", offline=False, latency=SLOW_NETWORK_MS,
                         downloadThroughput=-1, uploadThroughput=-1)
            report["error"] = open_page(browser, pair_url)
            if report["error"]:
                raise SystemExit(json.dumps(report))
            browser.wait_for("the waiting recorder", "document.getElementById('state')?.textContent === 'waiting'")
            report["location"] = browser.evaluate("location.href")
            report["secureContext"] = browser.evaluate("window.isSecureContext")
            report["wakeLockOffered"] = browser.evaluate("'wakeLock' in navigator")
            report["text"] = browser.evaluate("document.body.innerText")
            report["scriptSeesCookie"] = browser.evaluate("document.cookie.includes('cyclelog=')")
            report["cookies"] = [
                {key: cookie.get(key) for key in ("name", "secure", "httpOnly", "sameSite")}
                for cookie in browser.call("Network.getCookies", urls=[origin])["cookies"]]
            report["status"] = browser.evaluate(
                "fetch('/api/v1/status', {credentials: 'same-origin'}).then(r => r.status)")
            browser.wait_for("the suggested workouts", "document.querySelectorAll('#start button').length > 0")
            browser.tap("#start button")
            browser.wait_for("the ride running", "document.getElementById('state').textContent === 'running'")
            # The stream opened on the slow network; the live power is read on a fast one, as the other checks read
            # it (a stream that falls silent for 2.5 s on a loaded machine is opened again, which a network that
            # answers 2 s late would turn into a gap). The meter replays a real ride, which coasts at 0 W for
            # seconds at a time, and the slow start moves where in it the reading falls: it lasts until three
            # values have shown, at most 12 s.
            browser.call("Network.emulateNetworkConditions", offline=False, latency=0, downloadThroughput=-1,
                         uploadThroughput=-1)
            report["powersShown"] = browser.powers_shown(12, enough=3)
            os.makedirs(artefacts, exist_ok=True)
            report["screenshot"] = browser.screenshot(os.path.join(artefacts, "mirror-https-riding.png"))
        finally:
            browser.close()
        stranger = Browser(home=stranger_home)
        try:
            report["strangerError"] = open_page(stranger, origin + "/")
        finally:
            stranger.close()
    finally:
        shutil.rmtree(trusted_home, ignore_errors=True)
        shutil.rmtree(stranger_home, ignore_errors=True)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
