import Foundation
import RecorderInterface
import RideHistory
import TestSupport
import WorkoutStore
import Workouts
import XCTest

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `cyclelog-mirror` between the real `cyclelog record --wait` on the stand-in's private bus and plain HTTP
/// clients: a paired screen sees the ride and controls it exactly once per request, and everyone else is kept out.
final class MirrorTests: XCTestCase {
    func testAPairedScreenFollowsTheRideAndControlsItOncePerRequest() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("mirror.sqlite").path
        let record = try await waitingRecorder(standIn, database: database)
        let (mirror, port) = try await startMirror(
            bus: standIn.bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        XCTAssertEqual(try get(port, "/api/v1/status", token: nil).status, 401)
        // Granted every type (heart rate by name): the snapshot holds every field.
        let token = try XCTUnwrap(try pairedToken(standIn.bus, port, types: "control,hr"))
        try await waitFor("the snapshot of a waiting recorder", mirror) {
            try self.get(port, "/api/v1/status", token: token).json["state"] as? String == "waiting"
        }

        // The snapshot: the documented fields in order, unknown values null, the suggested workouts offered.
        let status = try get(port, "/api/v1/status", token: token)
        XCTAssertEqual(status.headers["content-type"], "application/json")
        for key in [
            "state", "workoutId", "name", "location", "goal", "goalProgress", "elapsedSeconds", "movingSeconds",
            "powerWatts", "instantaneousPowerWatts", "cadenceRPM", "speedMetersPerSecond", "heartRateBPM",
            "distanceMeters", "workJoules", "lap", "lapElapsedSeconds", "waterMillilitres", "controlSequence", "can",
            "sensors", "suggestedWorkouts",
        ] {
            XCTAssertTrue(status.body.contains("\"\(key)\": "), "\(key) missing: \(status.body)")
        }
        XCTAssertTrue(status.body.contains("\"workoutId\": null"), status.body)
        let can = try XCTUnwrap(status.json["can"] as? [String: Bool], status.body)
        XCTAssertEqual(can["start"], true)
        XCTAssertEqual(can["pause"], false)
        let suggested = (status.json["suggestedWorkouts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        XCTAssertEqual(suggested, ["open", "20min", "ramp", "endurance-1h"], status.body)
        let sensors = status.json["sensors"] as? [[String: Any]] ?? []
        XCTAssertEqual(sensors.first?["name"] as? String, "Stages Power L", status.body)
        XCTAssertEqual(sensors.first?["batteryPercent"] as? Int, 80, status.body)

        // The stream: a snapshot first, then every notification's values as the stand-in sent them, at once.
        let stream = try openStream(port, token: token)
        let first = try XCTUnwrap(stream.nextEvent(seconds: 5))
        XCTAssertEqual(first.event, "snapshot")
        XCTAssertTrue(first.data.jsonObject["recorder"] as? Bool == true, first.data)
        let streamStart = Date().timeIntervalSince1970
        var livePower: [Double] = []
        var arrivals: [Double] = []
        while livePower.count < 12, let message = stream.nextEvent(seconds: 5) {
            guard message.event == "live" else { continue }
            let values = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(message.data.utf8)) as? [String: Any], message.data)
            XCTAssertEqual(values["sensor"] as? String, "C0:11:22:33:44:01")
            XCTAssertNil(message.id, "live values carry no id: they are never replayed")
            livePower.append(try XCTUnwrap(values["powerWatts"] as? Double, message.data))
            arrivals.append(Date().timeIntervalSince1970)
        }
        // The stand-in logs each notification just after sending it, so a value can be on the stream before its
        // line is in the log: wait for a line written no sooner than the last value arrived.
        try await waitFor("the stand-in's log to reach the last value streamed", record) {
            try (standIn.sent().last?.time ?? 0) >= (arrivals.last ?? .infinity)
        }
        // The cycling power measurement's bytes 2–3 are the instantaneous power, signed 16-bit little-endian
        // (GATT specification supplement, 3.65): the values the stand-in sent after the stream opened, in order.
        let sent = try standIn.sent().filter { $0.time > streamStart - 1 }.map {
            Double(Int16(bitPattern: UInt16($0.value[2]) | UInt16($0.value[3]) << 8))
        }
        XCTAssertGreaterThanOrEqual(livePower.count, 12)
        XCTAssertNotNil(
            (0..<max(1, sent.count - livePower.count + 1)).first {
                Array(sent.dropFirst($0).prefix(livePower.count)) == livePower
            },
            "live \(livePower) is not a run of what was sent \(sent)")
        // 4 Hz from the stand-in: a buffered stream would deliver them in bursts, not about 0.25 s apart.
        let gaps = zip(arrivals.dropFirst(), arrivals).map { $0 - $1 }
        XCTAssertLessThan(gaps.filter { $0 < 0.05 }.count, gaps.count / 2, "bursts, not one by one: \(gaps)")

        // Controls from a browser need JSON and the marker header; with them, Start starts a ride.
        let bare = try post(
            port, "/api/v1/control", token: token, json: #"{"requestId":"a","command":"start"}"#, marker: false)
        XCTAssertEqual(bare.status, 403, bare.body)
        let start = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"s-1","command":"start","args":{"name":"Mirror ride","location":"indoor"}}"#)
        XCTAssertEqual(start.status, 200, start.body)
        XCTAssertEqual(start.json["applied"] as? Bool, true, start.body)
        XCTAssertEqual(start.json["state"] as? String, "running", start.body)
        let startEvent = try XCTUnwrap(nextEvent(stream, "event"))
        XCTAssertTrue(startEvent.data.jsonObject["kind"] as? String == "start", startEvent.data)
        XCTAssertTrue(startEvent.data.jsonObject["name"] as? String == "Mirror ride", startEvent.data)
        let startEventID = try XCTUnwrap(startEvent.id)
        let sequence = try XCTUnwrap(startEvent.data.jsonObject["controlSequence"] as? Int, startEvent.data)
        let workoutId = try XCTUnwrap(startEvent.data.jsonObject["workoutId"] as? Int, startEvent.data)

        // The history read during the ride, through WAL: at once, the ride listed as being recorded, and the
        // recorder's values still arriving one by one behind it.
        let asked = Date()
        let during = try get(port, "/api/v1/workouts", token: token)
        XCTAssertEqual(during.status, 200, during.body)
        XCTAssertLessThan(Date().timeIntervalSince(asked), 1, "the history waited for the recorder")
        let listed = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(during.body.utf8)) as? [[String: Any]], during.body)
        XCTAssertEqual(listed.first?["id"] as? Int, workoutId, during.body)
        XCTAssertEqual(listed.first?["status"] as? String, "recording", during.body)
        XCTAssertEqual(try get(port, "/api/v1/workouts/\(workoutId)", token: token).status, 409)
        XCTAssertNotNil(nextEvent(stream, "live"), "no value after the history was read")

        // A lap asked three times with one request id, as a phone on a bad link retries: one lap.
        let lapBody =
            #"{"requestId":"lap-1","command":"lap","expect":\#(sequence),"workoutId":\#(workoutId),"args":{}}"#
        let lap = try post(port, "/api/v1/control", token: token, json: lapBody)
        XCTAssertEqual(lap.json["applied"] as? Bool, true, lap.body)
        for _ in 0..<2 {
            let again = try post(port, "/api/v1/control", token: token, json: lapBody)
            XCTAssertEqual(again.status, 200, again.body)
            XCTAssertEqual(again.json["duplicate"] as? Bool, true, again.body)
            XCTAssertEqual(again.json["applied"] as? Bool, false, again.body)
        }
        // The same lap under a new id but the old sequence: stale, with the current status to show.
        let stale = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"lap-2","command":"lap","expect":\#(sequence),"args":{}}"#)
        XCTAssertEqual(stale.status, 412, stale.body)
        XCTAssertEqual((stale.json["status"] as? [String: Any])?["controlSequence"] as? Int, sequence + 1, stale.body)
        let lapEvent = try XCTUnwrap(nextEvent(stream, "event"))
        XCTAssertTrue(lapEvent.data.jsonObject["kind"] as? String == "lap", lapEvent.data)

        // Two phones tap Lap at the same moment, each with what it saw: one lap, the other told it is stale.
        let together = try await withThrowingTaskGroup(of: Int.self) { group in
            for phone in ["a", "b"] {
                let body = #"{"requestId":"lap-\#(phone)","command":"lap","expect":\#(sequence + 1),"args":{}}"#
                group.addTask {
                    try HTTPConnection.request(
                        port: port, "POST", "/api/v1/control",
                        headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"], body: body
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }.sorted()
        }
        XCTAssertEqual(together, [200, 412])
        XCTAssertEqual(nextEvent(stream, "event")?.data.jsonObject["kind"] as? String, "lap")

        // Water and a note, sent back from the handlebars; a refused control says why.
        let water = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"w-1","command":"intake","args":{"kind":"water","amount":250,"unit":"ml"}}"#)
        XCTAssertEqual(water.status, 200, water.body)
        let note = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"m-1","command":"marker","args":{"text":"flat tyre"}}"#)
        XCTAssertEqual(note.status, 200, note.body)
        let resume = try post(port, "/api/v1/control", token: token, json: #"{"requestId":"r-1","command":"resume"}"#)
        XCTAssertEqual(resume.status, 409, resume.body)
        let badAmount = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"w-2","command":"intake","args":{"kind":"water","amount":-1,"unit":"ml"}}"#)
        XCTAssertEqual(badAmount.status, 400, badAmount.body)
        // A command the mirror cannot read is refused in the recorder's words (it reads it as the recorder does),
        // whatever the sequence it expects; a style value of another type is named by its type, as over D-Bus.
        let wheelie = try post(
            port, "/api/v1/control", token: token, json: #"{"requestId":"u-1","command":"wheelie","expect":1}"#)
        XCTAssertEqual(wheelie.status, 400, wheelie.body)
        XCTAssertTrue(wheelie.body.contains("command 'wheelie' is not one of start, pause, resume"), wheelie.body)
        let numberGoal = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"s-9","command":"start","args":{"goal":45}}"#)
        XCTAssertTrue(numberGoal.body.contains("goal takes a string (s), not d"), numberGoal.body)

        // A screen that was away gets the events it missed, in order, then a fresh snapshot.
        // The same whether the browser's EventSource says where it was (the header) or the page does, opening a
        // new one after its connection fell silent (the query).
        for back in [
            try openStream(port, token: token, lastEventID: startEventID),
            try openStream(port, token: token, query: "?lastEventId=" + startEventID),
        ] {
            let replayed = (0..<5).compactMap { _ in back.nextEvent(seconds: 5) }
            XCTAssertEqual(
                replayed.map { $0.event ?? "" }, ["event", "event", "event", "event", "snapshot"], "\(replayed)")
            XCTAssertEqual(
                replayed.prefix(4).map { $0.data.jsonObject["kind"] as? String ?? "" },
                ["lap", "lap", "intake", "marker"])
        }
        let unknown = try openStream(port, token: token, lastEventID: "ffff.3")
        XCTAssertEqual(unknown.nextEvent(seconds: 5)?.event, "snapshot")

        // A recorder that does not answer within 2 s (stopped here): 504. The call stays on the bus and is
        // carried out once the recorder runs again, so the screen's retry with the same id is a duplicate.
        let frozen = await record.process.freeze()
        XCTAssertTrue(frozen, "the recorder did not stop on SIGSTOP")
        let slow = try post(port, "/api/v1/control", token: token, json: #"{"requestId":"t-1","command":"lap"}"#)
        record.process.thaw()
        XCTAssertEqual(slow.status, 504, slow.body)
        let retried = try post(port, "/api/v1/control", token: token, json: #"{"requestId":"t-1","command":"lap"}"#)
        XCTAssertEqual(retried.json["duplicate"] as? Bool, true, retried.body)

        // The End waits 30 s to be undone: the snapshot offers it by number, and an undo sent twice with one id
        // (a retry over a flaky network) takes it back once.
        let end = try post(port, "/api/v1/control", token: token, json: #"{"requestId":"e-1","command":"end"}"#)
        XCTAssertEqual(end.status, 200, end.body)
        var offered: [String: Any] = [:]
        try await waitFor("the End offered to be undone", record) {
            offered = try self.get(port, "/api/v1/status", token: token).json
            return offered["state"] as? String == "ended" && offered["undoAction"] as? String == "end"
        }
        let endId = try XCTUnwrap(offered["undoId"] as? Int, "\(offered)")
        XCTAssertEqual(offered["undoType"] as? String, "ride")
        XCTAssertLessThanOrEqual(offered["undoSecondsLeft"] as? Double ?? 0, 30)
        let undo = #"{"requestId":"u-1","command":"undo","args":{"action":\#(endId)}}"#
        let undone = try post(port, "/api/v1/control", token: token, json: undo)
        XCTAssertEqual(undone.status, 200, undone.body)
        XCTAssertEqual(undone.json["state"] as? String, "running", undone.body)
        let undoRetried = try post(port, "/api/v1/control", token: token, json: undo)
        XCTAssertEqual(undoRetried.json["duplicate"] as? Bool, true, undoRetried.body)
        // Another screen's undo of the same action is told it was done.
        let otherUndo = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"u-2","command":"undo","args":{"action":\#(endId)}}"#)
        XCTAssertEqual(otherUndo.status, 409, otherUndo.body)
        XCTAssertEqual(otherUndo.json["error"] as? String, "end was already undone", otherUndo.body)
        let endNow = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"e-2","command":"end","args":{"now":true}}"#)
        XCTAssertEqual(endNow.status, 200, endNow.body)
        try await waitFor("the recorder waiting again", record) {
            try self.get(port, "/api/v1/status", token: token).json["state"] as? String == "waiting"
        }
        // Once saved, the ride is in the history as `show` has it.
        let saved = try get(port, "/api/v1/workouts/\(workoutId)", token: token)
        XCTAssertEqual(saved.status, 200, saved.body)
        XCTAssertEqual(saved.body, try cyclelog(["show", "\(workoutId)", "--json", "--db", database]).output)

        // The recorder killed mid-ride and started again: every screen gets a fresh snapshot (a new BOOT in its
        // id), and a control still in flight for the old ride is stale (412), never applied to something else.
        let second = try post(port, "/api/v1/control", token: token, json: #"{"requestId":"s-2","command":"start"}"#)
        XCTAssertEqual(second.status, 200, second.body)
        let secondSequence = try XCTUnwrap(second.json["controlSequence"] as? Int)
        let secondStart = try XCTUnwrap(nextEvent(stream, "event"))
        let oldBoot = try XCTUnwrap(secondStart.id?.split(separator: ".").first)
        record.signal(SIGKILL)
        _ = record.wait(seconds: 10)
        let restarted = try Cyclelog(
            ["record", "--wait", "--plain", "--sensor", "Stages Power L", "--db", database], standIn: standIn)
        defer { restarted.signal(SIGTERM) }
        var fresh: (id: String?, event: String?, data: String, comment: Bool)?
        repeat {
            fresh = nextEvent(stream, "snapshot")
        } while fresh != nil && fresh?.data.jsonObject["recorder"] as? Bool != true
        XCTAssertNotEqual(fresh?.id?.split(separator: ".").first, oldBoot, "the same BOOT after a restart")
        XCTAssertEqual(fresh?.data.jsonObject["state"] as? String, "waiting", fresh?.data ?? "no snapshot")
        let inFlight = try post(
            port, "/api/v1/control", token: token,
            json: #"{"requestId":"l-late","command":"lap","expect":\#(secondSequence),"workoutId":2}"#)
        XCTAssertEqual(inFlight.status, 412, inFlight.body)
        XCTAssertEqual((inFlight.json["status"] as? [String: Any])?["state"] as? String, "waiting", inFlight.body)

        // The recorder gone: the API says so, the streams get a snapshot without it.
        restarted.signal(SIGTERM)
        XCTAssertEqual(restarted.wait(seconds: 20), 0, restarted.output)
        try await waitFor("503 without a recorder", mirror) {
            try self.get(port, "/api/v1/status", token: token).status == 503
        }
        let gone = try post(port, "/api/v1/control", token: token, json: #"{"requestId":"l-9","command":"lap"}"#)
        XCTAssertEqual(gone.status, 503, gone.body)
        XCTAssertTrue(gone.body.contains("cyclelog record --wait"), gone.body)
        let lastSnapshot = try XCTUnwrap(nextEvent(stream, "snapshot"))
        XCTAssertTrue(lastSnapshot.data.jsonObject["recorder"] as? Bool == false, lastSnapshot.data)

        // What the journal kept: each control once.
        let store = try WorkoutStore(path: database)
        let journal = try store.journal(Int64(workoutId))
        XCTAssertEqual(controls(journal), ["start", "lap", "lap", "intake", "marker", "lap", "end", "undo", "end"])

        mirror.signal(SIGTERM)
        XCTAssertEqual(mirror.wait(seconds: 20), 0, mirror.output)
    }

    func testStrangersStayOut() async throws {
        let bus = try PrivateBus()
        let state = bus.folder.appendingPathComponent("state").path
        let (mirror, port) = try await startMirror(bus: bus, listen: "0.0.0.0:0", stateDirectory: state)
        defer { mirror.signal(SIGTERM) }

        // Listening on every interface changes nothing for a device that is not paired.
        XCTAssertEqual(try get(port, "/api/v1/status", token: nil).status, 401)
        XCTAssertEqual(try get(port, "/api/v1/stream", token: nil).status, 401)
        XCTAssertEqual(try get(port, "/api/v1/status", token: "forged").status, 401)
        // A name that merely resolves here (DNS rebinding), and a page on another site.
        let rebound = try HTTPConnection.request(port: port, "GET", "/", host: "evil.example:\(port)")
        XCTAssertEqual(rebound.status, 421, rebound.body)
        let crossSite = try HTTPConnection.request(
            port: port, "GET", "/", headers: ["Origin": "http://evil.example"])
        XCTAssertEqual(crossSite.status, 403, crossSite.body)
        let page = try HTTPConnection.request(port: port, "GET", "/", headers: ["Origin": "http://127.0.0.1:\(port)"])
        XCTAssertEqual(page.status, 200)
        XCTAssertNil(page.headers["access-control-allow-origin"], "no CORS")
        XCTAssertTrue(page.headers["content-security-policy"]?.contains("default-src 'none'") ?? false)

        // A code dies after five wrong tries: the right one no longer pairs.
        let offer = try pairOffer(bus)
        let wrong = offer.code == "000000" ? "000001" : "000000"
        for attempt in 1...5 {
            let answer = try pairWithCode(port, wrong)
            XCTAssertEqual(answer.status, 401, "attempt \(attempt): \(answer.body)")
        }
        let late = try pairWithCode(port, offer.code)
        XCTAssertEqual(late.status, 401, late.body)
        // With the code, the offer's link died too.
        XCTAssertEqual(try HTTPConnection.request(port: port, "GET", "/pair?t=" + offer.oneTimeToken).status, 401)
        // A new offer's link pairs once, and only once.
        let linkOffer = try pairOffer(bus)
        let linked = try HTTPConnection.request(port: port, "GET", "/pair?t=" + linkOffer.oneTimeToken)
        XCTAssertEqual(linked.status, 303, linked.body)
        XCTAssertEqual(linked.headers["location"], "/")
        let cookie = try XCTUnwrap(linked.headers["set-cookie"])
        XCTAssertTrue(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age=31536000"),
            cookie)
        XCTAssertFalse(cookie.contains("Secure"), "no Secure cookie on plain HTTP: \(cookie)")
        // A link used once already: a page that says what to do, not raw JSON, for the browser that opened it.
        let spent = try HTTPConnection.request(port: port, "GET", "/pair?t=" + linkOffer.oneTimeToken)
        XCTAssertEqual(spent.status, 401)
        XCTAssertTrue(spent.body.hasPrefix("<!doctype html>"), spent.body)
        XCTAssertTrue(spent.body.contains("run <code>cyclelog-mirror pair</code> again"), spent.body)
        // Ten attempts a minute from one address (nine so far), then 429 even with a fresh, right code.
        let fresh = try pairOffer(bus)
        XCTAssertEqual(try pairWithCode(port, "999999").status, 401)
        XCTAssertEqual(try pairWithCode(port, fresh.code).status, 429)

        // A cookie is a browser: its POSTs need JSON and the marker header (a form on another site sends neither).
        let cookieToken = String(cookie.split(separator: ";")[0].dropFirst("cyclelog=".count))
        let form = try HTTPConnection.request(
            port: port, "POST", "/api/v1/control",
            headers: ["Cookie": "cyclelog=\(cookieToken)", "Content-Type": "application/x-www-form-urlencoded"],
            body: "requestId=a&command=end")
        XCTAssertEqual(form.status, 403, form.body)
        let huge = try HTTPConnection.request(
            port: port, "POST", "/api/v1/control",
            headers: ["Authorization": "Bearer \(cookieToken)", "Content-Type": "application/json"],
            body: "{\"requestId\":\"" + String(repeating: "x", count: 5000) + "\"}")
        XCTAssertEqual(huge.status, 413, huge.body)
        // Paired, but no recorder on the bus: 503 and how to start one.
        let noRecorder = try get(port, "/api/v1/status", token: cookieToken)
        XCTAssertEqual(noRecorder.status, 503, noRecorder.body)

        // A script's token; a read-only one cannot control.
        let script = try runMirror(["pair", "--name", "dashboard", "--types", "read", "--token", "--json"], bus)
        let scriptToken = try XCTUnwrap(script.jsonObject["token"] as? String, script)
        let readOnly = try post(
            port, "/api/v1/control", token: scriptToken, json: #"{"requestId":"x","command":"lap"}"#)
        XCTAssertEqual(readOnly.status, 403, readOnly.body)

        // Only hashes are stored, readable by the mirror's user alone.
        let file = URL(fileURLWithPath: state).appendingPathComponent("mirror-devices.json").path
        let stored = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertFalse(stored.contains(scriptToken) || stored.contains(cookieToken), stored)
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
        XCTAssertEqual(mode & 0o077, 0, String(mode, radix: 8))
        let listed = try runMirror(["devices"], bus)
        XCTAssertTrue(listed.contains("phone") && listed.contains("dashboard"), listed)

        // Revoking a device closes its open stream within a second; its token is dead.
        let stream = try openStream(port, token: scriptToken)
        XCTAssertEqual(stream.nextEvent(seconds: 5)?.event, "snapshot")
        XCTAssertTrue(try runMirror(["revoke", "dashboard"], bus).contains("Revoked dashboard"))
        XCTAssertTrue(stream.closes(within: 1), "the revoked device's stream stayed open")
        XCTAssertEqual(try get(port, "/api/v1/status", token: scriptToken).status, 401)

        // Tokens outlive the mirror: a restarted one still knows the phone.
        mirror.signal(SIGTERM)
        XCTAssertEqual(mirror.wait(seconds: 20), 0, mirror.output)
        let (again, secondPort) = try await startMirror(bus: bus, listen: "127.0.0.1:0", stateDirectory: state)
        defer { again.signal(SIGTERM) }
        XCTAssertEqual(try get(secondPort, "/api/v1/status", token: cookieToken).status, 503)

        // The bus itself going (a session ending): the mirror says so, keeps serving and tells the screen why
        // there is no recorder.
        bus.stop()
        try await waitFor("the mirror saying the bus went away", again) { again.output.contains("went away") }
        XCTAssertTrue(again.isRunning)
        let gone = try get(secondPort, "/api/v1/status", token: cookieToken)
        XCTAssertEqual(gone.status, 503)
        XCTAssertTrue(gone.body.contains("went away: the ride history is served meanwhile"), gone.body)
        again.signal(SIGTERM)
        XCTAssertEqual(again.wait(seconds: 20), 0, again.output)
    }

    /// On a box reached over ssh there is no session bus: `pair`, `devices` and `revoke` with no bus named find
    /// the mirror running as the service, on the system bus (here a private bus that libdbus takes for it).
    func testWithoutASessionBusTheMirrorsCommandsAskTheSystemBus() async throws {
        let system = try PrivateBus()
        let (mirror, _) = try await startMirror(bus: system, listen: "127.0.0.1:0")
        defer { mirror.signal(SIGTERM) }
        let runtime = system.folder.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let overSSH = [
            "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": runtime.path, "CYCLELOG_CONTROL_BUS": "",
            "DBUS_SYSTEM_BUS_ADDRESS": system.address,
        ]
        let pairing = try Cyclelog(
            ["pair", "--name", "phone", "--json"], bus: system, environment: overSSH, binary: "cyclelog-mirror")
        XCTAssertEqual(pairing.wait(seconds: 20), 0, pairing.output)
        XCTAssertTrue((pairing.output.jsonObject["url"] as? String)?.contains("/pair?t=") == true, pairing.output)
        let devices = try Cyclelog(["devices"], bus: system, environment: overSSH, binary: "cyclelog-mirror")
        XCTAssertEqual(devices.wait(seconds: 20), 0, devices.output)
        // With nothing on the system bus either, it says both and the commands that start a mirror.
        mirror.signal(SIGTERM)
        XCTAssertEqual(mirror.wait(seconds: 20), 0)
        let nobody = try Cyclelog(["pair"], bus: system, environment: overSSH, binary: "cyclelog-mirror")
        XCTAssertEqual(nobody.wait(seconds: 20), 1)
        XCTAssertTrue(nobody.output.contains("there is no session bus here"), nobody.output)
        XCTAssertTrue(nobody.output.contains("`dbus-run-session -- bash`"), nobody.output)
    }

    /// The pairing link is one the phone can open: on the LAN address when the mirror listens on every interface;
    /// when it listens on loopback only, `pair` says so and how to let the phone in.
    func testThePairingLinkIsOneAPhoneCanOpen() async throws {
        let local = try PrivateBus()
        let (loopbackMirror, _) = try await startMirror(bus: local, listen: "127.0.0.1:0")
        defer { loopbackMirror.signal(SIGTERM) }
        let advice = try runMirror(["pair"], local)
        XCTAssertTrue(advice.contains("a phone cannot open this link"), advice)
        XCTAssertTrue(advice.contains("`cyclelog-mirror --listen 0.0.0.0:8787`"), advice)
        XCTAssertEqual(try runMirror(["pair", "--json"], local).jsonObject["loopbackOnly"] as? Bool, true)

        // The machine's global IPv4 addresses, as iproute2 lists them.
        let ip = Process()
        ip.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        if !FileManager.default.isExecutableFile(atPath: ip.executableURL!.path) {
            ip.executableURL = URL(fileURLWithPath: "/sbin/ip")
        }
        ip.arguments = ["-4", "-o", "addr", "show", "scope", "global"]
        let pipe = Pipe()
        ip.standardOutput = pipe
        try ip.run()
        let listing = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ip.waitUntilExit()
        let addresses = listing.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "inet"), index + 1 < words.count else { return nil }
            return String(words[index + 1].split(separator: "/")[0])
        }

        let lan = try PrivateBus()
        let (lanMirror, lanPort) = try await startMirror(bus: lan, listen: "0.0.0.0:0")
        defer { lanMirror.signal(SIGTERM) }
        let offer = try runMirror(["pair", "--json"], lan).jsonObject
        let url = try XCTUnwrap(URLComponents(string: try XCTUnwrap(offer["url"] as? String)))
        guard !addresses.isEmpty else {
            print("This machine has no global IPv4 address: the LAN link cannot be checked here; loopback only.")
            XCTAssertEqual(url.host, "127.0.0.1")
            return
        }
        XCTAssertTrue(addresses.contains(url.host ?? ""), "\(url) is not on \(addresses)")
        XCTAssertEqual(url.port, lanPort)
        XCTAssertEqual(offer["loopbackOnly"] as? Bool, false)
        XCTAssertFalse(try runMirror(["pair"], lan).contains("cannot open"))
    }

    /// A headless box without a session bus: the mirror serves the history anyway, says in words what to run, and
    /// follows the bus and the recorder once they appear.
    func testWithoutASessionBusTheHistoryIsServedAndTheRecorderFollowedWhenItAppears() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        let database = standIn.bus.folder.appendingPathComponent("rides.sqlite").path
        let replay = try cyclelog([
            "replay", "--db", database,
            fixturesFolder.appendingPathComponent("rides/sweatpy_2020-06-01-16-52-40.journal").path,
        ])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        // $XDG_RUNTIME_DIR without a bus socket, and no DBUS_SESSION_BUS_ADDRESS: a login without a desktop.
        let runtime = standIn.bus.folder.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let headless = [
            "DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": runtime.path, "CYCLELOG_CONTROL_BUS": "session",
        ]
        let (mirror, port) = try await startMirror(
            bus: standIn.bus, listen: "127.0.0.1:0", extra: ["--db", database], environment: headless)
        defer { mirror.signal(SIGTERM) }
        try await waitFor("the mirror's advice", mirror) { mirror.output.contains("no session bus here") }
        XCTAssertTrue(mirror.output.contains("the ride history is served meanwhile"), mirror.output)
        XCTAssertTrue(mirror.output.contains("`--control-bus system`"), mirror.output)
        XCTAssertFalse(mirror.output.contains("X11"), mirror.output)
        // `pair` says the same kind of thing, not libdbus's words about X11.
        let pairing = try Cyclelog(["pair"], bus: standIn.bus, environment: headless, binary: "cyclelog-mirror")
        XCTAssertEqual(pairing.wait(seconds: 20), 1)
        XCTAssertTrue(pairing.output.contains("no session bus here"), pairing.output)
        XCTAssertFalse(pairing.output.contains("X11"), pairing.output)
        XCTAssertEqual(try HTTPConnection.request(port: port, "GET", "/history").status, 200)

        // The session bus appears (the user's systemd instance started): the mirror reaches it by itself; `pair`
        // works and the history answers.
        let session = try PrivateBus(folder: runtime)
        var token: String?
        let deadline = Date().addingTimeInterval(20)
        while token == nil, Date() < deadline {
            let offer = try Cyclelog(
                ["pair", "--name", "phone", "--token", "--json"], bus: standIn.bus, environment: headless,
                binary: "cyclelog-mirror")
            if offer.wait(seconds: 20) == 0 { token = offer.output.jsonObject["token"] as? String }
            if token == nil { try await Task.sleep(for: .milliseconds(250)) }
        }
        let paired = try XCTUnwrap(token, "the mirror never reached the session bus:\n\(mirror.output)")
        let rides = try get(port, "/api/v1/workouts", token: paired)
        XCTAssertEqual(rides.status, 200, rides.body)
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(rides.body.utf8)) as? [[String: Any]])
        XCTAssertEqual(listed.map { $0["id"] as? Int }, [1], rides.body)
        let none = try get(port, "/api/v1/status", token: paired)
        XCTAssertEqual(none.status, 503)
        XCTAssertTrue(none.body.contains("no recorder is running on the session bus"), none.body)

        // A recorder starts on that session bus: the mirror follows it.
        let record = try Cyclelog(
            ["record", "--wait", "--plain", "--sensor", "Stages Power L", "--db", database], standIn: standIn,
            environment: ["CYCLELOG_CONTROL_BUS": session.address])
        defer { record.signal(SIGINT) }
        try await waitFor("the mirror following the recorder", record) {
            try get(port, "/api/v1/status", token: paired).status == 200
        }
    }

    /// The page in headless Chromium on a phone-sized screen (Tests/MirrorPage/page_check.py), paired through the
    /// QR code's URL: the numbers it shows are what the stand-in sent, and each tap is one journal line however
    /// the network behaves. Screenshots are kept in `.build/artefacts/mirror`.
    func testThePageOnAPhoneShowsTheRideAndEachTapIsOneControl() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            XCTFail("Chromium is missing (scripts/setup.sh installs it)")
            return
        }
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("page.sqlite").path
        let record = try await waitingRecorder(standIn, database: database)
        let (mirror, port) = try await startMirror(bus: standIn.bus, listen: "127.0.0.1:0")
        defer {
            mirror.signal(SIGTERM)
            record.signal(SIGTERM)
        }
        let page = try HTTPConnection.request(port: port, "GET", "/")
        XCTAssertLessThanOrEqual(page.body.utf8.count, 60 * 1024, "the page is at most 60 kB")
        XCTAssertEqual(page.headers["content-type"], "text/html; charset=utf-8")

        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "handlebars", "--json"], standIn.bus).jsonObject["url"] as? String)
        let (report, output) = try pageCheck(
            "page_check.py", [url, Self.artefacts, String(mirror.process.pid)], in: standIn.bus.folder, seconds: 240)
        // The page restarted the mirror as it was; that one is stopped here.
        if let restarted = report["newMirrorPid"] as? Int { kill(pid_t(restarted), SIGTERM) }
        XCTAssertEqual(report["bannerWhileAway"] as? Bool, true, "no \"reconnecting\" while the mirror was away")
        // A ride without a name is "Workout N" on the phone, as `cyclelog list` and `show` call it.
        XCTAssertEqual(report["titleWhileRiding"] as? String, "Workout 1", output)

        XCTAssertEqual(
            report["startButtons"] as? [String],
            ["Start: Open ride", "Start: 20-minute FTP test", "Start: Ramp test", "Start: Endurance 1 h"])
        // What the page painted is what the power meter sent.
        XCTAssertEqual(
            report["goalWords"] as? [String], ["1 h", "1 h 30 min", "1 min 30 s", "30 km", "600 kJ"], output)
        let shown = try XCTUnwrap(report["powersShown"] as? [Int], output)
        XCTAssertGreaterThanOrEqual(shown.count, 4, output)
        try assertSent(shown, by: standIn)
        for (button, height) in report["buttonHeights"] as? [String: Double] ?? [:] {
            XCTAssertGreaterThanOrEqual(height, 48, "\(button) is smaller than a fingertip")
        }
        XCTAssertEqual(report["lostAnswer"] as? Bool, true, "the answer to a lap was not lost on the way")
        XCTAssertTrue((report["offlinePending"] as? String ?? "").hasPrefix("sending…"), output)
        XCTAssertEqual(report["stateAfterShortPress"] as? String, "running", "a short press on End ended the ride")
        XCTAssertEqual(report["foreignRequests"] as? [String], [], "the page asked another site")

        let store = try WorkoutStore(path: database)
        let workout = try XCTUnwrap(try store.list().first)
        let journal = try store.journal(workout.id)
        XCTAssertEqual(
            controls(journal),
            [
                "start", "lap", "pause", "resume", "intake", "marker", "lap", "lap", "lap",
                "lap", "undo", "end", "undo", "end",
            ])
        XCTAssertEqual(report["stateAfterEnd"] as? String, "ended", output)
        XCTAssertTrue((report["undoLabel"] as? String ?? "").hasPrefix("Undo lap "), output)
        let undoShown = report["undoShownSeconds"] as? Double ?? 0
        XCTAssertTrue((25...33).contains(undoShown), "the Undo was shown \(undoShown) s, not its 30 s")

        // Two phones undoing one lap at once: both offered it by the same name, the lap undone once (the first
        // phone's undo, whose answer was lost, sent again as a duplicate), the second phone told in words.
        let offered = try XCTUnwrap(report["twoPhonesUndo"] as? [String], output)
        XCTAssertEqual(offered.count, 2, output)
        XCTAssertEqual(offered.first, offered.last, output)
        XCTAssertEqual(report["lostUndoAnswer"] as? Bool, true, "the answer to the first phone's undo was not lost")
        let said = try XCTUnwrap(report["twoPhonesSaid"] as? [[String]], output)
        let lap = offered[0].replacingOccurrences(of: "Undo ", with: "")
        XCTAssertEqual(
            said.map { $0.filter { $0.contains("already undone") } },
            [[], ["\(offered[0]): \(lap) was already undone"]], output)
        let undone = journal.compactMap { if case .control(.undo(let action)) = $0.kind { action } else { nil } }
        let lastLap = journal.last { if case .control(.lap) = $0.kind { true } else { false } }
        XCTAssertEqual(
            undone.first, UndoneAction(timeMicroseconds: try XCTUnwrap(lastLap).timeMicroseconds, verb: "lap"),
            "the undo names the last lap's line")
    }

    /// The trainer panel of the page in headless Chromium (Tests/MirrorPage/trainer_page_check.py) while the
    /// recorder steers the stand-in's trainer in ERG: +10 W reaches the trainer, a mode it does not take is refused
    /// on the page in the recorder's words and never sent, Free lets it go.
    func testThePagesTrainerPanelSteersTheTrainerAndShowsItsRefusals() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            XCTFail("Chromium is missing (scripts/setup.sh installs it)")
            return
        }
        let standIn = try StandIn(sensors: [StandIn.trainer(["targets": ["power", "resistance"]])])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("trainer-page.sqlite").path
        let record = try Cyclelog(
            ["record", "--plain", "--sensor", "KICKR", "--control", "erg", "--target-watts", "200", "--db", database],
            standIn: standIn)
        let (mirror, _) = try await startMirror(bus: standIn.bus, listen: "127.0.0.1:0")
        defer {
            mirror.signal(SIGTERM)
            record.signal(SIGTERM)
        }
        try await waitFor("ERG at 200 W on the trainer", record) { try standIn.writes().contains([0x05, 0xC8, 0x00]) }
        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "handlebars", "--json"], standIn.bus).jsonObject["url"] as? String)
        let (report, output) = try pageCheck(
            "trainer_page_check.py", [url, Self.artefacts], in: standIn.bus.folder, seconds: 120)
        XCTAssertEqual(report["shownAtFirst"] as? String, "ERG 200 W", output)
        XCTAssertEqual(report["shownAfterUp"] as? String, "ERG 210 W", output)
        XCTAssertEqual(
            report["refusalShown"] as? String,
            "Sim: the trainer does not take simulation (its features do not list it; it takes ERG and resistance)",
            output)
        XCTAssertEqual(report["refusalInThePanel"] as? String, report["refusalShown"] as? String, output)
        XCTAssertEqual(report["shownAfterFree"] as? String, "free", output)
        for (button, height) in report["buttonHeights"] as? [String: Double] ?? [:] {
            XCTAssertGreaterThanOrEqual(height, 48, "\(button) is smaller than a fingertip")
        }
        // +10 W reached the trainer, simulation never did, and Free let it go.
        let writes = try standIn.writes()
        XCTAssertTrue(writes.contains([0x05, 0xD2, 0x00]), "\(writes)")
        XCTAssertFalse(writes.contains { $0.first == 0x11 }, "\(writes)")
        XCTAssertEqual(writes.last, [0x01], "\(writes)")
    }

    func testThePagesWorkoutPanelShowsTheStepAndSkipsAndScalesIt() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            XCTFail("Chromium is missing (scripts/setup.sh installs it)")
            return
        }
        let standIn = try StandIn(sensors: [StandIn.trainer()])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("workout-page.sqlite").path
        let file = standIn.bus.folder.appendingPathComponent("intervals.zwo").path
        try """
        <workout_file><name>Two steps</name><workout>
        <SteadyState Duration="300" Power="0.5"/>
        <SteadyState Duration="300" PowerLow="0.88" PowerHigh="0.94"/>
        <SteadyState Duration="300" Power="0.6"/>
        </workout></workout_file>
        """.write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try cyclelog(["workouts", "import", file, "--db", database]).status, 0)
        let record = try Cyclelog(
            ["record", "--plain", "--sensor", "KICKR", "--workout", "two-steps", "--ftp", "200", "--db", database],
            standIn: standIn)
        let (mirror, _) = try await startMirror(bus: standIn.bus, listen: "127.0.0.1:0")
        defer {
            mirror.signal(SIGTERM)
            record.signal(SIGTERM)
        }
        try await waitFor("100 W on the trainer", record) { try standIn.writes().contains([0x05, 0x64, 0x00]) }
        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "handlebars", "--json"], standIn.bus).jsonObject["url"] as? String)
        let (report, output) = try pageCheck(
            "workout_page_check.py", [url, Self.artefacts], in: standIn.bus.folder, seconds: 120)
        XCTAssertEqual(report["name"] as? String, "Two steps", output)
        XCTAssertEqual(report["step"] as? String, "step 1 of 3", output)
        XCTAssertEqual(report["target"] as? String, "100", output)
        // The next step is a range: ridden at its midpoint, 91 % of 200 W.
        XCTAssertEqual(report["next"] as? String, "182 W", output)
        XCTAssertTrue((report["left"] as? String ?? "").hasSuffix(" left"), output)
        XCTAssertEqual(report["segments"] as? Int, 3, output)
        XCTAssertEqual(report["positionShown"] as? Bool, true, output)
        XCTAssertEqual(report["targetAfterSkip"] as? String, "176–188", output)
        XCTAssertEqual(report["targetAfterHarder"] as? String, "185–197", output)
        for (button, height) in report["buttonHeights"] as? [String: Double] ?? [:] {
            XCTAssertGreaterThanOrEqual(height, 48, "\(button) is smaller than a fingertip")
        }
        // Skip sent the range's midpoint (182 W, 05 B6 00) and +5 % its 105 % (191 W, 05 BF 00).
        try await waitFor("191 W on the trainer", record) { try standIn.writes().contains([0x05, 0xBF, 0x00]) }
        XCTAssertTrue(try standIn.writes().contains([0x05, 0xB6, 0x00]))
    }

    // MARK: The ride history

    /// Every fixture ride and every real third-party ride that imports, served by the mirror from the database
    /// read-only: each answer equals, byte for byte, what the CLI prints or writes for the same ride.
    func testTheHistoryAnswersWhatTheCLIPrints() async throws {
        let database = try temporaryDatabase()
        let rides = fixturesFolder.appendingPathComponent("rides")
        let captures = try FileManager.default.contentsOfDirectory(atPath: rides.path)
            .filter { $0.hasSuffix(".btsnoop") || $0.hasSuffix(".journal") }.sorted()
            .map { rides.appendingPathComponent($0).path }
        let replay = try cyclelog(["replay", "--db", database] + captures)
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        // The fixtures are four rides (each as a journal, a capture and a FIT file: one ride counts once) years
        // apart, so no window of 42 days holds two and no critical-power model comes of them. An easy hour and the
        // synthetic ride of CP 250 W, W′ 20 kJ on the two days before the road ride of 2019-09-20 give one, with
        // an FTP for the rides after them.
        let folder = URL(fileURLWithPath: database).deletingLastPathComponent()
        for (date, watts) in [
            ("2019-09-18", Array(repeating: 150.0, count: 3600)),
            ("2019-09-19", try FTPAndChartCommandTests.syntheticWatts()),
        ] {
            let journal = folder.appendingPathComponent("\(date).journal").path
            try Journals.power(watts, date: date).write(
                toFile: journal, atomically: true, encoding: .utf8)
            let run = try cyclelog(["replay", "--db", database, journal])
            XCTAssertEqual(run.status, 0, run.errorOutput)
        }
        // The project's own rides always; real third-party files too under `make test-thirdparty`, which names
        // their folder (they are users' files, not the project's: a plain clone has none).
        let fitFixtures = rides.appendingPathComponent("fit").path
        var folders = [fitFixtures]
        let thirdParty = ProcessInfo.processInfo.environment["CYCLELOG_THIRDPARTY_FIT"]
        if let thirdParty {
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: thirdParty), "CYCLELOG_THIRDPARTY_FIT: no \(thirdParty)")
            folders.append(thirdParty)
        } else {
            print("MirrorTests: the fixture rides; `make test-thirdparty` serves 118 third-party files' rides too")
        }
        // Files that hold no ride are refused (status 1); every ride in the others is stored.
        _ = try cyclelog(["import", "--db", database] + folders)

        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        XCTAssertEqual(try get(port, "/api/v1/workouts", token: nil).status, 401)
        // Every type of the history (heart rate by name) gives the CLI's answers whole; less is
        // DataGrantTests'.
        let paired = try runMirror(
            ["pair", "--name", "big screen", "--types", "read,hr,intake", "--token", "--json"], bus)
        let token = try XCTUnwrap(paired.jsonObject["token"] as? String)

        @discardableResult
        func same(_ path: String, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws
            -> String
        {
            let answer = try get(port, path, token: token)
            let printed = try cyclelog(arguments + ["--db", database])
            XCTAssertEqual(answer.status, 200, "\(path): \(answer.body)", file: file, line: line)
            XCTAssertEqual(printed.status, 0, printed.errorOutput, file: file, line: line)
            XCTAssertEqual(answer.body, printed.output, path, file: file, line: line)
            return printed.output
        }
        try same("/api/v1/workouts", ["list", "--json", "--all"])
        let entries = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try get(port, "/api/v1/workouts", token: token).body.utf8))
                as? [[String: Any]])
        if thirdParty == nil {
            // Each capture and each FIT file of the fixtures is a ride of its own (their sources differ).
            let fitFiles = try FileManager.default.contentsOfDirectory(atPath: fitFixtures).filter {
                $0.hasSuffix(".fit")
            }
            XCTAssertEqual(entries.count, captures.count + fitFiles.count + 2)
        } else {
            XCTAssertGreaterThan(entries.count, 60)
        }
        var shown: [[String: Any]] = []
        for entry in entries {
            let id = try XCTUnwrap(entry["id"] as? Int)
            let summary = try same("/api/v1/workouts/\(id)", ["show", "\(id)", "--json"]).jsonObject
            shown.append(summary)
            // The list's NP and TSS are the ride's own.
            for key in ["normalizedPowerWatts", "trainingStressScore"] {
                XCTAssertEqual(entry[key] as? Double, summary[key] as? Double, "workout \(id) \(key)")
                XCTAssertEqual(entry[key] is NSNull, summary[key] is NSNull, "workout \(id) \(key)")
            }
        }
        XCTAssertGreaterThan(
            entries.filter { $0["trainingStressScore"] is Double }.count, thirdParty == nil ? 5 : 10, "rides with a TSS"
        )
        try same(
            "/api/v1/workouts?since=2019-09-20&until=2021-03-18",
            ["list", "--json", "--since", "2019-09-20", "--until", "2021-03-18"])
        try same("/api/v1/workouts?q=SWEATPY", ["list", "--json", "--search", "SWEATPY"])
        try same("/api/v1/ftp", ["ftp", "--json"])
        try same("/api/v1/ftp?window=6w", ["ftp", "--json", "--window", "6w"])
        XCTAssertEqual(try get(port, "/api/v1/workouts?since=yesterday", token: token).status, 400)
        XCTAssertEqual(try get(port, "/api/v1/workouts/99999", token: token).status, 404)
        XCTAssertEqual(try get(port, "/api/v1/power-curve?window=soon", token: token).status, 400)
        // A path is the documented one exactly: not with a slash at its end, nor an empty segment; a stranger hears
        // 401 first.
        for path in ["/api/v1/workouts/", "/api/v1/ftp/", "//api/v1/workouts", "/api/v1//ftp", "/history/"] {
            XCTAssertEqual(try get(port, path, token: token).status, 404, path)
        }
        XCTAssertEqual(try get(port, "/api/v1/workouts/", token: nil).status, 401)

        // Files: the bytes `cyclelog export` and `show --journal` write; an imported ride keeps no journal.
        let replayed = try XCTUnwrap(entries.last { ($0["source"] as? String)?.hasSuffix(".btsnoop") ?? false })
        let imported = try XCTUnwrap(entries.last { ($0["source"] as? String)?.hasSuffix(".fit") ?? false })
        // (the database's folder, as above)
        for ride in [replayed, imported] {
            let id = try XCTUnwrap(ride["id"] as? Int)
            var downloads: [String: [UInt8]] = [:]
            for kind in ["fit", "tcx", "csv"] {
                let path = folder.appendingPathComponent("\(id).\(kind)").path
                XCTAssertEqual(try cyclelog(["export", "\(id)", "--db", database, "-o", path]).status, 0)
                let answer = try HTTPConnection.request(
                    port: port, "GET", "/api/v1/workouts/\(id)/export.\(kind)",
                    headers: ["Authorization": "Bearer \(token)"])
                XCTAssertEqual(answer.status, 200)
                XCTAssertEqual(answer.bytes, Array(try Data(contentsOf: URL(fileURLWithPath: path))), "\(id).\(kind)")
                XCTAssertTrue(answer.headers["content-disposition"]?.contains("cyclelog-\(id)-") ?? false)
                downloads[kind] = answer.bytes
            }
            // The downloads themselves, read by the export tests' independent readers.
            let stored = try XCTUnwrap(try WorkoutStore(path: database, access: .read).ride(Int64(id)))
            for kind in ["fit", "tcx"] {
                let download = folder.appendingPathComponent("download-\(id).\(kind)")
                try Data(try XCTUnwrap(downloads[kind])).write(to: download)
                let read = try readExport(kind, download.path)
                if kind == "fit" {
                    try checkFIT(read, summary: stored.summary, samples: stored.samples)
                } else {
                    XCTAssertEqual(read["sport"] as? String, "Biking")
                    XCTAssertEqual(
                        (read["trackpoints"] as? [Any])?.count, stored.samples.filter(\.isRunning).count,
                        "a trackpoint per second on the timer")
                    XCTAssertEqual((read["laps"] as? [Any])?.count, stored.summary.laps.count)
                }
            }
        }
        try same(
            "/api/v1/workouts/\(try XCTUnwrap(replayed["id"] as? Int))/export.journal",
            ["show", "\(try XCTUnwrap(replayed["id"] as? Int))", "--journal"])
        XCTAssertEqual(
            try get(port, "/api/v1/workouts/\(try XCTUnwrap(imported["id"] as? Int))/export.journal", token: token)
                .status, 404)

        // The 1 Hz series: a column per channel, one value per second; its distances add up to the ride's.
        let replayedID = try XCTUnwrap(replayed["id"] as? Int)
        let seriesAnswer = try get(port, "/api/v1/workouts/\(replayedID)/samples", token: token)
        let series = seriesAnswer.json
        // Written straight into bytes for speed: the very text the JSON tree of the same ride prints.
        for id in [replayedID, try XCTUnwrap(imported["id"] as? Int)] {
            let stored = try XCTUnwrap(try WorkoutStore(path: database, access: .read).ride(Int64(id)))
            XCTAssertEqual(
                try get(port, "/api/v1/workouts/\(id)/samples", token: token).body,
                RideFiles.samplesJSON(stored).rendered() + "\n", "workout \(id)")
        }
        let summary = try cyclelog(["show", "\(replayedID)", "--json", "--db", database]).output.jsonObject
        let seconds = try XCTUnwrap(series["seconds"] as? [Int])
        XCTAssertEqual(seconds, Array(0..<seconds.count))
        for column in ["powerWatts", "cadenceRPM", "speedMetersPerSecond", "heartRateBPM", "runningFraction"] {
            XCTAssertEqual((series[column] as? [Any])?.count, seconds.count, column)
        }
        let metres = try XCTUnwrap(series["distanceMetersThisSecond"] as? [Double]).reduce(0, +)
        XCTAssertEqual(metres, try XCTUnwrap(summary["distanceMeters"] as? Double), accuracy: 1)

        // The power curve of every ride counted: at each duration the best of their own curves (a ride stored
        // twice counts once, as the copy `list` does not mark `sameRideAs`).
        let curve = try get(port, "/api/v1/power-curve?window=36500d", token: token).json
        let watts = try XCTUnwrap(curve["watts"] as? [Double])
        let counted = Set(entries.filter { $0["sameRideAs"] is NSNull }.compactMap { $0["id"] as? Int })
        XCTAssertLessThan(counted.count, entries.count, "the fixtures hold each ride more than once")
        for duration in ["1", "60", "1200", "3600"] {
            let best = shown.filter { counted.contains($0["id"] as? Int ?? -1) }.map {
                (($0["powerCurveWatts"] as? [String: Any])?[duration] as? Double) ?? 0
            }.max()
            // The window's curves are stored as Float32 (Docs/reference/storage.md, "Storage"), a summary's as Double: both shown to
            // 0.1 W, a value within 1e-4 W of a rounding edge can come out one step apart.
            XCTAssertEqual(watts[Int(duration)! - 1], try XCTUnwrap(best), accuracy: 0.1 + 1e-9, "\(duration) s")
        }

        // W′ balance over a ride with a critical-power model: its lowest values are `show`'s, it never exceeds
        // W′, and above CP the differential form falls by exactly the excess each second (Skiba 2015).
        // The hardest of them (its highest power), so that many of its seconds lie above CP.
        let modelled = try XCTUnwrap(
            shown.filter { $0["wPrimeBalanceMinimumJoules"] is Double }.max {
                ($0["maximumPowerWatts"] as? Double ?? 0) < ($1["maximumPowerWatts"] as? Double ?? 0)
            }, "no ride with power and a CP model")
        let modelledID = try XCTUnwrap(modelled["id"] as? Int)
        let balance = try get(port, "/api/v1/workouts/\(modelledID)/wprime", token: token).json
        let integral = try XCTUnwrap(balance["integralJoules"] as? [Double])
        let differential = try XCTUnwrap(balance["differentialJoules"] as? [Double])
        let wPrime = try XCTUnwrap(modelled["wPrimeJoules"] as? Double)
        let criticalPower = try XCTUnwrap(balance["criticalPowerWatts"] as? Double)
        XCTAssertEqual(criticalPower, modelled["criticalPowerWatts"] as? Double)
        XCTAssertEqual(
            min(wPrime, integral.min() ?? wPrime), try XCTUnwrap(modelled["wPrimeBalanceMinimumJoules"] as? Double),
            accuracy: 1)
        XCTAssertEqual(
            min(wPrime, differential.min() ?? wPrime),
            try XCTUnwrap(modelled["wPrimeBalanceMinimumDifferentialJoules"] as? Double), accuracy: 1)
        XCTAssertLessThanOrEqual(integral.max() ?? 0, wPrime + 0.5)
        let power =
            (try get(port, "/api/v1/workouts/\(modelledID)/samples", token: token).json["powerWatts"]
            as? [Any] ?? []).map { ($0 as? Double) ?? 0 }
        XCTAssertEqual(power.count, differential.count)
        var checked = 0
        for second in 1..<differential.count where power[second] > criticalPower + 1 {
            // Both seconds' balances are rounded to 1 J.
            XCTAssertEqual(
                differential[second - 1] - differential[second], power[second] - criticalPower, accuracy: 1.01)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 10)
        XCTAssertEqual(
            try get(port, "/api/v1/workouts/\(modelledID)/wprime.svg", token: token).headers["content-type"],
            "image/svg+xml")
        let unmodelled = try XCTUnwrap(shown.first { $0["wPrimeBalanceMinimumJoules"] is NSNull }?["id"] as? Int)
        XCTAssertEqual(try get(port, "/api/v1/workouts/\(unmodelled)/wprime", token: token).status, 404)

        // The weekly load: each ISO week's (Monday to Sunday, UTC, by Foundation's calendar) TSS added up, of the
        // rides counted (a ride stored twice counts once).
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let iso = ISO8601DateFormatter()
        var expected: [String: Double] = [:]
        for entry in entries where entry["status"] as? String == "complete" && entry["sameRideAs"] is NSNull {
            let start = try XCTUnwrap(iso.date(from: try XCTUnwrap(entry["start"] as? String)))
            let monday = iso.string(from: try XCTUnwrap(calendar.dateInterval(of: .weekOfYear, for: start)).start)
            expected[monday, default: 0] += entry["trainingStressScore"] as? Double ?? 0
        }
        let weeks = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(try get(port, "/api/v1/weekly-load?weeks=520", token: token).body.utf8)) as? [[String: Any]])
        XCTAssertEqual(weeks.count, 520)
        XCTAssertEqual(weeks.last?["weekStart"] as? String, expected.keys.max())
        for week in weeks {
            let monday = try XCTUnwrap(week["weekStart"] as? String)
            // Each ride's TSS is rounded to 0.1 in the list: a week of n rides may differ by n × 0.05.
            XCTAssertEqual(
                week["trainingStressScore"] as? Double ?? -1, expected[monday] ?? 0,
                accuracy: 0.05 * Double(week["rides"] as? Int ?? 0) + 0.05 + 1e-9, monday)
        }
        let loadPicture = try get(port, "/api/v1/weekly-load.svg", token: token)
        XCTAssertEqual(loadPicture.headers["content-type"], "image/svg+xml")
        XCTAssertTrue(loadPicture.body.contains("TSS per week"))

        // The list's power line: each of its 60 points the mean power of one sixtieth of the ride's seconds.
        let sparkline = try get(port, "/api/v1/workouts/\(replayedID)/sparkline.svg", token: token)
        XCTAssertEqual(sparkline.headers["content-type"], "image/svg+xml")
        let wattsAttribute = try XCTUnwrap(
            sparkline.body.range(of: #"data-watts="([^"]*)""#, options: .regularExpression))
        let drawn = sparkline.body[wattsAttribute].dropFirst(#"data-watts=""#.count).dropLast()
            .split(separator: " ", omittingEmptySubsequences: false).map { Double($0) }
        let everySecond = try XCTUnwrap(series["powerWatts"] as? [Any]).map { $0 as? Double }
        XCTAssertEqual(drawn.count, min(60, everySecond.count))
        for (index, watts) in drawn.enumerated() {
            let stretch = everySecond[
                index * everySecond.count / drawn.count..<(index + 1) * everySecond.count
                    / drawn.count
            ].compactMap { $0 }
            let mean = stretch.isEmpty ? nil : stretch.reduce(0, +) / Double(stretch.count)
            XCTAssertEqual(watts == nil, mean == nil, "stretch \(index)")
            // Both to 0.1 W: the samples' values and the stretch's mean.
            XCTAssertEqual(watts ?? 0, mean ?? 0, accuracy: 0.05 + 1e-9, "stretch \(index)")
        }
        XCTAssertGreaterThan(drawn.compactMap { $0 }.count, 50)

        // An unchanged answer is not sent again, nor worked out again; any change to the database (here an FTP
        // set by hand, which changes the ride's zones and TSS) makes the old tag stale.
        let ridePath = "/api/v1/workouts/\(replayedID)"
        var tags: [String: String] = [:]
        for path in [ridePath, "/api/v1/workouts", "/api/v1/workouts/\(replayedID)/sparkline.svg"] {
            tags[path] = try XCTUnwrap(try get(port, path, token: token).headers["etag"], path)
            let again = try HTTPConnection.request(
                port: port, "GET", path, headers: ["Authorization": "Bearer \(token)", "If-None-Match": tags[path]!])
            XCTAssertEqual(again.status, 304, path)
            XCTAssertEqual(again.body, "", path)
        }
        XCTAssertNotEqual(tags[ridePath], tags["/api/v1/workouts"], "two answers under one tag")
        let before = try get(port, ridePath, token: token).body
        XCTAssertEqual(try cyclelog(["ftp", "set", "123", "--from", "2000-01-01", "--db", database]).status, 0)
        let changed = try HTTPConnection.request(
            port: port, "GET", ridePath,
            headers: ["Authorization": "Bearer \(token)", "If-None-Match": tags[ridePath]!])
        XCTAssertEqual(changed.status, 200)
        XCTAssertNotEqual(changed.body, before, "the FTP changed nothing in the ride: a poor test")
        XCTAssertEqual(changed.body, try cyclelog(["show", "\(replayedID)", "--json", "--db", database]).output)
        XCTAssertNotEqual(changed.headers["etag"], tags[ridePath])
    }

    /// The history's pages in headless Chromium at a phone's, a tablet's, a desktop's and a TV's width (Tests/MirrorPage/
    /// history_check.py; screenshots in .build/artefacts/mirror): the ride page shows `show --json`'s numbers, and
    /// a range picked on the chart over a lap's seconds gives that lap's statistics.
    func testTheHistoryPagesShowTheRideAndARangeIsALap() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            XCTFail("Chromium is missing (scripts/setup.sh installs it)")
            return
        }
        // A real ride's journal with two laps added (at 20 and 45 minutes after its first line), and an app on the
        // sensor hub holding the trainer for ten minutes in ERG 230 W.
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let database = folder.appendingPathComponent("rides.sqlite").path
        let original = try String(
            contentsOf: fixturesFolder.appendingPathComponent(
                "rides/fitparse_Edge810-Vector-2013-08-16-15-35-10.journal"), encoding: .utf8)
        var added = [
            "2013-08-16T18:25:08.000000Z lap", "2013-08-16T18:30:08.000000Z hub-holder 00:AA:02:00:00:06 iPad",
            "2013-08-16T18:30:08.000000Z trainer erg 230", "2013-08-16T18:40:08.000000Z hub-holder rider",
            "2013-08-16T18:40:08.000000Z trainer free", "2013-08-16T18:50:08.000000Z lap",
        ]
        var lines: [String] = []
        for line in original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            // Journal times are ISO 8601 in UTC with fixed width: as text they sort as times do.
            while let next = added.first, !line.hasPrefix("#"), line.count >= 27, line.prefix(27) > next.prefix(27) {
                lines.append(next)
                added.removeFirst()
            }
            lines.append(line)
        }
        let journal = folder.appendingPathComponent("laps.journal").path
        try (lines + added).joined(separator: "\n").write(toFile: journal, atomically: true, encoding: .utf8)
        let replay = try cyclelog(
            [
                "replay", "--db", database, journal,
                fixturesFolder.appendingPathComponent("rides/sweatpy_4078723797.btsnoop").path,
            ])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        let shown = try cyclelog(["show", "1", "--json", "--db", database]).output.jsonObject
        let shownLaps = try XCTUnwrap(shown["laps"] as? [[String: Any]])
        XCTAssertEqual(shownLaps.count, 3)

        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        let page = try HTTPConnection.request(port: port, "GET", "/history")
        XCTAssertLessThanOrEqual(page.body.utf8.count, 60 * 1024, "the page is at most 60 kB")
        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "laptop", "--types", "read,hr", "--json"], bus).jsonObject["url"]
                as? String)
        let (report, output) = try pageCheck(
            "history_check.py", [url, Self.artefacts, "1", "2"], in: folder, seconds: 180)

        XCTAssertEqual(report["rideRows"] as? Int, 2, output)
        XCTAssertEqual(report["rideLinks"] as? Int, 2, "every ride reachable by keyboard")
        XCTAssertEqual(report["caption"] as? String, "2 rides, newest first")
        // The browser is in Berlin: the dates are the API's UTC starts in that zone (converted here by Foundation),
        // and the column says which zone; times of day in the ride's events are to the second.
        XCTAssertEqual(report["dateHeading"] as? String, "Date (Europe/Berlin)")
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "Europe/Berlin")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let listed = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(try cyclelog(["list", "--json", "--db", database]).output.utf8))
                as? [[String: Any]])
        let starts = try listed.map {
            try XCTUnwrap(ISO8601DateFormatter().date(from: try XCTUnwrap($0["start"] as? String)))
        }
        XCTAssertEqual(report["dates"] as? [String], starts.map(formatter.string(from:)), output)
        let eventTimes = try XCTUnwrap(report["eventTimes"] as? [String], output)
        XCTAssertFalse(eventTimes.isEmpty)
        for time in eventTimes {
            XCTAssertNotNil(time.range(of: #"^\d\d:\d\d:\d\d$"#, options: .regularExpression), time)
        }
        XCTAssertEqual((report["errors"] as? [Any])?.count, 0, output)
        XCTAssertEqual((report["requestsElsewhere"] as? [Any])?.count, 0, output)
        XCTAssertEqual(report["powerCurveLoaded"] as? Bool, true, output)
        // The trainer's part: the time the app held it (running seconds of the ten minutes) as `show` has it.
        let trainer = try XCTUnwrap(shown["trainer"] as? [String: Any], "\(shown)")
        let appSeconds = try XCTUnwrap(trainer["appSeconds"] as? Int)
        XCTAssertTrue((1...600).contains(appSeconds), "\(appSeconds)")
        XCTAssertEqual(trainer["apps"] as? [String], ["iPad (00:AA:02:00:00:06)"])
        let clock = String(format: "%d:%02d", appSeconds / 60, appSeconds % 60)
        XCTAssertTrue(
            (report["trainer"] as? String ?? "").hasSuffix(
                "Steered by iPad (00:AA:02:00:00:06) through the hub for \(clock)."), output)
        XCTAssertTrue(
            try cyclelog(["show", "1", "--db", database]).output.contains(
                "steered by   iPad (00:AA:02:00:00:06) through the hub for "), "show's text names the app")
        for width in ["phone", "tablet", "desktop", "tv"] {
            // Both rides have power: a sparkline each, loaded, with its text alternative.
            XCTAssertEqual(report["sparklines-\(width)"] as? Int, 2, output)
            for page in ["rides", "ride"] {
                XCTAssertEqual(report["overflow-\(page)-\(width)"] as? Int, 0, "\(width): the \(page) page is too wide")
            }
            // Every number on the ride page is the one `show --json` has, under the same key.
            let tiles = try XCTUnwrap(report["tiles-\(width)"] as? [String: Any], output)
            XCTAssertGreaterThanOrEqual(tiles.count, 12)
            for (key, value) in tiles {
                if let text = value as? String {
                    XCTAssertEqual(Double(text), shown[key] as? Double, "\(width): \(key)")
                } else {
                    XCTAssertTrue(shown[key] is NSNull, "\(width): \(key) is \(shown[key] ?? "missing") in show --json")
                }
            }
            XCTAssertEqual(report["laps-\(width)"] as? Int, 3)
            // The range over lap 2's seconds, picked on the chart, gives lap 2's statistics. The lap was computed
            // from the values as measured, the range from them as stored (power to 0.1 W, distance to 1 mm each
            // second): sums and means agree to those steps.
            let range = try XCTUnwrap(report["range-\(width)"] as? [String: Any], output)
            let lap = shownLaps[1]
            let tolerances: [String: Double] = [
                "elapsedSeconds": 0.001, "distanceMeters": 1, "averagePowerWatts": 0.1, "normalizedPowerWatts": 0.1,
                "maximumPowerWatts": 0.1, "workJoules": 0.0001 * (lap["workJoules"] as? Double ?? 0) + 1,
                "averageCadenceRPM": 0.1, "averageHeartRateBPM": 0.1,
            ]
            for (key, tolerance) in tolerances {
                let seen = try XCTUnwrap(Double(range[key] as? String ?? ""), "\(width): \(key) \(range)")
                XCTAssertEqual(seen, try XCTUnwrap(lap[key] as? Double), accuracy: tolerance + 1e-9, "\(width): \(key)")
            }
            XCTAssertEqual(
                (report["fitness-\(width)"] as? [String: Any])?["ftpWatts"] as? String,
                (try cyclelog(["ftp", "--json", "--db", database]).output.jsonObject["ftpWatts"] as? Double)
                    .map { "\($0)" })
        }
        XCTAssertTrue((report["powerCurveAlt"] as? String ?? "").contains("1 min"), output)
        // Shown as `show` prints them: watts, rpm and bpm whole, IF to two places (the exact value stays in
        // data-value, checked above).
        let shownTiles = try XCTUnwrap(report["shownTiles"] as? [String: String], output)
        for (key, unit) in [
            ("averagePowerWatts", "W"), ("normalizedPowerWatts", "W"), ("averageCadenceRPM", "rpm"),
            ("averageHeartRateBPM", "bpm"),
        ] {
            let exact = try XCTUnwrap(shown[key] as? Double, key)
            XCTAssertEqual(shownTiles[key], "\(Int(exact.rounded())) \(unit)", key)
        }
        if let factor = shown["intensityFactor"] as? Double {
            XCTAssertEqual(shownTiles["intensityFactor"], String(format: "%.2f", factor))
        }
        // Four pages at four sizes, and the trainer's part.
        XCTAssertEqual((report["screenshots"] as? [String])?.count, 17, output)
    }

    /// 54 rides, two of them starting at the same microsecond (the newest: the same ride from two collectors): the
    /// API gives them a page at a time, each page's Link naming the next, and the pages, whatever their size, are
    /// `list --all --json` exactly, nothing shown twice or passed over; a text search pages too. The page shows the
    /// newest 50 and, each time "Older rides" is pressed, the next (a real pointer in Chromium).
    func testTheRidesComeAPageAtATime() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            XCTFail("Chromium is missing (scripts/setup.sh installs it)")
            return
        }
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let database = folder.appendingPathComponent("rides.sqlite").path
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        var journals: [String] = []
        for day in 0..<54 {
            let date = formatter.string(
                from: Date(timeIntervalSince1970: 1_704_067_200 + 86_400 * Double(min(day, 52))))
            let journal = folder.appendingPathComponent("ride-\(day).journal").path
            try Journals.power(Array(repeating: Double(100 + day), count: 60), date: date)
                .write(toFile: journal, atomically: true, encoding: .utf8)
            journals.append(journal)
        }
        let replay = try cyclelog(["replay", "--db", database] + journals)
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        let every = try cyclelog(["list", "--all", "--json", "--db", database]).output
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(every.utf8)) as? [[String: Any]])
        XCTAssertEqual(listed.count, 54)
        XCTAssertEqual(listed[0]["start"] as? String, listed[1]["start"] as? String, "two rides start together")

        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        let token = try XCTUnwrap(
            try runMirror(["pair", "--name", "laptop", "--types", "read", "--token", "--json"], bus)
                .jsonObject["token"] as? String)
        /// The pages from `first` on, following each Link; the rides of all of them and each page's count.
        func pages(_ first: String) throws -> (rides: [[String: Any]], counts: [Int]) {
            var rides: [[String: Any]] = [], counts: [Int] = [], next: String? = first
            while let path = next, counts.count < 100 {
                let answer = try get(port, path, token: token)
                XCTAssertEqual(answer.status, 200, "\(path): \(answer.body)")
                let page = try XCTUnwrap(
                    try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [[String: Any]], path)
                rides += page
                counts.append(page.count)
                XCTAssertEqual(answer.headers["x-total-count"], "\(first.contains("q=") ? 11 : 54)", path)
                next = answer.headers["link"].flatMap { link in
                    link.hasSuffix(">; rel=\"next\"") && link.hasPrefix("<")
                        ? String(link.dropFirst().dropLast(">; rel=\"next\"".count)) : nil
                }
            }
            return (rides, counts)
        }
        for limit in [1, 20, 53, 54, 1000] {
            let (rides, counts) = try pages("/api/v1/workouts?limit=\(limit)")
            XCTAssertEqual(counts, Array(repeating: limit, count: 54 / limit) + (54 % limit == 0 ? [] : [54 % limit]))
            XCTAssertEqual(rides.map { $0 as NSDictionary }, listed.map { $0 as NSDictionary }, "pages of \(limit)")
        }
        // The rides of days 4 and 40 to 49 hold "ride-4" in their source.
        let found = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(try cyclelog(["list", "--json", "--search", "RIDE-4", "--db", database]).output.utf8))
                as? [[String: Any]])
        XCTAssertEqual(found.count, 11)
        let searched = try pages("/api/v1/workouts?q=RIDE-4&limit=3")
        XCTAssertEqual(searched.counts, [3, 3, 3, 2])
        XCTAssertEqual(searched.rides.map { $0 as NSDictionary }, found.map { $0 as NSDictionary })
        for (path, status) in [
            ("limit=0", 400), ("limit=1001", 400), ("limit=many", 400), ("after=last", 400), ("after=99999", 404),
        ] {
            XCTAssertEqual(try get(port, "/api/v1/workouts?" + path, token: token).status, status, path)
        }

        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "desk", "--types", "read", "--json"], bus).jsonObject["url"] as? String)
        let (report, output) = try pageCheck(
            "history_pages_check.py", [url, Self.artefacts], in: folder, seconds: 120)
        let steps = try XCTUnwrap(report["steps"] as? [[String: Any]], output)
        XCTAssertEqual(steps.map { $0["rows"] as? Int }, [50, 54], output)
        XCTAssertEqual(
            steps.map { $0["caption"] as? String },
            ["The newest 50 of 54 rides, newest first", "54 rides, newest first"])
        XCTAssertEqual(steps.map { $0["button"] as? Bool }, [true, false])
        XCTAssertEqual(
            (report["ids"] as? [Any])?.map { $0 as? Int }, listed.map { $0["id"] as? Int },
            "every ride once, newest first")
    }

    // MARK: Helpers

    /// Starts `cyclelog-mirror` and reads the port it announced.
    func testOverTLSThePairingLinkIsHTTPSAndTheCookieSecure() async throws {
        let bus = try PrivateBus()
        let tls = bus.folder.appendingPathComponent("tls").path
        try TestCertificates.make(in: tls)
        let (mirror, port) = try await startMirror(
            bus: bus, listen: "127.0.0.1:0",
            extra: ["--tls-cert", tls + "/server.crt", "--tls-key", tls + "/server.key"])
        defer { mirror.signal(SIGTERM) }
        XCTAssertTrue(mirror.output.contains("serving https://127.0.0.1:\(port)"), mirror.output)
        let offer = try runMirror(["pair", "--name", "phone", "--json"], bus).jsonObject
        let link = try XCTUnwrap(offer["url"] as? String)
        XCTAssertTrue(link.hasPrefix("https://127.0.0.1:\(port)/pair?t="), link)

        // curl trusting the authority that signed the certificate: the page, and pairing by code as the page does.
        let base = "https://127.0.0.1:\(port)"
        let page = try curl(["--cacert", tls + "/ca.crt", base + "/"])
        XCTAssertEqual(page.status, 0, page.output)
        XCTAssertTrue(page.output.hasPrefix("HTTP/1.1 200"), page.output)
        XCTAssertTrue(page.output.contains("<!doctype html>"), String(page.output.prefix(300)))
        let paired = try curl([
            "--cacert", tls + "/ca.crt", "-H", "Content-Type: application/json",
            "--data", #"{"code":"\#(offer["code"] as? String ?? "")","name":"Anna's phone"}"#, base + "/api/v1/pair",
        ])
        XCTAssertTrue(paired.output.hasPrefix("HTTP/1.1 200"), paired.output)
        let cookie = paired.output.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
        XCTAssertTrue(cookie.contains("cyclelog=") && cookie.hasSuffix("; Secure"), String(cookie))
        // Not with another authority, and not in plain HTTP on the same port.
        let stranger = try curl(["--cacert", tls + "/other-ca.crt", base + "/"])
        XCTAssertEqual(stranger.status, 60, "curl: the certificate cannot be authenticated: \(stranger.output)")
        let plain = try curl(["http://127.0.0.1:\(port)/"])
        XCTAssertNotEqual(plain.status, 0, plain.output)
        XCTAssertFalse(plain.output.contains("HTTP/1.1 200"), plain.output)

        // A key that is not there is named, and nothing is served.
        let broken = try Cyclelog(
            ["--listen", "127.0.0.1:0", "--tls-cert", tls + "/server.crt", "--tls-key", tls + "/missing.key"],
            bus: bus, binary: "cyclelog-mirror")
        XCTAssertEqual(broken.wait(seconds: 20), 1, broken.output)
        XCTAssertTrue(broken.output.contains("cannot read the TLS private key \(tls)/missing.key"), broken.output)
        let half = try Cyclelog(["--tls-cert", tls + "/server.crt"], bus: bus, binary: "cyclelog-mirror")
        XCTAssertEqual(half.wait(seconds: 20), 64, half.output)
    }

    /// The page over HTTPS in headless Chromium trusting the authority that signed the mirror's certificate
    /// (Tests/MirrorPage/tls_page_check.py): a secure page, so it may keep the phone's screen on; the device cookie
    /// out of scripts' reach and sent over TLS only; a Start tap and the live power carried over HTTPS. Up to the
    /// ride shown running, on a slow network (each answer 2 s late), where opening the stream takes longer than the
    /// 1.5 s after which the page tries again: the attempt still opening is kept, so the stream opens (it never did
    /// when each attempt was given up, as under a loaded machine's slow TLS). A browser that does not trust the
    /// authority gets no page. The screenshot is kept in `.build/artefacts/mirror`.
    func testOverTLSThePageIsSecureAndFollowsTheRideInABrowser() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("tls.sqlite").path
        let record = try await waitingRecorder(standIn, database: database)
        let tls = standIn.bus.folder.appendingPathComponent("tls").path
        try TestCertificates.make(in: tls)
        let (mirror, _) = try await startMirror(
            bus: standIn.bus, listen: "127.0.0.1:0",
            extra: ["--tls-cert", tls + "/server.crt", "--tls-key", tls + "/server.key"])
        defer {
            mirror.signal(SIGTERM)
            record.signal(SIGTERM)
        }
        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "handlebars", "--json"], standIn.bus).jsonObject["url"] as? String)
        let (report, output) = try pageCheck(
            "tls_page_check.py", [url, tls + "/ca.crt", Self.artefacts], in: standIn.bus.folder, seconds: 120)

        XCTAssertTrue((report["location"] as? String ?? "").hasPrefix("https://127.0.0.1:"), output)
        XCTAssertEqual(report["secureContext"] as? Bool, true, "Chromium did not take the page for a secure one")
        XCTAssertEqual(report["wakeLockOffered"] as? Bool, true, output)
        XCTAssertFalse((report["text"] as? String ?? "").contains("TLS"), "the page spoke of TLS missing: \(output)")
        let cookies = report["cookies"] as? [[String: Any]] ?? []
        XCTAssertEqual(cookies.count, 1, output)
        XCTAssertEqual(cookies.first?["name"] as? String, "cyclelog")
        XCTAssertEqual(cookies.first?["secure"] as? Bool, true)
        XCTAssertEqual(cookies.first?["httpOnly"] as? Bool, true)
        XCTAssertEqual(cookies.first?["sameSite"] as? String, "Strict")
        XCTAssertEqual(report["scriptSeesCookie"] as? Bool, false)
        XCTAssertEqual(report["status"] as? Int, 200, output)
        // What the page painted is what the power meter sent.
        let shown = try XCTUnwrap(report["powersShown"] as? [Int], output)
        XCTAssertGreaterThanOrEqual(shown.count, 2, output)
        try assertSent(shown, by: standIn)
        XCTAssertEqual(report["strangerError"] as? String, "net::ERR_CERT_AUTHORITY_INVALID", output)
    }

    /// Where the Chromium checks keep their screenshots.
    static let artefacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/artefacts/mirror").path

    /// Runs one of `Tests/MirrorPage`'s Chromium scripts; its report (the JSON of its last line) and its output.
    private func pageCheck(_ script: String, _ arguments: [String], in folder: URL, seconds: Double) throws
        -> (report: [String: Any], output: String)
    {
        let path = StandIn.testsFolder.appendingPathComponent("MirrorPage/" + script).path
        let outputPath = folder.appendingPathComponent(script + ".out").path
        let check = try ChildProcess(["/usr/bin/env", "python3", path] + arguments, outputPath: outputPath)
        XCTAssertEqual(
            check.wait(seconds: seconds), 0, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
        let output = try String(contentsOfFile: outputPath, encoding: .utf8)
        return (try XCTUnwrap(output.split(separator: "\n").last.map { String($0).jsonObject }, output), output)
    }

    /// Checks that the powers a page showed, each change in order, are a run of what the stand-in's power meter
    /// sent (bytes 2–3 of each cycling power measurement, GATT specification supplement 3.65): values may be
    /// painted over before the page looks, never invented or reordered.
    private func assertSent(_ shown: [Int], by standIn: StandIn, line: UInt = #line) throws {
        let sent = try standIn.sent().map { Int(Int16(bitPattern: UInt16($0.value[2]) | UInt16($0.value[3]) << 8)) }
        var next = sent.startIndex
        for value in shown {
            guard let found = sent[next...].firstIndex(of: value) else {
                XCTFail("the page showed \(value) W, which was not sent after \(shown): sent \(sent)", line: line)
                return
            }
            next = found + 1
        }
    }

    /// `curl` with the response's headers before its body; its exit status (0, or curl's error number).
    private func curl(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        let output = NSTemporaryDirectory() + "curl-\(UUID().uuidString)"
        defer { unlink(output) }
        let child = try ChildProcess(
            ["/usr/bin/curl", "--silent", "--show-error", "--max-time", "20", "--include"] + arguments,
            outputPath: output)
        let status = child.wait(seconds: 30)
        return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    // MARK: Hostile requests

    /// A read-only device's numbers meet arithmetic only after they were held to the ride: the requests that
    /// ended the mirror with SIGILL (an overflow) or had it draw ticks across 10^11 s answer at once, and a run of
    /// requests with random and extreme values on every route leaves it alive, answering and within its memory.
    func testNumbersFromTheNetworkNeitherCrashNorExhaustTheMirror() async throws {
        let database = try temporaryDatabase()
        let ride = fixturesFolder.appendingPathComponent("rides/sweatpy_6449921903_ACTIVITY.journal").path
        XCTAssertEqual(try cyclelog(["replay", "--db", database, ride]).status, 0)
        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--db", database])
        defer { mirror.signal(SIGTERM) }
        let paired = try runMirror(["pair", "--name", "tv", "--types", "read", "--token", "--json"], bus)
        let token = try XCTUnwrap(paired.jsonObject["token"] as? String)
        let elapsed = try XCTUnwrap(try get(port, "/api/v1/workouts/1", token: token).json["elapsedSeconds"] as? Double)

        let (maximum, minimum) = (Int.max, Int.min)
        for (from, to) in [(maximum, 0), (0, maximum), (minimum, maximum), (0, 100_000_000_000), (maximum, maximum)] {
            let started = Date()
            let chart = try get(port, "/api/v1/workouts/1/chart.svg?from=\(from)&to=\(to)", token: token)
            XCTAssertEqual(chart.status, 200, "from=\(from)&to=\(to): \(chart.body.prefix(200))")
            XCTAssertLessThan(Date().timeIntervalSince(started), 5, "from=\(from)&to=\(to) took too long")
            XCTAssertTrue(XMLParser(data: Data(chart.bytes)).parse(), "from=\(from)&to=\(to): not XML")
            // The zoom drawn is a part of the ride: its ends lie within the ride's seconds.
            let shownFrom = try XCTUnwrap(Double(chart.body.between("data-from=\"", "\"") ?? ""))
            let shownTo = try XCTUnwrap(Double(chart.body.between("data-to=\"", "\"") ?? ""))
            XCTAssertTrue(0 <= shownFrom && shownFrom < shownTo && shownTo <= elapsed.rounded(.up) + 1, chart.body)
            let range = try get(port, "/api/v1/workouts/1/range?from=\(from)&to=\(to)", token: token)
            XCTAssertEqual(range.status, 200, range.body)
        }
        XCTAssertTrue(mirror.isRunning, mirror.output)

        // Every route, with values a neighbour might send: extremes, non-numbers, floats, huge digit strings.
        let values = [
            "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-1", "0", "1", "100000000000",
            "1e309", "NaN", "-0", "", "abc", "%00", "%FF%FE", String(repeating: "9", count: 400), "0x10", "3600",
            "2024-05-01", "2024-13-45", "9999-12-31T23:59:59Z", "42d", "0w", "99999999999999999999w",
        ]
        let paths = [
            "/api/v1/workouts/1/chart.svg?from=A&to=B", "/api/v1/workouts/1/range?from=A&to=B",
            "/api/v1/workouts?since=A&until=B&q=A", "/api/v1/workouts?limit=A&after=B", "/api/v1/workouts/A",
            "/api/v1/workouts/A/samples",
            "/api/v1/workouts/1/wprime.svg?from=A", "/api/v1/weekly-load.svg?weeks=A", "/api/v1/weekly-load?weeks=B",
            "/api/v1/ftp?window=A", "/api/v1/power-curve?window=B", "/api/v1/power-curve.svg?window=A",
            "/api/v1/workouts/A/export.fit", "/api/v1/workouts/1/sparkline.svg?from=A", "/api/v1/stream?lastEventId=A",
        ]
        let requests = Int(ProcessInfo.processInfo.environment["CYCLELOG_MIRROR_FUZZ_REQUESTS"] ?? "") ?? 1500
        var random = SplitMix64(seed: 38)
        func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }
        var highestKilobytes = 0
        for index in 0..<requests {
            var path = pick(paths)
            path = path.replacingOccurrences(of: "A", with: pick(values)).replacingOccurrences(
                of: "B", with: pick(values))
            if path.hasPrefix("/api/v1/stream") {
                // A stream stays open: its answer's head is all that matters here.
                let stream = try HTTPConnection(port: port)
                try stream.send("GET", path, host: "127.0.0.1:\(port)", headers: ["Authorization": "Bearer \(token)"])
                XCTAssertEqual(try stream.readHead(seconds: 5).status, 200, path)
                continue
            }
            let answer = try get(port, path, token: token)
            XCTAssertTrue(
                [200, 400, 404, 409].contains(answer.status), "\(path): \(answer.status) \(answer.body.prefix(200))")
            if index % 100 == 0 { highestKilobytes = max(highestKilobytes, residentKilobytes(mirror.process.pid)) }
        }
        XCTAssertTrue(mirror.isRunning, mirror.output)
        XCTAssertEqual(try get(port, "/api/v1/workouts/1", token: token).status, 200)
        // The mirror's figure in `make bench` is about 36 MB while it serves the history; a request that grew it
        // without bound would pass this many times over.
        XCTAssertLessThan(highestKilobytes, 200_000, "the mirror grew to \(highestKilobytes) kB")
        print("MirrorTests: \(requests) fuzzed requests; the mirror's highest resident size \(highestKilobytes) kB")
    }

    /// A stranger's bare connections (1 100 from one neighbour, more than the 1 024 descriptors a service gets by
    /// default) and a slowloris (headers a byte at a time) beside a paired screen: the screen keeps being answered
    /// at once, the neighbour holds at most 32 connections, every idle or dribbling one is closed within the idle
    /// timeout, and a body that never comes is answered 408.
    func testIdleAndSlowConnectionsDoNotLockThePairedScreenOut() async throws {
        let bus = try PrivateBus()
        // The mirror starts with the descriptors this process has (1 024 soft, as a service gets); only then does
        // the test raise its own, for its 1 100 sockets.
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0")
        defer { mirror.signal(SIGTERM) }
        var limit = rlimit()
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let paired = try runMirror(["pair", "--name", "screen", "--types", "read", "--token", "--json"], bus)
        let token = try XCTUnwrap(paired.jsonObject["token"] as? String)

        var idle: [HTTPConnection] = []
        for _ in 0..<1100 { idle.append(try HTTPConnection(port: port, from: "127.0.0.2")) }
        let slow = try (0..<8).map { _ in try HTTPConnection(port: port, from: "127.0.0.3") }
        let header = Array("GET /api/v1/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Padding: ".utf8)
        let body = try HTTPConnection(port: port, from: "127.0.0.4")
        body.sendRaw(
            Array(
                "POST /api/v1/pair HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
                    .utf8))

        let started = Date()
        var slowest = 0.0, answered = 0, byte = 0
        while Date().timeIntervalSince(started) < 18 {
            for connection in slow { connection.sendRaw([header[byte % header.count]]) }
            byte += 1
            let asked = Date()
            XCTAssertEqual(try get(port, "/api/v1/status", token: token).status, 503, "no recorder: 503, promptly")
            slowest = max(slowest, Date().timeIntervalSince(asked))
            answered += 1
            try await Task.sleep(for: .milliseconds(250))
        }
        XCTAssertLessThan(slowest, 2, "the paired screen waited \(slowest) s beside the flood")
        XCTAssertGreaterThan(answered, 40)
        // Beyond 32 the neighbour's connections were closed at once; the rest within the 15-s idle timeout.
        let open = idle.filter { !$0.closes(within: 0.01) }.count
        XCTAssertEqual(open, 0, "\(open) idle connections still open after 18 s")
        XCTAssertEqual(slow.filter { !$0.closes(within: 0.01) }.count, 0, "a slowloris connection is still open")
        XCTAssertTrue(body.readToEnd(seconds: 1).contains(" 408 "), "a body that never came")
        XCTAssertTrue(mirror.isRunning, mirror.output)
    }

    /// A screen that went away gives its place to the next at once, not after the next keep-alive (15 s).
    func testAClosedStreamGivesItsPlaceAtOnce() async throws {
        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--max-clients", "1"])
        defer { mirror.signal(SIGTERM) }
        let paired = try runMirror(["pair", "--name", "phone", "--token", "--json"], bus)
        let token = try XCTUnwrap(paired.jsonObject["token"] as? String)
        var first: HTTPConnection? = try openStream(port, token: token)
        XCTAssertEqual(first?.nextEvent(seconds: 5)?.event, "snapshot")
        first = nil  // the socket closes
        let started = Date()
        let second = try openStream(port, token: token)
        XCTAssertEqual(second.nextEvent(seconds: 5)?.event, "snapshot")
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
        _ = first
    }

    /// A page whose stream the mirror refused (its one place held by another screen) says it is reconnecting and
    /// follows the mirror once the place is free, without a reload: a browser never asks again by itself for a
    /// stream answered with an error; revoked, it offers to pair again (Tests/MirrorPage/refused_stream_check.py).
    func testAPageRefusedItsStreamAsksAgainOnceAPlaceIsFree() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            XCTFail("Chromium is missing (scripts/setup.sh installs it)")
            return
        }
        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0", extra: ["--max-clients", "1"])
        defer { mirror.signal(SIGTERM) }
        let holder = try runMirror(["pair", "--name", "desk", "--token", "--json"], bus)
        let token = try XCTUnwrap(holder.jsonObject["token"] as? String)
        let url = try XCTUnwrap(
            try runMirror(["pair", "--name", "handlebars", "--json"], bus).jsonObject["url"] as? String)
        let (report, output) = try pageCheck(
            "refused_stream_check.py", [url, String(port), token, String(mirror.process.pid)], in: bus.folder,
            seconds: 90)
        XCTAssertEqual(report["downShownWhileRefused"] as? Bool, true, output)
        XCTAssertEqual(report["stillDownWhileHeld"] as? Bool, true, output)
        // The page asks every 3 s: it follows within one interval and the time to open a stream.
        let seconds = try XCTUnwrap(report["secondsToFollow"] as? Double, output)
        XCTAssertLessThan(seconds, 5, output)
        XCTAssertEqual(report["state"] as? String, "no recorder", output)
        // Revoked, the phone is offered the pairing form (within the stream's retry and the page's 3 s).
        let toPairing = try XCTUnwrap(report["secondsToPairingForm"] as? Double, output)
        XCTAssertLessThan(toPairing, 6, output)
        XCTAssertTrue(mirror.isRunning, mirror.output)
    }

    /// A name a device sends at pairing is outside text: `devices` shows its control characters escaped and the
    /// device's id, by which `revoke` forgets it without anyone typing escape codes.
    func testADevicesNameNeverReachesTheTerminalRaw() async throws {
        let bus = try PrivateBus()
        let (mirror, port) = try await startMirror(bus: bus, listen: "127.0.0.1:0")
        defer { mirror.signal(SIGTERM) }
        let offer = try pairOffer(bus)
        let paired = try HTTPConnection.request(
            port: port, "POST", "/api/v1/pair", headers: ["Content-Type": "application/json"],
            body: #"{"code":"\#(offer.code)","name":"\u001b]0;owned\u0007\u009b2J\u007f"}"#)
        XCTAssertEqual(paired.status, 200, paired.body)
        let listed = try runMirror(["devices"], bus)
        XCTAssertFalse(
            listed.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || (0x7F...0x9F).contains($0.value) },
            listed.debugDescription)
        XCTAssertTrue(listed.contains("\\x1B]0;owned\\x07\\u009B2J\\x7F"), listed)
        let json = try JSONSerialization.jsonObject(with: Data(try runMirror(["devices", "--json"], bus).utf8))
        let id = try XCTUnwrap((json as? [[String: Any]])?.first?["id"] as? String)
        XCTAssertEqual(id.count, 8)
        XCTAssertTrue(listed.hasPrefix(id), listed)
        XCTAssertTrue(try runMirror(["revoke", id], bus).contains("Revoked"))
        XCTAssertTrue(try runMirror(["devices"], bus).contains("No device is paired"))
    }

    /// Where the devices are kept follows `$HOME` (the XDG rule), not the password database's home; and a 404 for
    /// an imported ride's journal names its file, never the folder it was imported from.
    func testTheStateFolderFollowsHomeAndNoAnswerTellsWhereFilesLay() async throws {
        let bus = try PrivateBus()
        let home = bus.folder.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let database = try temporaryDatabase()
        let fit = fixturesFolder.appendingPathComponent("rides/fit/sweatpy_2020-06-01-16-52-40.fit").path
        XCTAssertEqual(try cyclelog(["import", "--db", database, fit]).status, 0)
        let mirror = try Cyclelog(
            ["--listen", "127.0.0.1:0", "--db", database], bus: bus,
            environment: ["HOME": home.path, "XDG_STATE_HOME": "", "STATE_DIRECTORY": ""], binary: "cyclelog-mirror")
        defer { mirror.signal(SIGTERM) }
        var port: Int?
        try await waitFor("the mirror serving", mirror) {
            let line = mirror.output.split(separator: "\n").first { $0.contains("serving http") } ?? ""
            port = Int(
                (line.split(separator: " ").first { $0.hasPrefix("http") } ?? "").split(separator: ":").last ?? "")
            return port != nil
        }
        // Every type of measurement: the journal is served whole or not at all.
        let paired = try runMirror(["pair", "--name", "tv", "--types", "read,hr,intake", "--token", "--json"], bus)
        let token = try XCTUnwrap(paired.jsonObject["token"] as? String)
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: home.path + "/.local/state/cyclelog/mirror-devices.json"),
            "the devices are not kept under $HOME")
        let journal = try get(try XCTUnwrap(port), "/api/v1/workouts/1/export.journal", token: token)
        XCTAssertEqual(journal.status, 404, journal.body)
        XCTAssertTrue(journal.body.contains("sweatpy_2020-06-01-16-52-40.fit"), journal.body)
        XCTAssertFalse(journal.body.contains(fixturesFolder.path), journal.body)
    }

    /// The resident memory of a process, in kB (`VmRSS` of /proc/PID/status).
    private func residentKilobytes(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

extension String {
    /// The text between the first `start` and the `end` after it.
    fileprivate func between(_ start: String, _ end: String) -> String? {
        guard let lower = range(of: start)?.upperBound, let upper = self[lower...].range(of: end)?.lowerBound else {
            return nil
        }
        return String(self[lower..<upper])
    }

    /// The text as a JSON object (empty when it is not one).
    var jsonObject: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(utf8))) as? [String: Any] ?? [:]
    }
}
