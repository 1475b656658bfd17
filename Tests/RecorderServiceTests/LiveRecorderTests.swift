import BlueZ
import Capture
import DBus
import Foundation
import LiveRecording
import RecorderInterface
import RecorderService
import Recording
import RideJournal
import Synchronization
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// The recorder's D-Bus object on the stand-in's bus, called as other programs call it: what a waiting recorder takes
/// and refuses, `Control` from a caller on a link that drops, the `Live` and `Event` signals, a malformed
/// notification during a live ride. What happens to a ride's sensors is `ServedRideTests`'.
final class LiveRecorderTests: XCTestCase {
    /// `Start`, `Marker` and `Intake` over D-Bus on a recorder that waits for a start: each wrong argument is
    /// refused with InvalidArgs naming it, a second Start with Refused, and what was accepted is in the ride.
    func testStartMarkerAndIntakeOverDBusNameWhatIsWrong() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("start.sqlite").path)
        let waiting = try await WaitingRecorder(standIn, store, sensors: ["Stages Power L"])
        defer { waiting.serving.cancel() }
        let recorder = waiting.recorder
        let call = waiting.call, refusal = waiting.refusal
        let script = Task {
            for (style, words) in [
                ([("goal", DBusValue.int32(45))], "goal takes a string (s), not i"),
                ([("workout", .string("Sweet Spot"))], "workout 'Sweet Spot' is not a workout's id"),
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
            // A workout the library does not have is refused whole, in words, and nothing is started.
            let unknown = await refusal("Start", [.properties([("workout", .string("sweet-spot"))])])
            XCTAssertEqual(unknown?.name, RecorderControl.refusedError)
            XCTAssertEqual(
                unknown?.message, "there is no workout 'sweet-spot' in the library; `cyclelog workouts list` shows them"
            )
            let stillWaiting = await recorder.status().state
            XCTAssertEqual(stillWaiting, .waiting)
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
            // Two screens undo one lap at once through `Control`, each with a request id of its own: the lap is
            // undone once and the other is told it was already undone; the first's request sent again is answered
            // as a duplicate.
            _ = try await call("Lap", [])
            let lap = await recorder.status().published
            XCTAssertEqual(lap.undoAction, "lap 2")
            let otherScreen = try await DBusConnection.connect(to: .address(standIn.bus.address))
            @Sendable func undo(_ caller: DBusConnection, _ id: String) async -> Result<[DBusValue], DBusError> {
                do throws(DBusError) {
                    return .success(
                        try await caller.call(
                            destination: RecorderControl.busName, path: RecorderControl.path,
                            interface: RecorderControl.interface, member: "Control",
                            [.string(id), .string("undo"), .uint64(0), .properties([("action", .int64(lap.undoId))])]))
                } catch { return .failure(error) }
            }
            async let fromOne = undo(waiting.remote, "u-1")
            async let fromTheOther = undo(otherScreen, "u-2")
            let atOnce = await [fromOne, fromTheOther]
            let answered = atOnce.compactMap { try? $0.get() }
            let refused = atOnce.compactMap { if case .failure(let error) = $0 { error } else { nil } }
            XCTAssertEqual(answered.count, 1, "\(atOnce)")
            XCTAssertEqual(refused.map(\.name), [RecorderControl.refusedError], "\(atOnce)")
            XCTAssertEqual(refused.map(\.message), ["lap 2 was already undone"], "\(atOnce)")
            let winner = (try? atOnce[0].get()) != nil ? ("u-1", waiting.remote) : ("u-2", otherScreen)
            let sentAgain = try await undo(winner.1, winner.0).get()
            XCTAssertEqual(sentAgain.last, .boolean(true), "a duplicate: \(sentAgain)")
            let laps = await recorder.status().published.lap
            XCTAssertEqual(laps, 1)
            try await Task.sleep(for: .seconds(1))
            // The End waits 30 s to be undone; Undo takes it back and the ride goes on; an End now saves it.
            _ = try await call("End", [])
            // Carried out just after its reply.
            while await recorder.status().state != .ended { try await Task.sleep(for: .milliseconds(100)) }
            let offered = await recorder.status().published
            XCTAssertEqual(offered.undoAction, "end")
            let endId = offered.undoId
            XCTAssertEqual(endId, 5, "after the marker, two drinks and the lap (an undo is not an action of its own)")
            let undone = try await call("Undo", [.int64(0)])
            XCTAssertEqual(undone, [.string("end")])
            let going = await recorder.status().state
            XCTAssertEqual(going, .running)
            let twice = await refusal("Undo", [.int64(endId)])
            XCTAssertEqual(twice?.name, RecorderControl.refusedError)
            XCTAssertEqual(twice?.message, "end was already undone")
            _ = try await call(
                "Control", [.string("e"), .string("end"), .uint64(0), .properties([("now", .boolean(true))])])
            // Back to waiting: a second ride can start.
            while await recorder.status().state != .waiting { try await Task.sleep(for: .milliseconds(100)) }
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

    /// A sensor hub in another process (the mirror's DirCon) over D-Bus: each argument past its limit (an address or
    /// a name over 64 bytes, an empty address, a transport that is not Bluetooth or DirCon, a write to either
    /// control point over 512 bytes) refused with InvalidArgs naming it before the recorder hears of it; what is
    /// within them reaches the status, an SC Control Point write is answered, and the Fitness Machine control
    /// point's answer comes back as a `HubSend` signal.
    func testAHubInAnotherProcessIsHeldToItsLimits() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("hub.sqlite").path)
        let waiting = try await WaitingRecorder(standIn, store, sensors: ["Stages Power L"])
        defer { waiting.serving.cancel() }
        let recorder = waiting.recorder
        let signals = try await waiting.remote.signals(
            matchingAny: RecorderClient.signalRules.filter { $0.member == "HubSend" })
        let app = "192.168.1.20:50123"
        let script = Task {
            for (arguments, words) in [
                (
                    [DBusValue.string(String(repeating: "a", count: 65)), .string(""), .string("DirCon")],
                    "app takes a string of at most 64 bytes"
                ),
                ([.string(""), .string(""), .string("DirCon")], "app is empty"),
                (
                    [.string(app), .string(String(repeating: "n", count: 65)), .string("DirCon")],
                    "name takes a string of at most 64 bytes"
                ),
                ([.string(app), .string(""), .string("Carrier pigeon")], "transport takes Bluetooth or DirCon"),
            ] {
                let error = await waiting.refusal("HubAppJoined", arguments)
                XCTAssertEqual(error?.name, DBusError.invalidArgumentsName, "\(arguments)")
                XCTAssertTrue(error?.message.contains(words) == true, error?.message ?? "accepted")
            }
            let nothing = await recorder.status().published.hubApps
            XCTAssertEqual(nothing, "")
            // No trainer yet: nothing declared to serve.
            let joined = try await waiting.call("HubAppJoined", [.string(app), .string("Zwift"), .string("DirCon")])
            XCTAssertEqual(joined, [.array(elementSignature: "(qay)", [])])
            let listed = await recorder.status().published.hubApps
            XCTAssertEqual(listed, "Zwift (\(app)) over DirCon")
            for method in ["HubAppWrote", "HubAppWroteSpeedAndCadence"] {
                let long = await waiting.refusal(method, [.string(app), .bytes([UInt8](repeating: 0, count: 513))])
                XCTAssertEqual(long?.name, DBusError.invalidArgumentsName, method)
                XCTAssertTrue(
                    long?.message.contains("value takes at most 512 bytes") == true, long?.message ?? "accepted")
            }
            // The SC Control Point (CSCS 1.0 §3.4): Set Cumulative Value answered 10 01 01, a wrong length 10 01 03.
            let set = try await waiting.call("HubAppWroteSpeedAndCadence", [.string(app), .bytes([1, 0, 0, 0, 0])])
            XCTAssertEqual(set, [.bytes([0x10, 0x01, 0x01])])
            let short = try await waiting.call("HubAppWroteSpeedAndCadence", [.string(app), .bytes([1, 0])])
            XCTAssertEqual(short, [.bytes([0x10, 0x01, 0x03])])
            let free = await recorder.status().published.trainerHolder
            XCTAssertEqual(free, "")
            // Request Control (FTMS 4.16.2): the app holds the trainer, answered 80 00 01 on the control point.
            _ = try await waiting.call("HubAppWrote", [.string(app), .bytes([0x00])])
            let held = await recorder.status().published.trainerHolder
            XCTAssertEqual(held, "Zwift (\(app))")
            _ = try await waiting.call("HubAppLeft", [.string(app)])
            let gone = await recorder.status().published
            XCTAssertEqual([gone.hubApps, gone.trainerHolder], ["", ""])
            await recorder.stop()
        }
        _ = try await recorder.run()
        try await script.value
        // The first HubSend on the control point (the power meter's readings go on the bus too while the app is on
        // DirCon), or nothing within 10 s.
        let first = Task { () -> [DBusValue] in
            for await signal in signals where signal.body.first == .uint16(0x2AD9) { return signal.body }
            return []
        }
        let deadline = Task {
            try? await Task.sleep(for: .seconds(10))
            first.cancel()
        }
        let sent = await first.value
        deadline.cancel()
        XCTAssertEqual(sent, [.uint16(0x2AD9), .bytes([0x80, 0x00, 0x01])])
    }

    /// `Control` from a caller on a link that drops: a repeated request id is answered again and applied once, an
    /// expectation of where the ride stands is checked, and one made of an earlier ride never matches the next
    /// (a retried Lap after a restart cannot add a lap to the new ride). The `Live` signals carry exactly what the
    /// sensors sent, one per notification, stamped on arrival.
    func testControlAppliesEachRequestOnceAndLiveCarriesEveryNotification() async throws {
        let standIn = try StandIn(sensors: [StandIn.power, StandIn.heartRate])
        try await standIn.waitUntilReady()
        let store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("control.sqlite").path)
        let listener = try await DBusConnection.connect(to: .address(standIn.bus.address))
        let (received, collected) = try await collect("Live", on: listener)
        let (events, collectedEvents) = try await collect("Event", on: listener)
        defer { collectedEvents.cancel() }
        let first = try await WaitingRecorder(standIn, store, sensors: ["Stages Power L", "Polar H10"])
        func control(
            _ waiting: WaitingRecorder, _ id: String, _ command: String, expect: UInt64 = 0,
            _ args: [(String, DBusValue)] = []
        ) async throws(DBusError) -> ControlReply {
            let reply = try await waiting.call(
                "Control", [.string(id), .string(command), .uint64(expect), .properties(args)])
            guard reply.count == 3, case .string(let state) = reply[0], case .uint64(let sequence) = reply[1],
                case .boolean(let duplicate) = reply[2]
            else { throw DBusError(name: "test.Unexpected", message: "\(reply)") }
            return ControlReply(state, sequence, duplicate)
        }
        let ride1: UInt64 = 1 << 32
        // The Lap below, whose answer its caller never heard: retried after the restart.
        let retried: (id: String, expect: UInt64) = ("r2", ride1 + 1)
        let script = Task {
            while await !first.recorder.status().sensors.allSatisfy({ $0.state == .streaming }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            let started = try await control(first, "r1", "start", [("name", .string("Flaky Wi-Fi"))])
            XCTAssertEqual(started, ControlReply("running", ride1 + 1, false))
            let again = try await control(first, "r1", "start", [("name", .string("Flaky Wi-Fi"))])
            XCTAssertEqual(again, ControlReply("running", ride1 + 1, true))
            let lap = try await control(first, "r2", "lap", expect: ride1 + 1)
            XCTAssertEqual(lap, ControlReply("running", ride1 + 2, false))
            let lapAgain = try await control(first, "r2", "lap", expect: ride1 + 1)
            XCTAssertEqual(lapAgain, ControlReply("running", ride1 + 2, true))
            do {
                _ = try await control(first, "r3", "lap", expect: ride1 + 1)
                XCTFail("a lap expecting an earlier sequence was applied")
            } catch {
                XCTAssertEqual((error as? DBusError)?.name, RecorderControl.staleError, "\(error)")
            }
            do {
                _ = try await control(first, "r4", "jump")
                XCTFail("an unknown command was accepted")
            } catch {
                XCTAssertEqual((error as? DBusError)?.name, DBusError.invalidArgumentsName)
                XCTAssertTrue("\(error)".contains("start, pause, resume, lap, end, cancel, marker, intake"))
            }
            let drink = try await control(
                first, "r5", "intake", [("kind", .string("water")), ("amount", .double(250)), ("unit", .string("ml"))])
            XCTAssertEqual(drink.sequence, ride1 + 3)
            try await Task.sleep(for: .seconds(4))
            let end = try await control(first, "r6", "end", expect: ride1 + 3, [("now", .boolean(true))])
            XCTAssertEqual(end, ControlReply("ended", ride1 + 4, false))
            while await first.recorder.status().state != .waiting { try await Task.sleep(for: .milliseconds(100)) }
            await first.recorder.stop()
        }
        _ = try await first.recorder.run()
        try await script.value
        // One `Event` per control applied, however often it was asked for, with the sequence it left and its own
        // fields (the mirror's stream passes them on).
        for _ in 0..<50 where events.values.count < 4 { try await Task.sleep(for: .milliseconds(100)) }
        let applied = events.values
        XCTAssertEqual(applied.map { $0["kind"]?.string ?? "" }, ["start", "lap", "intake", "end"], "\(applied)")
        XCTAssertEqual(applied.map { $0["controlSequence"]?.unwrapped }, (1...4).map { DBusValue.uint64(ride1 + $0) })
        XCTAssertEqual(applied.map { $0["workoutId"]?.integer }, [1, 1, 1, 1])
        XCTAssertEqual(applied.first?["name"]?.string, "Flaky Wi-Fi")
        XCTAssertEqual(applied.dropFirst(2).first?["intake"]?.string, "water")
        XCTAssertEqual(applied.dropFirst(2).first?["amount"]?.unwrapped, .double(250))
        XCTAssertEqual(applied.dropFirst(2).first?["unit"]?.string, "ml")
        let stamps = applied.compactMap { $0["timeMicros"]?.integer }
        XCTAssertEqual(stamps, stamps.sorted(), "events out of order")
        XCTAssertEqual(stamps.count, 4)
        first.serving.cancel()
        try await first.connection.releaseName(RecorderControl.busName)

        // The recorder restarted (its memory of requests gone) and a new ride began: the retried Lap is stale.
        let second = try await WaitingRecorder(standIn, store, sensors: ["Stages Power L", "Polar H10"])
        defer { second.serving.cancel() }
        let retry = Task {
            while await !second.recorder.status().sensors.allSatisfy({ $0.state == .streaming }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            let started = try await control(second, "s1", "start")
            XCTAssertEqual(started.sequence, 2 << 32 + 1)
            do {
                _ = try await control(second, retried.id, "lap", expect: retried.expect)
                XCTFail("the retried lap was applied to the next ride")
            } catch {
                XCTAssertEqual((error as? DBusError)?.name, RecorderControl.staleError, "\(error)")
            }
            try await Task.sleep(for: .seconds(2))  // signals of the second recorder to compare
            _ = try await control(second, "s2", "end", [("now", .boolean(true))])
            while await second.recorder.status().state != .waiting { try await Task.sleep(for: .milliseconds(100)) }
            await second.recorder.stop()
        }
        _ = try await second.recorder.run()
        try await retry.value
        let sent = try standIn.sent()
        // The listener is a connection of its own: the second recorder's last signals may still be on their way.
        for _ in 0..<100 where !received.sequenceRestarted { try await Task.sleep(for: .milliseconds(50)) }
        collected.cancel()
        let live = received.values

        XCTAssertEqual(try store.summary(1)?.events.map(\.control.name), ["start", "lap", "intake", "end"])
        XCTAssertEqual(try store.summary(2)?.events.map(\.control.name), ["start", "end"])
        // One `seq` per signal, from 1 for each recorder.
        let sequences = live.compactMap { $0["seq"]?.integer }
        XCTAssertEqual(sequences.count, live.count)
        let restart = try XCTUnwrap(sequences.indices.dropFirst().first { sequences[$0] <= sequences[$0 - 1] })
        XCTAssertEqual(Array(sequences[..<restart]), Array(1...Int64(restart)))
        // Each recorder's signals are, per sensor, the notifications that sensor sent while it listened: in
        // order, none missing, each carrying what its notification said — the power field of the Cycling Power
        // Measurement (octets 2–3, sint16, as the GATT Specification Supplement lays it out; negative is 0 W), the heart rate (octet 1 as uint8 when
        // flag bit 0 is clear, else octets 1–2) — and stamped on arrival (CLOCK_REALTIME, the stand-in's clock
        // too) within 0.5 s of its sending. The run of sent notifications is found by its values from the one
        // sent nearest the first arrival (the stand-in logs a send a moment after it, later still when busy).
        for (address, characteristic, key) in [
            ("C0:11:22:33:44:01", "2a63", "powerWatts"), ("C0:11:22:33:44:03", "2a37", "heartRateBPM"),
        ] {
            let sentHere = sent.filter { $0.address == address && $0.characteristic == characteristic }
            func meaning(_ value: [UInt8]) -> Double {
                key == "powerWatts"
                    ? Double(max(0, Int16(bitPattern: UInt16(value[2]) | UInt16(value[3]) << 8)))
                    : Double(value[0] & 1 == 0 ? UInt16(value[1]) : UInt16(value[1]) | UInt16(value[2]) << 8)
            }
            XCTAssertGreaterThan(live.filter { $0["sensor"]?.string == address }.count, 3, address)
            // Alone on its channel, each sensor is its source: its values are the ones a screen shows.
            XCTAssertTrue(
                live.filter { $0["sensor"]?.string == address }.allSatisfy {
                    $0["shown"]?.unwrapped.stringArray?.contains(key) == true
                }, address)
            for run in [live[..<restart], live[restart...]] {
                let received = run.filter { $0["sensor"]?.string == address }
                guard !received.isEmpty else { continue }
                let values = received.map { reading -> Double in
                    if case .double(let value)? = reading[key]?.unwrapped { value } else { .nan }
                }
                let arrivals = received.map { Double($0["arrivalMicros"]?.integer ?? 0) / 1e6 }
                let candidates = sentHere.indices.filter { abs(sentHere[$0].time - arrivals[0]) < 0.5 }
                    .sorted { abs(sentHere[$0].time - arrivals[0]) < abs(sentHere[$1].time - arrivals[0]) }
                let first = candidates.first { start in
                    start + values.count <= sentHere.count
                        && values.indices.allSatisfy { values[$0] == meaning(sentHere[start + $0].value) }
                }
                guard let first else {
                    XCTFail("\(address): the signals \(values) are not a run of the notifications sent")
                    continue
                }
                for index in values.indices {
                    XCTAssertLessThan(
                        abs(arrivals[index] - sentHere[first + index].time), 0.5, "\(address): stamped on arrival")
                }
            }
        }
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
                if let message = status.screen.message, seen.last != message { seen.append(message) }
            }
            return seen
        }
        let ending = Task {
            try await Task.sleep(for: .seconds(6))
            await recorder.control(.end, endsAtOnce: true)
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

/// A recorder that waits for a start (`record --wait`), its control object on the stand-in's bus served, and a
/// caller of its methods on a connection of its own.
private struct WaitingRecorder {
    let recorder: LiveRecorder
    let connection: DBusConnection
    let serving: Task<Void, Never>
    let remote: DBusConnection

    init(_ standIn: StandIn, _ store: WorkoutStore, sensors: [String]) async throws {
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        var options = LiveRecorder.Options()
        options.sensors = sensors
        options.waitForStart = true
        let recorder = LiveRecorder(bluez: bluez, store: store, options: options)
        connection = try await DBusConnection.connect(to: .address(standIn.bus.address))
        let exported = try await RecorderControl.export(on: connection, recorder: recorder)
        serving = Task { await RecorderControl.serve(exported, for: recorder) }
        remote = try await DBusConnection.connect(to: .address(standIn.bus.address))
        self.recorder = recorder
    }

    func call(_ method: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await remote.call(
            destination: RecorderControl.busName, path: RecorderControl.path, interface: RecorderControl.interface,
            member: method, arguments)
    }

    /// The error a call ends with, nil when it succeeds.
    func refusal(_ method: String, _ arguments: [DBusValue]) async -> DBusError? {
        do {
            _ = try await call(method, arguments)
            return nil
        } catch { return error }
    }
}

/// `Control`'s answer: (state, controlSequence, duplicate).
private struct ControlReply: Equatable {
    var state: String
    var sequence: UInt64
    var duplicate: Bool

    init(_ state: String, _ sequence: UInt64, _ duplicate: Bool) {
        self.state = state
        self.sequence = sequence
        self.duplicate = duplicate
    }
}

/// Collects the recorder's signals called `member` (`Live`, `Event`) as they arrive, until the task is cancelled.
private func collect(_ member: String, on listener: DBusConnection) async throws -> (ReceivedSignals, Task<Void, Never>)
{
    let signals = try await listener.signals(
        matching: MatchRule(
            sender: RecorderControl.busName, interface: RecorderControl.interface, member: member,
            path: RecorderControl.path))
    let received = ReceivedSignals()
    let collecting = Task {
        for await signal in signals { received.append(signal.body.first?.dictionary ?? [:]) }
    }
    return (received, collecting)
}

/// The `Live` (or `Event`) signals a listener received so far, shared between its task and the test.
private final class ReceivedSignals: Sendable {
    private let received = Mutex<[[String: DBusValue]]>([])

    var values: [[String: DBusValue]] { received.withLock { $0 } }

    func append(_ signal: [String: DBusValue]) { received.withLock { $0.append(signal) } }

    /// Whether signals of a second recorder came (its `seq` starts again from 1).
    var sequenceRestarted: Bool {
        let sequences = values.compactMap { $0["seq"]?.integer }
        return zip(sequences, sequences.dropFirst()).contains { $1 <= $0 }
    }
}
