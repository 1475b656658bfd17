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

    /// Every complete ride's id, start, end (its start when it has none) and when the rider chose it to count, with
    /// `columns` of `workout w` beside them.
    static func completeRides(_ db: Database, with columns: String? = nil) throws -> [Row] {
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
                FROM workout w WHERE w.status = 'complete'
                """)
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
