import Concurrency
import Foundation
import GRDB
import RideJournal
import Workouts

extension WorkoutStore {
    /// One line of `cyclelog list`.
    public struct ListEntry: Equatable, Sendable {
        public var id: Int64
        public var syncIdentifier: String
        public var name: String?
        public var status: WorkoutStatus
        /// Nil while it is being recorded, or until a writing command has brought the database up to date.
        public var contentDigest: String?
        public var source: String
        public var startMicroseconds: Int64
        public var elapsedSeconds: Double?
        public var distanceMeters: Double?
        public var averagePowerWatts: Double?
        /// From the stored statistics of a complete ride (nil when it has no power, or they cannot be read).
        public var normalizedPowerWatts: Double?
        public var movingSeconds: Double?
        /// Not complete, and held by a cyclelog that is writing it now (a live ride, a replay): not cut short.
        public var beingWritten: Bool

        init(
            id: Int64, syncIdentifier: String, name: String?, status: WorkoutStatus, contentDigest: String?,
            source: String, startMicroseconds: Int64, elapsedSeconds: Double?, distanceMeters: Double?,
            averagePowerWatts: Double?, statistics: WorkoutStatistics?, beingWritten: Bool
        ) {
            self.id = id
            self.syncIdentifier = syncIdentifier
            self.name = name
            self.status = status
            self.contentDigest = contentDigest
            self.source = source
            self.startMicroseconds = startMicroseconds
            self.elapsedSeconds = elapsedSeconds
            self.distanceMeters = distanceMeters
            self.averagePowerWatts = averagePowerWatts
            normalizedPowerWatts = status == .complete ? statistics?.normalizedPowerWatts : nil
            movingSeconds = status == .complete ? statistics?.movingSeconds : nil
            self.beingWritten = beingWritten
        }
    }

    /// Every workout, newest first.
    public func list() throws(StoreError) -> [ListEntry] {
        try list(startedIn: nil, newest: nil)
    }

    /// Where a ride stands in the list's order (newest first: by start, then by id): a page goes on after it.
    public struct ListPosition: Equatable, Sendable {
        public var startMicroseconds: Int64
        public var id: Int64

        public init(startMicroseconds: Int64, id: Int64) {
            self.startMicroseconds = startMicroseconds
            self.id = id
        }
    }

    /// The position of the ride `id` in the list, nil when there is no such ride.
    public func listPosition(of id: Int64) throws(StoreError) -> ListPosition? {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT startMicroseconds FROM workout WHERE id = ?", arguments: [id]).map {
                ListPosition(startMicroseconds: $0, id: id)
            }
        }
    }

    /// The workouts that started in `range` (µs since 1970, UTC; the end excluded), newest first, at most `newest`
    /// of them, those after `position` alone: read through the index on the start, so that a page costs what it
    /// shows however many are stored (the next page too: two rides that started at the same microsecond are told
    /// apart by their ids, so none is shown twice or passed over).
    public func list(startedIn range: Range<Int64>?, after position: ListPosition? = nil, newest limit: Int?)
        throws(StoreError) -> [ListEntry]
    {
        let now = Self.nowMicroseconds()
        return try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM workout WHERE startMicroseconds >= ? AND startMicroseconds < ?
                    \(position == nil ? "" : "AND (startMicroseconds, id) < (?, ?)")
                    ORDER BY startMicroseconds DESC, id DESC LIMIT ?
                    """,
                arguments: StatementArguments(
                    [range?.lowerBound ?? Int64.min, range?.upperBound ?? Int64.max]
                        + (position.map { [$0.startMicroseconds, $0.id] } ?? []) + [Int64(limit ?? -1)])
            ).map {
                let status = WorkoutStatus(stored: try $0.decode(forColumn: "status"))
                return ListEntry(
                    id: try $0.decode(forColumn: "id"), syncIdentifier: try $0.decode(forColumn: "syncIdentifier"),
                    name: try $0.decode(forColumn: "name"), status: status,
                    contentDigest: Self.contentDigest($0), source: try $0.decode(forColumn: "source"),
                    startMicroseconds: try $0.decode(forColumn: "startMicroseconds"),
                    elapsedSeconds: try $0.decode(forColumn: "elapsedSeconds"),
                    distanceMeters: try $0.decode(forColumn: "distanceMeters"),
                    averagePowerWatts: try $0.decode(forColumn: "averagePowerWatts"),
                    // Damaged statistics are `show`'s to report (with the rebuild hint); a list leaves them out.
                    statistics: (try $0.decode(forColumn: "statistics") as Data?).flatMap {
                        try? StoredPacking.unpackStatistics([UInt8]($0))
                    },
                    // Not complete: held by a cyclelog writing it now, or cut short.
                    beingWritten: status == .complete ? false : try Self.isHeld($0, now: now))
            }
        }
    }

    /// How many workouts started in `range` (µs since 1970, UTC; the end excluded).
    public func count(startedIn range: Range<Int64>?) throws(StoreError) -> Int {
        try read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM workout WHERE startMicroseconds >= ? AND startMicroseconds < ?",
                arguments: [range?.lowerBound ?? Int64.min, range?.upperBound ?? Int64.max]) ?? 0
        }
    }

    /// The random number the triggers of migration v11 set at the database's last change: the same mark, the
    /// same contents. Nil for a database a cyclelog older than that wrote last (the next writing command adds them).
    public func changeMark() throws(StoreError) -> Int64? {
        try read { db in
            try db.tableExists("changeMark")
                ? try Int64.fetchOne(db, sql: "SELECT mark FROM changeMark WHERE id = 1") : nil
        }
    }

    /// `last` → the newest workout's id; a number → itself if it exists.
    public func resolve(_ reference: String) throws(StoreError) -> Int64? {
        try read { db in
            if reference == "last" {
                return try Int64.fetchOne(
                    db, sql: "SELECT id FROM workout ORDER BY startMicroseconds DESC, id DESC LIMIT 1")
            }
            guard let id = Int64(reference) else { return nil }
            return try Int64.fetchOne(db, sql: "SELECT id FROM workout WHERE id = ?", arguments: [id])
        }
    }

    /// The stored summary of a complete workout; nil for an unknown id or a workout still 'recording'. Damaged
    /// sample chunks are left out as gaps and named in `damagedParts`.
    public func summary(_ id: Int64) throws(StoreError) -> WorkoutSummary? {
        try ride(id)?.summary
    }

    /// A complete workout as stored: its summary and its 1 Hz series, the series read and unpacked once.
    public struct StoredRide: Sendable {
        public var summary: WorkoutSummary
        /// Each damaged chunk's seconds left out as a gap.
        public var samples: [SecondSample]
        /// What could not be read back, also named in `summary.damagedParts`.
        public var damaged: [DamagedValue]
    }

    /// The stored ride of a complete workout; nil for an unknown id or a workout still 'recording'. Without
    /// `analysed` the summary has no `analysis` (its FTP context, zones and W′ balance), which a file written for
    /// another program does not carry.
    public func ride(_ id: Int64, analysed: Bool = true) throws(StoreError) -> StoredRide? {
        try ride(id, analysed: analysed, samplesJustStored: nil)
    }

    /// The same; `samplesJustStored`, the 1 Hz series this process has just stored (`StoredPacking.asStored`),
    /// spares reading and unpacking it again.
    func ride(_ id: Int64, analysed: Bool = true, samplesJustStored: [SecondSample]?) throws(StoreError)
        -> StoredRide?
    {
        guard var summary = try storedSummary(id) else { return nil }
        let samples: [SecondSample], damaged: [DamagedValue]
        if let samplesJustStored {
            (samples, damaged) = (samplesJustStored, [])
        } else {
            (samples, damaged) = try samplesReadingPastDamage(id)
        }
        summary.damagedParts += damaged.map { "\($0.table): \($0.problem)" }
        if analysed {
            let history = try ftpHistory(asOf: [summary.startMicroseconds, .max])
            summary.analysis = RideAnalysis(
                samples: samples, statistics: summary.statistics,
                ftp: history.inForce(at: summary.startMicroseconds),
                criticalPower: history.criticalPower(at: summary.startMicroseconds))
            let test = Self.testScore(summary, history)
            summary.analysis?.test = test
        }
        return StoredRide(summary: summary, samples: samples, damaged: damaged)
    }

    /// What a complete ride that declared a fitness test gave; nil for a ride without one, an unknown id or a ride
    /// still recording. It reads the ride's stored statistics and the FTP history, not its samples.
    public func testScore(_ id: Int64) throws(StoreError) -> TestScore? {
        guard let summary = try storedSummary(id) else { return nil }
        return Self.testScore(summary, try ftpHistory(asOf: [.max]))
    }

    private static func testScore(_ summary: WorkoutSummary, _ history: FTPHistory) -> TestScore? {
        guard let test = summary.plan.fitnessTest else { return nil }
        let now = history.inForce(at: .max)
        return TestScore(
            test: test, statistics: summary.statistics,
            inForce: now?.workoutId == summary.id && now?.method == test.method)
    }

    /// A plan's name, goal, location and fitness test from the columns a workout and a preset both have.
    static func plan(_ row: Row) throws -> WorkoutPlan {
        WorkoutPlan(
            name: try row.decode(forColumn: "name"),
            goal: (try row.decode(forColumn: "goal") as String?).flatMap(WorkoutGoal.init),
            location: (try row.decode(forColumn: "location") as String?).flatMap(WorkoutLocation.init(rawValue:)),
            fitnessTest: (try row.decode(forColumn: "fitnessTest") as String?).flatMap(FitnessTest.init(rawValue:)))
    }

    private func storedSummary(_ id: Int64) throws(StoreError) -> WorkoutSummary? {
        try read { db -> WorkoutSummary? in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM workout WHERE id = ? AND status = 'complete'", arguments: [id]),
                let statisticsBlob = try row.decode(forColumn: "statistics") as Data?
            else { return nil }
            let statistics: WorkoutStatistics
            do {
                statistics = try StoredPacking.unpackStatistics([UInt8](statisticsBlob))
            } catch {
                throw StoreError(
                    .damaged,
                    "workout \(id): its stored statistics are damaged (table workout: \(error)); `cyclelog rebuild \(id)` "
                        + "makes them again from its journal")
            }
            let start = try row.decode(Int64.self, forColumn: "startMicroseconds")
            let end = try row.decode(Int64?.self, forColumn: "endMicroseconds") ?? start
            guard RideTimeline.plausibleMicroseconds.contains(start), RideTimeline.plausibleMicroseconds.contains(end),
                end >= start
            else {
                throw StoreError(
                    .damaged,
                    "workout \(id): its stored start or end time is damaged (table workout); `cyclelog rebuild \(id)` "
                        + "makes it again from its journal")
            }
            var plan = try Self.plan(row)
            plan.syncIdentifier = try row.decode(forColumn: "syncIdentifier")
            // A database not yet brought up to date has no preset column: no ride was started from one.
            plan.preset = row["preset"]
            let laps = try Row.fetchAll(
                db, sql: "SELECT * FROM lap WHERE workoutId = ? ORDER BY number", arguments: [id]
            )
            .map { lap in
                LapSummary(
                    number: try lap.decode(forColumn: "number"),
                    startMicroseconds: try lap.decode(forColumn: "startMicroseconds"),
                    endMicroseconds: try lap.decode(forColumn: "endMicroseconds"),
                    statistics: try StoredPacking.unpackStatistics(
                        [UInt8](try lap.decode(forColumn: "statistics") as Data)))
            }
            let events = try Row.fetchAll(
                db, sql: "SELECT journalLine FROM workoutEvent WHERE workoutId = ? ORDER BY sequence", arguments: [id]
            ).compactMap { row -> WorkoutEvent? in
                guard let event = try? Journal.event(Substring(try row.decode(forColumn: "journalLine") as String)),
                    case .control(let control) = event.kind
                else { return nil }
                return WorkoutEvent(timeMicroseconds: event.timeMicroseconds, control: control)
            }
            let dropouts = try Row.fetchAll(
                db, sql: "SELECT * FROM dropout WHERE workoutId = ? ORDER BY sequence", arguments: [id]
            ).map {
                DropoutSummary(
                    sensor: try $0.decode(forColumn: "sensor"), reason: try $0.decode(forColumn: "reason"),
                    startMicroseconds: try $0.decode(forColumn: "startMicroseconds"),
                    endMicroseconds: try $0.decode(forColumn: "endMicroseconds"))
            }
            let sensors = try Row.fetchAll(
                db, sql: "SELECT * FROM workoutSensor WHERE workoutId = ? ORDER BY position", arguments: [id]
            ).map { row in
                var sensor = WorkoutSensor(
                    address: try row.decode(forColumn: "address"), name: try row.decode(forColumn: "name"),
                    wheelCircumferenceMillimetres: try row.decode(forColumn: "wheelCircumferenceMillimetres"))
                if let battery = try row.decode(forColumn: "batteryPercent") as Int? {
                    sensor.reads[0x2A19] = [UInt8(clamping: battery)]
                }
                return sensor
            }
            var summary = WorkoutSummary(
                id: id, syncIdentifier: try row.decode(forColumn: "syncIdentifier"),
                version: try row.decode(forColumn: "version"), plan: plan,
                state: Session.State(rawValue: try row.decode(forColumn: "sessionState") ?? "") ?? .ended,
                startMicroseconds: start, endMicroseconds: end,
                statistics: statistics, laps: laps, events: events, dropouts: dropouts, sensors: sensors)
            summary.contentDigest = Self.contentDigest(row)
            // A database not yet brought up to date has no problemCount column: none were counted.
            summary.problemCount = row["problemCount"] ?? 0
            summary.keepTimesInsideTheRide()
            return summary
        }
    }

    /// The raw journal kept with a workout, every chunk that was written (also for a workout cut short).
    public func journal(_ id: Int64) throws(StoreError) -> [RideEvent] {
        try journalEvents(id) { blob throws(CompactJournal.DecodeError) in try CompactJournal.decode(blob) }
    }

    /// The journal's notifications of one characteristic whose value `keep` accepts, without decoding the rest.
    public func journalNotifications(
        _ id: Int64, of characteristic: UInt16, where keep: @escaping @Sendable ([UInt8]) -> Bool
    ) throws(StoreError) -> [RideEvent] {
        try journalEvents(id) { blob throws(CompactJournal.DecodeError) in
            try CompactJournal.notifications(blob, of: characteristic, where: keep)
        }
    }

    private func journalEvents(
        _ id: Int64, _ decode: @escaping @Sendable ([UInt8]) throws(CompactJournal.DecodeError) -> [RideEvent]
    ) throws(StoreError) -> [RideEvent] {
        let blobs = try read { db in try Self.journalChunks(id, db) }
        return try Self.decodeJournal(id, blobs, decode)
    }

    static func journalChunks(_ id: Int64, _ db: Database) throws -> [Data] {
        try Data.fetchAll(
            db, sql: "SELECT events FROM journalChunk WHERE workoutId = ? ORDER BY sequence", arguments: [id])
    }

    /// A workout's journal chunks decoded in order, each on whichever core is free (each stands alone); the
    /// first damaged chunk is an error naming it (code `.damaged`).
    static func decodeJournal(
        _ id: Int64, _ blobs: [Data],
        _ decode: @escaping @Sendable ([UInt8]) throws(CompactJournal.DecodeError) -> [RideEvent]
    ) throws(StoreError) -> [RideEvent] {
        let decoded = parallelMap(blobs.count) { sequence -> Result<[RideEvent], CompactJournal.DecodeError> in
            do throws(CompactJournal.DecodeError) {
                return .success(try decode([UInt8](blobs[sequence])))
            } catch {
                return .failure(error)
            }
        }
        var events: [RideEvent] = []
        for (sequence, chunk) in decoded.enumerated() {
            switch chunk {
            case .success(let chunkEvents): events += chunkEvents
            case .failure(let error):
                throw StoreError(
                    .damaged,
                    "workout \(id): its stored journal is damaged (table journalChunk, chunk \(sequence + 1) of "
                        + "\(blobs.count)): \(error)")
            }
        }
        return events
    }

    /// A stored value that cannot be read back: which ride, which table, what is wrong.
    public struct DamagedValue: CustomStringConvertible, Sendable {
        public var workoutId: Int64
        public var table: String
        public var problem: String
        public var description: String { "workout \(workoutId) \(table): \(problem)" }
    }

    /// The 1 Hz series with each damaged chunk left out as a gap (its seconds empty), and what was left out.
    public func samplesReadingPastDamage(_ id: Int64) throws(StoreError) -> ([SecondSample], [DamagedValue]) {
        try read { db in try Self.samples(id, db) }
    }

    static func samples(_ id: Int64, _ db: Database) throws -> ([SecondSample], [DamagedValue]) {
        let rows = try Row.fetchAll(
            db, sql: "SELECT firstSecond, samples FROM sampleChunk WHERE workoutId = ? ORDER BY firstSecond",
            arguments: [id]
        ).map { (try $0.decode(Int.self, forColumn: "firstSecond"), try $0.decode(Data.self, forColumn: "samples")) }
        // Each chunk stands alone: unpacked on whichever core is free, joined in order.
        var unpacked = parallelMap(rows.count) { index -> Result<[SecondSample], PackedDataError> in
            do throws(PackedDataError) {
                return .success(try StoredPacking.unpackSamples([UInt8](rows[index].1), firstSecond: rows[index].0))
            } catch {
                return .failure(error)
            }
        }
        // Joined into an array of the right size, each chunk let go once copied: a 12-hour ride's 43 200 seconds
        // (4 MB) would otherwise be held twice over, and more while the array grew.
        var samples: [SecondSample] = []
        samples.reserveCapacity(unpacked.reduce(0) { $0 + ((try? $1.get())?.count ?? 0) })
        var damaged: [DamagedValue] = []
        for index in unpacked.indices {
            switch unpacked[index] {
            case .success(let chunkSamples): samples += chunkSamples
            case .failure(let error):
                damaged.append(
                    DamagedValue(
                        workoutId: id, table: "sampleChunk", problem: "second \(rows[index].0) on: \(error)"))
            }
            unpacked[index] = .success([])
        }
        return (samples, damaged)
    }

    /// Every stored value of every ride read back as `show`, `export` and `rebuild` would: what cannot be.
    public func damagedStoredData() throws(StoreError) -> [DamagedValue] {
        let ids = try read { db in try Int64.fetchAll(db, sql: "SELECT id FROM workout ORDER BY id") }
        var damaged: [DamagedValue] = []
        for id in ids {
            do {
                _ = try storedSummary(id)
            } catch {
                damaged.append(DamagedValue(workoutId: id, table: "workout", problem: error.description))
            }
            damaged += try samplesReadingPastDamage(id).1
            let chunks = try read { db in
                try Row.fetchAll(
                    db, sql: "SELECT sequence, events FROM journalChunk WHERE workoutId = ? ORDER BY sequence",
                    arguments: [id]
                ).map {
                    (try $0.decode(Int.self, forColumn: "sequence"), try $0.decode(Data.self, forColumn: "events"))
                }
            }
            for (sequence, blob) in chunks {
                do {
                    _ = try CompactJournal.decode([UInt8](blob))
                } catch {
                    damaged.append(
                        DamagedValue(workoutId: id, table: "journalChunk", problem: "chunk \(sequence): \(error)"))
                }
            }
        }
        return damaged
    }

    /// The stored 1 Hz series; a damaged chunk is an error naming the ride and the table.
    public func samples(_ id: Int64) throws(StoreError) -> [SecondSample] {
        let (samples, damaged) = try samplesReadingPastDamage(id)
        if let first = damaged.first {
            throw StoreError(
                .damaged, "workout \(id): its stored samples are damaged (table sampleChunk, \(first.problem))")
        }
        return samples
    }

    /// Database size in bytes (pages in use), for the storage benchmark.
    public func sizeInBytes() throws(StoreError) -> Int {
        try read { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return (pages - free) * size
        }
    }
}

/// Where a workout row stands (column `status`).
public enum WorkoutStatus: String, Sendable {
    /// Being written, or cut short before its last transaction landed (a crash, a kill, a power cut).
    case recording
    /// Its last transaction landed: summary, samples and journal are whole.
    case complete

    /// From the stored text; anything else is taken as not complete (a row another program changed).
    init(stored: String) {
        self = WorkoutStatus(rawValue: stored) ?? .recording
    }
}
