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

    /// 25 one-minute rides, one a day from 1 January 2024 (stored in that order, so ride N is 2024-01-N): a page is
    /// the newest, counted among all that match; a date range narrows both; a range that ends before it begins
    /// holds none; a text is looked for in every ride of the range.
    @Test func aPageIsTheNewestRidesCountedAmongAllThatMatch() throws {
        let store = try StoredRides.store(
            journals: (1...25).map {
                Journals.power(Array(repeating: 150, count: 60), date: "2024-01-\($0 < 10 ? "0" : "")\($0)")
            })
        let page = try RideList.page(in: store, RideList.Filter(), newest: 20)
        #expect(page.entries.map(\.id) == Array((6...25).reversed()))
        #expect(page.admitted == 25)
        let every = try RideList.page(in: store, RideList.Filter(), newest: nil)
        #expect(every.entries.map(\.id) == Array((1...25).reversed()))
        #expect(every.admitted == 25)
        let since = try RideList.Filter.parse(since: "2024-01-20", until: nil, text: nil).get()
        let fromTheTwentieth = try RideList.page(in: store, since, newest: 3)
        #expect(fromTheTwentieth.entries.map(\.id) == [25, 24, 23])
        #expect(fromTheTwentieth.admitted == 6)
        let backwards = try RideList.Filter.parse(since: "2024-01-10", until: "2024-01-05", text: nil).get()
        #expect(try RideList.page(in: store, backwards, newest: 20) == RideList.Page(entries: [], admitted: 0))
        let text = try RideList.Filter.parse(since: "2024-01-15", until: nil, text: "JOURNAL 2").get()
        let found = try RideList.page(in: store, text, newest: 4)
        #expect(found.entries.map(\.id) == [25, 24, 23, 22])
        #expect(found.admitted == 6)
    }

    /// The best 20 minutes of the window is the 20 minutes at 250 W, of the second ride.
    @Test func theBestTwentyMinutesAreTheEffortAndItsRide() throws {
        let report = try FTPReport(try Self.store(), days: 42)
        #expect(report.hasRides)
        #expect(try !FTPReport(WorkoutStore(), days: 42).hasRides)
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
