import Foundation
import GRDB
import Workouts

extension WorkoutStore {
    /// Every complete ride with its power curve, oldest first; curves only up to `maximumSeconds` when given
    /// (the FTP needs 20 minutes of a curve, not 12 hours). A ride stored before curves were kept gets its curve
    /// computed from its samples and saved, once.
    public func rideCurves(maximumSeconds: Int? = nil) throws(StoreError) -> [RideCurve] {
        let byteLimit = maximumSeconds.map { $0 * 4 } ?? Int(Int32.max)
        let rows = try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT w.id, w.startMicroseconds, w.endMicroseconds, w.fitnessTest, substr(c.watts, 1, ?) AS watts
                    FROM workout w LEFT JOIN powerCurve c ON c.workoutId = w.id
                    WHERE w.status = 'complete' ORDER BY w.startMicroseconds, w.id
                    """, arguments: [byteLimit])
        }
        var rides: [RideCurve] = []
        for row in rows {
            let id: Int64 = row["id"]
            var curve: PowerCurve
            if let blob = row["watts"] as Data? {
                curve = StoredPacking.unpackCurve(blob)
            } else {
                curve = WorkoutStatistics.powerCurve(try samples(id))
                let packed = Data(StoredPacking.packCurve(curve))
                try write { db in
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO powerCurve (workoutId, watts) VALUES (?, ?)",
                        arguments: [id, packed])
                }
                if let maximumSeconds, curve.watts.count > maximumSeconds {
                    curve.watts.removeLast(curve.watts.count - maximumSeconds)
                }
            }
            rides.append(
                RideCurve(
                    workoutId: id, startMicroseconds: row["startMicroseconds"], endMicroseconds: row["endMicroseconds"],
                    fitnessTest: (row["fitnessTest"] as String?).flatMap(FitnessTest.init(rawValue:)), curve: curve))
        }
        return rides
    }

    /// Recomputes the automatic FTP history over every stored ride, in one transaction.
    public func refreshFTPEstimates() throws(StoreError) {
        let longestEffort = CriticalPowerFit.aerobicSeconds.upperBound
        let history = FTPEstimator().history(try rideCurves(maximumSeconds: longestEffort))
        try write { db in
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
    }

    /// The automatic values and the rider's settings.
    public func ftpHistory() throws(StoreError) -> FTPHistory {
        try read { db in
            var efforts: [Int: [FTPEffort]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM ftpEffort ORDER BY estimateSequence, position") {
                efforts[row["estimateSequence"], default: []].append(
                    FTPEffort(
                        workoutId: row["workoutId"], rideStartMicroseconds: row["rideStartMicroseconds"],
                        durationSeconds: row["durationSeconds"], watts: row["watts"]))
            }
            let estimates = try Row.fetchAll(db, sql: "SELECT * FROM ftpEstimate ORDER BY sequence").map { row in
                let criticalPower = (row["criticalPowerWatts"] as Double?).map {
                    CriticalPowerModel(criticalPowerWatts: $0, wPrimeJoules: row["wPrimeJoules"] ?? 0)
                }
                return FTPEstimate(
                    method: FTPMethod(rawValue: row["method"]) ?? .criticalPower, watts: row["watts"],
                    effectiveMicroseconds: row["effectiveMicroseconds"], workoutId: row["workoutId"],
                    criticalPower: criticalPower, best20MinuteWatts: row["best20MinuteWatts"],
                    windowDays: row["windowDays"], efforts: efforts[row["sequence"]] ?? [])
            }
            let settings = try Row.fetchAll(db, sql: "SELECT * FROM ftpSetting ORDER BY id").map { row -> FTPSetting in
                row["kind"] == "manual"
                    ? .manual(watts: row["watts"], fromMicroseconds: row["effectiveMicroseconds"])
                    : .accept(estimateMicroseconds: row["effectiveMicroseconds"])
            }
            return FTPHistory(estimates: estimates, settings: settings)
        }
    }

    /// Declares a stored workout a fitness test (or not, with nil), and updates the FTP history.
    public func setFitnessTest(_ id: Int64, _ test: FitnessTest?) throws(StoreError) {
        try write { db in
            try db.execute(sql: "UPDATE workout SET fitnessTest = ? WHERE id = ?", arguments: [test?.rawValue, id])
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
