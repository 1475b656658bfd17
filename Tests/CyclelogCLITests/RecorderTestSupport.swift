import Foundation
import RecorderInterface
import TestSupport
import Workouts
import XCTest

extension XCTestCase {
    /// The names of a journal's controls, in order.
    func controls(_ journal: [RideEvent]) -> [String] {
        journal.compactMap { if case .control(let control) = $0.kind { control.name } else { nil } }
    }

    /// The power meter's measurement values, in order.
    func powerValues(_ journal: [RideEvent]) -> [[UInt8]] {
        journal.compactMap { if case .notification(_, 0x2A63, let value) = $0.kind { value } else { nil } }
    }

    /// `cyclelog record --wait` with the stand-in's power meter into `database`, on the bus and streaming.
    func waitingRecorder(_ standIn: StandIn, database: String) async throws -> Cyclelog {
        let record = try Cyclelog(
            ["record", "--wait", "--plain", "--sensor", "Stages Power L", "--db", database], standIn: standIn)
        try await waitFor("the recorder on the bus", record) {
            try await standIn.busNameOwner(RecorderControl.busName) != nil
        }
        try await waitFor("the power meter streaming", record) { try standIn.sent().count >= 2 }
        return record
    }

    /// Rides on until the stand-in has sent `count` more notifications than it had when called: a ride with that
    /// much data in it, whatever the sensors' pace.
    func rideOn(_ standIn: StandIn, _ command: Cyclelog, notifications count: Int = 8) async throws {
        let before = try standIn.sent().count
        try await waitFor("\(count) more notifications", command) { try standIn.sent().count >= before + count }
    }

    /// Polls a condition for up to `seconds`; fails with the command's output when it never holds or the command
    /// ends first.
    func waitFor(
        _ what: String, _ command: Cyclelog, seconds: Double = 20, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return }
            guard command.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        XCTFail("waited in vain for \(what):\n\(command.output)")
        throw CancellationError()
    }
}
