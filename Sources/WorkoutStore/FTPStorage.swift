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

    /// The window of `days` ending with the newest end among the rides the statistics count, with their curves (up
    /// to `maximumSeconds`): what `FTPWindow(endingWithNewestOf:)` makes of every ride's curve, read without the
    /// others. The newest end comes through the ends' index (a ride counted as another's copy passed over; no ride
    /// starts after it: a copy overlaps the ride it is counted as), the rides started within the window through the
    /// start's, the overlaps among them read around them.
    public func curveWindow(days: Int, maximumSeconds: Int? = nil) throws(StoreError) -> FTPWindow {
        if isReadOnly {
            return try read { db in
                try Self.curveWindow(db, days: days, maximumSeconds: maximumSeconds, saving: false)
            }
        }
        return try write { db in try Self.curveWindow(db, days: days, maximumSeconds: maximumSeconds, saving: true) }
    }

    static func curveWindow(_ db: Database, days: Int, maximumSeconds: Int?, saving: Bool) throws -> FTPWindow {
        var end: Int64?
        for newer in 0... {
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT id, coalesce(endMicroseconds, startMicroseconds) AS endMicroseconds FROM workout
                        WHERE status = 'complete' ORDER BY coalesce(endMicroseconds, startMicroseconds) DESC, id DESC
                        LIMIT 1 OFFSET ?
                        """, arguments: [newer])
            else { break }
            let id: Int64 = row["id"]
            if try !rideOverlaps(db, of: [id]).setAside.contains(id) {
                end = row["endMicroseconds"]
                break
            }
        }
        guard let end else { return FTPWindow([], days: days, endingAt: 0) }
        let start = FTPWindow.start(ending: end, days: days)
        let envelope =
            try CurveWeeks.envelope(db, after: start, upTo: end, maximumSeconds: maximumSeconds, saving: saving)
            ?? CurveEnvelope(
                CurveWeeks.countedCurves(
                    db, after: start, upTo: end, maximumSeconds: maximumSeconds, saving: saving, nil))
        return FTPWindow(envelope, days: days, startMicroseconds: start, endMicroseconds: end)
    }

    /// The complete rides started in a window (after the first bound, up to the second), by the start's index.
    static let windowRidesQuery =
        "SELECT id FROM workout WHERE status = 'complete' AND startMicroseconds > ? AND startMicroseconds <= ?"

    /// The curves of the complete rides started after a time up to another (their first `?` bytes), by the start's
    /// index.
    static let rideCurvesQuery = """
        SELECT w.id, w.startMicroseconds, w.endMicroseconds, w.fitnessTest, substr(c.watts, 1, ?) AS watts,
            CASE WHEN w.fitnessTest IS NOT NULL THEN w.statistics END AS testStatistics
        FROM workout w LEFT JOIN powerCurve c ON c.workoutId = w.id
        WHERE w.status = 'complete' AND w.startMicroseconds > ? AND w.startMicroseconds <= ?
        ORDER BY w.startMicroseconds, w.id
        """

    /// Whether a complete ride is stored: the first found, not a count of ten years of them.
    public func hasCompleteRide() throws(StoreError) -> Bool {
        try read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM workout WHERE status = 'complete')") ?? false
        }
    }

    /// The same, of the rides started after `startedAfter` (up to `upTo`) when given; `setAside` when the caller
    /// has the overlapping rides already.
    static func rideCurves(
        _ db: Database, maximumSeconds: Int?, saving: Bool, startedAfter: Int64? = nil, upTo: Int64 = .max,
        setAside: Set<Int64>? = nil
    ) throws -> [RideCurve] {
        let byteLimit = maximumSeconds.map(StoredPacking.curveBytes(durations:)) ?? Int(Int32.max)
        let rows = try Row.fetchAll(
            db, sql: rideCurvesQuery, arguments: [byteLimit, startedAfter ?? Int64.min, upTo])
        var rides: [RideCurve] = []
        let setAside = try setAside ?? rideOverlaps(db).setAside
        for row in rows {
            let id = try row.decode(Int64.self, forColumn: "id")
            if setAside.contains(id) { continue }
            let start = try row.decode(Int64.self, forColumn: "startMicroseconds")
            var curve: PowerCurve
            if let blob = try row.decode(Data?.self, forColumn: "watts"),
                let stored = StoredPacking.unpackCurve(blob, durations: maximumSeconds)
            {
                curve = stored
            } else {
                // None stored, or a damaged one: made again from the ride's samples.
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

    /// Brings the automatic FTP history up to date with the stored rides, in one transaction.
    public func refreshFTPEstimates() throws(StoreError) {
        try write { db in try Self.refreshFTPEstimates(db) }
    }

    /// The FTP history brought up to date inside the caller's transaction: saving a ride and its place in the
    /// history land together, so a kill or a full disk can never leave a stored ride missing from the history.
    ///
    /// Each value depends only on the rides before it and the value in force then (`FTPEstimator`), so the history
    /// is computed again from the earliest start of a ride that changed since it was last computed (stored,
    /// deleted, rebuilt, declared a test, counted or set aside among overlapping rides: `ftpScoredRide` holds each
    /// ride as it was seen); the values before stay. A ride stored after a decade of rides scores that ride and
    /// reads the curves of its window, not every ride's. Returns how many rides were scored.
    @discardableResult
    static func refreshFTPEstimates(_ db: Database) throws -> Int {
        let basis = try ftpBasis(db)
        let previous = try String.fetchOne(db, sql: "SELECT basis FROM derivedState WHERE name = 'ftpHistory'")
        try db.execute(
            sql: "INSERT OR REPLACE INTO derivedState (name, basis) VALUES ('ftpHistory', ?)", arguments: [basis])
        // The rider's choices among overlapping rides unchanged (the basis's last word), the rides that changed are
        // found without reading every ride into Swift; a new choice (rare) compares every ride.
        let choicesKept = previous?.split(separator: " ").last == basis.split(separator: " ").last
        // Since a basis of the counters was stored, every ride that changed is in `rideChange` (its triggers came
        // with the counters); before, or without them, the rides are compared.
        let tracked = [previous, basis].allSatisfy { $0?.hasPrefix(generationBasis) == true }
        let changes = try choicesKept ? ScoredRide.changes(db, tracked: tracked) : ScoredRide.everyChange(db)
        try db.execute(sql: "DELETE FROM rideChange")
        try CurveWeeks.follow(changes, db)
        guard var from = changes.starts.min() else { return 0 }
        // The values kept are those of the rides started before `from`, a prefix of the history in its order; a
        // history that is not (written otherwise, or of a ride it has no record of) is computed again whole. Each
        // value's ride's start as the history saw it is its `ftpScoredRide` row's.
        let estimates = "ftpEstimate e LEFT JOIN ftpScoredRide s ON s.workoutId = e.workoutId"
        let firstDropped = try Int.fetchOne(
            db, sql: "SELECT min(e.sequence) FROM \(estimates) WHERE s.startMicroseconds >= ?", arguments: [from])
        let disordered =
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM \(estimates) WHERE s.workoutId IS NULL
                    OR (e.sequence >= ? AND s.startMicroseconds < ?))
                    """, arguments: [firstDropped ?? Int.max, from]) ?? true
        if disordered { from = .min }
        let lastKept =
            from == .min
            ? nil
            : try Int.fetchOne(
                db, sql: "SELECT max(sequence) FROM ftpEstimate WHERE sequence < ?",
                arguments: [firstDropped ?? Int.max])
        let dropFrom = lastKept.map { $0 + 1 } ?? Int.min
        try db.execute(sql: "DELETE FROM ftpEstimate WHERE sequence >= ?", arguments: [dropFrom])
        try db.execute(sql: "DELETE FROM ftpEffort WHERE estimateSequence >= ?", arguments: [dropFrom])
        let seed = try lastKept.flatMap { try storedEstimates(db, only: [$0]).first }

        // The rides scored and every ride of their windows (a window ends with its ride's end), the overlaps among
        // them read around them.
        let estimator = FTPEstimator()
        let scoredRows = try completeRides(db, with: ScoredRide.columns, where: "w.startMicroseconds >= ?", [from])
        let scoredSetAside = try rideOverlaps(db, of: scoredRows.map { try $0.decode(forColumn: "id") }).setAside
        let scored = try scoredRows.map { row in try ScoredRide(row) { !scoredSetAside.contains($0) } }
            .filter(\.counted)
        let earliestEnd = min(from, scored.map(\.endMicroseconds).min() ?? from)
        let windowStart = earliestEnd.subtractingReportingOverflow(estimator.windowMicroseconds)
        let startedAfter = windowStart.overflow ? nil : windowStart.partialValue
        let windowIds = try Int64.fetchAll(
            db, sql: "SELECT id FROM workout WHERE status = 'complete' AND startMicroseconds > ?",
            arguments: [startedAfter ?? Int64.min])
        let rides = try rideCurves(
            db, maximumSeconds: CriticalPowerFit.aerobicSeconds.upperBound, saving: true,
            startedAfter: startedAfter, setAside: rideOverlaps(db, of: windowIds).setAside)
        var sequence = lastKept.map { $0 + 1 } ?? 0
        for estimate in estimator.history(rides, after: seed, scoringFrom: from) {
            try insert(estimate, sequence: sequence, db)
            sequence += 1
        }

        // What the history was computed from, for the next change.
        for id in changes.changed {
            try db.execute(sql: "DELETE FROM ftpScoredRide WHERE workoutId = ?", arguments: [id])
            if let ride = changes.now[id] { try ride.insert(db) }
        }
        return scored.count
    }

    private static func insert(_ estimate: FTPEstimate, sequence: Int, _ db: Database) throws {
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
                    sequence, position, effort.workoutId, effort.rideStartMicroseconds, effort.durationSeconds,
                    effort.watts,
                ])
        }
    }

    /// A complete ride as the FTP history sees it: any difference in these is a change it follows.
    struct ScoredRide: Equatable {
        var id: Int64
        var version: Int
        var contentDigest: String?
        var startMicroseconds: Int64
        var endMicroseconds: Int64
        var fitnessTest: String?
        /// Not set aside among rides it overlaps (`RideOverlaps`).
        var counted: Bool

        /// What the history reads of a ride, beside `completeRides`' columns.
        static let columns = "w.version, w.journalDigest AS contentDigest, w.fitnessTest"

        /// The rides that changed since the history last saw them (`changed`), each as it is now (`now`; none when
        /// it is no longer a complete ride) and as the history saw it (`before`; none when it is new to it).
        struct Changes {
            var now: [Int64: ScoredRide] = [:]
            var before: [Int64: ScoredRide] = [:]
            var changed: Set<Int64> = []

            /// The starts of the changed rides, as they are and as the history saw them: where what follows the rides
            /// (the history from the earliest, each week's curves) is made again.
            var starts: [Int64] {
                changed.flatMap { [now[$0]?.startMicroseconds, before[$0]?.startMicroseconds] }.compactMap { $0 }
            }
        }

        /// Every ride compared: the complete rides now, with the ones set aside among overlapping rides, against
        /// every row of the history's record.
        static func everyChange(_ db: Database) throws -> Changes {
            let rows = try completeRides(db, with: columns)
            let setAside = try overlaps(rows).setAside
            var changes = Changes()
            for row in rows {
                let ride = try ScoredRide(row) { !setAside.contains($0) }
                changes.now[ride.id] = ride
            }
            changes.before = try recorded(db, where: "1")
            changes.changed = Set(changes.now.keys).union(changes.before.keys).filter {
                changes.now[$0] != changes.before[$0]
            }
            return changes
        }

        /// The same, the rider's choices among overlapping rides being those the history saw: the rides whose own
        /// columns differ from the record, or that are no longer complete, found by SQL (`tracked`: those the
        /// triggers put in `rideChange`, a superset); then whether a ride is counted, for the rides that share a
        /// group with one of those now or shared one before (the groups around them: a group whose rides are all
        /// unchanged is the group it was, and counts the ride it counted).
        static func changes(_ db: Database, tracked: Bool) throws -> Changes {
            var changes = Changes()
            let differing = try Int64.fetchAll(
                db,
                sql: tracked
                    ? "SELECT workoutId FROM rideChange"
                    : """
                    SELECT w.id FROM workout w LEFT JOIN ftpScoredRide s ON s.workoutId = w.id
                    WHERE w.status = 'complete' AND (s.workoutId IS NULL OR s.version IS NOT w.version
                    OR s.contentDigest IS NOT w.journalDigest OR s.startMicroseconds IS NOT w.startMicroseconds
                    OR s.endMicroseconds IS NOT coalesce(w.endMicroseconds, w.startMicroseconds)
                    OR s.fitnessTest IS NOT w.fitnessTest)
                    UNION SELECT s.workoutId FROM ftpScoredRide s WHERE NOT EXISTS
                    (SELECT 1 FROM workout w WHERE w.id = s.workoutId AND w.status = 'complete')
                    """)
            guard !differing.isEmpty else { return changes }
            let list = "(SELECT value FROM json_each(?))"
            changes.before = try recorded(db, where: "workoutId IN \(list)", [jsonArray(differing)])
            // The rides that shared a moment with one of them before (it may have moved or gone), and they.
            var around = Set(differing)
            for ride in changes.before.values {
                // A damaged ride may end before it starts.
                let (start, end) = (ride.startMicroseconds, ride.endMicroseconds)
                let span = min(start, end)...max(start, end)
                let rows = try completeRides(db, reachingInto: span)
                for row in rows { around.insert(try row.decode(forColumn: "id")) }
            }
            // Their groups now, whole, and every ride read with them.
            let neighbourhood = try rideOverlaps(db, of: Array(around))
            let read = Set(neighbourhood.groups.flatMap { $0.rides.map(\.id) }).union(around)
            for row in try completeRides(db, with: columns, where: "w.id IN \(list)", [jsonArray(read)]) {
                let ride = try ScoredRide(row) { !neighbourhood.setAside.contains($0) }
                changes.now[ride.id] = ride
            }
            // The differing rides' records are read already.
            let others = jsonArray(read.subtracting(differing))
            for (id, ride) in try recorded(db, where: "workoutId IN \(list)", [others]) { changes.before[id] = ride }
            changes.changed = read.filter { changes.now[$0] != changes.before[$0] }
            return changes
        }

        /// The rides as the history last saw them, of the rows that meet `condition`.
        static func recorded(_ db: Database, where condition: String, _ arguments: StatementArguments = [])
            throws -> [Int64: ScoredRide]
        {
            var rides: [Int64: ScoredRide] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT *, workoutId AS id FROM ftpScoredRide WHERE \(condition)", arguments: arguments)
            {
                let ride = try ScoredRide(row) { _ in try row.decode(forColumn: "counted") }
                rides[ride.id] = ride
            }
            return rides
        }

        init(_ row: Row, counted: (Int64) throws -> Bool) throws {
            id = try row.decode(forColumn: "id")
            version = try row.decode(forColumn: "version")
            contentDigest = try row.decode(forColumn: "contentDigest")
            startMicroseconds = try row.decode(forColumn: "startMicroseconds")
            endMicroseconds = try row.decode(forColumn: "endMicroseconds")
            fitnessTest = try row.decode(forColumn: "fitnessTest")
            self.counted = try counted(id)
        }

        func insert(_ db: Database) throws {
            try db.execute(
                sql: "INSERT INTO ftpScoredRide VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [id, version, contentDigest, startMicroseconds, endMicroseconds, fitnessTest, counted])
        }
    }

    /// The complete rides the FTP history is computed from, and the rider's choices among overlapping ones, in one
    /// line whose last word is the choices': any save, rebuild, delete or choice changes it. The counters that the
    /// triggers of migration v27 raise; without their row (taken out by hand), the rides' index read whole.
    static func ftpBasis(_ db: Database) throws -> String {
        if let row = try Row.fetchOne(db, sql: "SELECT rides, choices FROM rideGeneration") {
            return "\(generationBasis)\(row[0] as Int64) \(row[1] as Int64)"
        }
        let row = try Row.fetchOne(db, sql: ftpBasisQuery)
        return [0, 1, 2, 3].map { "\(row?[$0] as DatabaseValue? ?? .null)" }.joined(separator: " ")
    }

    /// How a basis of the counters begins.
    static let generationBasis = "generation "

    /// Read from the complete rides' versions' index alone (migration v22), not from every ride's row.
    static let ftpBasisQuery = """
        SELECT count(*), max(id), total(version),
            (SELECT count(*) || '/' || total(chosenMicroseconds) FROM countedRide)
        FROM workout WHERE status = 'complete'
        """

    static func ftpHistoryIsCurrent(_ db: Database) throws -> Bool {
        try String.fetchOne(db, sql: "SELECT basis FROM derivedState WHERE name = 'ftpHistory'") == ftpBasis(db)
    }

    /// The automatic values and the rider's settings. With `asOf`, of the automatic values only those that what
    /// `FTPHistory` says at these times depends on: at each, the newest value (`inForce`, `pending`) and the newest
    /// with a critical-power model (`criticalPower`); asked only at these times, it answers as the whole history
    /// does. `cyclelog ftp` (at `.max`) and a ride's page (at its start and now) then read a value or two, not ten
    /// years of them. More times than a page of rides read the whole history once instead.
    public func ftpHistory(asOf times: [Int64]? = nil) throws(StoreError) -> FTPHistory {
        try read { db in
            let settings = try Row.fetchAll(db, sql: "SELECT * FROM ftpSetting ORDER BY id").map { row -> FTPSetting in
                try row.decode(forColumn: "kind") == "manual"
                    ? .manual(
                        watts: try row.decode(forColumn: "watts"),
                        fromMicroseconds: try row.decode(forColumn: "effectiveMicroseconds"))
                    : .accept(estimateMicroseconds: try row.decode(forColumn: "effectiveMicroseconds"))
            }
            guard let times, times.count <= Self.ftpTimesReadApart else {
                return FTPHistory(estimates: try Self.storedEstimates(db), settings: settings)
            }
            var sequences = Set<Int>()
            for time in times {
                // The order `FTPHistory` gives values of the same moment: the later stored one last.
                for onlyWithModel in [false, true] {
                    let newest = try Int.fetchOne(
                        db,
                        sql: """
                            SELECT sequence FROM ftpEstimate WHERE effectiveMicroseconds <= ?
                            \(onlyWithModel ? "AND criticalPowerWatts IS NOT NULL" : "")
                            ORDER BY effectiveMicroseconds DESC, sequence DESC LIMIT 1
                            """, arguments: [time])
                    if let newest { sequences.insert(newest) }
                }
            }
            return FTPHistory(estimates: try Self.storedEstimates(db, only: sequences.sorted()), settings: settings)
        }
    }

    /// Up to how many times `ftpHistory(asOf:)` looks up the values each depends on (two small queries a time) rather
    /// than reading every value: a page of rides (the history's page shows 50).
    static let ftpTimesReadApart = 64

    /// The automatic values stored, with their efforts, in their order; those of the sequences `only`, when given.
    static func storedEstimates(_ db: Database, only: [Int]? = nil) throws -> [FTPEstimate] {
        if let only, only.isEmpty { return [] }
        // Every sequence, or those listed (a few: one placeholder each).
        let (condition, arguments): (String, [any DatabaseValueConvertible]) =
            if let only {
                ("IN (" + Array(repeating: "?", count: only.count).joined(separator: ", ") + ")", only)
            } else {
                ("IS NOT NULL", [])
            }
        var efforts: [Int: [FTPEffort]] = [:]
        for row in try Row.fetchAll(
            db,
            sql: "SELECT * FROM ftpEffort WHERE estimateSequence \(condition) ORDER BY estimateSequence, position",
            arguments: StatementArguments(arguments))
        {
            efforts[try row.decode(forColumn: "estimateSequence"), default: []].append(
                FTPEffort(
                    workoutId: try row.decode(forColumn: "workoutId"),
                    rideStartMicroseconds: try row.decode(forColumn: "rideStartMicroseconds"),
                    durationSeconds: try row.decode(forColumn: "durationSeconds"),
                    watts: try row.decode(forColumn: "watts")))
        }
        return try Row.fetchAll(
            db, sql: "SELECT * FROM ftpEstimate WHERE sequence \(condition) ORDER BY sequence",
            arguments: StatementArguments(arguments)
        ).map { row in
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
        guard let pending = try ftpHistory(asOf: [.max]).pending(at: .max) else { return nil }
        try write { db in
            try db.execute(
                sql:
                    "INSERT INTO ftpSetting (kind, watts, effectiveMicroseconds, createdMicroseconds) VALUES (?, NULL, ?, ?)",
                arguments: ["accept", pending.effectiveMicroseconds, nowMicroseconds])
        }
        return pending
    }
}
