import Capture
import DBus
import Foundation
import LiveRecording
import RecorderInterface
import RideJournal
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// The `cyclelog` binary itself against the stand-in, as a rider or a script runs it: `scan --json`, `record`
/// ended by SIGINT and SIGTERM, killed and recovered, controlled from another user, and its dashboard's keys.
final class RecordCommandTests: XCTestCase {
    func testScanListsEveryCyclingSensorAsJSON() async throws {
        let standIn = try StandIn(sensors: [StandIn.power, StandIn.cadence, StandIn.heartRate])
        try await standIn.waitUntilReady()
        let scan = try Cyclelog(["scan", "--timeout", "1.5", "--json"], standIn: standIn)
        XCTAssertEqual(scan.wait(seconds: 30), 0, scan.output)
        let objects = try scan.output.split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        .sorted { ($0["address"] as? String ?? "") < ($1["address"] as? String ?? "") }
        // The values the stand-in advertises (StandIn.swift): names, services plus battery, battery levels.
        XCTAssertEqual(objects.compactMap { $0["name"] as? String }, ["Stages Power L", "Wahoo CADENCE", "Polar H10"])
        XCTAssertEqual(
            objects.compactMap { $0["address"] as? String },
            ["C0:11:22:33:44:01", "C0:11:22:33:44:02", "C0:11:22:33:44:03"])
        XCTAssertEqual(
            objects.compactMap { $0["services"] as? [String] },
            [["1818", "180f"], ["1816", "180f"], ["180d", "180f"]])
        XCTAssertEqual(objects.compactMap { $0["batteryPercent"] as? Int }, [80, 12, 95])
        XCTAssertEqual(objects.compactMap { $0["rssiDBm"] as? Int }, [-60, -60, -60])
        XCTAssertEqual(objects.compactMap { $0["addressType"] as? String }, ["random", "random", "random"])
    }

    func testSigintAndSigtermEndAndSaveTheRide() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        for signal in [SIGINT, SIGTERM] {
            let database = standIn.bus.folder.appendingPathComponent("signal-\(signal).sqlite").path
            let (record, startTime) = try await recordPower(standIn, database, "Stages Power L", notifications: 8)
            // A notification still on its way through the bus when the signal lands may be missed; everything
            // sent half a second before it must be kept. Four more make that at least 8 notifications.
            try await rideOn(standIn, record, notifications: 4)
            let signalTime = Date().timeIntervalSince1970
            record.signal(signal)
            XCTAssertEqual(record.wait(seconds: 20), 0, "signal \(signal):\n\(record.output)")
            XCTAssertTrue(record.output.contains("Workout 1"), record.output)

            let store = try WorkoutStore(path: database)
            XCTAssertEqual(try store.list().map(\.status), [.complete])
            let journal = try store.journal(1)
            XCTAssertEqual(controls(journal), ["start", "end"], "signal \(signal)")
            let sentRecords = try standIn.sent().filter { $0.time > startTime }
            let sent = sentRecords.map(\.value)
            let stored = powerValues(journal)
            let sentWellBeforeSignal = sentRecords.filter { $0.time < signalTime - 0.5 }.count
            XCTAssertGreaterThanOrEqual(sentWellBeforeSignal, 8)
            XCTAssertGreaterThanOrEqual(stored.count, sentWellBeforeSignal, "signal \(signal)")
            XCTAssertEqual(stored, Array(sent.prefix(stored.count)), "what was sent, in order, from the start")
        }
    }

    func testAKilledRecordingIsFoundAndRecovered() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("killed.sqlite").path
        let (record, startTime) = try await recordPower(standIn, database, "C0:11:22:33:44:01", notifications: 12)
        record.signal(SIGKILL)
        let killTime = Date().timeIntervalSince1970
        XCTAssertEqual(record.wait(seconds: 10), 128 + SIGKILL)

        // The next start says so; here it then stops with status 2, as no bus is at that address.
        let next = try Cyclelog(
            ["record", "--plain", "--db", database], standIn: standIn,
            environment: ["CYCLELOG_DBUS_ADDRESS": "unix:path=\(standIn.bus.folder.path)/nothing-here"])
        XCTAssertEqual(next.wait(seconds: 20), 2, next.output)
        XCTAssertTrue(next.output.contains("cannot reach"), next.output)
        XCTAssertTrue(next.output.contains("workout 1 was cut short"), next.output)
        XCTAssertTrue(next.output.contains("cyclelog recover"), next.output)

        let recover = try Cyclelog(["recover", "--db", database], standIn: standIn)
        XCTAssertEqual(recover.wait(seconds: 30), 0, recover.output)
        XCTAssertTrue(recover.output.contains("Recovered workout 1"), recover.output)
        let store = try WorkoutStore(path: database)
        XCTAssertEqual(try store.list().map(\.status), [.complete])
        // Samples are stored within about a second: everything sent up to 1.2 s before the kill survived it.
        let sentBeforeKill = try standIn.sent().filter { $0.time > startTime && $0.time < killTime - 1.2 }
        let stored = powerValues(try store.journal(1))
        XCTAssertGreaterThanOrEqual(stored.count, sentBeforeKill.count)
        XCTAssertEqual(Array(stored.prefix(sentBeforeKill.count)), sentBeforeKill.map(\.value))
        let summary = try XCTUnwrap(try store.summary(1))
        XCTAssertNotNil(summary.statistics.averagePowerWatts)
    }

    func testOnlyTheRecordersOwnUserMayControlIt() async throws {
        guard getuid() == 0 else {
            throw XCTSkip(
                "calling the recorder as another user needs root (runuser); run the tests as root to check it")
        }
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("owner.sqlite").path
        let record = try Cyclelog(
            ["record", "--plain", "--sensor", "Stages Power L", "--db", database], standIn: standIn)
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        // The build folder may sit where another user cannot read it; a copy in the bus folder can be run.
        let copy = standIn.bus.folder.appendingPathComponent("cyclelog").path
        try FileManager.default.copyItem(atPath: try cyclelogBinary().path, toPath: copy)
        // Every method is checked the same way: controls, a start, a marker, a drink.
        for command in [["pause"], ["start", "ramp"], ["marker", "stolen"], ["water", "250ml"]] {
            let log = standIn.bus.folder.appendingPathComponent("stranger-\(command[0]).log")
            let stranger = try ChildProcess(
                [
                    "/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/env",
                    "CYCLELOG_CONTROL_BUS=\(standIn.bus.address)", copy,
                ] + command, outputPath: log.path)
            XCTAssertEqual(stranger.wait(seconds: 20), 1, command[0])
            let refusal = try String(contentsOf: log, encoding: .utf8)
            XCTAssertTrue(refusal.contains("only the user who runs the recorder (uid 0) may control it"), refusal)
        }

        // Each control says what it did, as `start` does.
        for (command, said) in [
            (["lap"], "Lap 2 of workout 1 has started.\n"),
            (["marker", "gel"], "Workout 1 has the marker \"gel\".\n"),
            (["water", "250ml"], "250ml of water logged in workout 1 (250 ml in all).\n"),
        ] {
            let run = try Cyclelog(command, standIn: standIn)
            XCTAssertEqual(run.wait(seconds: 20), 0, run.output)
            XCTAssertEqual(run.output, said)
        }
        let pause = try Cyclelog(["pause"], standIn: standIn)
        XCTAssertEqual(pause.wait(seconds: 20), 0, pause.output)
        XCTAssertTrue(pause.output.hasPrefix("Workout 1 is paused at "), pause.output)
        // An End waits 30 s to be undone: `undo` takes it back, `end --now` saves at once.
        let end = try Cyclelog(["end"], standIn: standIn)
        XCTAssertEqual(end.wait(seconds: 20), 0, end.output)
        XCTAssertEqual(
            end.output,
            "Workout 1 is ended: it is saved in 30 s (`cyclelog undo` goes on with it, `cyclelog end --now` saves it now).\n"
        )
        let undo = try Cyclelog(["undo"], standIn: standIn)
        XCTAssertEqual(undo.wait(seconds: 20), 0, undo.output)
        XCTAssertEqual(undo.output, "Undone: end.\n")
        // Each End says what the recorder made of it, which it applies once its answer has gone: the first leaves
        // the ride ended for 30 s, a second saves it at once.
        let endAgain = try Cyclelog(["end"], standIn: standIn)
        XCTAssertEqual(endAgain.wait(seconds: 20), 0, endAgain.output)
        XCTAssertTrue(endAgain.output.hasPrefix("Workout 1 is ended: it is saved in "), endAgain.output)
        let secondEnd = try Cyclelog(["end"], standIn: standIn)
        XCTAssertEqual(secondEnd.wait(seconds: 20), 0, secondEnd.output)
        XCTAssertEqual(secondEnd.output, "Workout 1 is ended and saved (`cyclelog show last`).\n")
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        XCTAssertEqual(
            controls(try WorkoutStore(path: database).journal(1)),
            ["start", "lap", "marker", "intake", "pause", "end", "undo", "end"])
    }

    /// `cyclelog undo` takes an action back by its number once (of two run at once, the second is told it was
    /// done), and only within its 30 s; a refusal exits 1 with the recorder's words.
    func testUndoTakesAnActionBackOnceAndOnlyWithinItsWindow() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("undo.sqlite").path
        let record = try Cyclelog(
            ["record", "--plain", "--sensor", "Stages Power L", "--db", database], standIn: standIn)
        func status() throws -> [String: Any] {
            let run = try Cyclelog(["status", "--json"], standIn: standIn)
            _ = run.wait(seconds: 20)
            return run.output.jsonObject
        }
        try await waitFor("the ride running", record) { try status()["State"] as? String == "running" }
        let lap = try Cyclelog(["lap"], standIn: standIn)
        XCTAssertEqual(lap.wait(seconds: 20), 0, lap.output)
        let offered = try status()
        XCTAssertEqual(offered["UndoAction"] as? String, "lap 2", "\(offered)")
        let action = try XCTUnwrap(offered["UndoId"] as? Int, "\(offered)")
        // Two screens at once: both undo it by its number, one undoes it and the other is told it was done.
        let undos = try (0..<2).map { _ in try Cyclelog(["undo", "\(action)"], standIn: standIn) }
        let exits = undos.map { $0.wait(seconds: 20) ?? -1 }
        let outputs = undos.map(\.output)
        XCTAssertEqual(exits.sorted(), [0, 1], "\(outputs)")
        XCTAssertEqual(outputs.filter { $0 == "Undone: lap 2.\n" }.count, 1, "\(outputs)")
        XCTAssertEqual(outputs.filter { $0.contains("lap 2 was already undone") }.count, 1, "\(outputs)")
        XCTAssertEqual(try status()["Lap"] as? Int, 1)

        let marker = try Cyclelog(["marker", "bottle"], standIn: standIn)
        XCTAssertEqual(marker.wait(seconds: 20), 0, marker.output)
        try await Task.sleep(for: .seconds(31))
        XCTAssertEqual(try status()["UndoId"] as? Int ?? 0, 0, "offered after its 30 s")
        let late = try Cyclelog(["undo"], standIn: standIn)
        XCTAssertEqual(late.wait(seconds: 20), 1, late.output)
        XCTAssertTrue(late.output.contains("marker “bottle” was 3"), late.output)
        XCTAssertTrue(late.output.contains(" s ago: an action can be undone for 30 s"), late.output)

        let end = try Cyclelog(["end", "--now"], standIn: standIn)
        XCTAssertEqual(end.wait(seconds: 20), 0, end.output)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        let store = try WorkoutStore(path: database)
        XCTAssertEqual(controls(try store.journal(1)), ["start", "lap", "undo", "marker", "end"])
        XCTAssertEqual(try store.summary(1)?.laps.count, 1)
        XCTAssertEqual(try store.summary(1)?.events.map(\.control.name), ["start", "marker", "end"])
    }

    func testDashboardKeysPauseResumeLapAskBeforeCancellingAndEnd() async throws {
        let standIn = try StandIn(sensors: [StandIn.power, StandIn.heartRate])
        try await standIn.waitUntilReady()
        let folder = standIn.bus.folder
        let database = folder.appendingPathComponent("keys.sqlite").path
        let terminal = try Terminal(folder: folder)
        let binary = try cyclelogBinary().path
        try terminal.start(
            "env CYCLELOG_DBUS_ADDRESS=\(standIn.bus.address) CYCLELOG_CONTROL_BUS=\(standIn.bus.address) "
                + "\(binary) record --sensor C0:11:22:33:44:01 --sensor 'Polar H10' --db \(database); "
                + "echo cyclelog-exited-$?; sleep 120")
        try await terminal.waitFor("both sensors streaming, with their battery") {
            $0.contains("Stages Power L") && $0.contains("battery 80 %") && $0.contains("battery 95 %")
                && $0.components(separatedBy: "streaming").count == 3 && $0.contains("running  lap 1")
        }
        let screen = try terminal.screen()
        XCTAssertTrue(screen.contains("power (3 s)"), screen)
        XCTAssertTrue(screen.contains("space pause/resume   l lap   e end and save   u undo   c cancel"), screen)

        try terminal.press("Space")
        try await terminal.waitFor("paused") { $0.contains("paused  lap 1") }
        try terminal.press("Space")
        try await terminal.waitFor("running again") { $0.contains("running  lap 1") }
        try terminal.press("l")
        try await terminal.waitFor("lap 2, which can be undone") {
            $0.contains("running  lap 2") && $0.contains("undo 3: lap 2 (") && $0.contains(" s left, u undoes it)")
        }
        try terminal.press("u")
        try await terminal.waitFor("the lap undone") { $0.contains("running  lap 1") && $0.contains("undone: lap 2") }
        try terminal.press("l")
        try await terminal.waitFor("lap 2 again") { $0.contains("running  lap 2") }
        try terminal.press("c")
        try await terminal.waitFor("the question") { $0.contains("Cancel this ride and discard it? y = yes") }
        try terminal.press("n")
        try await terminal.waitFor("the question gone") { $0.contains("c cancel") && $0.contains("running  lap 2") }
        // The End waits to be undone; a second End saves at once.
        try terminal.press("e")
        try await terminal.waitFor("the End that can be undone") {
            $0.contains("ended") && $0.contains("the ride is saved in ") && $0.contains(": u goes on with it")
        }
        try terminal.press("e")
        try await terminal.waitFor("the summary") { $0.contains("cyclelog-exited-0") }
        XCTAssertTrue(try terminal.screen().contains("Workout 1"))

        let store = try WorkoutStore(path: database)
        XCTAssertEqual(try store.list().map(\.status), [.complete])
        XCTAssertEqual(controls(try store.journal(1)), ["start", "pause", "resume", "lap", "undo", "lap", "end"])
    }

    /// `record --wait` on a terminal: `s` offers the presets by number, `3` starts the ramp test, `m` takes a typed
    /// marker, `w` logs a glass of `--water-step`, `e` saves the ride and the recorder waits again; Ctrl-C stops it.
    func testTheDashboardStartsAPresetAndTakesAMarkerAndWater() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let folder = standIn.bus.folder
        let database = folder.appendingPathComponent("wait-keys.sqlite").path
        let terminal = try Terminal(folder: folder)
        try terminal.start(
            "env CYCLELOG_DBUS_ADDRESS=\(standIn.bus.address) CYCLELOG_CONTROL_BUS=\(standIn.bus.address) "
                + "\(try cyclelogBinary().path) record --wait --water-step 0.33l --sensor C0:11:22:33:44:01 "
                + "--db \(database); echo cyclelog-exited-$?; sleep 120")
        try await terminal.waitFor("waiting, the meter streaming") {
            $0.contains("cyclelog  waiting") && $0.contains("streaming") && $0.contains("s start a ride")
        }
        try terminal.press("s")
        try await terminal.waitFor("the presets by number") {
            $0.contains("Start: 1 Open ride   2 20-minute FTP test   3 Ramp test   4 Endurance 1 h")
        }
        try terminal.press("3")
        try await terminal.waitFor("the ramp test running") { $0.contains("running  lap 1") }
        try terminal.press("m")
        try await terminal.waitFor("the marker prompt") { $0.contains("Marker: _") }
        try terminal.press("gel")
        try await terminal.waitFor("the typed text") { $0.contains("Marker: gel_") }
        try terminal.press("Enter")
        try terminal.press("w")
        try await terminal.waitFor("the glass counted") { $0.contains("water 330 ml") }
        // The workout's key line is wider than the 110 columns: each frame is drawn over the one before all the
        // same, and leaves no line of it behind.
        try await Task.sleep(for: .seconds(2))
        let drawn = try terminal.screen()
        XCTAssertEqual(drawn.components(separatedBy: "cyclelog  workout 1  running").count - 1, 1, drawn)
        try terminal.press("e")
        try terminal.press("e")
        try await terminal.waitFor("the recorder waiting again") { $0.contains("s start a ride") }
        try terminal.press("C-c")
        try await terminal.waitFor("the recorder stopped") { $0.contains("cyclelog-exited-0") }

        let journal = try WorkoutStore(path: database).journal(1)
        XCTAssertEqual(controls(journal), ["start", "marker", "intake", "end"])
        let lines = Journal.text(journal).split(separator: "\n")
        XCTAssertTrue(
            lines.contains { $0.contains(" start preset=ramp sync=") && $0.hasSuffix(" test=ramp") }, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasSuffix(" marker gel") })
        XCTAssertTrue(lines.contains { $0.hasSuffix(" intake water 330ml") })
    }

    // MARK: Helpers

    /// Starts `record --plain` with the power meter (by name or address) and waits until the stand-in has sent it
    /// `notifications` measurements; returns the run and the Unix time just before it started.
    private func recordPower(
        _ standIn: StandIn, _ database: String, _ sensor: String, notifications: Int
    ) async throws -> (Cyclelog, Double) {
        let startTime = Date().timeIntervalSince1970
        let record = try Cyclelog(["record", "--plain", "--sensor", sensor, "--db", database], standIn: standIn)
        try await waitFor("\(notifications) power notifications", record) {
            try standIn.sent().filter { $0.time > startTime }.count >= notifications
        }
        return (record, startTime)
    }
}

/// One run of a built program (`cyclelog`, `cyclelog-mirror`), on a private bus for both BlueZ and control, output
/// in a file.
final class Cyclelog {
    let process: ChildProcess
    let outputPath: String

    /// With `prefix`, the binary is started through that command (e.g. `setpriv` without a capability).
    init(
        _ arguments: [String], bus: PrivateBus, environment: [String: String] = [:], binary: String = "cyclelog",
        prefix: [String] = []
    ) throws {
        outputPath = bus.folder.appendingPathComponent("\(binary)-\(UUID().uuidString).log").path
        var variables = [
            "CYCLELOG_DBUS_ADDRESS": bus.address, "CYCLELOG_CONTROL_BUS": bus.address,
            "CYCLELOG_DB": bus.folder.appendingPathComponent("default.sqlite").path,
        ]
        variables.merge(environment) { $1 }
        process = try ChildProcess(
            prefix + [try builtBinary(binary).path] + arguments, environment: variables, outputPath: outputPath)
    }

    convenience init(
        _ arguments: [String], standIn: StandIn, environment: [String: String] = [:], binary: String = "cyclelog",
        prefix: [String] = []
    ) throws {
        try self.init(arguments, bus: standIn.bus, environment: environment, binary: binary, prefix: prefix)
    }

    var isRunning: Bool { process.isRunning }
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    func signal(_ number: Int32) { process.signal(number) }
    func wait(seconds: Double) -> Int32? { process.wait(seconds: seconds) }
}

/// A terminal for the dashboard: a detached tmux session on its own server socket, read with capture-pane and
/// typed into with send-keys.
private final class Terminal {
    let socket: String
    let folder: URL

    init(folder: URL) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            XCTFail("tmux is missing (scripts/setup.sh installs it)")
            throw CancellationError()
        }
        self.folder = folder
        socket = folder.appendingPathComponent("tmux.socket").path
    }

    deinit {
        _ = try? tmux(["kill-server"])
    }

    func start(_ command: String) throws {
        _ = try tmux(["new-session", "-d", "-x", "110", "-y", "30", command])
    }

    func screen() throws -> String { try tmux(["capture-pane", "-p"]) }

    func press(_ key: String) throws { _ = try tmux(["send-keys", key]) }

    func waitFor(_ what: String, _ condition: (String) -> Bool) async throws {
        var last = ""
        for _ in 0..<150 {
            last = try screen()
            if condition(last) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("the dashboard never showed \(what); the screen:\n\(last)")
        throw CancellationError()
    }

    @discardableResult
    private func tmux(_ arguments: [String]) throws -> String {
        let log = folder.appendingPathComponent("tmux-\(UUID().uuidString).out").path
        let process = try ChildProcess(["/usr/bin/tmux", "-S", socket] + arguments, outputPath: log)
        guard process.wait(seconds: 10) == 0 else {
            throw NSError(
                domain: "tmux", code: 1,
                userInfo: [
                    NSLocalizedDescriptionKey:
                        "tmux \(arguments.first ?? "") failed: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"
                ])
        }
        defer { try? FileManager.default.removeItem(atPath: log) }
        return try String(contentsOfFile: log, encoding: .utf8)
    }
}
