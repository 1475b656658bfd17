import Concurrency
import Formats
import Foundation
import GRDB
import RideIdentity
import RideJournal
import Workouts

extension WorkoutStore {
    /// A workout already in the database under a sync identifier.
    public struct ExistingWorkout: Equatable, Sendable {
        public var id: Int64
        public var syncIdentifier: String
        public var version: Int
        public var complete: Bool
        /// The content digest of the version stored (RideIdentity), when it was computed by this cyclelog's rule.
        public var contentDigest: String?
        /// The digest of its events without settings: the same for every replay of one recording, whatever its
        /// options; nil for an imported file.
        public var sourceDigest: String?
    }

    /// The two digests of a version of a ride (RideIdentity): its events without settings, and all of it.
    public struct Digests: Equatable, Sendable {
        public var source: String?
        public var content: String

        public init(source: String?, content: String) {
            self.source = source
            self.content = content
        }
    }

    /// The workout of a sync identifier, in whichever case it is written (RFC 9562: UUIDs compare without case).
    public func workout(syncIdentifier: String) throws(StoreError) -> ExistingWorkout? {
        let syncIdentifier = Self.canonical(syncIdentifier)
        return try read { db in
            try Self.existing(db, sql: "SELECT * FROM workout WHERE syncIdentifier = ?", arguments: [syncIdentifier])
        }
    }

    /// The ride that a file with these events (without settings) was stored as, if any: how a file replayed again
    /// finds its ride whatever options it is replayed with.
    public func workout(sourceDigest: String) throws(StoreError) -> ExistingWorkout? {
        try read { db in
            // A database not yet brought up to date has no sourceDigest column.
            guard try db.columns(in: "workout").contains(where: { $0.name == "sourceDigest" }) else { return nil }
            return try Self.existing(
                db, sql: "SELECT * FROM workout WHERE sourceDigest = ? ORDER BY id LIMIT 1", arguments: [sourceDigest])
        }
    }

    private static func existing(
        _ db: Database, sql: String, arguments: StatementArguments
    ) throws -> ExistingWorkout? {
        try Row.fetchOne(db, sql: sql, arguments: arguments).map {
            ExistingWorkout(
                id: $0["id"], syncIdentifier: $0["syncIdentifier"], version: $0["version"],
                complete: WorkoutStatus(stored: $0["status"]) == .complete, contentDigest: contentDigest($0),
                sourceDigest: $0["sourceDigest"])
        }
    }

    /// A workout row's content digest; nil when it was computed by an earlier rule (a database not yet updated).
    static func contentDigest(_ row: Row) -> String? {
        (row["digestVersion"] as Int?) == RideIdentity.digestVersion ? row["journalDigest"] : nil
    }

    /// A build's hold on its workout row: every write checks it, so that two processes building the same ride (two
    /// replays of one file, a recover beside a running recorder) never mix their parts. A hold lapses when its
    /// holder has not written for `claimLapseMicroseconds` (it was killed); another build may then take the row.
    public struct Claim: Sendable {
        public let workoutId: Int64
        let token: String
    }

    /// How long a build may go without writing before its hold lapses. Builders write, or renew, every few seconds.
    public static let claimLapseMicroseconds: Int64 = 15_000_000

    /// What `claimWorkout` found.
    public enum ClaimOutcome: Sendable {
        case claimed(Claim)
        /// Already stored, complete, from the same content.
        case alreadyStored(Int64)
        /// Another cyclelog is writing it right now.
        case busy(Int64)
    }

    /// Takes the row for a build of `syncIdentifier` in one transaction: a new row, or the existing one with its
    /// old content dropped and the next version; unless it is stored complete with the content `digest` already,
    /// or another process holds it.
    public func claimWorkout(
        syncIdentifier: String, source: String, startMicroseconds: Int64, digest: String?,
        rules: ClaimRules = ClaimRules()
    ) throws(StoreError) -> ClaimOutcome {
        let syncIdentifier = Self.canonical(syncIdentifier)
        let now = Self.nowMicroseconds()
        return try write { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM workout WHERE syncIdentifier = ?
                    """, arguments: [syncIdentifier])
            var replacing: Int64?
            if let row {
                let id = try row.decode(Int64.self, forColumn: "id")
                let status = try row.decode(String.self, forColumn: "status")
                if WorkoutStatus(stored: status) == .complete, let digest, Self.contentDigest(row) == digest {
                    return .alreadyStored(id)
                }
                if try Self.isHeld(row, now: now) { return .busy(id) }
                replacing = id
            }
            let token = Self.newClaimToken()
            let id = try Self.claimRow(
                syncIdentifier: syncIdentifier, source: source, startMicroseconds: startMicroseconds,
                replacing: replacing, rules: rules, db)
            try db.execute(
                sql: "UPDATE workout SET claimToken = ?, claimedMicroseconds = ? WHERE id = ?",
                arguments: [token, now, id])
            return .claimed(Claim(workoutId: id, token: token))
        }
    }

    /// Starts writing a new workout (a live ride's, under a new sync identifier): one row marked 'recording' that
    /// later transactions fill in.
    public func beginWorkout(
        syncIdentifier: String, source: String, startMicroseconds: Int64
    ) throws(StoreError) -> Claim {
        switch try claimWorkout(
            syncIdentifier: syncIdentifier, source: source, startMicroseconds: startMicroseconds, digest: nil)
        {
        case .claimed(let claim): return claim
        case .alreadyStored(let id), .busy(let id):
            throw StoreError(.conflict, "workout \(id) already has the sync identifier \(syncIdentifier)")
        }
    }

    /// Whether a workout row is held by a build that wrote recently and, when it runs on this machine, is alive
    /// (a killed replay's hold is let go at once, not after the lapse).
    static func isHeld(_ row: Row, now: Int64) throws -> Bool {
        guard let token = try row.decode(String?.self, forColumn: "claimToken"),
            let claimed = try row.decode(Int64?.self, forColumn: "claimedMicroseconds")
        else { return false }
        let parts = token.split(separator: " ")
        if parts.count == 3, parts[0] == Self.hostName, let pid = Int32(parts[1]),
            kill(pid, 0) != 0 && errno == ESRCH
        {
            return false
        }
        return now - claimed < claimLapseMicroseconds
    }

    /// A new hold's token: this machine, this process, and a random part.
    static func newClaimToken() -> String {
        "\(hostName) \(getpid()) \(UUID().uuidString)"
    }

    /// The wall clock in microseconds since 1970, as the database stores times.
    static func nowMicroseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name.replacingOccurrences(of: " ", with: "_")
    }()

    /// Checks, inside a write, that `claim` still holds its row, and renews it.
    static func renew(_ claim: Claim, _ db: Database, clearing: Bool = false) throws {
        let now = Self.nowMicroseconds()
        try db.execute(
            sql: "UPDATE workout SET claimedMicroseconds = ?, claimToken = ? WHERE id = ? AND claimToken = ?",
            arguments: [now, clearing ? nil : claim.token, claim.workoutId, claim.token])
        guard db.changesCount == 1 else {
            throw StoreError(
                .conflict,
                "workout \(claim.workoutId) was taken over by another cyclelog (or deleted) while this one wrote it; "
                    + "this one stopped and wrote nothing more")
        }
    }

    /// Whether another build holds the workout right now (a recording, a replay).
    public func isBeingWritten(_ id: Int64) throws(StoreError) -> Bool {
        let now = Self.nowMicroseconds()
        return try read { db in try Self.claimColumns(id, db).map { try Self.isHeld($0, now: now) } ?? false }
    }

    /// A workout row's claim, nil when there is no such workout.
    static func claimColumns(_ id: Int64, _ db: Database) throws -> Row? {
        try Row.fetchOne(db, sql: "SELECT claimToken, claimedMicroseconds FROM workout WHERE id = ?", arguments: [id])
    }

    /// Keeps a claim from lapsing while its build has nothing to write (a quiet live ride).
    public func renewClaim(_ claim: Claim) throws(StoreError) {
        try write { db in try Self.renew(claim, db) }
    }

    /// What storing a new version of a ride may do beyond the usual (Docs/guide/sync.md, "Rides on every machine").
    public struct ClaimRules: Sendable, Equatable {
        /// Store a ride whose identity was deleted (here, or on another machine and pulled): its next version,
        /// which cyclelog-sync brings back on every machine. Without it a deleted ride is not stored again.
        public var undelete: Bool
        /// Replace a ride that came from another collector by cyclelog-sync: only a pull does, since its recorder
        /// is elsewhere and a version made here would never be pushed.
        public var replacePulled: Bool

        public init(undelete: Bool = false, replacePulled: Bool = false) {
            self.undelete = undelete
            self.replacePulled = replacePulled
        }
    }

    /// The workout row a new build goes into, marked 'recording': a new row, or the emptied row of the workout
    /// it replaces with its version raised. A deleted ride, or one pulled from another collector, is refused
    /// unless `rules` allow it.
    static func claimRow(
        syncIdentifier: String, source: String, startMicroseconds: Int64, replacing: Int64?, rules: ClaimRules,
        _ db: Database
    ) throws -> Int64 {
        if let id = replacing {
            if !rules.replacePulled,
                let collector = try String.fetchOne(
                    db, sql: "SELECT collector FROM workout WHERE id = ?", arguments: [id])
            {
                // Its next version would stay on this machine (pulled rides are never pushed), and the two would
                // show different numbers for one ride at one version.
                throw StoreError(
                    .conflict,
                    "workout \(id) was recorded by \(collector) and came here by cyclelog-sync: a new version of it is "
                        + "made there (replay or import it on \(collector)); nothing was stored")
            }
            try deleteContent(of: id, db)
            try db.execute(
                sql: """
                    UPDATE workout SET version = version + 1, status = 'recording', source = ?, journalDigest = NULL,
                    startMicroseconds = ?, endMicroseconds = NULL, statistics = NULL WHERE id = ?
                    """, arguments: [source, startMicroseconds, id])
            return id
        }
        // A deleted ride stays deleted (Docs/guide/sync.md: a deleted ride never comes back) unless the rider says to store it
        // again: then it comes back as the version after its deletion (a ride's versions only ever rise), which
        // the shared store takes in place of the deletion.
        if !rules.undelete,
            let deleted = try Row.fetchOne(
                db, sql: "SELECT version, deletedMicroseconds FROM tombstone WHERE syncIdentifier = ?",
                arguments: [syncIdentifier])
        {
            let when = UTCTime.formatSeconds(microseconds: deleted["deletedMicroseconds"])
            throw StoreError(
                .deleted,
                "this ride (\(syncIdentifier)) was deleted at \(when) (here, or on another machine) and is not "
                    + "stored again; to have it back everywhere, run the same command with --undelete")
        }
        let deletedVersion = try Int.fetchOne(
            db, sql: "DELETE FROM tombstone WHERE syncIdentifier = ? RETURNING version", arguments: [syncIdentifier])
        try db.execute(
            sql: "INSERT INTO workout (syncIdentifier, source, startMicroseconds, version) VALUES (?, ?, ?, ?)",
            arguments: [syncIdentifier, source, startMicroseconds, (deletedVersion ?? 0) + 1])
        return db.lastInsertedRowID
    }

    /// Starts rebuilding a workout from its stored journal: everything but the journal is dropped, in one
    /// transaction, unless another cyclelog is writing the workout right now (a recording, another rebuild).
    public func beginRebuild(_ id: Int64) throws(StoreError) -> Claim {
        let now = Self.nowMicroseconds()
        return try write { db in
            guard let row = try Self.claimColumns(id, db) else { throw StoreError(.notFound, "no workout \(id)") }
            if try Self.isHeld(row, now: now) {
                throw StoreError(
                    .conflict,
                    "workout \(id) is being written right now by another cyclelog (a recording or a replay); "
                        + "try again when it is done")
            }
            try Self.deleteContent(of: id, db, keepingJournal: true)
            let token = Self.newClaimToken()
            try db.execute(
                sql: """
                    UPDATE workout SET version = version + 1, status = 'recording', statistics = NULL,
                    claimToken = ?, claimedMicroseconds = ? WHERE id = ?
                    """,
                arguments: [token, now, id])
            return Claim(workoutId: id, token: token)
        }
    }

    /// Samples go in whole chunks of this many seconds: pass `append` whole chunks only.
    public static let secondsPerSampleChunk = StoredPacking.chunkSeconds

    /// One small transaction: the next piece of the raw journal and the 1 Hz samples completed so far.
    public func append(
        to claim: Claim, journalSequence: Int, events: [RideEvent], samples: some Collection<SecondSample>
    ) throws(StoreError) {
        try append(
            to: claim, journalSequence: journalSequence,
            packedJournal: events.isEmpty ? nil : CompactJournal.encode(events), samples: samples)
    }

    /// The same with the journal's piece packed beforehand by `CompactJournal.encode` (a replay packs its pieces
    /// on other cores while it builds the workout); nil when the piece has no events. `durable: false` commits
    /// without waiting for the disk, for what can be made again (a replay's pieces, from its file): see
    /// `write(durable:)`.
    public func append(
        to claim: Claim, journalSequence: Int, packedJournal journal: [UInt8]?,
        samples: some Collection<SecondSample>, durable: Bool = true
    ) throws(StoreError) {
        let id = claim.workoutId
        let chunks = Self.chunks(samples)
        try write(durable: durable) { db in
            try Self.renew(claim, db)
            if let journal {
                try db.execute(
                    sql: "INSERT INTO journalChunk (workoutId, sequence, events) VALUES (?, ?, ?)",
                    arguments: [id, journalSequence, Data(journal)])
            }
            let insert = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO sampleChunk (workoutId, firstSecond, samples) VALUES (?, ?, ?)")
            for (firstSecond, blob) in chunks { try insert.execute(arguments: [id, firstSecond, Data(blob)]) }
        }
    }

    /// The last transaction of a workout: the final 1 Hz series (auto-pause applied), statistics, laps, events,
    /// dropouts and sensors; the workout is 'complete' from here on. Returns the summary as stored.
    @discardableResult
    public func finish(_ claim: Claim, workout: Workout, digests: Digests) throws(StoreError) -> WorkoutSummary {
        try finish(claim, prepared: PreparedWorkout(workout), digests: digests)
    }

    /// A finished workout's power curve, statistics, laps and packed 1 Hz series, made before its last
    /// transaction: a replay prepares them on the core that built the workout while the other still writes the
    /// journal.
    public struct PreparedWorkout: Sendable {
        let built: Built

        public init(_ workout: Workout) {
            built = Built(workout)
        }
    }

    /// The same, prepared beforehand; a ride brought from the shared store takes its row's marks in the same
    /// transaction (a pull cut short after it leaves no pulled ride that looks recorded here).
    @discardableResult
    public func finish(_ claim: Claim, prepared: PreparedWorkout, digests: Digests, pulled: PulledMarks? = nil)
        throws(StoreError) -> WorkoutSummary
    {
        let built = prepared.built
        try write { db in
            try Self.renew(claim, db, clearing: true)
            try Self.insert(built, claim.workoutId, digests: digests, db)
            if let pulled { _ = try Self.mark(claim.workoutId, pulled: pulled, db) }
            try Self.refreshFTPEstimates(db)
        }
        return try saved(claim.workoutId, refreshingFTP: false, samplesJustStored: built.storedSamples)
    }

    /// After a workout's last transaction: the FTP history brought up to date, and the summary as stored. The
    /// 1 Hz series just stored, when there is one, is taken as it is instead of being read back.
    private func saved(_ id: Int64, refreshingFTP: Bool, samplesJustStored: [SecondSample]?) throws(StoreError)
        -> WorkoutSummary
    {
        if refreshingFTP { try refreshFTPEstimates() }
        guard let summary = try ride(id, samplesJustStored: samplesJustStored)?.summary else {
            throw StoreError(.notFound, "workout \(id) vanished while it was saved")
        }
        return summary
    }

    /// Stores a ride imported from a file in one transaction, with the file's bytes for `rebuild`: a new workout,
    /// or (with `replacing`) a new version of an existing one. Nothing is stored if any part fails. Importing many
    /// files, pass `refreshingFTP: false` and call `refreshFTPEstimates` once at the end.
    @discardableResult
    public func saveImported(
        _ prepared: PreparedWorkout, syncIdentifier: String, fileName: String, bytes: [UInt8], digest: String,
        replacing: Int64?, sessionNumber: Int? = nil, refreshingFTP: Bool = true, rules: ClaimRules = ClaimRules()
    ) throws(StoreError) -> WorkoutSummary {
        let syncIdentifier = Self.canonical(syncIdentifier)
        let built = prepared.built
        let workout = built.workout
        let (id, written) = try write { db in
            // Looked up again inside the transaction: another cyclelog may have imported the same file a moment ago.
            let current = try Self.existing(
                db, sql: "SELECT * FROM workout WHERE syncIdentifier = ?", arguments: [syncIdentifier])
            if let current, current.complete, current.contentDigest == digest { return (current.id, false) }
            let id = try Self.claimRow(
                syncIdentifier: syncIdentifier, source: fileName, startMicroseconds: workout.startMicroseconds,
                replacing: current?.id ?? replacing, rules: rules, db)
            try db.execute(
                sql: "INSERT INTO importedFile (workoutId, fileName, bytes, session) VALUES (?, ?, ?, ?)",
                arguments: [id, fileName, Data(bytes), sessionNumber])
            try Self.insert(built, id, digests: Digests(source: nil, content: digest), db)
            return (id, true)
        }
        Stages.mark("written")
        // A ride found stored (by another cyclelog a moment ago) is read back: it may have been built otherwise.
        return try saved(id, refreshingFTP: refreshingFTP, samplesJustStored: written ? built.storedSamples : nil)
    }

    /// A workout's imported file, if it was imported: its name and bytes.
    public func importedFile(_ id: Int64) throws(StoreError) -> (fileName: String, bytes: [UInt8], session: Int?)? {
        try read { db in
            // `*`: a database not yet brought up to date by a writing command has no session column (nil then).
            try Row.fetchOne(db, sql: "SELECT * FROM importedFile WHERE workoutId = ?", arguments: [id]).map {
                (
                    try $0.decode(String.self, forColumn: "fileName"),
                    [UInt8](try $0.decode(Data.self, forColumn: "bytes")),
                    try $0.decode(Int?.self, forColumn: "session")
                )
            }
        }
    }

    /// What `insert` writes, computed before the transaction so that it holds the lock briefly.
    struct Built: Sendable {
        var workout: Workout
        var curve: PowerCurve
        var statistics: WorkoutStatistics
        var chunks: [(Int, [UInt8])]
        var laps: [LapSummary]
        /// The 1 Hz series as the chunks read back.
        var storedSamples: [SecondSample]

        /// The power curve, statistics, laps and the series as it will read back on one core while the 1 Hz series
        /// is packed, chunk by chunk, on the other(s): for a four-hour ride, 240 chunks to pack and deflate.
        init(_ workout: Workout) {
            self.workout = workout
            let groups = WorkoutStore.chunkGroups(workout.samples)
            // The curve first, on its own: it shares its durations out over the cores itself, which it cannot do
            // as one item among others (a nested share-out runs on one core).
            let curve = workout.powerCurve
            let (analysis, chunks) = parallelMap(
                first: {
                    (
                        workout.statistics(powerCurve: curve), workout.laps(wholeRidePowerCurve: curve),
                        StoredPacking.asStored(groups)
                    )
                },
                groups.count
            ) { (groups[$0].firstSecond, StoredPacking.packSamples(groups[$0].samples)) }
            self.curve = curve
            (statistics, laps, storedSamples) = analysis
            self.chunks = chunks
        }
    }

    /// Replaces a workout's built rows with these and marks it complete.
    static func insert(_ built: Built, _ id: Int64, digests: Digests, _ db: Database) throws {
        let (workout, curve, statistics, chunks, laps) = (
            built.workout, built.curve, built.statistics, built.chunks, built.laps
        )
        try Self.deleteContent(of: id, db, keepingJournal: true)
        // One statement for a ride's 240 minutes (4 hours), compiled once.
        let insert = try db.cachedStatement(
            sql: "INSERT INTO sampleChunk (workoutId, firstSecond, samples) VALUES (?, ?, ?)")
        for (firstSecond, blob) in chunks { try insert.execute(arguments: [id, firstSecond, Data(blob)]) }
        try db.execute(
            sql: "INSERT INTO powerCurve (workoutId, watts) VALUES (?, ?)",
            arguments: [id, Data(StoredPacking.packCurve(curve))])
        for lap in laps {
            try db.execute(
                sql: "INSERT INTO lap VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    id, lap.number, lap.startMicroseconds, lap.endMicroseconds,
                    Data(StoredPacking.packStatistics(lap.statistics)),
                ])
        }
        for (sequence, event) in workout.events.enumerated() {
            try db.execute(
                sql: "INSERT INTO workoutEvent VALUES (?, ?, ?, ?)",
                arguments: [
                    id, sequence, event.timeMicroseconds,
                    Journal.line(RideEvent(timeMicroseconds: event.timeMicroseconds, .control(event.control))),
                ])
        }
        for (sequence, dropout) in workout.dropouts.enumerated() {
            try db.execute(
                sql: "INSERT INTO dropout VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    id, sequence, workout.sensors[dropout.sensorIndex].address, dropout.reason.rawValue,
                    dropout.start, dropout.end,
                ])
        }
        for (position, sensor) in workout.sensors.enumerated() {
            try db.execute(
                sql: "INSERT INTO workoutSensor VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    id, position, sensor.address, sensor.name, sensor.wheelCircumferenceMillimetres,
                    sensor.batteryPercent,
                ])
            try db.execute(
                sql: """
                    INSERT INTO sensor (address, name, wheelCircumferenceMillimetres, lastSeenMicroseconds)
                    VALUES (?, ?, NULL, ?)
                    ON CONFLICT(address) DO UPDATE SET name = coalesce(excluded.name, name),
                    lastSeenMicroseconds = max(coalesce(lastSeenMicroseconds, 0), excluded.lastSeenMicroseconds)
                    """, arguments: [sensor.address, sensor.name, workout.endMicroseconds])
        }
        try db.execute(
            sql: """
                UPDATE workout SET status = 'complete', journalDigest = ?, sourceDigest = ?, digestVersion = ?,
                problemCount = ?, name = CASE renamed WHEN 1 THEN name ELSE ? END, preset = ?, location = ?, goal = ?,
                sessionState = ?, startMicroseconds = ?, endMicroseconds = ?, elapsedSeconds = ?,
                movingSeconds = ?, distanceMeters = ?, averagePowerWatts = ?, statistics = ?,
                fitnessTest = coalesce(?, fitnessTest)
                WHERE id = ?
                """,
            arguments: [
                digests.content, digests.source, RideIdentity.digestVersion, workout.problemCount, workout.plan.name,
                workout.plan.preset, workout.plan.location?.rawValue,
                workout.plan.goal?.description, workout.state.rawValue, workout.startMicroseconds,
                workout.endMicroseconds, statistics.elapsedSeconds, statistics.movingSeconds,
                statistics.distanceMeters, statistics.averagePowerWatts,
                Data(StoredPacking.packStatistics(statistics)), workout.plan.fitnessTest?.rawValue, id,
            ])
    }

    /// Deletes a workout and everything stored with it. With `leavingNoTrace`, a workout that never had a version
    /// before this one (a replay that found no measurement) goes without a tombstone: there is no ride for the
    /// shared store to delete.
    public func delete(_ id: Int64, leavingNoTrace: Bool = false) throws(StoreError) -> Bool {
        let deleted = try write { db in
            // Its deletion is the ride's next version, kept as a tombstone for the shared store.
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO tombstone (syncIdentifier, version, deletedMicroseconds)
                    SELECT syncIdentifier, version + 1, ? FROM workout WHERE id = ? AND NOT (? AND version = 1)
                    """, arguments: [Self.nowMicroseconds(), id, leavingNoTrace])
            try db.execute(sql: "DELETE FROM workout WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
        try refreshFTPEstimates()
        return deleted
    }

    /// Gives a saved ride the rider's name for it, kept over the recorded name by every rebuild. A change of the
    /// ride: its next version, which the shared store takes in place of the last. Returns false when the ride
    /// already had that name (nothing changes).
    public func rename(_ id: Int64, to name: String) throws(StoreError) -> Bool {
        try write { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT status, collector FROM workout WHERE id = ?", arguments: [id])
            else { throw StoreError(.notFound, "no workout \(id)") }
            guard WorkoutStatus(stored: row["status"]) == .complete else {
                throw StoreError(
                    .conflict, "workout \(id) is not saved yet (being recorded or rebuilt); rename it once it is")
            }
            if let collector: String = row["collector"] {
                // Pulled rides are never pushed back, so a name given here would be replaced by the next pull.
                throw StoreError(
                    .conflict,
                    "workout \(id) was recorded by \(collector) and came here by cyclelog-sync; rename it there")
            }
            try db.execute(
                sql: "UPDATE workout SET name = ?, renamed = 1, version = version + 1 WHERE id = ? AND name IS NOT ?",
                arguments: [name, id, name])
            let changed = db.changesCount > 0
            if !changed { try db.execute(sql: "UPDATE workout SET renamed = 1 WHERE id = ?", arguments: [id]) }
            return changed
        }
    }

    /// Everything built from a workout's journal; the journal itself is `journalChunk`.
    static let builtTables = ["lap", "workoutEvent", "dropout", "workoutSensor", "sampleChunk", "powerCurve"]

    /// What a workout is built from: the journal of a recorded ride, the file of an imported one.
    static let sourceTables = ["journalChunk", "importedFile"]

    /// Deletes a workout's rows in every table but `workout`, or all but its source when it is to be rebuilt.
    static func deleteContent(of id: Int64, _ db: Database, keepingJournal: Bool = false) throws {
        for table in builtTables + (keepingJournal ? [] : sourceTables) {
            try db.execute(sql: "DELETE FROM \(table) WHERE workoutId = ?", arguments: [id])
        }
    }

    /// Samples grouped by the minute they start in, packed.
    static func chunks(_ samples: some Collection<SecondSample>) -> [(Int, [UInt8])] {
        chunkGroups(samples).map { ($0.firstSecond, StoredPacking.packSamples($0.samples)) }
    }

    /// Samples by the chunk they are stored in, in order of time: each chunk is a run of the samples in order (a
    /// workout's already are: then they are not copied to be sorted).
    static func chunkGroups(_ samples: some Collection<SecondSample>) -> [(firstSecond: Int, samples: [SecondSample])] {
        func runs(_ ordered: some Collection<SecondSample>) -> [(firstSecond: Int, samples: [SecondSample])] {
            func chunk(_ sample: SecondSample) -> Int {
                sample.second / StoredPacking.chunkSeconds * StoredPacking.chunkSeconds
            }
            var groups: [(firstSecond: Int, samples: [SecondSample])] = []
            var start = ordered.startIndex
            while start != ordered.endIndex {
                let first = chunk(ordered[start])
                let end = ordered[start...].firstIndex { chunk($0) != first } ?? ordered.endIndex
                groups.append((first, Array(ordered[start..<end])))
                start = end
            }
            return groups
        }
        let inOrder = zip(samples, samples.dropFirst()).allSatisfy { $0.second <= $1.second }
        return inOrder ? runs(samples) : runs(samples.sorted { $0.second < $1.second })
    }
}
