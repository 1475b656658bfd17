import Foundation
import GRDB
import Workouts

extension WorkoutStore {
    /// Every complete ride the statistics count (one of each group of overlapping rides, `RideOverlaps`) with its
    /// power curve, oldest first; curves only up to `maximumSeconds` when given
    /// (the FTP needs 20 minutes of a curve, not 12 hours). A ride stored before curves were kept gets its curve
    /// computed from its samples, and saved once unless the database was opened for reading.
    public func rideCurves(maximumSeconds: Int? = nil) throws(StoreError) -> [RideCurve] {
        if isReadOnly {
            return try read { db in try Self.rideCurves(db, maximumSeconds: maximumSeconds, saving: false) }
        }
        return try write { db in try Self.rideCurves(db, maximumSeconds: maximumSeconds, saving: true) }
    }

    static func rideCurves(_ db: Database, maximumSeconds: Int?, saving: Bool) throws -> [RideCurve] {
        let byteLimit = maximumSeconds.map { $0 * 4 } ?? Int(Int32.max)
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT w.id, w.startMicroseconds, w.endMicroseconds, w.fitnessTest, substr(c.watts, 1, ?) AS watts,
                    CASE WHEN w.fitnessTest IS NOT NULL THEN w.statistics END AS testStatistics
                FROM workout w LEFT JOIN powerCurve c ON c.workoutId = w.id
                WHERE w.status = 'complete' ORDER BY w.startMicroseconds, w.id
                """, arguments: [byteLimit])
        var rides: [RideCurve] = []
        let setAside = try rideOverlaps(db).setAside
        for row in rows {
            let id = try row.decode(Int64.self, forColumn: "id")
            if setAside.contains(id) { continue }
            let start = try row.decode(Int64.self, forColumn: "startMicroseconds")
            var curve: PowerCurve
            if let blob = try row.decode(Data?.self, forColumn: "watts") {
                curve = StoredPacking.unpackCurve(blob)
            } else {
                curve = WorkoutStatistics.powerCurve(try samples(id, db).0)
                if saving {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO powerCurve (workoutId, watts) VALUES (?, ?)",
                        arguments: [id, Data(StoredPacking.packCurve(curve))])
                }
                if let maximumSeconds, curve.watts.count > maximumSeconds {
                    curve.watts.removeLast(curve.watts.count - maximumSeconds)
                }
            }
            rides.append(
                RideCurve(
                    workoutId: id, startMicroseconds: start,
                    endMicroseconds: try row.decode(Int64?.self, forColumn: "endMicroseconds") ?? start,
                    fitnessTest: try row.decode(String?.self, forColumn: "fitnessTest").flatMap(
                        FitnessTest.init(rawValue:)),
                    // A test's scored part, from its statistics (read for tests alone: they are few).
                    scoredPart: try row.decode(Data?.self, forColumn: "testStatistics").flatMap {
                        try? StoredPacking.unpackStatistics([UInt8]($0)).plan?.scoredPart
                    },
                    curve: curve))
        }
        return rides
    }

    /// Recomputes the automatic FTP history over every stored ride, in one transaction.
    public func refreshFTPEstimates() throws(StoreError) {
        try write { db in try Self.refreshFTPEstimates(db) }
    }

    /// The FTP history rebuilt inside the caller's transaction: saving a ride and its place in the history land
    /// together, so a kill or a full disk can never leave a stored ride missing from the history.
    static func refreshFTPEstimates(_ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO derivedState (name, basis) VALUES ('ftpHistory', ?)",
            arguments: [try ftpBasis(db)])
        let longestEffort = CriticalPowerFit.aerobicSeconds.upperBound
        let history = FTPEstimator().history(try rideCurves(db, maximumSeconds: longestEffort, saving: true))
        try db.execute(sql: "DELETE FROM ftpEstimate; DELETE FROM ftpEffort")
        for (sequence, estimate) in history.enumerated() {
            try db.execute(
                sql: "INSERT INTO ftpEstimate VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    sequence, estimate.workoutId, estimate.effectiveMicroseconds, estimate.method.rawValue,
                    estimate.watts, estimate.criticalPower?.criticalPowerWatts,
                    estimate.criticalPower?.wPrimeJoules, estimate.best20MinuteWatts, estimate.windowDays,
                ])
            for (position, effort) in estimate.efforts.enumerated() {
                try db.execute(
                    sql: "INSERT INTO ftpEffort VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        sequence, position, effort.workoutId, effort.rideStartMicroseconds,
                        effort.durationSeconds, effort.watts,
                    ])
            }
        }
    }

    /// The complete rides the FTP history is computed from, and the rider's choices among overlapping ones, in one
    /// line: any save, rebuild, delete or choice changes it.
    static func ftpBasis(_ db: Database) throws -> String {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT count(*), max(id), total(version),
                    (SELECT count(*) || '/' || total(chosenMicroseconds) FROM countedRide)
                FROM workout WHERE status = 'complete'
                """)
        return [0, 1, 2, 3].map { "\(row?[$0] as DatabaseValue? ?? .null)" }.joined(separator: " ")
    }

    static func ftpHistoryIsCurrent(_ db: Database) throws -> Bool {
        try String.fetchOne(db, sql: "SELECT basis FROM derivedState WHERE name = 'ftpHistory'") == ftpBasis(db)
    }

    /// The automatic values and the rider's settings.
    public func ftpHistory() throws(StoreError) -> FTPHistory {
        try read { db in
            var efforts: [Int: [FTPEffort]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM ftpEffort ORDER BY estimateSequence, position") {
                efforts[try row.decode(forColumn: "estimateSequence"), default: []].append(
                    FTPEffort(
                        workoutId: try row.decode(forColumn: "workoutId"),
                        rideStartMicroseconds: try row.decode(forColumn: "rideStartMicroseconds"),
                        durationSeconds: try row.decode(forColumn: "durationSeconds"),
                        watts: try row.decode(forColumn: "watts")))
            }
            let estimates = try Row.fetchAll(db, sql: "SELECT * FROM ftpEstimate ORDER BY sequence").map { row in
                let wPrimeJoules = try row.decode(Double?.self, forColumn: "wPrimeJoules") ?? 0
                let criticalPower = try row.decode(Double?.self, forColumn: "criticalPowerWatts").map {
                    CriticalPowerModel(criticalPowerWatts: $0, wPrimeJoules: wPrimeJoules)
                }
                return FTPEstimate(
                    method: FTPMethod(rawValue: try row.decode(forColumn: "method")) ?? .criticalPower,
                    watts: try row.decode(forColumn: "watts"),
                    effectiveMicroseconds: try row.decode(forColumn: "effectiveMicroseconds"),
                    workoutId: try row.decode(forColumn: "workoutId"),
                    criticalPower: criticalPower, best20MinuteWatts: try row.decode(forColumn: "best20MinuteWatts"),
                    windowDays: try row.decode(forColumn: "windowDays"),
                    efforts: efforts[try row.decode(forColumn: "sequence")] ?? [])
            }
            let settings = try Row.fetchAll(db, sql: "SELECT * FROM ftpSetting ORDER BY id").map { row -> FTPSetting in
                try row.decode(forColumn: "kind") == "manual"
                    ? .manual(
                        watts: try row.decode(forColumn: "watts"),
                        fromMicroseconds: try row.decode(forColumn: "effectiveMicroseconds"))
                    : .accept(estimateMicroseconds: try row.decode(forColumn: "effectiveMicroseconds"))
            }
            return FTPHistory(estimates: estimates, settings: settings)
        }
    }

    /// Declares a stored workout a fitness test (or not, with nil), and updates the FTP history.
    public func setFitnessTest(_ id: Int64, _ test: FitnessTest?) throws(StoreError) {
        try write { db in
            // A change of the ride: its next version, which the shared store takes in place of the last.
            try db.execute(
                sql: "UPDATE workout SET fitnessTest = ?, version = version + 1 WHERE id = ? AND fitnessTest IS NOT ?",
                arguments: [test?.rawValue, id, test?.rawValue])
        }
        try refreshFTPEstimates()
    }

    /// `cyclelog ftp set`: a manual FTP from `fromMicroseconds` on.
    public func setManualFTP(watts: Double, fromMicroseconds: Int64, nowMicroseconds: Int64) throws(StoreError) {
        try write { db in
            try db.execute(
                sql:
                    "INSERT INTO ftpSetting (kind, watts, effectiveMicroseconds, createdMicroseconds) VALUES (?, ?, ?, ?)",
                arguments: ["manual", watts, fromMicroseconds, nowMicroseconds])
        }
    }

    /// `cyclelog ftp accept`: the automatic value waiting behind a manual one takes over again. Returns it, or nil
    /// when none is waiting.
    public func acceptPendingFTP(nowMicroseconds: Int64) throws(StoreError) -> FTPEstimate? {
        guard let pending = try ftpHistory().pending(at: .max) else { return nil }
        try write { db in
            try db.execute(
                sql:
                    "INSERT INTO ftpSetting (kind, watts, effectiveMicroseconds, createdMicroseconds) VALUES (?, NULL, ?, ?)",
                arguments: ["accept", pending.effectiveMicroseconds, nowMicroseconds])
        }
        return pending
    }
}
