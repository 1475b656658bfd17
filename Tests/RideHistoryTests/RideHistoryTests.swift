import Foundation
import RideHistory
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore

/// What `list`, `ftp` and the history's API answer from a database, against what the rides were made of.
@Suite struct RideHistoryTests {
    /// Three rides on 1, 2 and 3 January 2024 at 06:00:00.5 UTC: 5 min at 100 W, 20 min at 250 W, 5 min at 100 W on
    /// the second; 30 min at 180 W on the others.
    static func store() throws -> WorkoutStore {
        let effort =
            Array(repeating: 100.0, count: 300) + Array(repeating: 250, count: 1200)
            + Array(repeating: 100, count: 300)
        let steady = Array(repeating: 180.0, count: 1800)
        return try StoredRides.store(journals: [
            Journals.power(steady, day: 1), Journals.power(effort, day: 2), Journals.power(steady, day: 3),
        ])
    }

    /// The best 20 minutes of the window is the 20 minutes at 250 W, of the second ride.
    @Test func theBestTwentyMinutesAreTheEffortAndItsRide() throws {
        let report = try FTPReport(try Self.store(), days: 42)
        #expect(report.rideCount == 3)
        let best = try #require(report.best20)
        #expect(best.watts == 250)
        #expect(best.workoutId == 2)
        #expect(best.durationSeconds == 1200)
    }

    /// Newest first; a date range takes the rides that started in it, `until` a date through the end of that day.
    @Test func theListIsNewestFirstAndNarrowedByDate() throws {
        let store = try Self.store()
        #expect(try RideList.entries(in: store).map(\.id) == [3, 2, 1])
        let filter = try RideList.Filter.parse(since: "2024-01-02", until: "2024-01-02", text: nil).get()
        #expect(try RideList.entries(in: store, filter).map(\.id) == [2])
        let before = try RideList.Filter.parse(since: nil, until: "2024-01-02T06:00:00Z", text: nil).get()
        #expect(try RideList.entries(in: store, before).map(\.id) == [1])
    }

    @Test func aDateThatIsNotOneIsNamed() {
        guard case .failure(let error) = RideList.Filter.parse(since: "yesterday", until: nil, text: nil) else {
            Issue.record("'yesterday' was taken as a date")
            return
        }
        #expect(
            error.description == "since takes a date (2024-05-01) or a UTC time (2024-05-01T06:30:00Z), not 'yesterday'"
        )
    }

    /// An export's name carries the ride's id and its UTC date.
    @Test func anExportIsNamedForItsRideAndDay() throws {
        let store = try Self.store()
        let ride = try #require(try store.ride(2, analysed: false))
        #expect(RideExport.fileName(ride.summary, format: .fit) == "cyclelog-2-2024-01-02.fit")
        #expect(try RideExport.rides(since: 1_704_153_600_000_000, in: store) == [2, 3])
    }
}
