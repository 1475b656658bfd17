import Foundation
import Recording
import RideTestSupport
import RideWriting
import Testing
import WorkoutStore
import Workouts

/// The one path every ride takes into the store, on its own: events through the `RidePipeline`, batches through a
/// `WorkoutWriter`. The oracle is the replay of the same journal, which hands the store the file's digests and its
/// journal in packed pieces: a ride written a few events at a time, as a live ride is, must be the same ride.
@Suite struct RideWritingTests {
    /// Writes `events` in batches of the sizes `sizes` gives (cycled), as a live ride does, and finishes the ride.
    static func writeLive(_ events: [RideEvent], into store: WorkoutStore, sizes: [Int]) throws -> WorkoutSummary? {
        var pipeline = RidePipeline()
        let claim = try store.beginWorkout(
            syncIdentifier: "live-written", source: "live", startMicroseconds: events.first?.timeMicroseconds ?? 0)
        var writer = WorkoutWriter(store: store, claim: claim)
        var index = 0
        var batch = 0
        while index < events.count {
            let size = sizes[batch % sizes.count]
            for event in events[index..<min(index + size, events.count)] { pipeline.add(event) }
            index += size
            batch += 1
            try writer.write(pipeline.takeBatch())
        }
        try writer.write(pipeline.takeBatch())
        guard let finished = pipeline.finishWorkout() else {
            try writer.discard()
            return nil
        }
        return try writer.finish(finished)
    }

    @Test(arguments: [[1], [7, 1, 300], [5000]])
    func aRideWrittenInBatchesIsTheRideTheReplayStores(sizes: [Int]) throws {
        let file = Fixtures.folder + "/" + Fixtures.journals[1]
        let capture = try CaptureFile.load(file)
        let replayed = try WorkoutStore()
        let expected = try Replayer(store: replayed).replay(capture).summary
        let written = try WorkoutStore()
        let summary = try #require(try Self.writeLive(capture.events, into: written, sizes: sizes))
        #expect(try written.journal(summary.id) == replayed.journal(expected.id))
        #expect(summary.statistics == expected.statistics)
        #expect(summary.laps == expected.laps)
        #expect(summary.startMicroseconds == expected.startMicroseconds)
        #expect(summary.endMicroseconds == expected.endMicroseconds)
        // The digest computed as the events came is the one the replay took from the whole file.
        #expect(summary.contentDigest != nil && summary.contentDigest == expected.contentDigest)
    }

    @Test func aRideWithoutAMeasurementLeavesNoRow() throws {
        let store = try WorkoutStore()
        let events = [
            RideEvent(timeMicroseconds: 1_000_000, .connected(sensor: "C0:11:22:33:44:55", name: "Stages Power L"))
        ]
        #expect(try Self.writeLive(events, into: store, sizes: [1]) == nil)
        #expect(try store.list().isEmpty)
    }
}
