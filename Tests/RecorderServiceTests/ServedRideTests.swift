import BlueZ
import Capture
import DBus
import Foundation
import LiveRecording
import RecorderInterface
import RecorderService
import Recording
import RideJournal
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// A live ride served on the stand-in's bus as `cyclelog record` serves one (three sensors, the recorder's object
/// exported), controlled from a second connection through the typed contract (`RecorderClient`, `RecorderCommand`)
/// as the CLI and the mirror control it. Each scenario is one thing that happens to a real ride; each ends with the
/// stored ride holding every notification the sensors sent while it was on, and equal to a replay of its journal.
final class ServedRideTests: XCTestCase {
    static let power = "C0:11:22:33:44:01", cadence = "C0:11:22:33:44:02", heartRate = "C0:11:22:33:44:03"

    /// The power meter out of range for 3 s: its link is lost, connected again within 10 s of its return, and the
    /// gap is a dropout of the ride.
    func testAPowerMeterOutOfRangeIsConnectedAgainAndTheGapIsADropout() async throws {
        let served = try await ServedRide(events: [["at": 3, "sensor": Self.power, "do": "drop", "seconds": 3]])
        let stored = try await served.rideUntilBack(from: Self.power, after: "drop")
        let journal = try served.expectTheJournalHoldsWhatWasSent(stored)
        let links = served.links(of: Self.power, in: journal)
        XCTAssertEqual(links.map(\.connected), [true, false, true])
        guard links.count == 3 else { return }
        let returned = try XCTUnwrap(try served.standIn.sent().first?.time) + 6
        let back = Double(links[2].microseconds) / 1e6 - returned
        XCTAssertLessThan(back, 10, "connected again \(back) s after the sensor returned")
        XCTAssertTrue(
            stored.dropouts.contains {
                $0.sensor == Self.power && $0.reason == "disconnected"
                    && $0.endMicroseconds - $0.startMicroseconds >= 2_500_000
            }, "\(stored.dropouts)")
        try served.expectTheReplayIsTheSameRide(stored, journal)
    }

    /// The cadence sensor connected but silent for 8 s: subscribed again after about 3 s of silence and, still
    /// silent, disconnected and connected again by the watchdog; back when it sends again.
    func testASilentSensorIsSubscribedAgainThenItsLinkIsCycled() async throws {
        let served = try await ServedRide(events: [["at": 3, "sensor": Self.cadence, "do": "silence", "seconds": 8]])
        let stored = try await served.rideUntilBack(from: Self.cadence, after: "silence")
        let journal = try served.expectTheJournalHoldsWhatWasSent(stored)
        let sent = try served.standIn.sent()
        // The silence as the stand-in played it (its own clock, however late a busy machine woke it), 8 s.
        let silent = try XCTUnwrap(
            try served.standIn.events().first { $0.address == Self.cadence && $0.what == "silent" }?.time)
        let silentEnd = silent + 8
        XCTAssertTrue(
            sent.filter { $0.characteristic == "2a5b" && $0.time > silent + 0.1 && $0.time < silentEnd - 0.1 }.isEmpty,
            "the stand-in kept silent")
        let cycled = served.links(of: Self.cadence, in: journal).filter {
            !$0.connected && Double($0.microseconds) / 1e6 < silentEnd
        }
        XCTAssertGreaterThanOrEqual(cycled.count, 1, "the watchdog cycled the silent sensor's link")
        XCTAssertEqual(served.links(of: Self.cadence, in: journal).last?.connected, true)
        try served.expectTheReplayIsTheSameRide(stored, journal)
    }

    /// bluetoothd leaving the bus for a second and coming back: every sensor is connected and subscribed again,
    /// and nothing sent before or after is lost.
    func testBluetoothdRestartingMidRideIsFollowedAndNothingSentIsLost() async throws {
        let served = try await ServedRide(events: [["at": 3, "do": "restart", "seconds": 1]])
        let stored = try await served.ride {
            try await served.waitUntil("bluetoothd is back on the bus") { _ in
                served.standIn.log.components(separatedBy: "standin: on the bus as org.bluez").count - 1 >= 2
            }
            try await served.waitUntilEverySensorStreams()
            try await Task.sleep(for: .seconds(1))
            try await served.client.send(.endNow, requestId: "end")
        }
        let journal = try served.expectTheJournalHoldsWhatWasSent(stored)
        for sensor in [Self.power, Self.cadence, Self.heartRate] {
            XCTAssertEqual(served.links(of: sensor, in: journal).map(\.connected), [true, false, true], sensor)
        }
        try served.expectTheReplayIsTheSameRide(stored, journal)
    }

    /// Pause, resume, lap and end from another program: a second Pause refused by name, each state mirrored by
    /// `PropertiesChanged`, the laps and events in the ride, the sensors remembered.
    func testControlsFromAnotherProgramAreAppliedAndMirrored() async throws {
        let served = try await ServedRide()
        let changes = try await served.client.connection.signals(
            matching: MatchRule(
                sender: RecorderControl.busName, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", path: RecorderControl.path))
        let mirrored = Task {
            var states: [RecorderState] = []
            for await signal in changes {
                let properties = signal.body.dropFirst().first?.dictionary ?? [:]
                if let state = properties["State"]?.string.flatMap(RecorderState.init(rawValue:)) {
                    states.append(state)
                }
            }
            return states
        }
        let client = served.client
        let stored = try await served.ride {
            try await served.waitUntilEverySensorStreams()
            try await client.send(.control(.pause), requestId: "p1")
            do {
                try await client.send(.control(.pause), requestId: "p2")
                XCTFail("pausing a paused ride was accepted")
            } catch {
                XCTAssertEqual((error as? DBusError)?.name, RecorderControl.refusedError, "\(error)")
            }
            try await Task.sleep(for: .seconds(1))
            try await client.send(.control(.resume), requestId: "r1")
            try await Task.sleep(for: .seconds(1))
            try await client.send(.control(.lap), requestId: "l1")
            try await Task.sleep(for: .seconds(2))
            try await client.send(.endNow, requestId: "e1")
        }
        XCTAssertEqual(stored.events.map(\.control.name), ["start", "pause", "resume", "lap", "end"])
        XCTAssertEqual(stored.laps.count, 2)
        let journal = try served.expectTheJournalHoldsWhatWasSent(stored)
        try served.expectTheReplayIsTheSameRide(stored, journal)
        // The listener is a connection of its own: the last changes may still be on their way.
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(50))
            if try served.store.summary(stored.id) != nil { break }
        }
        mirrored.cancel()
        let states = await mirrored.value
        XCTAssertTrue(states.contains(.paused), "PropertiesChanged mirrored the pause: \(states)")
        XCTAssertEqual(
            try served.store.knownSensors().map(\.address).sorted(), [Self.power, Self.cadence, Self.heartRate])
    }
}

/// The stand-in with a power meter, a cadence sensor and a heart-rate strap (and `events` to play), a recorder
/// recording them from the start with its object exported, and a client on a connection of its own.
private struct ServedRide {
    let standIn: StandIn
    let store: WorkoutStore
    let recorder: LiveRecorder
    /// The connection the recorder's object is exported on; kept for as long as the ride.
    let exportedOn: DBusConnection
    let client: RecorderClient

    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    init(events: [[String: Any]] = []) async throws {
        standIn = try StandIn(sensors: [StandIn.power, StandIn.cadence, StandIn.heartRate], events: events)
        try await standIn.waitUntilReady()
        let bluez = try await BlueZClient.connect(to: .address(standIn.bus.address))
        store = try WorkoutStore(path: standIn.bus.folder.appendingPathComponent("live.sqlite").path)
        var options = LiveRecorder.Options()
        options.sensors = ["Stages Power L", "c0:11:22:33:44:02", "Polar H10"]
        options.plan = WorkoutPlan(name: "Stand-in ride", location: .indoor)
        recorder = LiveRecorder(bluez: bluez, store: store, options: options)
        exportedOn = try await DBusConnection.connect(to: .address(standIn.bus.address))
        client = RecorderClient(try await DBusConnection.connect(to: .address(standIn.bus.address)))
    }

    /// Records, serving the recorder's object, while `script` plays; the stored ride once it has ended.
    func ride(_ script: @escaping @Sendable () async throws -> Void) async throws -> WorkoutSummary {
        let exported = try await RecorderControl.export(on: exportedOn, recorder: recorder)
        let serving = Task { [recorder] in await RecorderControl.serve(exported, for: recorder) }
        defer { serving.cancel() }
        let played = Task { try await script() }
        let summary = try await recorder.run()
        try await played.value
        return try XCTUnwrap(summary, "the ride was not saved")
    }

    /// Records until the stand-in has played `event` on `sensor`, the recorder has seen the sensor lost (its link
    /// down, or found silent) and every sensor streams again, then ends the ride: the stored ride.
    func rideUntilBack(from sensor: String, after event: String) async throws -> WorkoutSummary {
        try await ride {
            try await waitUntil("the stand-in plays \(event) on \(sensor)") { _ in
                standIn.log.contains("standin: \(event) \(sensor)")
            }
            try await waitUntil("\(sensor) is lost") { status in
                status.sensors.contains { $0.address == sensor && $0.state != .streaming }
            }
            try await waitUntilEverySensorStreams()
            try await Task.sleep(for: .seconds(1))
            try await client.send(.endNow, requestId: "end")
        }
    }

    /// Waits, at most a minute, until the recorder's status satisfies `condition`.
    func waitUntil(_ what: String, _ condition: @Sendable (LiveStatus) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while await !condition(recorder.status()) {
            guard ContinuousClock.now < deadline else { throw Timeout(description: "not within a minute: \(what)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    func waitUntilEverySensorStreams() async throws {
        try await waitUntil("every sensor streams") { status in
            status.sensors.count == 3 && status.sensors.allSatisfy { $0.state == .streaming }
        }
    }

    /// When `sensor`'s link came up and went down, in the journal's order.
    func links(of sensor: String, in journal: [RideEvent]) -> [(microseconds: Int64, connected: Bool)] {
        journal.compactMap { event in
            switch event.kind {
            case .connected(sensor, _): (event.timeMicroseconds, true)
            case .disconnected(sensor): (event.timeMicroseconds, false)
            default: nil
            }
        }
    }

    /// Every notification the stand-in sent while the ride was on is in the journal, in order, with nothing added.
    /// The stand-in goes on sending after End: one sent as End was applied may arrive after it, so of each sensor's
    /// notifications only those sent in the ride's last half second may be missing, at the end. The journal.
    func expectTheJournalHoldsWhatWasSent(
        _ stored: WorkoutSummary, file: StaticString = #filePath, line: UInt = #line
    ) throws -> [RideEvent] {
        let journal = try store.journal(stored.id)
        let ended = Double(stored.endMicroseconds) / 1e6
        let sent = try standIn.sent()
        let firstNotification = try XCTUnwrap(sent.first?.time)
        for address in Set(sent.map(\.address)) {
            let storedValues = journal.compactMap { event -> [UInt8]? in
                if case .notification(address, _, let value) = event.kind { return value }
                return nil
            }
            let sentHere = sent.filter { $0.address == address }
            let inOrder =
                storedValues.count <= sentHere.count && zip(storedValues, sentHere).allSatisfy { $0 == $1.value }
            XCTAssertTrue(
                inOrder, "\(address): the journal is not the notifications sent, in order", file: file, line: line)
            let missing = sentHere.dropFirst(storedValues.count)
            XCTAssertTrue(
                missing.allSatisfy { $0.time >= ended - 0.5 },
                "\(address): the first one not stored was sent at "
                    + "\(missing.first.map { $0.time - firstNotification } ?? .nan) s, the ride ended at "
                    + "\(ended - firstNotification) s", file: file, line: line)
        }
        return journal
    }

    /// The journal written live replays to the same ride.
    func expectTheReplayIsTheSameRide(
        _ stored: WorkoutSummary, _ journal: [RideEvent], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let path = standIn.bus.folder.appendingPathComponent("live.journal").path
        try Journal.text(journal).write(toFile: path, atomically: true, encoding: .utf8)
        let replayed = try Replayer(store: try WorkoutStore()).replay(try CaptureFile.load(path))
        XCTAssertEqual(
            replayed.summary.json.rendered(pretty: true), stored.json.rendered(pretty: true), file: file, line: line)
    }
}
