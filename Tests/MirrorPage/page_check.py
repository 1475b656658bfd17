#!/usr/bin/env python3
"""Drives headless Chromium (Debian's) over the DevTools protocol through the mirror's page, as a rider's phone
would: pairs through the QR code's URL, starts a ride, taps Lap, Pause, Resume, Water and Note, loses a response
(the page must retry with the same request id), goes offline for 10 s, sees a lap's Undo for its 30 s, undoes a lap
from two phones at once, holds End, undoes it, ends again. Prints what it saw as JSON;
the Swift test compares it with what the stand-in sent and what the journal kept.

usage: page_check.py PAIR_URL ARTEFACTS_FOLDER MIRROR_PID

MIRROR_PID is restarted once mid-ride (the same command line and environment, on the same port) to see the page
say "reconnecting" and come back; the new mirror's pid is in the report. A second phone, paired late through the
mirror's own `pair` (so that its Chromium runs only while it is needed), undoes one lap at once with the first.
"""
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # websocket-client

# Headless Chromium from Debian; --no-sandbox: tests run as root in CI containers, where its sandbox cannot start.
CHROMIUM = ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking"]
PORTRAIT = (390, 844)
LANDSCAPE = (844, 390)


class Browser:
    def __init__(self, home=None, name="the phone"):
        """`home`: the HOME Chromium runs with, whose `.pki/nssdb` holds the certificate authorities it trusts
        beside the system's (by default the user's own); `name`: the phone's name in a failure's message."""
        self.name = name
        self.profile = tempfile.mkdtemp(prefix="cyclelog-chromium-")
        self.process = subprocess.Popen(
            CHROMIUM + ["--remote-debugging-port=0", f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, HOME=home) if home else None)
        port = None
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if found:
                port = found.group(1)
                break
        if port is None:
            raise SystemExit("Chromium did not start (scripts/setup.sh installs it)")
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = next(p for p in pages if p["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30)
        self.next_id = 0
        self.events = []

    def close(self):
        self.disconnect()
        self.process.terminate()
        self.process.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def disconnect(self):
        self.socket.close()

    def send(self, message):
        self.socket.send(json.dumps(message))

    def receive(self, seconds=30):
        """The next protocol message, or None when none came within `seconds`."""
        self.socket.settimeout(seconds)
        try:
            return json.loads(self.socket.recv())
        except websocket.WebSocketTimeoutException:
            return None
        finally:
            self.socket.settimeout(30)

    def call(self, method, **params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message is None:
                raise RuntimeError(f"{method}: no answer from Chromium")
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def pump(self, seconds):
        """Reads the protocol's events for a while (`seconds` bounds each read)."""
        message = self.receive(seconds)
        if message is not None:
            self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, what, expression, seconds=15):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.1)
        raise SystemExit(f"{self.name}: the page never showed {what} within {seconds} s; {self.state()}")

    def state(self):
        """What the page shows and holds, for a failure's message: its controls still being sent, its message
        line, the Undo offered, its stream's state (0 opening, 1 open, 2 closed) and its whole text."""
        return self.evaluate(
            "JSON.stringify({pending: document.getElementById('pending')?.textContent,"
            " info: document.getElementById('info')?.textContent,"
            " undo: document.getElementById('undoButton')?.textContent,"
            " undoHidden: document.getElementById('undoButton')?.classList.contains('hidden'),"
            " stream: typeof source === 'undefined' || !source ? null : source.readyState,"
            " text: document.body.innerText})")

    def pair(self, pair_url):
        """Opens the pairing link (the QR code's URL), as a phone's camera would, and waits for the live page it
        leads to."""
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Page.navigate", url=pair_url)
        self.wait_for("the live page after pairing", "location.pathname === '/'")

    def open_portrait(self, url):
        """Loads `url` on a phone held upright."""
        self.call("Page.enable")
        self.size(*PORTRAIT)
        self.call("Page.navigate", url=url)

    def text(self, element):
        """The text of the element with the id `element`."""
        return self.evaluate(f"document.getElementById('{element}').textContent")

    def heights(self, elements):
        """The height in CSS pixels of each element named by its id."""
        return {name: self.evaluate(f"document.getElementById('{name}').getBoundingClientRect().height")
                for name in elements}

    def size(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=2,
                  mobile=True, screenOrientation={"type": "portraitPrimary" if height > width else
                                                  "landscapePrimary", "angle": 0 if height > width else 90})

    def tap(self, selector, hold_seconds=0.05):
        """A real pointer press and release at the element's centre (pointer events, as a finger gives)."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2, r.height]; })()")
        x, y, height = box
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x, y=y, button="left", clickCount=1)
        time.sleep(hold_seconds)
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x, y=y, button="left", clickCount=1)
        return height

    def powers_shown(self, seconds, enough=None):
        """The instantaneous power the page shows, each time it changes, for `seconds` (or until `enough` values)."""
        shown, deadline = [], time.time() + seconds
        while time.time() < deadline and (enough is None or len(shown) < enough):
            text = self.evaluate("document.getElementById('ipower').textContent")
            if text != "—" and (not shown or shown[-1] != text):
                shown.append(text)
            time.sleep(0.05)
        return [int(value) for value in shown]

    def screenshot(self, path):
        import base64
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as file:
            file.write(base64.b64decode(data))
        return path


class NamespacedBrowser(Browser):
    """Chromium inside a network namespace (a phone on a Wi-Fi that can be cut), driven over a pair of pipes
    (`--remote-debugging-pipe`: NUL-separated messages on its file descriptors 3 and 4), so that cutting the
    namespace's network leaves the line to Chromium up. The pipe speaks to the browser: the page is one of its
    targets, attached to as a session that every call names."""

    def __init__(self, namespace):
        self.name = f"the phone in {namespace}"
        self.profile = tempfile.mkdtemp(prefix="cyclelog-chromium-")
        commands, commands_out = os.pipe()
        answers_in, answers = os.pipe()
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, "sh", "-c",
             "exec " + " ".join(CHROMIUM) + f" --remote-debugging-pipe --user-data-dir={self.profile} about:blank"
             f" 3<&{commands} 4>&{answers}"],
            pass_fds=(commands, answers), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands)
        os.close(answers)
        self.commands, self.answers, self.buffer = commands_out, answers_in, b""
        self.next_id, self.events, self.session = 0, [], None
        page = next(target for target in self.call("Target.getTargets")["targetInfos"] if target["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def disconnect(self):
        os.close(self.commands)
        os.close(self.answers)

    def send(self, message):
        if self.session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")

    def receive(self, seconds=30):
        deadline = time.time() + seconds
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.answers], [], [], max(0, deadline - time.time()))
            if not ready:
                return None
            data = os.read(self.answers, 1 << 16)
            if not data:
                raise SystemExit("Chromium went away")
            self.buffer += data
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)


def environment_of(pid):
    """A running process's environment, as bytes, for starting its program again as it was started."""
    return dict(entry.split(b"=", 1) for entry in open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                if b"=" in entry)


def restart(pid, base, banner_shown, report):
    """Stops the mirror and starts it again as it was (command line, environment, port); the new pid."""
    command = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:-1]
    environment = environment_of(pid)
    port = base.rsplit(":", 1)[1].encode()
    command = [word.replace(b":0", b":" + port) if word.endswith(b":0") else word for word in command]
    output = open(f"/proc/{pid}/fd/1", "ab")
    os.kill(pid, signal.SIGTERM)
    # Gone when its port refuses connections (its parent reaps it later, so /proc still shows it a while).
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
            time.sleep(0.05)
        except OSError:
            break
    time.sleep(3)
    report["bannerWhileAway"] = banner_shown()
    process = subprocess.Popen(command, env=environment, stdout=output, stderr=output)
    return process.pid


# Each text the page's message line shows, kept in the page as it is shown (a later one paints over it).
KEEP_SAID = ("window.said = []; new MutationObserver(() => said.push(document.getElementById('info').textContent))"
             ".observe(document.getElementById('info'), {childList: true, characterData: true, subtree: true})")
UNDO_SHOWN = "!document.getElementById('undoButton').classList.contains('hidden')"


def tap_losing_the_first_answer(browser, selector, command, meanwhile=lambda: None):
    """Taps `selector` with the answer to the control it sends (`command`) lost on the way back (the server carried
    it out): the page must send it again with the same request id. `meanwhile` runs while the answer is held,
    before it is lost. Any other control's answer passes. True when an answer was lost."""
    browser.call("Fetch.enable", patterns=[{"urlPattern": "*/api/v1/control", "requestStage": "Response"}])
    browser.tap(selector)
    failed = False
    deadline = time.time() + 10
    while not failed and time.time() < deadline:
        for event in list(browser.events):
            if event.get("method") == "Fetch.requestPaused":
                browser.events.remove(event)
                body = json.loads(event["params"]["request"].get("postData") or "{}")
                if not failed and body.get("command") == command:
                    meanwhile()
                    browser.call("Fetch.failRequest", requestId=event["params"]["requestId"],
                                 errorReason="ConnectionReset")
                    failed = True
                else:
                    browser.call("Fetch.continueRequest", requestId=event["params"]["requestId"])
        if not failed:
            browser.pump(0.2)
    browser.call("Fetch.disable")
    if not failed:
        raise SystemExit(f"{browser.name}: no answer to {command} came within 10 s of the tap; {browser.state()}")
    return failed


def pairing_link(mirror_pid, name):
    """A new pairing link, as `cyclelog-mirror pair` prints it, from the running mirror's own program and
    environment (its bus)."""
    answer = subprocess.run([os.readlink(f"/proc/{mirror_pid}/exe"), "pair", "--name", name, "--json"],
                            env=environment_of(mirror_pid), capture_output=True, timeout=30, check=True)
    return json.loads(answer.stdout)["url"]


def main():
    pair_url, artefacts, mirror_pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(artefacts, exist_ok=True)
    base = pair_url.split("/pair")[0]
    browser = Browser(name="the first phone")
    second = None
    report = {"screenshots": [], "buttonHeights": {}}
    try:
        browser.call("Page.enable")
        browser.call("Network.enable")
        browser.size(*PORTRAIT)
        browser.call("Page.navigate", url=pair_url)
        browser.wait_for("the waiting recorder", "document.getElementById('state')?.textContent === 'waiting'")
        browser.wait_for("the suggested workouts", "document.querySelectorAll('#start button').length >= 4")
        report["screenshots"].append(browser.screenshot(f"{artefacts}/mirror-waiting-portrait.png"))
        report["startButtons"] = browser.evaluate(
            "Array.from(document.querySelectorAll('#start button'), b => b.textContent)")

        report["buttonHeights"]["start"] = browser.tap("#start button")
        browser.wait_for("the ride running", "document.getElementById('state').textContent === 'running'")

        report["titleWhileRiding"] = browser.evaluate("document.getElementById('title').textContent")
        report["powersShown"] = browser.powers_shown(6)
        # A goal as the recorder spells it, in the words the page shows.
        report["goalWords"] = browser.evaluate('["3600s", "5400s", "90s", "30km", "600kJ"].map(goalWords)')
        report["screenshots"].append(browser.screenshot(f"{artefacts}/mirror-riding-portrait.png"))

        for name, selector in [("lap", "#lapButton"), ("pause", "#pauseResume")]:
            report["buttonHeights"][name] = browser.tap(selector)
        browser.wait_for("the ride paused", "document.getElementById('state').textContent === 'paused'")
        browser.wait_for("Resume offered", "document.getElementById('pauseResume').textContent === 'Resume'")
        browser.tap("#pauseResume")
        browser.wait_for("the ride running again", "document.getElementById('state').textContent === 'running'")
        report["buttonHeights"]["water"] = browser.tap("#water250")
        browser.wait_for("the water counted", "document.getElementById('water').textContent === '250'")
        browser.evaluate("document.getElementById('note').focus()")
        browser.call("Input.insertText", text="flat tyre")
        browser.tap("#noteForm button")
        browser.wait_for("the note shown", "document.getElementById('info').textContent.startsWith('Note: flat tyre')")

        # A lap whose answer is lost on the way back: the server applied it, the page sends it again with the
        # same request id and the recorder answers `duplicate` — one lap.
        report["lostAnswer"] = tap_losing_the_first_answer(browser, "#lapButton", "lap")
        browser.wait_for("the retried lap answered", "document.getElementById('pending').textContent === ''")

        # Ten seconds offline with a lap tapped: "reconnecting", then the lap sent once when back.
        browser.call("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                     uploadThroughput=-1)
        browser.tap("#lapButton")
        time.sleep(10)
        report["offlineBanners"] = browser.evaluate(
            "Array.from(document.querySelectorAll('.banner.show'), b => b.id)")
        report["offlinePending"] = browser.evaluate("document.getElementById('pending').textContent")
        report["screenshots"].append(browser.screenshot(f"{artefacts}/mirror-offline-portrait.png"))
        browser.call("Network.emulateNetworkConditions", offline=False, latency=0, downloadThroughput=-1,
                     uploadThroughput=-1)
        browser.wait_for("the queued lap sent", "document.getElementById('pending').textContent === ''", 20)
        browser.wait_for("the stream back", "!document.getElementById('down').classList.contains('show')", 20)

        # The mirror restarted mid-ride: "reconnecting" while it is away, then the same numbers again.
        report["newMirrorPid"] = restart(mirror_pid, base, lambda: browser.evaluate(
            "document.getElementById('down').classList.contains('show')"), report)
        browser.wait_for("the stream back after the restart",
                         "!document.getElementById('down').classList.contains('show')", 20)
        before = browser.evaluate("document.getElementById('elapsed').textContent")
        browser.wait_for("the ride's clock moving again",
                         f"document.getElementById('elapsed').textContent !== {json.dumps(before)}", 10)

        browser.size(*LANDSCAPE)
        time.sleep(0.5)
        report["screenshots"].append(browser.screenshot(f"{artefacts}/mirror-riding-landscape.png"))
        browser.size(*PORTRAIT)

        # A lap offers its Undo, named, for 30 s; then the button goes.
        browser.tap("#lapButton")
        browser.wait_for("Undo offered for the lap",
                         "document.getElementById('undoButton').textContent.startsWith('Undo lap ') && "
                         "!document.getElementById('undoButton').classList.contains('hidden')")
        report["undoLabel"] = browser.evaluate("document.getElementById('undoButton').textContent")
        offered = time.time()
        browser.wait_for("the Undo gone after its 30 s",
                         "document.getElementById('undoButton').classList.contains('hidden')", 40)
        report["undoShownSeconds"] = time.time() - offered

        # Two phones undo one lap at once: the first phone's undo is carried out, and while its answer is on the way
        # the second phone's undo comes, and is told the lap was already undone; the first's answer is lost, and
        # its undo sent again with the same request id is a duplicate. The lap is undone once.
        second = Browser(name="the second phone")
        second.open_portrait(pairing_link(report["newMirrorPid"], "pocket"))
        second.wait_for("the ride on the second phone", "document.getElementById('state')?.textContent === 'running'")
        browser.tap("#lapButton")
        # The lap answered first: the answer lost below is the undo's.
        browser.wait_for("the new lap answered", "document.getElementById('pending').textContent === ''")
        for phone in (browser, second):
            phone.wait_for("Undo offered for the new lap on each phone",
                           "document.getElementById('undoButton').textContent.startsWith('Undo lap ') && "
                           f"{UNDO_SHOWN} && document.getElementById('undoButton').textContent !== "
                           f"{json.dumps(report['undoLabel'])}")
            phone.evaluate(KEEP_SAID)
        report["twoPhonesUndo"] = [phone.text("undoButton") for phone in (browser, second)]
        report["lostUndoAnswer"] = tap_losing_the_first_answer(
            browser, "#undoButton", "undo", meanwhile=lambda: second.tap("#undoButton"))
        for phone in (browser, second):
            phone.wait_for("the Undo gone once the lap was undone", f"!({UNDO_SHOWN})")
            phone.wait_for("the undo answered", "document.getElementById('pending').textContent === ''")
        report["twoPhonesSaid"] = [phone.evaluate("said") for phone in (browser, second)]
        report["screenshots"].append(second.screenshot(f"{artefacts}/mirror-undo-second-phone-portrait.png"))

        # End needs a hold of one second: a short press does nothing.
        browser.tap("#endButton", hold_seconds=0.3)
        time.sleep(1.5)
        report["stateAfterShortPress"] = browser.evaluate("document.getElementById('state').textContent")
        report["buttonHeights"]["end"] = browser.tap("#endButton", hold_seconds=1.3)
        # The End waits 30 s to be undone: Undo names it, and takes it back; a second End saves at once.
        browser.wait_for("Undo offered for the End",
                         "document.getElementById('undoButton').textContent === 'Undo end' && "
                         "!document.getElementById('undoButton').classList.contains('hidden')")
        report["stateAfterEnd"] = browser.evaluate("document.getElementById('state').textContent")
        report["screenshots"].append(browser.screenshot(f"{artefacts}/mirror-undo-portrait.png"))
        report["buttonHeights"]["undo"] = browser.tap("#undoButton")
        browser.wait_for("the ride going on", "document.getElementById('state').textContent === 'running'")
        browser.tap("#endButton", hold_seconds=1.3)
        browser.wait_for("the End offered again",
                         "document.getElementById('undoButton').textContent === 'Undo end' && "
                         "!document.getElementById('undoButton').classList.contains('hidden')")
        browser.tap("#endButton", hold_seconds=1.3)
        browser.wait_for("the recorder waiting again", "document.getElementById('state').textContent === 'waiting'")

        requested = [e["params"]["request"]["url"] for e in browser.events
                     if e.get("method") == "Network.requestWillBeSent"]
        report["foreignRequests"] = [url for url in requested if not url.startswith(base)]
    finally:
        browser.close()
        if second:
            second.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
