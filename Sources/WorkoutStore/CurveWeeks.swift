import Foundation
import GRDB
import Workouts

extension WorkoutStore {
    /// The power-curve envelope of each week's rides, kept as rides are stored (`powerCurveWeek`, migration v26), so
    /// that a window of 90 days reads its whole weeks' envelopes and the rides of the two weeks it cuts, not each of
    /// its rides' curves: a window costs the same after ten years of rides as after a week.
    ///
    /// A week is 7 days counted from 1970-01-01 (UTC), and holds the complete rides started in it that the
    /// statistics count (one of each group of overlapping rides). A week of fewer than two such rides keeps no
    /// envelope (its ride is read as it is), nor does a ride started before 1970 or after the year 146 000 000. The
    /// weeks follow the rides where the FTP history does (`refreshFTPEstimates`, in the same transaction): the weeks
    /// of the rides that changed for the history are made again; a window reads them only while that history is
    /// current, and reads every ride of it otherwise.
    enum CurveWeeks {
        static let weekMicroseconds: Int64 = 7 * 86_400 * 1_000_000
        /// The starts that belong to a week: from 1970 on, and far enough from the end of the integers that a week's
        /// bounds never overflow.
        static let reach: ClosedRange<Int64> = 0...(1 << 62)
        static let marker = "powerCurveWeeks"

        /// The week a ride started in belongs to, none outside `reach`.
        static func week(startedAt start: Int64) -> Int64? {
            reach.contains(start) ? start / weekMicroseconds : nil
        }

        /// A week's rides are those started after `after` up to `upTo` (the bounds the window queries take).
        static func bounds(of week: Int64) -> (after: Int64, upTo: Int64) {
            (week * weekMicroseconds - 1, (week + 1) * weekMicroseconds - 1)
        }

        /// The weeks brought up to date with the rides that changed for the FTP history (`changes`): theirs,
        /// before and now. Every week when they were never made (after the migration that added them).
        static func follow(_ changes: ScoredRide.Changes, _ db: Database) throws {
            guard try made(db) else {
                try db.execute(sql: "DELETE FROM powerCurveWeek")
                let weeks = try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT startMicroseconds / ? FROM workout
                        WHERE status = 'complete' AND startMicroseconds BETWEEN ? AND ?
                        """, arguments: [weekMicroseconds, reach.lowerBound, reach.upperBound])
                let setAside = try rideOverlaps(db).setAside
                for week in weeks { try make(week, setAside: setAside, db) }
                try db.execute(
                    sql: "INSERT OR REPLACE INTO derivedState (name, basis) VALUES (?, 'made')", arguments: [marker])
                return
            }
            for week in Set(changes.starts.compactMap(week(startedAt:))) { try make(week, setAside: nil, db) }
        }

        /// A week's envelope as its row holds it, its curve's first `durations` durations (each when nil, the row's
        /// `watts` then whole); nil when a part cannot be read or
        /// the parts disagree, as in a damaged or foreign record. The curve of a week of rides without power is
        /// empty, and a part of an empty blob reads as NULL.
        static func kept(_ row: Row, durations: Int?) -> CurveEnvelope? {
            let wattsValue: DatabaseValue = row["watts"]
            guard let watts = wattsValue.isNull ? Data() : Data.fromDatabaseValue(wattsValue),
                let sources = (try? row.decode(Data.self, forColumn: "sources")).flatMap(StoredPacking.unpackSources),
                StoredPacking.curveCount(watts) == sources.count,
                let curve = StoredPacking.unpackCurve(watts, durations: durations),
                let holders = (try? row.decode(Data.self, forColumn: "holders")).flatMap(StoredPacking.unpackHolders),
                let rides = try? row.decode(Int.self, forColumn: "rides"),
                let poweredRides = try? row.decode(Int.self, forColumn: "poweredRides")
            else { return nil }
            return CurveEnvelope(
                rideCount: rides, poweredRideCount: poweredRides, curve: curve, holders: holders,
                sources: Array(sources.prefix(curve.watts.count)))
        }

        /// Whether the weeks were made (since the migration that added them).
        static func made(_ db: Database) throws -> Bool {
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM derivedState WHERE name = ?)", arguments: [marker]) ?? false
        }

        /// A week's envelope made again from its rides; `setAside` when the caller has every ride's.
        static func make(_ week: Int64, setAside: Set<Int64>?, _ db: Database) throws {
            let (after, upTo) = bounds(of: week)
            let rides = try countedCurves(db, after: after, upTo: upTo, maximumSeconds: nil, saving: true, setAside)
            guard rides.count >= 2 else {
                try db.execute(sql: "DELETE FROM powerCurveWeek WHERE week = ?", arguments: [week])
                return
            }
            let envelope = CurveEnvelope(rides)
            try db.execute(
                sql: "INSERT OR REPLACE INTO powerCurveWeek VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    week, envelope.rideCount, envelope.poweredRideCount, Data(StoredPacking.packCurve(envelope.curve)),
                    Data(StoredPacking.packSources(envelope.sources)),
                    Data(StoredPacking.packHolders(envelope.holders)),
                ])
        }

        /// The complete rides the statistics count started after `after` up to `upTo`, with their curves, in date
        /// order.
        static func countedCurves(
            _ db: Database, after: Int64, upTo: Int64, maximumSeconds: Int?, saving: Bool, _ setAside: Set<Int64>?
        ) throws -> [RideCurve] {
            let setAside =
                try setAside
                ?? rideOverlaps(db, of: Int64.fetchAll(db, sql: windowRidesQuery, arguments: [after, upTo])).setAside
            return try rideCurves(
                db, maximumSeconds: maximumSeconds, saving: saving, startedAfter: after, upTo: upTo,
                setAside: setAside)
        }

        /// The envelope of the rides started after `after` up to `upTo`: the envelopes of the weeks wholly within,
        /// the rides around and between them one by one. Nil when the weeks do not follow the rides (the FTP
        /// history is not current: a batch being stored, a command that has not written since the rides changed)
        /// or a week's record cannot be read as one.
        static func envelope(
            _ db: Database, after: Int64, upTo: Int64, maximumSeconds: Int?, saving: Bool
        ) throws -> CurveEnvelope? {
            guard try made(db), try ftpHistoryIsCurrent(db) else { return nil }
            var envelope = CurveEnvelope()
            var taken = after
            func ridesUpTo(_ end: Int64) throws {
                guard end > taken else { return }
                envelope.append(
                    CurveEnvelope(
                        try countedCurves(
                            db, after: taken, upTo: end, maximumSeconds: maximumSeconds, saving: saving, nil)))
                taken = end
            }
            // The weeks that start after `after` and end by `upTo`.
            let first = after < reach.lowerBound ? 0 : after / weekMicroseconds + 1
            let last =
                upTo >= reach.upperBound ? reach.upperBound / weekMicroseconds - 1 : (upTo + 1) / weekMicroseconds - 1
            if first <= last {
                let byteLimit = maximumSeconds.map(StoredPacking.curveBytes(durations:)) ?? Int(Int32.max)
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT week, rides, poweredRides, substr(watts, 1, ?) AS watts, sources, holders
                        FROM powerCurveWeek WHERE week BETWEEN ? AND ? ORDER BY week
                        """, arguments: [byteLimit, first, last])
                {
                    guard let week = try? row.decode(Int64.self, forColumn: "week"),
                        let kept = Self.kept(row, durations: maximumSeconds)
                    else {
                        return nil
                    }
                    let (after, upTo) = bounds(of: week)
                    try ridesUpTo(after)
                    envelope.append(kept)
                    taken = upTo
                }
            }
            try ridesUpTo(upTo)
            return envelope
        }
    }
}
