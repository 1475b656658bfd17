import Foundation
import RideTestSupport
import TestSupport
import WorkoutStore
import XCTest

@testable import Mirror

/// The mirror's bounds on its own: the pairing limiter forgets addresses that went away, a request whose client
/// left is not worked on, and one address holds at most its share of connections.
final class MirrorLimitsTests: XCTestCase {
    /// Ten attempts a minute per address, and an address that tried once and went away is forgotten within a
    /// window, however many came: the table the README's limit keeps does not grow over the months a mirror runs.
    func testThePairingLimiterForgetsAddressesThatWentAway() async {
        let limiter = AttemptLimiter(limit: 10)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for index in 0..<5000 {
            let allowed = await limiter.allow("10.0.\(index / 256).\(index % 256)", at: start)
            XCTAssertTrue(allowed)
        }
        let tracked = await limiter.trackedKeys
        XCTAssertEqual(tracked, 5000)
        for attempt in 0..<10 {
            let allowed = await limiter.allow("192.168.1.2", at: start.addingTimeInterval(61 + Double(attempt)))
            XCTAssertTrue(allowed)
        }
        let eleventh = await limiter.allow("192.168.1.2", at: start.addingTimeInterval(75))
        XCTAssertFalse(eleventh, "the eleventh attempt within a minute")
        let left = await limiter.trackedKeys
        XCTAssertEqual(left, 1, "the 5000 addresses of a minute ago are still kept")
        let later = await limiter.allow("192.168.1.2", at: start.addingTimeInterval(140))
        XCTAssertTrue(later, "a minute after its tenth attempt")
    }

    /// A history request whose client left before its turn came is not worked on at all (the reading that would
    /// have answered it never starts); one whose client stays is.
    func testARequestWhoseClientLeftIsNotWorkedOn() async throws {
        let database = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-limits-\(UUID()).sqlite")
            .path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) } }
        try StoredRides.replay(
            fixturesFolder.appendingPathComponent("rides/sweatpy_2020-06-01-16-52-40.journal"), into: database)
        let worked = Worked()
        for gone in [true, false] {
            let exchange = HistoryAPI.Exchange(
                databasePath: database, url: "/api/v1/workouts", ifNoneMatch: nil, clientGone: { gone })
            let response = await exchange.read { store throws(StoreError) in
                worked.count()
                return .json(.integer(Int64(try store.list().count)))
            }
            XCTAssertEqual(response.status, gone ? .serviceUnavailable : .ok)
        }
        XCTAssertEqual(worked.times, 1, "only the request whose client stayed was worked on")
    }

    final class Worked: @unchecked Sendable {
        private let lock = NSLock()
        private var counted = 0
        func count() { lock.withLock { counted += 1 } }
        var times: Int { lock.withLock { counted } }
    }

    /// One address holds at most `perAddress` connections; closing one gives its place back, and an address with
    /// none open is not kept.
    func testOneAddressHoldsAtMostItsShareOfConnections() {
        let counts = ConnectionCounts(perAddress: 32)
        for _ in 0..<32 { XCTAssertTrue(counts.admit("192.168.1.50")) }
        XCTAssertFalse(counts.admit("192.168.1.50"))
        XCTAssertTrue(counts.admit("192.168.1.51"), "another address is not held up")
        counts.release("192.168.1.50")
        XCTAssertTrue(counts.admit("192.168.1.50"))
        for _ in 0..<32 { counts.release("192.168.1.50") }
        counts.release("192.168.1.51")
        counts.release("192.168.1.51")  // more than it held: nothing goes negative
        XCTAssertEqual(counts.count("192.168.1.50"), 0)
        XCTAssertEqual(counts.addresses, 0)
    }
}
