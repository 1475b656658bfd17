import DBus
import Foundation
import LiveRecording
import RecorderInterface
import RideJournal
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// `cyclelog record --wait` with `cyclelog start`, `marker`, `water` and the controls, against the stand-in: a
/// ride armed for the first pedal stroke that ends itself at its goal, a ride from a preset with a marker and
/// water, refusals that name the field, and the recorder waiting again after each ride.
final class StartCommandTests: XCTestCase {
    func testRidesStartOnRequestWithAStyleAndTakeMarkersAndWater() async throws {
        var power = StandIn.power
        power["stillSeconds"] = 8
        let standIn = try StandIn(sensors: [power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("start.sqlite").path
        let record = try await waitingRecorder(standIn, database: database)

        // Waiting: nothing to control, and a wrong style is refused by the field that is wrong.
        try expect(["pause"], status: 1, saying: "waiting for a start (`cyclelog start`)", standIn)
        try expect(["start", "--goal", "45x"], status: 1, saying: "goal '45x' is not a time", standIn)
        try expect(
            ["start", "hill-repeats"], status: 1,
            saying: "no preset 'hill-repeats'; the presets are open, 20min, ramp, endurance-1h", standIn)
        try expect(["start", "--when", "later"], status: 1, saying: "when 'later' is not now or pedalling", standIn)
        try expect(["start", "--end-at-goal"], status: 1, saying: "endAtGoal needs a goal", standIn)
        try expect(["marker", "gel"], status: 1, saying: "waiting for a start", standIn)
        try expect(["water", "9l"], status: 64, saying: "at most 5 l", standIn)

        // Armed while the bike stands: the ride starts at the first pedal stroke and ends itself at its goal.
        try expect(
            ["start", "--when", "pedalling", "--goal", "4s", "--end-at-goal", "--name", "Armed"], status: 0,
            saying: "Armed: the ride starts at the first pedal stroke", standIn)
        try expect(["status"], status: 0, saying: "Armed: the ride starts at the first pedal stroke", standIn)
        try await waitFor("the armed ride to start and end at its goal", record, seconds: 40) {
            record.output.contains("goal reached: saving workout 1")
        }
        try await waitFor("the recorder waiting again", record) {
            try run(["status"], standIn).output.contains("Waiting for a ride")
        }

        // A ride from a preset, with its own name and place, a marker and two drinks.
        try expect(
            ["start", "ramp", "--name", "Ramp Tuesday", "--indoor"], status: 0, saying: "Recording workout 2.", standIn)
        try expect(["start"], status: 1, saying: "workout 2 is being recorded", standIn)
        try expect(["marker", "gel"], status: 0, saying: "", standIn)
        try expect(["water", "0.5l"], status: 0, saying: "", standIn)
        try expect(["water", "12oz"], status: 0, saying: "", standIn)
        // For a rider: the ride in the dashboard's words, no property dump (no D-Bus names, no raw doubles).
        let human = try run(["status"], standIn).output
        XCTAssertTrue(human.hasPrefix("Workout 2 \"Ramp Tuesday\": running, "), human)
        XCTAssertTrue(human.contains("  now        power (3 s) "), human)
        XCTAssertTrue(human.contains("water 854.9 ml"), human)
        XCTAssertTrue(human.contains("  workout    Ramp test: step 1 of "), human)
        XCTAssertFalse(human.contains("PowerWatts") || human.contains("ControlSequence"), human)
        let status = try run(["status", "--json"], standIn).output
        XCTAssertTrue(status.contains("\"Name\": \"Ramp Tuesday\""), status)
        XCTAssertTrue(status.contains("\"CanPause\": true") && status.contains("\"CanStart\": false"), status)
        // 0.5 l + 12 US fluid ounces (12 × 29.5735 ml = 354.88 ml, kept to 0.1 ml).
        XCTAssertTrue(status.contains("\"WaterMillilitres\": 854.9"), status)
        // The ramp preset rides the guided ramp test: its warm-up at 100 W first.
        XCTAssertTrue(
            status.contains("\"WorkoutPlanId\": \"ramp-test\"") && status.contains("\"TargetPowerWatts\": 100.0"),
            status)
        XCTAssertTrue(
            status.contains(
                "{\"id\": \"ramp\", \"title\": \"Ramp test\", \"style\": {\"preset\": \"ramp\", \"test\": \"ramp\", "
                    + "\"workout\": \"ramp-test\"}}"),
            status)
        try await rideOn(standIn, record)
        try expect(["end", "--now"], status: 0, saying: "", standIn)
        try await waitFor("the recorder waiting again", record) {
            try run(["status"], standIn).output.contains("Waiting for a ride")
        }
        record.signal(SIGTERM)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        XCTAssertTrue(record.output.contains("Stopped while waiting for a ride."), record.output)

        let store = try WorkoutStore(path: database)
        XCTAssertEqual(try store.list().map(\.status), [.complete, .complete])
        // The armed ride: opened with at most the 3 s of standing before the first pedal stroke, and saved once
        // 4 s of moving time were reached (by the recorder's half-second flush, so within about 2 s more).
        let armed = try store.journal(1)
        XCTAssertEqual(controls(armed), ["start", "end"])
        let still: [UInt8] = [0, 0, 0, 0]
        let opening = powerValues(armed).prefix { $0 == still }
        XCTAssertLessThanOrEqual(opening.count, 3 * 4 + 1, "at most 3 s of the 4 Hz standing before pedalling")
        XCTAssertGreaterThan(opening.count, 0, "armed while the bike stood")
        let firstPedal = try standIn.sent().first { $0.value != still }?.value
        XCTAssertEqual(powerValues(armed).first { $0 != still }, firstPedal, "the ride opens with the first stroke")
        let first = try XCTUnwrap(try store.summary(1))
        XCTAssertEqual(first.plan.goal, .timeSeconds(4))
        XCTAssertEqual(first.plan.name, "Armed")
        XCTAssertGreaterThanOrEqual(first.statistics.movingSeconds, 4)
        XCTAssertLessThan(first.statistics.movingSeconds, 4 + 3 + 2.5)

        let ramp = try XCTUnwrap(try store.summary(2))
        XCTAssertEqual(ramp.plan.preset, "ramp")
        XCTAssertEqual(ramp.plan.fitnessTest, .ramp)
        XCTAssertEqual(ramp.plan.location, .indoor)
        XCTAssertEqual(controls(try store.journal(2)), ["start", "marker", "intake", "intake", "end"])
        XCTAssertEqual(ramp.waterMillilitres, 854.9)
        let lines = Journal.text(try store.journal(2)).split(separator: "\n")
        XCTAssertTrue(
            lines.contains {
                $0.hasSuffix(" start preset=ramp indoor sync=\(ramp.syncIdentifier) test=ramp name=Ramp Tuesday")
            }, "\(lines.prefix(3))")
        XCTAssertTrue(lines.contains { $0.hasSuffix(" intake water 500ml") })
        XCTAssertTrue(lines.contains { $0.hasSuffix(" intake water 354.9ml") })

        let shown = try run(["show", "2", "--db", database], standIn).output
        XCTAssertTrue(shown.contains("started as   ramp"), shown)
        XCTAssertTrue(shown.contains("  gel"), shown)
        XCTAssertTrue(shown.contains("water        854.9 ml in all"), shown)

        // FIT has no hydration message: the marker and each drink are user_marker events, read by Garmin's SDK at
        // their times (the FIT clock counts whole seconds).
        let fitPath = standIn.bus.folder.appendingPathComponent("ramp.fit").path
        try expect(["export", "2", "--db", database, "-o", fitPath], status: 0, saying: "", standIn)
        let fitEvents = try XCTUnwrap(readExport("fit", fitPath)["events"] as? [[String: Any]])
        let markers = fitEvents.filter { $0["event"] as? String == "user_marker" }
        XCTAssertEqual(markers.map { $0["event_type"] as? String }, ["marker", "marker", "marker"], "\(fitEvents)")
        let expectedTimes = ramp.events.filter { $0.control.name == "marker" || $0.intake != nil }.map {
            Double($0.timeMicroseconds / 1_000_000 - 631_065_600)
        }
        XCTAssertEqual(markers.compactMap { ($0["timestamp"] as? NSNumber)?.doubleValue }, expectedTimes)
    }

    /// A phone's Lap whose answer was lost, retried after the recorder was killed and started again: `recover`
    /// saves the cut-short ride with its one lap, and the retry — expecting where that ride stood — is Stale on
    /// the new ride, which gets no lap.
    func testAControlRetriedAfterARestartAndRecoverIsStale() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("restart.sqlite").path
        let arguments = ["record", "--wait", "--plain", "--sensor", "Stages Power L", "--db", database]
        let phone = try await DBusConnection.connect(to: .address(standIn.bus.address))
        func control(
            _ id: String, _ command: String, expect: UInt64 = 0, _ args: [(String, DBusValue)] = []
        ) async throws(DBusError) -> UInt64 {
            let reply = try await phone.call(
                destination: RecorderControl.busName, path: RecorderControl.path, interface: RecorderControl.interface,
                member: "Control", [.string(id), .string(command), .uint64(expect), .properties(args)])
            guard case .uint64(let sequence)? = reply.dropFirst().first else { return 0 }
            return sequence
        }
        func streamingRecorder() async throws -> Cyclelog {
            let record = try Cyclelog(arguments, standIn: standIn)
            try await waitFor("the meter streaming to the recorder", record) {
                try run(["status", "--json"], standIn).output.contains("\"state\": \"streaming\"")
            }
            return record
        }

        let first = try await streamingRecorder()
        let started = try await control("phone-1", "start")
        XCTAssertEqual(started, 1 << 32 + 1)
        let lapped = try await control("phone-2", "lap", expect: started)
        XCTAssertEqual(lapped, started + 1)
        try await waitFor("the lap in the stored journal", first) {
            let journal = try? WorkoutStore(path: database, access: .read).journal(1)
            return journal.map { controls($0).contains("lap") } ?? false
        }
        first.signal(SIGKILL)
        _ = first.wait(seconds: 20)
        let recovered = try run(["recover", "--db", database], standIn)
        XCTAssertEqual(recovered.status, 0, recovered.output)
        XCTAssertTrue(recovered.output.contains("Recovered workout 1"), recovered.output)

        let second = try await streamingRecorder()
        let restarted = try await control("phone-3", "start")
        XCTAssertEqual(restarted, 2 << 32 + 1)
        do {
            _ = try await control("phone-2", "lap", expect: started)
            XCTFail("the retried lap was applied to the new ride")
        } catch {
            XCTAssertEqual(error.name, RecorderControl.staleError, error.message)
        }
        _ = try await control("phone-4", "end", [("now", .boolean(true))])
        try await waitFor("the recorder waiting again", second) {
            try run(["status"], standIn).output.contains("Waiting for a ride")
        }
        second.signal(SIGTERM)
        XCTAssertEqual(second.wait(seconds: 20), 0, second.output)
        let store = try WorkoutStore(path: database)
        XCTAssertEqual(try store.summary(1)?.laps.count, 2, "the cut-short ride kept its lap")
        XCTAssertEqual(controls(try store.journal(2)), ["start", "end"])
    }

    /// `record --auto` takes a start while it waits for pedalling: the bike stands, the ride starts on request,
    /// and after its end the recorder waits for pedalling again.
    func testRecordAutoTakesAStartWhileTheBikeStands() async throws {
        var power = StandIn.power
        power["stillSeconds"] = 1000
        let standIn = try StandIn(sensors: [power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("auto-start.sqlite").path
        try WorkoutStore(path: database).rememberSensors([(address: "C0:11:22:33:44:01", name: nil)], at: 1)
        let record = try Cyclelog(["record", "--auto", "--plain", "--db", database], standIn: standIn)
        try await waitFor("the standing meter streaming to the recorder", record) {
            try run(["status", "--json"], standIn).output.contains("\"state\": \"streaming\"")
        }
        try expect(["start", "--name", "Warm-up"], status: 0, saying: "Recording workout 1.", standIn)
        try await rideOn(standIn, record)
        try expect(["end", "--now"], status: 0, saying: "", standIn)
        try await waitFor("the recorder waiting for pedalling again", record) {
            try run(["status"], standIn).output.contains("Waiting for a ride")
        }
        record.signal(SIGTERM)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        let ride = try XCTUnwrap(try WorkoutStore(path: database).summary(1))
        XCTAssertEqual(ride.plan.name, "Warm-up")
        XCTAssertEqual(ride.statistics.maximumPowerWatts, 0, "the bike stood throughout")
    }

    /// A start's `hub=true` brings the sensor hub up on the recorder's second adapter for that ride alone: the app
    /// there connects, is named in the status and hears the meter's power; once the ride is saved the hub is
    /// withdrawn and the app, still connected to it, let go of. The next ride, started without it, has no hub.
    func testAStartTurnsTheHubOnForItsRideAlone() async throws {
        let app = "00:AA:02:00:00:06"
        let standIn = try StandIn(
            sensors: [StandIn.power], hub: ["app": app, "appName": "Zwift", "appAt": 0, "subscribe": ["2a63"]])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("hub.sqlite").path
        let record = try await waitingRecorder(standIn, database: database)
        // The app's side of the stand-in's log: "<what> [<hex>]".
        func heard() throws -> [String] { try standIn.appLog(app).map { $0.joined(separator: " ") } }
        XCTAssertFalse(try heard().contains("registered"), "the hub is off until a start asks for it")

        try expect(["start", "--hub"], status: 0, saying: "Recording workout 1.", standIn)
        try await waitFor("the app on the hub hearing the meter's power", record) {
            try heard().contains { $0.hasPrefix("hub-2a63 ") }
        }
        try await waitFor("the app in the status", record) {
            try run(["status"], standIn).output.contains("Zwift (\(app)) over Bluetooth")
        }
        try expect(["end", "--now"], status: 0, saying: "", standIn)
        try await waitFor("the hub withdrawn once the ride was saved", record) {
            let heard = try heard()
            return heard.contains("withdrawn") && heard.contains("unregistered")
        }
        try await waitFor("the app gone from the status", record) {
            !(try run(["status"], standIn).output.contains("over Bluetooth"))
        }
        XCTAssertTrue(record.output.contains("the hub stopped with the ride: Zwift (\(app)) lost it"), record.output)

        try expect(["start"], status: 0, saying: "Recording workout 2.", standIn)
        try await rideOn(standIn, record)
        try await endNowAndStop(record, standIn)
        XCTAssertEqual(try heard().filter { $0 == "registered" }.count, 1, "the second ride had no hub")
    }

    /// A recorder with one adapter refuses a start's `hub=true` in words that say what is missing, and starts the
    /// same ride without it; `record` refuses hub options that could never apply.
    func testAStartAskingForAHubTheRecorderCannotRunIsRefused() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("no-hub.sqlite").path
        // Where a hub would advertise means nothing to a recording that neither bridges nor takes starts.
        try expect(
            ["record", "--bridge-adapter", "hci1", "--db", database], status: 64,
            saying: "--bridge-adapter and --bridge-name go with --bridge, or with --wait or --auto", standIn)
        let record = try await waitingRecorder(standIn, database: database)
        try expect(
            ["start", "--hub"], status: 1,
            saying: "hub=true: this recorder has no sensor hub: the hub needs a Bluetooth adapter of its own", standIn)
        try expect(["start"], status: 0, saying: "Recording workout 1.", standIn)
        try await endNowAndStop(record, standIn)
    }

    /// Ends the ride at once, waits for the recorder to wait again and stops it.
    private func endNowAndStop(_ record: Cyclelog, _ standIn: StandIn) async throws {
        try expect(["end", "--now"], status: 0, saying: "", standIn)
        try await waitFor("the recorder waiting again", record) {
            try run(["status"], standIn).output.contains("Waiting for a ride")
        }
        record.signal(SIGTERM)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
    }

    /// A Start with no sensor connected says so with the hint, and the recorder goes on waiting.
    func testAStartWithoutSensorsNamesTheWayToAddThem() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("nosensor.sqlite").path
        let record = try Cyclelog(
            ["record", "--wait", "--plain", "--sensor", "C0:11:22:33:44:99", "--db", database], standIn: standIn)
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        try expect(["start"], status: 1, saying: "no sensor is connected (C0:11:22:33:44:99 searching)", standIn)
        try expect(["start"], status: 1, saying: "`cyclelog sensors add ADDRESS`", standIn)
        record.signal(SIGINT)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        XCTAssertEqual(try WorkoutStore(path: database).list().count, 0)
    }

    /// No recorder on the bus: a start, a marker or a drink exits 2 and says how to start one.
    func testWithoutARecorderStartSaysHowToRunOne() async throws {
        let bus = try PrivateBus()
        for arguments in [["start", "ramp"], ["marker", "top of the climb"], ["water", "250ml"]] {
            let run = try cyclelog(arguments, environment: ["CYCLELOG_CONTROL_BUS": bus.address])
            XCTAssertEqual(run.status, 2, "\(arguments): \(run.errorOutput)")
            XCTAssertTrue(run.errorOutput.contains("start one with `cyclelog record --wait`"), run.errorOutput)
        }
        // No bus at all (outside a desktop session): said so, with where the recorder's object is.
        let noBus = bus.folder.appendingPathComponent("no-such-bus").path
        let run = try cyclelog(["start"], environment: ["CYCLELOG_CONTROL_BUS": "unix:path=" + noBus])
        XCTAssertEqual(run.status, 2, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("so no recorder either"), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("--control-bus system"), run.errorOutput)
        // Every command that asks the recorder says it the same way, with the same status.
        for arguments in [["status"], ["pause"], ["target", "200"], ["skip"]] {
            let other = try cyclelog(arguments, environment: ["CYCLELOG_CONTROL_BUS": "unix:path=" + noBus])
            XCTAssertEqual(other.status, 2, "\(arguments): \(other.errorOutput)")
            XCTAssertEqual(other.errorOutput, run.errorOutput, "\(arguments)")
        }
    }

    // MARK: Helpers

    /// A ride being recorded is shown as being recorded, not as a ride cut short: `list` marks it so, `show` says
    /// to wait rather than to rebuild it, and the JSON says `beingWritten`; once saved it is an ordinary ride.
    func testARideBeingRecordedIsNeverShownAsCutShort() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("live.sqlite").path
        let record = try await waitingRecorder(standIn, database: database)
        try expect(["start", "--name", "Tempo"], status: 0, saying: "", standIn)
        try await waitFor("the ride in the database", record) {
            try WorkoutStore(path: database, access: .read).list().count == 1
        }
        let listed = try run(["list", "--db", database], standIn).output
        XCTAssertTrue(listed.contains("[recording now]"), listed)
        XCTAssertFalse(listed.contains("unfinished") || listed.contains("rebuild"), listed)
        let shown = try run(["show", "last", "--db", database], standIn)
        XCTAssertEqual(shown.status, 1)
        XCTAssertTrue(shown.output.contains("is being recorded"), shown.output)
        XCTAssertFalse(shown.output.contains("rebuild"), shown.output)
        let json = try run(["list", "--json", "--db", database], standIn).output
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        XCTAssertEqual(entries.first?["beingWritten"] as? Bool, true, json)
        XCTAssertEqual(entries.first?["status"] as? String, "recording", json)

        // Some seconds of riding, then the end: the ride is saved.
        try await rideOn(standIn, record, notifications: 12)
        try expect(["end", "--now"], status: 0, saying: "", standIn)
        try await waitFor("the ride saved", record) {
            try WorkoutStore(path: database, access: .read).list().first?.status == .complete
        }
        let saved = try run(["list", "--db", database], standIn).output
        XCTAssertFalse(saved.contains("["), saved)
        XCTAssertEqual(try run(["show", "last", "--db", database], standIn).status, 0)
        record.signal(SIGTERM)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
    }

    private func run(_ arguments: [String], _ standIn: StandIn) throws -> (status: Int32?, output: String) {
        let command = try Cyclelog(arguments, standIn: standIn)
        let status = command.wait(seconds: 20)
        return (status, command.output)
    }

    private func expect(
        _ arguments: [String], status: Int32, saying text: String, _ standIn: StandIn, line: UInt = #line
    ) throws {
        let result = try run(arguments, standIn)
        XCTAssertEqual(result.status, status, "\(arguments): \(result.output)", line: line)
        if !text.isEmpty { XCTAssertTrue(result.output.contains(text), "\(arguments): \(result.output)", line: line) }
    }
}
