import Foundation
import LiveRecording
import RecorderInterface
import TestSupport
import WorkoutStore
import Workouts
import XCTest

/// `cyclelog record --auto`, the service's command, against the stand-in: it waits while the bike stands,
/// starts a workout on pedalling, keeps it through a short dropout, ends it after --end-after without
/// pedalling, starts the next one, and speaks systemd's notify protocol (READY, WATCHDOG, STATUS, STOPPING).
final class AutoRecordTests: XCTestCase {
    func testRidesStartAndEndOnTheirOwnAndSystemdHearsAboutIt() async throws {
        var power = StandIn.power
        power["stillSeconds"] = 3
        power["battery"] = 15
        let address = "C0:11:22:33:44:01"
        // Seconds after the first notification: pedalling from 3 s, a 2 s dropout at 9 s, standing from 16 s for
        // 10 s (longer than --end-after 6s), pedalling again from 26 s.
        let standIn = try StandIn(
            sensors: [power],
            events: [
                ["at": 9, "sensor": address, "do": "drop", "seconds": 2],
                // Standing 14 s: the first ride ends 9 s in (the last cadence held 3 s, then --end-after 6 s), and
                // its save has 5 s to answer before the pedalling that begins the second. (Strokes while a save is
                // answered begin the next ride once it has: RideControllerTests.)
                ["at": 16, "sensor": address, "do": "still", "seconds": 14],
            ])
        try await standIn.waitUntilReady()
        let folder = standIn.bus.folder
        let database = folder.appendingPathComponent("auto.sqlite").path
        try WorkoutStore(path: database).rememberSensors([(address: address, name: "Stages Power L")], at: 1)
        let notifySocket = try DatagramListener(path: folder.appendingPathComponent("notify.socket").path)

        let trigger = folder.appendingPathComponent("ride-saved").path
        let record = try Cyclelog(
            ["record", "--auto", "--end-after", "6s", "--plain", "--db", database, "--sync-trigger", trigger],
            standIn: standIn,
            environment: ["NOTIFY_SOCKET": notifySocket.path, "WATCHDOG_USEC": "2000000"])
        try await waitFor("the recorder's readiness", record) {
            notifySocket.received().contains { $0.hasPrefix("READY=1") }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: trigger), "no ride saved yet")
        // Waiting: nothing to pause yet, and it says why.
        let pause = try Cyclelog(["pause"], standIn: standIn)
        XCTAssertEqual(pause.wait(seconds: 20), 1, pause.output)
        XCTAssertTrue(pause.output.contains("waiting for the rider to pedal"), pause.output)

        try await waitFor("the second ride", record, seconds: 60) {
            _ = notifySocket.received()  // read as systemd does, so the queue never fills
            return record.output.contains("pedalling: recording workout 2")
        }
        // The first ride saved: the sync trigger names it (what cyclelog-sync.path waits for).
        let firstSaved = try String(contentsOfFile: trigger, encoding: .utf8)
        try await rideOn(standIn, record)
        record.signal(SIGTERM)
        XCTAssertEqual(record.wait(seconds: 20), 0, record.output)
        let output = record.output
        XCTAssertTrue(output.contains("pedalling: recording workout 1"), output)
        XCTAssertTrue(output.contains("Stages Power L's battery is at 15 %: charge or replace it soon"), output)
        XCTAssertTrue(output.contains("no pedalling for 6 s: saving workout 1"), output)
        XCTAssertTrue(output.contains("Workout 1") && output.contains("Workout 2"), output)

        let store = try WorkoutStore(path: database)
        XCTAssertEqual(try store.list().map(\.status), [.complete, .complete])
        let identities = try [1, 2].map { try XCTUnwrap(try store.summary(Int64($0))?.syncIdentifier) }
        XCTAssertEqual(firstSaved, "\(identities[0]) 1\n")
        XCTAssertEqual(try String(contentsOfFile: trigger, encoding: .utf8), "\(identities[1]) 1\n")
        let still: [UInt8] = [0, 0, 0, 0]
        let sent = try standIn.sent()
        let firstRide = try store.journal(1)
        let secondRide = try store.journal(2)
        XCTAssertEqual(controls(firstRide), ["start", "end"])
        XCTAssertEqual(controls(secondRide), ["start", "end"])
        // The short dropout stayed inside the first ride.
        XCTAssertEqual(firstRide.filter { if case .disconnected = $0.kind { true } else { false } }.count, 1)
        // Each ride opens with its sensor's description: connection, wheel size, battery.
        for ride in [firstRide, secondRide] {
            let opening = ride.dropFirst().prefix { if case .notification = $0.kind { false } else { true } }
            XCTAssertTrue(opening.contains { if case .connected(address, _) = $0.kind { true } else { false } })
            XCTAssertTrue(opening.contains { if case .read(address, 0x2A19, [15]) = $0.kind { true } else { false } })
        }
        // Every pedalling notification sent from the first one to the standstill is in the first ride, in order,
        // and the first ride holds at most the lookback's 3 s of standing before it.
        let firstPedal = try XCTUnwrap(sent.firstIndex { $0.value != still })
        let standstill = try XCTUnwrap(sent[firstPedal...].firstIndex { $0.value == still })
        let pedalled = sent[firstPedal..<standstill].map(\.value)
        let stored = powerValues(firstRide)
        let storedPedalling = Array(stored.drop { $0 == still }.prefix { $0 != still })
        XCTAssertEqual(storedPedalling, pedalled.filter { pedalledValue in stored.contains(pedalledValue) })
        XCTAssertGreaterThanOrEqual(storedPedalling.count, pedalled.count - 8, "at most the 2 s dropout missing")
        XCTAssertEqual(storedPedalling.first, pedalled.first, "the ride starts with its first pedal stroke")
        XCTAssertLessThanOrEqual(stored.prefix { $0 == still }.count, 13, "at most 3 s at 4 Hz before it")
        // The second ride holds what was sent after the standstill, in order, from no later than the first
        // notification with power (the ride it plays may coast a little first).
        let resumed = try XCTUnwrap(sent[standstill...].firstIndex { $0.value != still })
        let afterStandstill = sent[resumed...].map(\.value)
        let secondStored = Array(powerValues(secondRide).drop { $0 == still })
        // Where it begins in what was sent: the first place the whole run matches (not the first value equal to
        // its first: two notifications in a row may carry the same bytes, and the ride may begin at the second).
        let offset = try XCTUnwrap(
            afterStandstill.indices.first { Array(afterStandstill[$0...].prefix(secondStored.count)) == secondStored },
            "the second ride \(secondStored.prefix(4))… is not a run of what was sent \(afterStandstill.prefix(8))…")
        let firstPower = try XCTUnwrap(afterStandstill.firstIndex { $0[2] != 0 || $0[3] != 0 })
        XCTAssertLessThanOrEqual(offset, firstPower, "the second ride begins after the first notification with power")
        // The first ride ended 6 s after its last second with pedalling. A standing power meter sends no crank
        // data, so the last cadence holds for its 3 s (WorkoutBuilder's hold) after the standstill began; the
        // recorder acts on its next half-second tick.
        let standstillTime = sent[standstill].time
        let firstEnd = try XCTUnwrap(firstRide.last?.timeMicroseconds)
        let hold = Double(WorkoutBuilder.Configuration().holdMicroseconds) / 1e6
        XCTAssertEqual(Double(firstEnd) / 1e6 - standstillTime, hold + 6, accuracy: 1.5)

        let messages = notifySocket.received()
        XCTAssertEqual(messages.first, "READY=1\nSTATUS=waiting for the rider to pedal")
        XCTAssertGreaterThanOrEqual(messages.filter { $0 == "WATCHDOG=1" }.count, 20, "twice a second for 25 s")
        XCTAssertTrue(messages.contains("STATUS=pedalling: recording workout 2"), "\(messages)")
        XCTAssertTrue(messages.contains("STOPPING=1"), "\(messages)")
    }

    func testAutoWithoutRememberedSensorsSaysHowToAddThem() async throws {
        let standIn = try StandIn(sensors: [StandIn.power])
        try await standIn.waitUntilReady()
        let database = standIn.bus.folder.appendingPathComponent("empty.sqlite").path
        let record = try Cyclelog(["record", "--auto", "--db", database], standIn: standIn)
        XCTAssertEqual(record.wait(seconds: 20), 1, record.output)
        XCTAssertTrue(record.output.contains("cyclelog sensors add ADDRESS"), record.output)
    }
}

/// An AF_UNIX datagram socket that keeps what it receives: systemd's side of `$NOTIFY_SOCKET`.
final class DatagramListener: @unchecked Sendable {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        let bound = withUnixSocketAddress(path) { [descriptor] in bind(descriptor, $0, $1) }
        guard descriptor >= 0, bound == 0 else {
            throw NSError(domain: "DatagramListener", code: Int(errno))
        }
    }

    deinit { close(descriptor) }

    private var messages: [String] = []

    /// Everything received so far, one string per datagram.
    func received() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            messages.append(String(decoding: buffer.prefix(count), as: UTF8.self))
        }
        return messages
    }
}

/// Who may control the service's rides: the recorder's group check reads the system's own groups.
final class ControlGroupTests: XCTestCase {
    func testGroupMembershipComesFromTheSystemsGroups() {
        // Every Linux system has uid 0 in group root (its primary group) and nobody outside it.
        XCTAssertTrue(RecorderControl.isMember(0, of: "root"))
        XCTAssertFalse(RecorderControl.isMember(65534, of: "root"))
        XCTAssertFalse(RecorderControl.isMember(0, of: "no-such-group-cyclelog-test"))
    }
}
