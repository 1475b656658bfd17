import Foundation
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
