import GRDB
import Workouts

extension WorkoutStore {
    /// The complete rides that overlap in time, grouped, with the one each group counts in the statistics.
    public func rideOverlaps() throws(StoreError) -> RideOverlaps {
        try read { db in try Self.rideOverlaps(db) }
    }

    static func rideOverlaps(_ db: Database) throws -> RideOverlaps {
        try overlaps(try completeRides(db))
    }

    /// The groups of overlapping complete rides that hold any of rides `ids` (and perhaps others near them): what a
    /// page of rides shows, read without every ride. The rides that reach into the span of `ids` are read through
    /// the index of the complete rides' ends, and the span is widened to theirs until no other ride reaches into it:
    /// a ride outside it shares no time with any ride inside, so the groups of the rides inside are whole.
    public func rideOverlaps(of ids: [Int64]) throws(StoreError) -> RideOverlaps {
        try read { db in try Self.rideOverlaps(db, of: ids) }
    }

    static func rideOverlaps(_ db: Database, of ids: [Int64]) throws -> RideOverlaps {
        guard !ids.isEmpty else { return RideOverlaps([]) }
        // More rides than a statement takes as arguments (SQLite's default is 999 at the least) are read whole:
        // what shows that many shows most of the history.
        guard ids.count <= maximumRidesAround else { return try rideOverlaps(db) }
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT min(startMicroseconds) AS low, max(coalesce(endMicroseconds, startMicroseconds)) AS high
                FROM workout WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments(ids))
        guard let first: Int64 = row?["low"], let last: Int64 = row?["high"] else { return RideOverlaps([]) }
        // A damaged ride may end before it starts.
        var (low, high) = (min(first, last), max(first, last))
        while true {
            let rows = try completeRides(db, reachingInto: low...high)
            let starts = try rows.map { try $0.decode(forColumn: "startMicroseconds") as Int64 }
            let ends = try rows.map { try $0.decode(forColumn: "endMicroseconds") as Int64 }
            let wider = (min(low, starts.min() ?? low), max(high, ends.max() ?? high))
            guard wider != (low, high) else { return try overlaps(rows) }
            (low, high) = wider
        }
    }

    /// The most rides `rideOverlaps(of:)` reads around; more are read with every ride.
    static let maximumRidesAround = 900

    /// Every complete ride's id, start, end (its start when it has none) and when the rider chose it to count, with
    /// `columns` of `workout w` beside them; with `span`, only those that share a moment with it (ends included).
    static func completeRides(
        _ db: Database, with columns: String? = nil, reachingInto span: ClosedRange<Int64>? = nil
    ) throws -> [Row] {
        // The end's index (migration v20) finds the rides that end within or after the span; the unary plus keeps
        // SQLite from reading every earlier start through the start's instead.
        guard let span else { return try completeRides(db, with: columns, where: "1") }
        return try completeRides(
            db, with: columns,
            where: "coalesce(w.endMicroseconds, w.startMicroseconds) >= ? AND +w.startMicroseconds <= ?",
            [span.lowerBound, span.upperBound])
    }

    /// The same, of the complete rides that meet `condition` (over `workout w`).
    static func completeRides(
        _ db: Database, with columns: String?, where condition: String, _ arguments: StatementArguments = []
    ) throws -> [Row] {
        // A database read by a command that may not bring it up to date (opened for reading) may predate the
        // rider's choices: then nobody chose yet.
        let chosen =
            try db.tableExists("countedRide")
            ? "(SELECT chosenMicroseconds FROM countedRide WHERE workoutId = w.id)" : "NULL"
        return try Row.fetchAll(
            db,
            sql: """
                SELECT w.id, w.startMicroseconds, coalesce(w.endMicroseconds, w.startMicroseconds) AS endMicroseconds,
                    \(chosen) AS chosenMicroseconds\(columns.map { ", " + $0 } ?? "")
                FROM workout w WHERE w.status = 'complete' AND \(condition)
                """, arguments: arguments)
    }

    /// The overlapping rides among rows of `completeRides`.
    static func overlaps(_ rows: [Row]) throws -> RideOverlaps {
        RideOverlaps(
            try rows.map { row in
                RideOverlaps.Ride(
                    id: try row.decode(forColumn: "id"),
                    startMicroseconds: try row.decode(forColumn: "startMicroseconds"),
                    endMicroseconds: try row.decode(forColumn: "endMicroseconds"),
                    chosenMicroseconds: try row.decode(forColumn: "chosenMicroseconds"))
            })
    }

    /// `cyclelog duplicates keep ID`: the statistics count this ride among those it overlaps, and the FTP history
    /// follows. Returns the group it counts in, or nil when it overlaps no other ride (nothing is changed then).
    public func countAmongOverlaps(_ id: Int64, nowMicroseconds: Int64) throws(StoreError) -> RideOverlaps.Group? {
        try write { db in
            guard try Self.rideOverlaps(db).group(of: id) != nil else { return nil }
            try db.execute(
                sql: "INSERT OR REPLACE INTO countedRide (workoutId, chosenMicroseconds) VALUES (?, ?)",
                arguments: [id, nowMicroseconds])
            try Self.refreshFTPEstimates(db)
            return try Self.rideOverlaps(db).group(of: id)
        }
    }
}
