import BlueZ
import Capture
import DBus
import Foundation
import LiveRecording
import Recording
import RideJournal
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// A whole live ride against the stand-in: three sensors, the power meter losing its link, the cadence sensor
/// going silent while connected, bluetoothd restarting, and pause / resume / lap / end arriving over D-Bus from
/// another connection. The stored ride must hold every power notification the stand-in sent, and equal a replay
/// of the journal the live run wrote.
final class LiveRecorderTests: XCTestCase {
    func testRideWithDropoutSilenceRestartAndRemoteControl() async throws {
        let standIn = try StandIn(
            sensors: [StandIn.power, StandIn.cadence, StandIn.heartRate],
            events: [
                ["at": 3, "sensor": "C0:11:22:33:44:01", "do": "drop", "seconds": 3],
                ["at": 8, "sensor": "C0:11:22:33:44:02", "do": "silence", "seconds": 8],
                ["at": 18, "do": "restart", "seconds": 1],
            ])
        try await standIn.waitUntilReady()
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        let store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("live.sqlite").path)
        var options = LiveRecorder.Options()
        options.sensors = ["Stages Power L", "c0:11:22:33:44:02", "Polar H10"]
        options.plan = WorkoutPlan(name: "Stand-in ride", location: .indoor)
        let recorder = LiveRecorder(bluez: bluez, store: store, options: options)
        let control = try await DBusConnection.connect(to: .address(standIn.bus.address))
        let exported = try await RecorderControl.export(on: control, recorder: recorder)
        let mirroring = Task { await RecorderControl.serve(exported, for: recorder) }
        defer { mirroring.cancel() }

        // Another program: calls the methods and mirrors the properties.
        let remote = try await DBusConnection.connect(to: .address(standIn.bus.address))
        let changes = try await remote.signals(
            matching: MatchRule(
                sender: RecorderControl.busName, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", path: RecorderControl.path))
        let mirrored = Task {
            var states: [String] = []
            for await signal in changes {
                if let state = signal.body.dropFirst().first?.dictionary?["State"]?.string { states.append(state) }
            }
            return states
        }
        func call(_ method: String) async throws {
            _ = try await remote.call(
                destination: RecorderControl.busName, path: RecorderControl.path,
                interface: RecorderControl.interface, member: method)
        }
        let script = Task {
            try await Task.sleep(for: .seconds(22))
            try await call("Pause")
            do {
                try await call("Pause")
                XCTFail("pausing a paused ride was accepted")
            } catch {
                XCTAssertEqual((error as? DBusError)?.name, RecorderControl.refusedError)
            }
            try await Task.sleep(for: .seconds(1))
            try await call("Resume")
            try await Task.sleep(for: .seconds(1))
            try await call("Lap")
            try await Task.sleep(for: .seconds(2))
            try await call("End")
        }
        let summary = try await recorder.run()
        try await script.value
        let stored = try XCTUnwrap(summary)
        mirrored.cancel()

        // The events are the commands, in order.
        XCTAssertEqual(stored.events.map(\.control.name), ["start", "pause", "resume", "lap", "end"])
        XCTAssertEqual(stored.laps.count, 2)

        // Every power notification the stand-in sent is in the journal, in order, with nothing added.
        let journal = try store.journal(stored.id)
        let storedPower = journal.compactMap { event -> [UInt8]? in
            if case .notification(_, 0x2A63, let value) = event.kind { return value }
            return nil
        }
        let sent = try standIn.sent()
        XCTAssertEqual(storedPower, sent.filter { $0.characteristic == "2a63" }.map(\.value))
        let firstNotification = try XCTUnwrap(sent.first?.time)
        for address in Set(sent.map(\.address)) {
            let storedValues = journal.compactMap { event -> [UInt8]? in
                if case .notification(address, _, let value) = event.kind { return value }
                return nil
            }
            let sentHere = sent.filter { $0.address == address }
            let lost = sentHere.indices.first { $0 >= storedValues.count || storedValues[$0] != sentHere[$0].value }
            XCTAssertEqual(
                storedValues.count, sentHere.count,
                "\(address): the first one not stored in order was sent at "
                    + "\(lost.map { sentHere[$0].time - firstNotification } ?? .nan) s")
        }

        // The link loss is in the journal and in the stored gaps; the power meter came back within 10 s of
        // returning in range (drop at 3 s for 3 s), and again after bluetoothd returned.
        let powerLinks = journal.compactMap { event -> (Int64, Bool)? in
            switch event.kind {
            case .connected("C0:11:22:33:44:01", _): (event.timeMicroseconds, true)
            case .disconnected("C0:11:22:33:44:01"): (event.timeMicroseconds, false)
            default: nil
            }
        }
        XCTAssertEqual(powerLinks.map(\.1), [true, false, true, false, true])
        let back = Double(powerLinks[2].0) / 1e6 - (firstNotification + 6)
        XCTAssertLessThan(back, 10, "reconnected \(back) s after the sensor returned")
        XCTAssertTrue(
            stored.dropouts.contains {
                $0.sensor == "C0:11:22:33:44:01" && $0.reason == "disconnected"
                    && $0.endMicroseconds - $0.startMicroseconds >= 2_500_000
            })
        // The cadence sensor, silent from 8 s to 16 s, was re-subscribed after about 3 s of silence and, still
        // silent, disconnected and connected again by the watchdog before bluetoothd restarted at 18 s.
        let restart = firstNotification + 18
        let cadenceDrops = journal.filter {
            $0.kind == .disconnected(sensor: "C0:11:22:33:44:02") && Double($0.timeMicroseconds) / 1e6 < restart - 0.2
        }
        XCTAssertGreaterThanOrEqual(cadenceDrops.count, 1, "the watchdog cycled the silent sensor's link")
        let silentCadence = sent.filter {
            $0.characteristic == "2a5b" && $0.time > firstNotification + 8.3 && $0.time < firstNotification + 15.7
        }
        XCTAssertTrue(silentCadence.isEmpty)

        // The journal written live replays to the same workout.
        let journalPath = standIn.bus.folder.appendingPathComponent("live.journal").path
        try Journal.text(journal).write(toFile: journalPath, atomically: true, encoding: .utf8)
        let replayed = try Replayer(store: try WorkoutStore()).replay(try CaptureFile.load(journalPath))
        XCTAssertEqual(replayed.summary.json.rendered(pretty: true), stored.json.rendered(pretty: true))

        let states = await mirrored.value
        XCTAssertTrue(states.contains("paused"), "PropertiesChanged mirrored the pause: \(states)")
        let remembered = try store.knownSensors().map(\.address).sorted()
        XCTAssertEqual(remembered, ["C0:11:22:33:44:01", "C0:11:22:33:44:02", "C0:11:22:33:44:03"])
    }

    /// `Start`, `Marker` and `Intake` over D-Bus on a recorder that waits for a start: each wrong argument is
    /// refused with InvalidArgs naming it, a second Start with Refused, and what was accepted is in the ride.
    func testStartMarkerAndIntakeOverDBusNameWhatIsWrong() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        let store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("start.sqlite").path)
        var options = LiveRecorder.Options()
        options.sensors = ["Stages Power L"]
        options.waitForStart = true
        let recorder = LiveRecorder(bluez: bluez, store: store, options: options)
        let control = try await DBusConnection.connect(to: .address(standIn.bus.address))
        let exported = try await RecorderControl.export(on: control, recorder: recorder)
        let serving = Task { await RecorderControl.serve(exported, for: recorder) }
        defer { serving.cancel() }
        let remote = try await DBusConnection.connect(to: .address(standIn.bus.address))
        func call(_ method: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
            try await remote.call(
                destination: RecorderControl.busName, path: RecorderControl.path,
                interface: RecorderControl.interface, member: method, arguments)
        }
        func refusal(_ method: String, _ arguments: [DBusValue]) async -> DBusError? {
            do {
                _ = try await call(method, arguments)
                return nil
            } catch { return error }
        }
        let script = Task {
            for (style, words) in [
                ([("goal", DBusValue.int32(45))], "goal takes a string (s), not i"),
                ([("workout", .string("sweet-spot"))], "workout: structured workouts are not supported yet"),
                ([("preset", .string("hill"))], "no preset 'hill'"),
            ] {
                let error = await refusal("Start", [.properties(style)])
                XCTAssertEqual(error?.name, DBusError.invalidArgumentsName, "\(style)")
                XCTAssertTrue(error?.message.contains(words) == true, error?.message ?? "accepted")
            }
            let noStyle = await refusal("Start", [])
            XCTAssertEqual(noStyle?.name, DBusError.invalidArgumentsName)
            let early = await refusal("Marker", [.string("gel")])
            XCTAssertEqual(early?.name, RecorderControl.refusedError)
            // Started once the power meter streams.
            while await !recorder.status().sensors.contains(where: { $0.state == .streaming }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            let started = try await call("Start", [.properties([("name", .string("Over the bus"))])])
            XCTAssertEqual(started.first?.integer, 1)
            let again = await refusal("Start", [.properties([])])
            XCTAssertEqual(again?.name, RecorderControl.refusedError)
            XCTAssertTrue(again?.message.contains("workout 1 is being recorded") == true, again?.message ?? "")
            for (arguments, words) in [
                ([DBusValue.string("beer"), .double(500), .string("ml")], "kind 'beer' is not water or carbs"),
                ([.string("water"), .double(2), .string("cups")], "unit 'cups' is not one for water: ml, l, oz"),
                ([.string("water"), .double(-250), .string("ml")], "amount: water takes an amount such as 250ml"),
                ([.string("carbs"), .double(30), .string("ml")], "unit 'ml' is not one for carbs: g"),
            ] {
                let error = await refusal("Intake", arguments)
                XCTAssertEqual(error?.name, DBusError.invalidArgumentsName)
                XCTAssertTrue(error?.message.contains(words) == true, error?.message ?? "accepted")
            }
            let empty = await refusal("Marker", [.string("")])
            XCTAssertEqual(empty?.name, DBusError.invalidArgumentsName)
            _ = try await call("Marker", [.string("top of the climb")])
            _ = try await call("Intake", [.string("water"), .double(250), .string("ml")])
            _ = try await call("Intake", [.string("carbs"), .double(30), .string("g")])
            try await Task.sleep(for: .seconds(1))
            _ = try await call("End", [])
            // Back to waiting: a second ride can start.
            while await recorder.status().state != "waiting" { try await Task.sleep(for: .milliseconds(100)) }
            await recorder.stop()
        }
        let last = try await recorder.run()
        try await script.value
        XCTAssertNil(last, "stopped while waiting")
        let ride = try XCTUnwrap(try store.summary(1))
        XCTAssertEqual(ride.plan.name, "Over the bus")
        XCTAssertEqual(ride.events.map(\.control.name), ["start", "marker", "intake", "intake", "end"])
        XCTAssertEqual(ride.waterMillilitres, 250)
    }

    /// A power meter that sends a malformed measurement now and then: the live ride reports it as a replay
    /// does (the status line names the sensor and what is wrong), keeps the good values, and its journal keeps
    /// the bad bytes, so that a replay of it reports the same problems.
    func testAMalformedNotificationDuringALiveRideIsReportedAndTheRestIsKept() async throws {
        let bus = try PrivateBus()
        let journal = bus.folder.appendingPathComponent("malformed.journal").path
        // 200 W with crank data, and every fourth value two octets short of its power field.
        var lines = ["# cyclelog journal 1"]
        for index in 0..<40 {
            let hex = index % 4 == 3 ? "0000" : "2000c800" + String(format: "%02x%02x", index & 0xFF, 0) + "0004"
            lines.append("2024-05-01T08:00:00.000000Z notify C0:11:22:33:44:01 2a63 \(hex)")
        }
        try lines.joined(separator: "\n").write(toFile: journal, atomically: true, encoding: .utf8)
        var meter = StandIn.power
        meter["journal"] = journal
        let standIn = try StandIn(sensors: [meter], bus: bus)
        try await standIn.waitUntilReady()
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        let store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("live.sqlite").path)
        var options = LiveRecorder.Options()
        options.sensors = ["Stages Power L"]
        let recorder = LiveRecorder(bluez: bluez, store: store, options: options)
        // Subscribed before the ride starts; the stream ends when the recorder does.
        let statuses = recorder.statusUpdates.subscribe()
        let messages = Task {
            var seen: [String] = []
            for await status in statuses {
                if let message = status.message, seen.last != message { seen.append(message) }
            }
            return seen
        }
        let ending = Task {
            try await Task.sleep(for: .seconds(6))
            await recorder.control(.end)
        }
        let saved = try await recorder.run()
        try await ending.value
        let summary = try XCTUnwrap(saved)

        let seen = await messages.value
        let reported = seen.filter { $0.hasPrefix("Stages Power L: ") && $0.contains("instantaneousPower") }
        XCTAssertFalse(reported.isEmpty, "the status named the malformed notification: \(seen)")
        XCTAssertTrue(seen.contains { $0.contains("problems in this ride") }, "\(seen)")
        XCTAssertEqual(summary.statistics.maximumPowerWatts, 200)
        let stored = try store.journal(summary.id)
        let short = stored.filter {
            if case .notification(_, 0x2A63, let value) = $0.kind { return value.count == 2 }
            return false
        }
        XCTAssertGreaterThan(short.count, 0, "the journal keeps the malformed values as they came")
        // The stored ride counts them: one problem per malformed value in its journal.
        XCTAssertEqual(summary.problemCount, short.count)
        XCTAssertEqual(try store.summary(summary.id)?.problemCount, short.count)
        let path = standIn.bus.folder.appendingPathComponent("live.journal").path
        try Journal.text(stored).write(toFile: path, atomically: true, encoding: .utf8)
        let replayed = try Replayer(store: try WorkoutStore()).replay(try CaptureFile.load(path))
        XCTAssertTrue(replayed.problems.contains { $0.contains("instantaneousPower") }, "\(replayed.problems)")
        XCTAssertEqual(replayed.summary.contentDigest, summary.contentDigest)
    }
}
