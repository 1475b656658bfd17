"""The rider's phone for the real-stack VM's trainer ride: Debian's headless Chromium on the host, at the host's
speed, showing the page that cyclelog-mirror serves inside the VM. qemu's user-mode network carries both ways: its
forwarded port brings 127.0.0.1:PAGE_PORT here to the mirror's port 8787 in the guest, and the guest reaches this
script's own small HTTP server at 10.0.2.2:PHONE_PORT (the network's name for the host's loopback), through which
drive.py says what to tap and hears what the page then shows. The page is driven as the page tests drive it
(Tests/MirrorPage/page_check.py): real pointer presses on its buttons, its own words read back.

usage: phone.py PHONE_PORT PAGE_PORT ARTEFACTS    (run.sh starts it before the VM boots and stops it after)

Each request is a POST of a JSON object; each answer is a JSON object, with "error" when the page did not do it:
  /open    {"url": PAIRING_URL}         the pairing link `cyclelog-mirror pair` printed in the guest; answers
                                        {"state": the recorder's state as the page shows it}
  /tap     {"button": ID}               a press on the button with that id
  /undo    {"action": "lap"|"pause"}    waits for the page to offer the action's Undo ("Undo lap 2"), presses it,
                                        waits for the answer; answers {"offered": the button's words, "shown": the
                                        page's words after ("Undone: lap at 10:31:02")}
  /screenshot {"name": NAME}            ARTEFACTS/NAME.png
"""
import http.server
import json
import os
import signal
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "MirrorPage"))
from page_check import PORTRAIT, UNDO_SHOWN, Browser  # noqa: E402


class Phone:
    def __init__(self, page_port, artefacts):
        self.page_port, self.artefacts = page_port, artefacts
        # Started before the VM boots, so that Chromium's own start takes nothing from the guest's timing.
        self.browser = Browser()
        self.browser.call("Page.enable")
        self.browser.size(*PORTRAIT)

    def open(self, url):
        # The same page, through the forwarded port: the mirror allows 127.0.0.1 as a name of its own machine.
        parts = urllib.parse.urlsplit(url)
        here = parts._replace(netloc="127.0.0.1:%d" % self.page_port).geturl()
        self.browser.call("Page.navigate", url=here)
        self.browser.wait_for("the ride", "['running', 'paused'].includes(document.getElementById('state')?.textContent)",
                              60)
        return {"state": self.browser.text("state")}

    def tap(self, button):
        self.browser.tap("#" + button)
        return {}

    def undo(self, action):
        self.browser.wait_for("Undo offered for the " + action,
                              f"{UNDO_SHOWN} && document.getElementById('undoButton').textContent.startsWith("
                              f"{json.dumps('Undo ' + action)})", 25)
        offered = self.browser.text("undoButton")
        self.browser.tap("#undoButton")
        # Once undone the action is offered no more (an older one still in its window may be offered instead).
        self.browser.wait_for("the undo answered and shown",
                              f"!({UNDO_SHOWN} && document.getElementById('undoButton').textContent === "
                              f"{json.dumps(offered)}) && document.getElementById('pending').textContent === '' && "
                              f"document.getElementById('info').textContent.startsWith({json.dumps('Undone: ' + action)})",
                              30)
        return {"offered": offered, "shown": self.browser.text("info")}

    def screenshot(self, name):
        return {"path": self.browser.screenshot(os.path.join(self.artefacts, name + ".png"))}


def serve(phone, port):
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            asked = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            what = getattr(phone, self.path.strip("/"), None)
            try:
                with lock:
                    answer = what(**asked) if what else {"error": "no such request: " + self.path}
            except (SystemExit, RuntimeError) as failure:  # the page never showed what was waited for
                answer = {"error": str(failure)}
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *arguments):
            print("phone: " + format % arguments, flush=True)

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main():
    phone_port, page_port, artefacts = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.makedirs(artefacts, exist_ok=True)
    # run.sh stops it with SIGTERM: Chromium goes with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    phone = Phone(page_port, artefacts)
    print("phone: Chromium ready, listening on 127.0.0.1:%d" % phone_port, flush=True)
    try:
        serve(phone, phone_port)
    finally:
        phone.browser.close()


if __name__ == "__main__":
    main()
