#!/usr/bin/env python3
"""Drives headless Chromium through the mirror's page while another screen holds the mirror's only stream
(`--max-clients 1`): the page's stream is refused (503), the page says it is reconnecting, and once the other
screen lets go the page follows the mirror again without being reloaded; once the phone is revoked (the running
mirror's own `revoke`), the page shows the pairing form. Prints what it saw as JSON.

usage: refused_stream_check.py PAIR_URL PORT HOLDER_TOKEN MIRROR_PID

HOLDER_TOKEN is another paired device's token, whose stream (opened here, with `Authorization: Bearer`) holds the
one place until the page was refused.
"""
import http.client
import json
import os
import subprocess
import sys
import time

from page_check import Browser, environment_of

STREAM_STATE = "(typeof source === 'undefined' || !source ? null : source.readyState)"
DOWN = "document.getElementById('down').classList.contains('show')"


def main():
    pair_url, port, token, mirror_pid = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    holder = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    holder.request("GET", "/api/v1/stream", headers={"Authorization": f"Bearer {token}"})
    answer = holder.getresponse()
    if answer.status != 200:
        raise SystemExit(f"the holding stream was answered {answer.status}")
    answer.fp.readline()  # its first line: the place is taken
    browser = Browser()
    report = {}
    try:
        browser.open_portrait(pair_url)
        # EventSource.CLOSED (2): the browser gave the refused stream up and would never ask again by itself.
        browser.wait_for("its stream refused", f"document.getElementById('down') && {STREAM_STATE} === 2")
        report["downShownWhileRefused"] = browser.evaluate(DOWN)
        # Still refused 4 s later: the page's next attempt met the same full mirror.
        time.sleep(4)
        report["stillDownWhileHeld"] = browser.evaluate(DOWN)
        holder.close()
        freed = time.time()
        browser.wait_for("the stream open once the place was free", f"!({DOWN}) && {STREAM_STATE} === 1", 15)
        report["secondsToFollow"] = time.time() - freed
        report["state"] = browser.text("state")
        # Revoked: the mirror closes its stream, the browser's own reconnect is refused (401) and so is the
        # page's next ask, which then offers to pair again.
        subprocess.run([os.readlink(f"/proc/{mirror_pid}/exe"), "revoke", "handlebars"],
                       env=environment_of(mirror_pid), capture_output=True, timeout=30, check=True)
        revoked = time.time()
        browser.wait_for("the pairing form after the phone was revoked",
                         "getComputedStyle(document.getElementById('pair')).display === 'block'", 15)
        report["secondsToPairingForm"] = time.time() - revoked
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
