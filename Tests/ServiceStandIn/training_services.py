#!/usr/bin/env python3
"""A local stand-in of the parts of intervals.icu's and Strava's APIs that cyclelog-sync uses, as their
documentation describes them, for the upload tests. It checks every request it gets the way the real service
would (authentication, content types, the multipart upload, the FIT file read back with Garmin's FIT SDK, the
external id) and records each departure as a violation, so a test fails when cyclelog sends something the real
service would refuse. Faults are queued by the test (POST /_standin/faults): cut connections, 5xx, 429 with
Retry-After, expired tokens, answers held until the client is killed.

    training_services.py --port 0      prints {"port": N, "controlPort": M} once listening; state at
                                       GET /_standin/state on the control port (the same one without TLS)

Nothing here reaches the internet: it listens on 127.0.0.1 only.
"""

import argparse
import base64
import hashlib
import json
import re
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from garmin_fit_sdk import Decoder, Stream

EXTERNAL_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-v[1-9][0-9]*$")
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# Where a redirect fault points: another host, which a client must never send its credentials to.
PORTAL = "http://portal.example/login?next=%2Fapi"


class State:
    def __init__(self, args):
        self.lock = threading.RLock()
        self.athlete = args.athlete
        self.api_key = args.api_key
        self.client_id = args.client_id
        self.client_secret = args.client_secret
        self.token_seconds = args.token_seconds
        self.processing_seconds = args.processing_seconds
        self.next_id = 1000
        self.intervals = []  # activities: id, external_id, name, description, start, digest
        self.strava = []  # activities: id, external_id, name, description, start, digest, upload_id
        self.uploads = {}  # Strava uploads by id: the upload object and how many polls it still takes
        self.codes = {}  # authorization code -> scope
        self.access_tokens = {}  # token -> expiry (seconds since 1970)
        self.refresh_token = None
        self.issued = []  # every token and code handed out (the test greps for them)
        self.events = []  # planned workouts (set by the test)
        self.faults = []  # queued: {"match": "...", "kind": "..."}
        self.violations = []
        self.requests = []  # method, path, fault applied
        self.holding = 0  # answers being held (kind "hold")
        self.held = 0  # answers held so far
        self.echo_secret_errors = 0

    def new_id(self):
        with self.lock:
            self.next_id += 1
            return self.next_id

    def violation(self, text):
        with self.lock:
            self.violations.append(text)

    def take_fault(self, name):
        with self.lock:
            for index, fault in enumerate(self.faults):
                if fault["match"] in (name, "any"):
                    return self.faults.pop(index)
        return None

    def snapshot(self):
        with self.lock:
            return {
                "intervals": self.intervals,
                "strava": self.strava,
                "uploads": list(self.uploads.values()),
                "violations": self.violations,
                "requests": self.requests,
                "faultsLeft": self.faults,
                "issued": self.issued,
                "holding": self.holding,
                "held": self.held,
            }


TRUST_FILES = False


def read_fit(data, violation):
    """The FIT file's session start (seconds since 1970), read with Garmin's SDK; None when it is not a sound
    activity file. With --trust-files (the benchmark, which measures the client) the file is not read."""
    if TRUST_FILES:
        return int(hashlib.sha256(data).hexdigest()[:8], 16)
    stream = Stream.from_byte_array(bytearray(data))
    decoder = Decoder(stream)
    if not decoder.is_fit():
        violation("the uploaded file is not a FIT file")
        return None
    if not decoder.check_integrity():
        violation("the uploaded FIT file fails its CRC check")
        return None
    messages, errors = Decoder(Stream.from_byte_array(bytearray(data))).read(convert_datetimes_to_dates=False)
    if errors:
        violation("Garmin's SDK reports errors in the uploaded FIT file: %s" % errors)
        return None
    sessions = messages.get("session_mesgs", [])
    records = messages.get("record_mesgs", [])
    if not sessions or not records or not messages.get("activity_mesgs"):
        violation("the uploaded FIT file lacks an activity, a session or records")
        return None
    # FIT times count from 1989-12-31T00:00:00Z.
    return int(sessions[0]["start_time"]) + 631065600


def fit_fields(data):
    """The names of the fields that hold a value in the FIT file's records, laps and sessions (Garmin's SDK), for
    a test to see what the file carried (heart rate, or not)."""
    if TRUST_FILES:
        return []
    messages, _ = Decoder(Stream.from_byte_array(bytearray(data))).read(convert_datetimes_to_dates=False)
    names = set()
    for kind in ("record_mesgs", "lap_mesgs", "session_mesgs"):
        for message in messages.get(kind, []):
            names.update(key for key, value in message.items() if isinstance(key, str) and value is not None)
    return sorted(names)


def multipart(handler, body, violation):
    content_type = handler.headers.get("Content-Type", "")
    if not content_type.startswith("multipart/form-data") or "boundary=" not in content_type:
        violation("%s %s: not multipart/form-data with a boundary (%r)" % (handler.command, handler.path, content_type))
        return None
    message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    if not message.is_multipart() or message.defects:
        violation("%s %s: the multipart body cannot be read (%s)" % (handler.command, handler.path, message.defects))
        return None
    fields, files = {}, {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if part.get_filename() is not None:
            files[name] = (part.get_filename(), part.get_payload(decode=True))
        else:
            fields[name] = part.get_payload(decode=True).decode("utf-8")
    return fields, files


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, *args):
        pass

    # -- plumbing

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, value=None, headers=()):
        data = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, content in headers:
            self.send_header(name, content)
        self.end_headers()
        self.wfile.write(data)

    def cut(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def query(self):
        parsed = urllib.parse.urlsplit(self.path)
        return parsed.path, dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))

    def route_name(self, path):
        if path.startswith("/api/v1/athlete/") and path.endswith("/activities") and self.command == "POST":
            return "intervals-upload"
        if path.startswith("/api/v1/"):
            return "intervals"
        if path == "/api/v3/uploads" and self.command == "POST":
            return "strava-upload"
        if path.startswith("/api/v3/uploads/"):
            return "strava-status"
        if path == "/oauth/token":
            return "strava-token"
        if path.startswith("/api/v3/"):
            return "strava"
        return "other"

    def handle_any(self):
        path, query = self.query()
        if path.startswith("/_standin/"):
            return self.control(path)
        name = self.route_name(path)
        fault = self.state.take_fault(name) if name != "other" else None
        with self.state.lock:
            self.state.requests.append({"method": self.command, "path": path, "fault": fault and fault["kind"]})
        body = self.body()
        kind = fault and fault["kind"]
        with self.state.lock:
            # The tokens issued before this request came: an expiry it sets off is theirs. A token issued meanwhile
            # (the client gave up waiting for this answer and refreshed) is a new one, as at the real service.
            tokens_before = list(self.state.access_tokens)
        if kind == "cut-before":
            return self.cut()
        if kind in ("500", "502", "503"):
            return self.answer(int(kind), {"error": "Service unavailable"})
        if kind == "429":
            return self.answer(429, {"message": "Rate Limit Exceeded"}, [("Retry-After", str(fault.get("after", 1)))])
        if kind in ("301", "302", "307", "308"):
            # A captive portal, a proxy or a moved address: pointed elsewhere, nothing done here.
            return self.answer(int(kind), {"message": "moved"}, [("Location", fault.get("location", PORTAL))])
        if kind == "echo":
            # A service that quotes the refused request: the client must not show the credentials it sent.
            return self.answer(400, {"error": "bad request with %s" % self.headers.get("Authorization")})
        status, value, headers = self.dispatch(name, path, query, body)
        if kind == "expire":
            # Answered, and every access token it found expires just after: the next request finds its token
            # refused.
            with self.state.lock:
                for token in tokens_before:
                    self.state.access_tokens[token] = 0
        if kind == "slow":
            # Done, and answered after the client's deadline.
            time.sleep(float(fault.get("seconds", 3)))
        if kind == "cut-after":
            return self.cut()
        if kind == "hold":
            # Done, and the answer held until the client goes (the test kills it) or the time is up.
            with self.state.lock:
                self.state.holding += 1
                self.state.held += 1
            deadline = time.time() + float(fault.get("seconds", 30))
            self.connection.settimeout(0.05)
            while time.time() < deadline:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        break
                except socket.timeout:
                    continue
                except OSError:
                    break
            with self.state.lock:
                self.state.holding -= 1
            return self.cut()
        self.answer(status, value, headers)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any

    def control(self, path):
        body = self.body()
        if path == "/_standin/state":
            return self.answer(200, self.state.snapshot())
        if path == "/_standin/held":
            with self.state.lock:
                return self.answer(200, {"held": self.state.held})
        with self.state.lock:
            if path == "/_standin/faults":
                self.state.faults.extend(json.loads(body))
            elif path == "/_standin/events":
                self.state.events = json.loads(body)
            elif path == "/_standin/expire":
                for token in self.state.access_tokens:
                    self.state.access_tokens[token] = 0
            elif path == "/_standin/revoke":
                self.state.access_tokens.clear()
                self.state.refresh_token = None
            else:
                return self.answer(404, {"error": "no such control"})
        self.answer(200, {})

    def dispatch(self, name, path, query, body):
        if name.startswith("intervals"):
            return self.intervals(path, query, body)
        if name.startswith("strava") or path.startswith("/oauth/"):
            return self.strava(path, query, body)
        self.state.violation("%s %s: no such endpoint" % (self.command, path))
        return 404, {"error": "not found"}, []

    # -- intervals.icu

    def intervals_authorized(self):
        expected = "Basic " + base64.b64encode(("API_KEY:" + self.state.api_key).encode()).decode()
        return self.headers.get("Authorization") == expected

    def intervals(self, path, query, body):
        state = self.state
        if not self.intervals_authorized():
            return 401, {"status": 401, "error": "Unauthorized"}, []
        athlete = "/api/v1/athlete/" + state.athlete
        if self.command == "GET" and path == athlete:
            return 200, {"id": state.athlete, "name": "Anna"}, []
        if self.command == "POST" and path == athlete + "/activities":
            form = multipart(self, body, state.violation)
            if form is None:
                return 422, {"error": "Expected a multipart file"}, []
            fields, files = form
            if "file" not in files:
                state.violation("intervals.icu upload without a file part")
                return 422, {"error": "Missing file"}, []
            external_id = query.get("external_id")
            if not external_id or not EXTERNAL_ID.match(external_id):
                state.violation("intervals.icu upload with external_id %r" % external_id)
            start = read_fit(files["file"][1], state.violation)
            if start is None:
                return 422, {"error": "Unable to read the file"}, []
            with state.lock:
                if any(a["external_id"] == external_id for a in state.intervals):
                    state.violation("a second intervals.icu activity with external_id %s" % external_id)
                activity = {
                    "id": "i%d" % state.new_id(), "external_id": external_id, "name": query.get("name"),
                    "description": query.get("description"), "start": start,
                    "start_date_local": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start)),
                    "digest": hashlib.sha256(files["file"][1]).hexdigest(),
                    "fitFields": fit_fields(files["file"][1]),
                }
                state.intervals.append(activity)
            return 201, {"icu_athlete_id": state.athlete, "id": activity["id"]}, []
        if self.command == "GET" and path == athlete + "/activities":
            oldest, newest = query.get("oldest", ""), query.get("newest", "")
            if not DAY.match(oldest) or not DAY.match(newest):
                state.violation("intervals.icu activities listed without oldest and newest days")
                return 422, {"error": "oldest and newest are required"}, []
            with state.lock:
                found = [a for a in state.intervals if oldest <= a["start_date_local"][:10] <= newest]
            return 200, found, []
        match = re.fullmatch(r"/api/v1/activity/([^/]+)", path)
        if self.command == "DELETE" and match:
            with state.lock:
                before = len(state.intervals)
                state.intervals = [a for a in state.intervals if a["id"] != match.group(1)]
                gone = len(state.intervals) < before
            return (200, {}, []) if gone else (404, {"error": "Activity not found"}, [])
        if self.command == "GET" and path == athlete + "/events":
            oldest, newest = query.get("oldest", ""), query.get("newest", "")
            if not DAY.match(oldest) or not DAY.match(newest):
                state.violation("intervals.icu events listed without oldest and newest days")
            events = []
            for event in state.events:
                if not (oldest <= event["start_date_local"][:10] <= newest):
                    continue
                if query.get("category") and event.get("category") != query["category"]:
                    continue
                shown = {k: v for k, v in event.items() if k != "zwo"}
                if query.get("ext") == "zwo" and event.get("zwo"):
                    shown["workout_filename"] = event["name"].replace(" ", "_") + ".zwo"
                    shown["workout_file_base64"] = base64.b64encode(event["zwo"].encode()).decode()
                events.append(shown)
            return 200, events, []
        state.violation("%s %s: not an intervals.icu endpoint cyclelog should use" % (self.command, path))
        return 404, {"error": "not found"}, []

    # -- Strava

    def strava_token_ok(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            return False
        with self.state.lock:
            expiry = self.state.access_tokens.get(header[7:])
        return expiry is not None and expiry > time.time()

    def issue(self, athlete=True):
        """New tokens; a refresh keeps the refresh token (Strava changes it seldom), a new authorization does not."""
        state = self.state
        with state.lock:
            access = "stravaaccess%d" % state.new_id()
            refresh = state.refresh_token if not athlete and state.refresh_token else "stravarefresh%d" % state.new_id()
            state.access_tokens[access] = time.time() + state.token_seconds
            state.refresh_token = refresh
            state.issued += [access, refresh]
            answer = {
                "token_type": "Bearer", "access_token": access, "refresh_token": refresh,
                "expires_at": int(time.time() + state.token_seconds), "expires_in": state.token_seconds,
            }
            if athlete:
                answer["athlete"] = {"id": 134815, "firstname": "Anna"}
        return answer

    def strava(self, path, query, body):
        state = self.state
        if path == "/oauth/authorize" and self.command == "GET":
            for key in ("client_id", "redirect_uri", "response_type", "scope", "state"):
                if not query.get(key):
                    state.violation("the authorization address lacks %s" % key)
            if query.get("client_id") != state.client_id or query.get("response_type") != "code":
                return 400, {"message": "Bad Request"}, []
            redirect = urllib.parse.urlsplit(query.get("redirect_uri", ""))
            if redirect.hostname not in ("localhost", "127.0.0.1"):
                state.violation("redirect_uri %r is not this machine" % query.get("redirect_uri"))
            code = "stravacode%d" % state.new_id()
            with state.lock:
                state.codes[code] = query.get("scope", "")
                state.issued.append(code)
            target = query["redirect_uri"] + "?" + urllib.parse.urlencode(
                {"state": query["state"], "code": code, "scope": query.get("scope", "")})
            return 302, None, [("Location", target)]
        if path == "/oauth/token" and self.command == "POST":
            if self.headers.get("Content-Type", "").split(";")[0] != "application/x-www-form-urlencoded":
                state.violation("the token request is not a form")
            form = dict(urllib.parse.parse_qsl(body.decode()))
            if form.get("client_id") != state.client_id or form.get("client_secret") != state.client_secret:
                return 401, {"message": "Bad Request", "errors": [{"resource": "Application", "code": "invalid"}]}, []
            grant = form.get("grant_type")
            if grant == "authorization_code":
                with state.lock:
                    scope = state.codes.pop(form.get("code"), None)
                if scope is None:
                    return 400, {"message": "Bad Request", "errors": [{"field": "code", "code": "invalid"}]}, []
                answer = self.issue()
                answer["scope"] = scope
                return 200, answer, []
            if grant == "refresh_token":
                if not form.get("refresh_token") or form.get("refresh_token") != state.refresh_token:
                    return 400, {"message": "Bad Request", "errors": [{"field": "refresh_token", "code": "invalid"}]}, []
                return 200, self.issue(athlete=False), []
            state.violation("grant_type %r" % grant)
            return 400, {"message": "Bad Request"}, []
        self.settle()
        if not self.strava_token_ok():
            return 401, {"message": "Authorization Error", "errors": [{"resource": "Athlete", "code": "invalid"}]}, []
        if path == "/api/v3/uploads" and self.command == "POST":
            form = multipart(self, body, state.violation)
            if form is None:
                return 400, {"message": "Bad Request"}, []
            fields, files = form
            if fields.get("data_type") != "fit":
                state.violation("Strava upload with data_type %r" % fields.get("data_type"))
            external_id = fields.get("external_id")
            if not external_id or not EXTERNAL_ID.match(external_id):
                state.violation("Strava upload with external_id %r" % external_id)
            if "file" not in files:
                state.violation("Strava upload without a file")
                return 400, {"message": "Bad Request"}, []
            start = read_fit(files["file"][1], state.violation)
            upload_id = state.new_id()
            upload = {
                "id": upload_id, "id_str": str(upload_id), "external_id": external_id, "error": None,
                "status": "Your activity is still being processed.", "activity_id": None,
            }
            with state.lock:
                state.uploads[upload_id] = {
                    "upload": upload, "created": time.time(), "start": start, "fields": fields,
                    "digest": hashlib.sha256(files["file"][1]).hexdigest(), "name": files["file"][0],
                    "fitFields": fit_fields(files["file"][1]) if start is not None else [],
                }
            if start is None:
                self.finish_upload(state.uploads[upload_id], error="There was an error processing your activity.")
            return 201, upload, []
        match = re.fullmatch(r"/api/v3/uploads/(\d+)", path)
        if match and self.command == "GET":
            with state.lock:
                entry = state.uploads.get(int(match.group(1)))
                if entry is None:
                    return 404, {"message": "Record Not Found"}, []
                return 200, entry["upload"], []
        if path == "/api/v3/athlete/activities" and self.command == "GET":
            after, before = int(query.get("after", 0)), int(query.get("before", 2**40))
            with state.lock:
                found = [
                    {"id": a["id"], "external_id": a["external_id"], "name": a["name"], "upload_id": a["upload_id"],
                     "start_date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(a["start"]))}
                    for a in state.strava if after < a["start"] < before
                ]
            return 200, found, []
        match = re.fullmatch(r"/api/v3/activities/(\d+)", path)
        if match and self.command == "PUT":
            if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
                state.violation("an activity update that is not JSON")
            fields = json.loads(body or b"{}")
            unknown = set(fields) - {"name", "description", "type", "sport_type", "trainer", "commute", "gear_id",
                                     "hide_from_home"}
            if unknown:
                state.violation("an activity update with fields Strava does not take: %s" % sorted(unknown))
            with state.lock:
                for activity in state.strava:
                    if str(activity["id"]) == match.group(1):
                        activity.update({k: v for k, v in fields.items() if k in ("name", "description")})
                        return 200, activity, []
            return 404, {"message": "Record Not Found"}, []
        state.violation("%s %s: not a Strava endpoint cyclelog should use" % (self.command, path))
        return 404, {"message": "Record Not Found"}, []

    def settle(self):
        """Strava reads each upload a moment after it came, in the order they came, polled or not."""
        with self.state.lock:
            for entry in sorted(self.state.uploads.values(), key=lambda e: e["created"]):
                upload = entry["upload"]
                waiting = upload["activity_id"] is None and upload["error"] is None
                if waiting and time.time() - entry["created"] >= self.state.processing_seconds:
                    self.finish_upload(entry)

    def finish_upload(self, entry, error=None):
        """Strava reads the file: a ride it has already (the same start) is a duplicate of that activity."""
        state = self.state
        upload = entry["upload"]
        if error:
            upload.update(error=error, status="There was an error processing your activity.")
            return
        same = [a for a in state.strava if a["start"] == entry["start"]]
        if same:
            upload.update(error="%s duplicate of activity %d" % (entry["name"], same[0]["id"]),
                          status="There was an error processing your activity.")
            return
        activity_id = state.new_id()
        state.strava.append({
            "id": activity_id, "external_id": upload["external_id"], "name": entry["fields"].get("name"),
            "description": entry["fields"].get("description"), "start": entry["start"], "upload_id": upload["id"],
            "digest": entry["digest"], "fitFields": entry["fitFields"],
        })
        upload.update(activity_id=activity_id, status="Your activity is ready.")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--athlete", default="i134815")
    parser.add_argument("--api-key", default="intervalskey0123456789")
    parser.add_argument("--client-id", default="4242")
    parser.add_argument("--client-secret", default="stravasecret0123456789")
    parser.add_argument("--token-seconds", type=int, default=21600)
    parser.add_argument("--processing-seconds", type=float, default=0.2)
    parser.add_argument("--trust-files", action="store_true", help="take uploaded files unread (benchmarks)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (and --tls-key)")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    global TRUST_FILES
    TRUST_FILES = args.trust_files
    Handler.state = State(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    ports = {"port": server.server_address[1], "controlPort": server.server_address[1]}
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        # The test's own requests (state, faults) in plain HTTP on a port of their own.
        control = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        control.daemon_threads = True
        threading.Thread(target=control.serve_forever, daemon=True).start()
        ports["controlPort"] = control.server_address[1]
    print(json.dumps(ports), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
