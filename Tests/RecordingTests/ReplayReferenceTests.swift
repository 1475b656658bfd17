import Foundation
import Recording
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore

/// Real rides replayed from both capture formats, against the values of an independent oracle and of the devices'
/// own FIT sessions (Fixtures/rides/references.json, made by scripts/make-ride-fixtures.py without cyclelog).
@Suite struct ReplayReferenceTests {
    struct Reference: Decodable {
        var normalizedPowerWatts: Double
        var workJoules: Double
        var powerCurveWatts: [String: Double?]
        var distanceMeters: Double
    }

    static let rides = fixturesFolder.appendingPathComponent("rides")

    static func references() throws -> [String: Reference] {
        try JSONDecoder().decode(
            [String: Reference].self, from: Data(contentsOf: rides.appendingPathComponent("references.json")))
    }

    /// A replay's summary as `show --json` writes it.
    static func replayed(_ file: String, into store: WorkoutStore) throws -> (Replayer.Outcome, [String: Any]) {
        let outcome = try Replayer(store: store).replay(CaptureFile.load(rides.appendingPathComponent(file).path))
        let object = try JSONSerialization.jsonObject(with: Data(outcome.summary.json.rendered(pretty: false).utf8))
        return (outcome, try #require(object as? [String: Any]))
    }

    /// NP within 1 W, work within 0.5 %, the curve within 1 W at 60, 300 and 1200 s, distance within 0.5 %, and no
    /// dropout.
    @Test(arguments: ["sweatpy_4078723797", "fitparse_Edge810-Vector-2013-08-16-15-35-10"], ["btsnoop", "journal"])
    func aLongRideReplaysToTheReferenceValues(ride: String, format: String) throws {
        let reference = try #require(try Self.references()[ride])
        let (_, summary) = try Self.replayed("\(ride).\(format)", into: try WorkoutStore())
        let normalizedPower = try #require(summary["normalizedPowerWatts"] as? Double)
        #expect(abs(normalizedPower - reference.normalizedPowerWatts) <= 1)
        let work = try #require(summary["workJoules"] as? Double)
        #expect(abs(work - reference.workJoules) <= reference.workJoules * 0.005)
        let curve = try #require(summary["powerCurveWatts"] as? [String: Double])
        for duration in ["60", "300", "1200"] {
            let expected = try #require(reference.powerCurveWatts[duration] ?? nil)
            #expect(abs((curve[duration] ?? 0) - expected) <= 1, "\(duration) s")
        }
        let distance = try #require(summary["distanceMeters"] as? Double)
        #expect(abs(distance - reference.distanceMeters) <= reference.distanceMeters * 0.005)
        #expect((summary["dropouts"] as? [Any])?.count == 0)
    }

    /// The same capture replayed again is the ride already stored (its identity is its start and its sensors'
    /// notifications), not a second one.
    @Test func aRideReplayedAgainIsTheOneAlreadyStored() throws {
        let store = try WorkoutStore()
        let (first, _) = try Self.replayed("sweatpy_2020-06-01-16-52-40.journal", into: store)
        let (second, _) = try Self.replayed("sweatpy_2020-06-01-16-52-40.journal", into: store)
        #expect(!first.alreadyStored)
        #expect(second.alreadyStored)
        #expect(second.summary.id == first.summary.id)
        #expect(try store.list().count == 1)
    }
}
