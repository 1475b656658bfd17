import Formats
import Foundation
import PostgresNIO
import Recording
import RideJournal
import StructuredWorkouts
import WorkoutStore
import Workouts

/// Keeps one database's rides consistent with the shared store: pushes the rides recorded here by sync identifier
/// and version (the server applies the rule of `cyclelog_push`), pulls this rider's rides recorded elsewhere, and
/// settles conflicts. Each ride is its own transaction on the server; a ride the server refuses is reported and
/// the others go on.
public struct Synchronizer: Sendable {
    public let local: WorkoutStore
    public let server: SharedStore
    /// The largest journal or file a ride pulled from the shared store may carry (`defaultLargestPulledRideBytes`).
    public var largestPulledRideBytes: Int

    public init(
        local: WorkoutStore, server: SharedStore, largestPulledRideBytes: Int = Self.defaultLargestPulledRideBytes
    ) {
        self.local = local
        self.server = server
        self.largestPulledRideBytes = largestPulledRideBytes
    }

    /// 100 MB: about 58 hours of a ride's journal with power, speed and heart rate (1.7 MB an hour), or a FIT file
    /// many times that. Anyone who can write the shared table could put a row there that no ride needs, and a pull
    /// reads each ride whole and parses it in memory: a larger row is refused, before its content is sent, and
    /// the other rides go on (Docs/guide/sync.md).
    public static let defaultLargestPulledRideBytes = 100_000_000

    // MARK: The schema

    /// Creates or brings up to date the server's schema; returns the migrations applied now.
    public static func initialize(_ server: SharedStore) async throws(SyncError) -> [String] {
        try await server.transaction { server throws(SyncError) in
            try await server.execute("SELECT pg_advisory_xact_lock(\(ServerSchema.lockKey))")
            try await server.execute(
                """
                CREATE TABLE IF NOT EXISTS cyclelog_migration (
                    name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            let applied: [String] = try await server.rows("SELECT name FROM cyclelog_migration", as: String.self)
            var done: [String] = []
            for migration in try ServerSchema.missing(applied: applied) {
                for statement in migration.statements { try await server.execute(PostgresQuery(unsafeSQL: statement)) }
                try await server.execute("INSERT INTO cyclelog_migration (name) VALUES (\(migration.name))")
                done.append(migration.name)
            }
            return done
        }
    }

    /// Refuses a server without this program's schema, or with a newer one, before anything is sent.
    func checkSchema() async throws(SyncError) {
        let applied: [String]
        do {
            applied = try await server.rows("SELECT name FROM cyclelog_migration", as: String.self)
        } catch  where error.kind == .server {
            throw SyncError(.schema, "the shared store has no cyclelog schema yet: `cyclelog-sync init` makes it")
        }
        if let missing = try ServerSchema.missing(applied: applied).first?.name {
            throw SyncError(.schema, "the shared store lacks \"\(missing)\": `cyclelog-sync init` brings it up to date")
        }
    }

    /// This database as the server knows it: its rider's and its collector's UUIDs, read once.
    struct Identity {
        var riderID: UUID
        var collectorID: UUID
    }

    /// Names this rider and collector on the server (a renamed rider is renamed there too).
    func register() async throws(SyncError) -> Identity {
        try await checkSchema()
        let rider = try await localCall { try $0.rider() }
        guard let riderID = UUID(uuidString: rider.uuid), let collectorID = UUID(uuidString: rider.collectorUUID) else {
            throw SyncError(.local, "the database's rider has no valid UUID")
        }
        let holders = try await server.rows(
            "SELECT id FROM rider WHERE name = \(rider.name) AND id <> \(riderID)", as: UUID.self)
        if !holders.isEmpty {
            throw SyncError(
                .refused,
                "the shared store already has another rider named \(rider.name): `cyclelog-sync join \(rider.name)` "
                    + "makes this machine's rides theirs; `cyclelog rider NEW-NAME` names this rider otherwise")
        }
        // Two collectors of one rider registering at the same moment insert the same row: an upsert on the id alone
        // can then fail on the name's own unique index (PostgreSQL checks only the arbiter index for the
        // conflict), so the row is inserted if missing, whatever unique index finds it there, and renamed apart.
        try await server.execute(
            "INSERT INTO rider (id, name) VALUES (\(riderID), \(rider.name)) ON CONFLICT DO NOTHING")
        try await server.execute(
            "UPDATE rider SET name = \(rider.name) WHERE id = \(riderID) AND name IS DISTINCT FROM \(rider.name)")
        try await server.execute(
            """
            INSERT INTO collector (id, name, rider_id) VALUES (\(collectorID), \(rider.collectorName), \(riderID))
            ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, rider_id = EXCLUDED.rider_id, last_seen = now()
            """)
        return Identity(riderID: riderID, collectorID: collectorID)
    }

    // MARK: Push

    /// What the server did with one ride (or tombstone) pushed.
    public struct Pushed: Sendable, Equatable {
        public enum Result: String, Sendable {
            case inserted, replaced, unchanged, conflict, stale, refused
            /// `--dry-run`: would be sent.
            case pending
        }

        public var syncIdentifier: String
        public var version: Int
        /// The local workout; nil for a tombstone.
        public var id: Int64?
        public var result: Result
        /// Why the server refused it.
        public var reason: String?

        public init(syncIdentifier: String, version: Int, id: Int64? = nil, result: Result, reason: String? = nil) {
            self.syncIdentifier = syncIdentifier
            self.version = version
            self.id = id
            self.result = result
            self.reason = reason
        }

        /// One version of one ride (or its deletion), as sent.
        var attempt: String { Self.attempt(syncIdentifier, version) }
        static func attempt(_ syncIdentifier: String, _ version: Int) -> String { "\(syncIdentifier) v\(version)" }
    }

    /// What a push would send (`push --dry-run`), from the local database alone: each as `pending`.
    public static func pending(in local: WorkoutStore) throws(StoreError) -> [Pushed] {
        try local.pendingRides().map {
            Pushed(syncIdentifier: $0.syncIdentifier, version: $0.version, id: $0.id, result: .pending)
        }
            + local.tombstones(pendingOnly: true).map {
                Pushed(syncIdentifier: $0.syncIdentifier, version: $0.version, result: .pending)
            }
    }

    /// Sends every ride recorded here that the server has not acknowledged at its version, then every tombstone.
    public func push() async throws(SyncError) -> [Pushed] {
        try await push(as: try await register())
    }

    /// `cyclelog-sync sync`: a push, a pull, then a push of what was saved meanwhile. A ride saved while a sync runs
    /// has its trigger merged by systemd into the run already going (a oneshot unit is not started twice), so the
    /// run sends it itself instead of leaving it to the timer; what the first push tried is not sent again.
    public func sync() async throws(SyncError) -> (pushed: [Pushed], pulled: [Pulled]) {
        let identity = try await register()
        var pushed = try await push(as: identity)
        let pulled = try await pull(as: identity)
        pushed += try await push(as: identity, skipping: Set(pushed.map(\.attempt)))
        return (pushed, pulled)
    }

    /// `skipping`: attempts (`Pushed.attempt`) already made in this run.
    func push(as identity: Identity, skipping: Set<String> = []) async throws(SyncError) -> [Pushed] {
        let pending = try await localCall { try $0.pendingRides() }.filter {
            !skipping.contains(Pushed.attempt($0.syncIdentifier, $0.version))
        }
        let tombstones = try await localCall { try $0.tombstones(pendingOnly: true) }.filter {
            !skipping.contains(Pushed.attempt($0.syncIdentifier, $0.version))
        }
        var report: [Pushed] = []
        if !pending.isEmpty { try await server.preferFastCompression() }
        // Each ride is read and its journal written out while the one before it is with the server, each on a core
        // (a first sync took 1.55× the time of psql COPY one ride after the other; Benchmarks/results.md has it now).
        var next = await prepare(pending.first)
        for index in pending.indices {
            let current = try next.get()
            async let following = prepare(pending.indices.contains(index + 1) ? pending[index + 1] : nil)
            if let current { report.append(try await push(current, as: identity)) }
            next = await following
        }
        for tombstone in tombstones {
            guard let sync = UUID(uuidString: tombstone.syncIdentifier) else { continue }
            let result = try await callPush(
                sync: sync, as: identity, version: tombstone.version, digest: nil, journal: nil, file: nil,
                fitnessTest: nil, summary: nil, start: nil, end: nil)
            // Stale: the server deleted it already, or holds a newer version that a pull brings back.
            if result.result != .refused && result.result != .conflict {
                try await localCall { try $0.markTombstoneSynced(tombstone.syncIdentifier, version: tombstone.version) }
            }
            report.append(
                Pushed(
                    syncIdentifier: tombstone.syncIdentifier, version: tombstone.version, result: result.result,
                    reason: result.reason))
        }
        return report
    }

    /// A ride as it is pushed: what `cyclelog_push` takes, or why it cannot be sent.
    private enum Outgoing: Sendable {
        case refused(Pushed)
        case ride(
            WorkoutStore.PendingRide, sync: UUID, journal: String?,
            file: (fileName: String, bytes: [UInt8], session: Int?)?, summary: String, start: Date, end: Date)
    }

    /// Reads `ride` (nil: nothing) and makes what is sent of it, in one trip to the database.
    private func prepare(_ ride: WorkoutStore.PendingRide?) async -> Result<Outgoing?, SyncError> {
        guard let ride else { return .success(nil) }
        @Sendable func refused(_ reason: String) -> Outgoing {
            .refused(
                Pushed(
                    syncIdentifier: ride.syncIdentifier, version: ride.version, id: ride.id, result: .refused,
                    reason: reason))
        }
        guard let sync = UUID(uuidString: ride.syncIdentifier) else {
            return .success(refused("its sync identifier \(ride.syncIdentifier) is not a UUID"))
        }
        do {
            return .success(
                try await localCall { local -> Outgoing in
                    guard let stored = try local.ride(ride.id, analysed: true) else {
                        return refused("it could not be read back")
                    }
                    var journal: String?
                    var file: (fileName: String, bytes: [UInt8], session: Int?)?
                    let events = try local.journal(ride.id)
                    if events.isEmpty {
                        file = try local.importedFile(ride.id)
                        if file == nil { return refused("it has neither a journal nor an imported file") }
                    } else {
                        journal = Journal.text(events)
                    }
                    let summary = stored.summary
                    return .ride(
                        ride, sync: sync, journal: journal, file: file, summary: summary.json.rendered(),
                        start: Date(timeIntervalSince1970: Double(summary.startMicroseconds) / 1_000_000),
                        end: Date(timeIntervalSince1970: Double(summary.endMicroseconds) / 1_000_000))
                })
        } catch {
            return .failure(error)
        }
    }

    private func push(_ outgoing: Outgoing, as identity: Identity) async throws(SyncError) -> Pushed {
        switch outgoing {
        case .refused(let pushed): return pushed
        case .ride(let ride, let sync, let journal, let file, let summary, let start, let end):
            let result = try await callPush(
                sync: sync, as: identity, version: ride.version, digest: ride.contentDigest, journal: journal,
                file: file, fitnessTest: ride.fitnessTest, summary: summary, start: start, end: end)
            switch result.result {
            case .inserted, .replaced, .unchanged:
                try await localCall { try $0.markSynced(ride.id, version: ride.version, digest: ride.contentDigest) }
            default: break
            }
            return Pushed(
                syncIdentifier: ride.syncIdentifier, version: ride.version, id: ride.id, result: result.result,
                reason: result.reason)
        }
    }

    /// One call of the server's rule; a nil digest is a tombstone.
    private func callPush(
        sync: UUID, as identity: Identity, version: Int, digest: String?, journal: String?,
        file: (fileName: String, bytes: [UInt8], session: Int?)?, fitnessTest: String?, summary: String?, start: Date?,
        end: Date?
    ) async throws(SyncError) -> (result: Pushed.Result, reason: String?) {
        let bytes = file.map { ByteBuffer(bytes: $0.bytes) }
        // In a transaction of its own, so that the answer counts only once COMMIT has returned: on its own, the
        // statement's row and its completion arrive before the server commits it (at the protocol's Sync), and a
        // server that stopped in between lost a ride this side had marked as pushed (the fault tests, 1 in 50).
        let answer =
            try await server.transaction { server throws(SyncError) in
                try await server.rows(
                    """
                    SELECT cyclelog_push(\(sync), \(identity.riderID), \(identity.collectorID), \(version)::integer,
                        \(digest)::text, \(journal)::text, \(bytes)::bytea, \(file?.fileName)::text,
                        \(file?.session)::integer, \(fitnessTest)::text, \(summary)::jsonb, \(start)::timestamptz,
                        \(end)::timestamptz)
                    """, as: String.self
                )
            }.first ?? "refused: no answer"
        if answer.hasPrefix("refused: ") {
            return (.refused, ShownText.cut(answer.dropFirst("refused: ".count), to: SyncError.longestDescription))
        }
        guard let result = Pushed.Result(rawValue: answer) else {
            return (.refused, "the server answered \(ShownText.cut(answer, to: 200))")
        }
        return (result, nil)
    }

    // MARK: Pull

    /// What a pull did with one of the server's rides.
    public struct Pulled: Sendable, Equatable {
        public enum Result: String, Sendable {
            /// Stored here (new, or a newer version of one held here).
            case stored
            /// Deleted here, as it was on the server.
            case deleted
            /// Held here already at that version and content: now marked as acknowledged.
            case acknowledged
            /// Could not be stored here (`problem` says why); the other rides went on.
            case skipped
        }

        public var syncIdentifier: String
        public var version: Int
        public var result: Result
        /// The workout here, when there is one.
        public var id: Int64?
        /// Something to know: the rebuilt ride's content differs from the server's, say.
        public var problem: String?
    }

    /// Brings this rider's rides from the server that this database does not hold at their version: rides recorded
    /// elsewhere, newer versions, deletions. A ride being recorded here, one with a newer or conflicting version
    /// here, or one deleted here, is left for the push.
    public func pull() async throws(SyncError) -> [Pulled] {
        try await pull(as: try await register())
    }

    func pull(as identity: Identity) async throws(SyncError) -> [Pulled] {
        // The horizon is read before the rows: every transaction below it had ended, so what it wrote is in the rows
        // read next. Rows written by transactions from the horizon on are read again at the next pull, where a row
        // this database holds at its version changes nothing.
        guard
            let (store, horizon, newest) = try await server.rows(
                """
                SELECT id, pg_snapshot_xmin(pg_current_snapshot())::text::bigint,
                    pg_snapshot_xmax(pg_current_snapshot())::text::bigint FROM cyclelog_store
                """, as: (UUID, Int64, Int64).self
            ).first
        else { throw SyncError(.schema, "the shared store has lost its identity (table cyclelog_store is empty)") }
        let rider = identity.riderID.lowercased
        var since = try await localCall { try $0.pullHorizon(store: store.lowercased, rider: rider) } ?? 0
        // A store restored from a dump into a younger cluster counts transactions from lower down: all is read.
        if since > newest { since = 0 }
        let rides = try await server.rows(
            """
            SELECT r.sync_identifier, r.version, r.content_digest, r.deleted, r.collector_id, c.name,
                r.changed_by::text::bigint
            FROM ride r JOIN collector c ON c.id = r.collector_id
            WHERE r.rider_id = \(identity.riderID) AND r.changed_by >= \(String(since))::xid8
            ORDER BY r.start_time NULLS FIRST, r.sync_identifier
            """, as: (UUID, Int, String?, Bool, UUID, String, Int64).self)
        // A pull with nothing new reads no ride here either.
        let copies = rides.isEmpty ? [:] : try await localCall { try $0.localCopies() }
        // What each row asks of this database, decided from the copies read once (what is done to one ride changes
        // no other's copy).
        var steps: [PullStep] = []
        // The oldest write left for a later pull (a ride being recorded here, one not taken): the horizon stays
        // below it.
        var left: Int64?
        for (sync, version, digest, deleted, collectorID, collectorName, changedBy) in rides {
            let key = sync.lowercased
            let copy = copies[key]
            if let copy {
                // Being recorded here: what its push meets decides, so the row is read again.
                if !copy.complete {
                    left = min(left ?? changedBy, changedBy)
                    continue
                }
                // Newer here, or deleted here at this version or later: the push's to send.
                if copy.version > version || (copy.deleted && (deleted || copy.version >= version)) {
                    continue
                }
                if !copy.deleted && copy.version == version {
                    // The same content is acknowledged; other content is a conflict the push reports.
                    if let id = copy.id, let digest, !deleted, copy.contentDigest == digest,
                        copy.syncedVersion != version
                    {
                        steps.append(.acknowledge(id, key: key, version: version, digest: digest))
                    }
                    continue
                }
            }
            if deleted {
                if let copy, !copy.deleted { steps.append(.delete(key: key, version: version, id: copy.id)) }
                continue
            }
            // A ride recorded here too (the same capture replayed on two machines) stays this collector's.
            let heldHere = copy.map { !$0.deleted && $0.collector == nil } ?? false
            let recordedHere = collectorID == identity.collectorID || heldHere
            steps.append(
                .bring(
                    Bringing(
                        sync: sync, version: version, collector: recordedHere ? nil : collectorName,
                        protecting: heldHere ? copy?.id : nil, changedBy: changedBy)))
        }
        let bringing = steps.compactMap { step -> Bringing? in
            if case .bring(let ride) = step { return ride }
            return nil
        }
        var report: [Pulled] = []
        // The rides brought are read from the server one ahead of the one being stored: the next one's row travels
        // and its journal is parsed on one core while this one is rebuilt and written (a replay's serial parts
        // leave the other core idle): two rides' journals in memory at most.
        let failure: SyncError? = await withTaskGroup(of: Result<ServerRide, SyncError>.self) { group in
            var ahead = bringing.makeIterator()
            func readAhead() {
                guard let ride = ahead.next() else { return }
                group.addTask {
                    do throws(SyncError) {
                        return .success(try await serverRide(ride.sync, ride.collector))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            readAhead()
            for step in steps {
                do throws(SyncError) {
                    switch step {
                    case .acknowledge(let id, let key, let version, let digest):
                        try await localCall { try $0.markSynced(id, version: version, digest: digest) }
                        report.append(Pulled(syncIdentifier: key, version: version, result: .acknowledged, id: id))
                    case .delete(let key, let version, let id):
                        try await localCall { try $0.deletePulled(key, version: version) }
                        report.append(Pulled(syncIdentifier: key, version: version, result: .deleted, id: id))
                    case .bring(let ride):
                        guard let read = await group.next() else { preconditionFailure("each ride brought is read") }
                        readAhead()
                        do throws(SyncError) {
                            report.append(
                                try await take(
                                    read.get(), sync: ride.sync, version: ride.version, collector: ride.collector,
                                    protecting: ride.protecting))
                        } catch  where error.kind == .local || error.kind == .refused {
                            left = min(left ?? ride.changedBy, ride.changedBy)
                            report.append(
                                Pulled(
                                    syncIdentifier: ride.sync.lowercased, version: ride.version, result: .skipped,
                                    problem: error.description))
                        }
                    }
                } catch {
                    return error
                }
            }
            return nil
        }
        if let failure { throw failure }
        let reached = min(horizon, left ?? horizon)
        if reached != since {
            try await localCall { try $0.setPullHorizon(reached, store: store.lowercased, rider: rider) }
        }
        return report
    }

    /// What the pull does with one row of the server's, in the order of the rows.
    enum PullStep {
        /// The same content here, now known to be on the server at that version.
        case acknowledge(Int64, key: String, version: Int, digest: String)
        case delete(key: String, version: Int, id: Int64?)
        case bring(Bringing)
    }

    /// A ride to bring from the server: its version there, the collector it is shown as recorded by (nil: this
    /// one), and the ride recorded here that it may only replace with another version of the same recording.
    struct Bringing: Sendable {
        var sync: UUID
        var version: Int
        var collector: String?
        var protecting: Int64?
        var changedBy: Int64
    }

    /// One ride's row as the shared store holds it, its journal already read into events: what `take` checks
    /// and rebuilds.
    struct ServerRide: Sendable {
        var digest: String
        var journal: CaptureFile?
        var file: ByteBuffer?
        var fileName: String?
        var session: Int?
        var fitnessTest: String?
        var name: String?
    }

    /// Stores the server's copy of one ride here at the server's version (`serverRide`, then `take`).
    func fetch(_ sync: UUID, version: Int, collector: String?, protecting: Int64? = nil) async throws(SyncError)
        -> Pulled
    {
        try await take(
            serverRide(sync, collector), sync: sync, version: version, collector: collector, protecting: protecting)
    }

    /// One ride's row, its journal read (on a thread that may block: a journal is megabytes of lines). A journal
    /// or file larger than `largestPulledRideBytes` is not sent by the server: the ride is refused by its size.
    func serverRide(_ sync: UUID, _ collector: String?) async throws(SyncError) -> ServerRide {
        let largest = largestPulledRideBytes
        guard
            let (digest, journalBytes, fileBytes, journal, file, fileName, session, fitnessTest, name) =
                try await server.rows(
                    """
                    SELECT content_digest, octet_length(journal)::bigint, octet_length(fit_file)::bigint,
                        CASE WHEN octet_length(journal) <= \(largest) THEN journal END,
                        CASE WHEN octet_length(fit_file) <= \(largest) THEN fit_file END,
                        fit_file_name, fit_session, fitness_test, summary ->> 'name'
                    FROM ride WHERE sync_identifier = \(sync) AND NOT deleted
                    """, as: (String, Int64?, Int64?, String?, ByteBuffer?, String?, Int?, String?, String?).self
                ).first
        else { throw SyncError(.refused, "ride \(sync.lowercased) is no longer on the shared store") }
        for (what, bytes) in [("journal", journalBytes), ("file", fileBytes)] {
            guard let bytes, bytes > largest else { continue }
            throw SyncError(
                .refused,
                "ride \(sync.lowercased) from the shared store was not taken: its \(what) is "
                    + "\(StructuredWorkout.byteCount(Int(bytes))), more than the "
                    + "\(StructuredWorkout.byteCount(largest)) a ride from the shared store may be")
        }
        var ride = ServerRide(
            digest: digest, file: file, fileName: fileName, session: session, fitnessTest: fitnessTest, name: name)
        if let journal {
            let label = Self.label(sync, collector)
            ride.journal = await WorkoutStore.blocking { () -> CaptureFile in
                CaptureFile.journal(text: journal, label: label)
            }
        }
        return ride
    }

    /// How a ride from the shared store is named in what its replay says.
    static func label(_ sync: UUID, _ collector: String?) -> String {
        "shared store (\(collector ?? "this collector")) \(sync.lowercased)"
    }

    /// Stores the server's copy of one ride here at the server's version, only when it is the ride the row names
    /// (its identity) with the content the row's digest names: anyone who can write the shared table could
    /// otherwise put another ride, or an edited one, into this database as a ride recorded here. `protecting`, a
    /// ride recorded here, is replaced only by another version of the same recording (the same notifications
    /// replayed with other settings on a copy of this database), never by another ride under its identity. A
    /// journal is checked as its replay here begins, before anything is written, and so built once; a FIT file
    /// (a ride imported elsewhere, which may hold several sessions) is rebuilt in a scratch database first.
    func take(_ ride: ServerRide, sync: UUID, version: Int, collector: String?, protecting: Int64?)
        async throws(SyncError) -> Pulled
    {
        let key = sync.lowercased
        let (digest, file, fileName, session, fitnessTest, name) = (
            ride.digest, ride.file, ride.fileName, ride.session, ride.fitnessTest, ride.name
        )
        let label = Self.label(sync, collector)
        // Pieces of the row that are only shown, bounded as local input is: a name as `rename` takes it.
        let shownName = name.flatMap { WorkoutPlan.name(String($0.prefix(Self.longestName))) }
        func refused(_ reason: String) -> SyncError {
            SyncError(.refused, "ride \(key) v\(version) from the shared store was not taken: \(reason)")
        }
        // The recording a ride recorded here (workout `protecting`) was made from: the only one its pulled versions
        // may be built from.
        var recording: (workout: Int64, source: String)?
        if let protecting {
            let ours: WorkoutStore.ExistingWorkout?
            do throws(StoreError) {
                ours = try await local.call { (store) throws(StoreError) in try store.workout(syncIdentifier: key) }
            } catch {
                throw SyncError.local(error, "ride \(key)")
            }
            guard let source = ours?.sourceDigest else { throw refused(Self.anotherRecording(protecting)) }
            recording = (protecting, source)
        }
        let rules = WorkoutStore.ClaimRules(undelete: true, replacePulled: true)
        let marks = WorkoutStore.PulledMarks(
            version: version, digest: digest, collector: collector,
            fitnessTest: fitnessTest.flatMap { FitnessTest(rawValue: $0)?.rawValue }, name: shownName)
        let outcomes: [Replayer.Outcome]
        if let journal = ride.journal {
            var options = Replayer.Options()
            options.rules = rules
            options.pulled = marks
            options.check = { [recording] identity, digests in
                if identity != key { return "its journal is another ride's (\(identity))" }
                if digests.content != digest { return Self.otherContent(digests.content, claimed: digest) }
                if let recording, digests.source != recording.source {
                    return Self.anotherRecording(recording.workout)
                }
                return nil
            }
            do {
                outcomes = [
                    try await WorkoutStore.blocking { [local, options] in
                        try Replayer(store: local, options: options).replay(journal)
                    }
                ]
            } catch let error as ReplayError where error.code == .unexpectedRide {
                throw refused(error.description)
            } catch let error as ReplayError where error.code != .store && error.code != .busy {
                throw refused("it does not rebuild (\(ShownText.cut(error.description, to: 300)))")
            } catch {
                throw SyncError(.local, "ride \(key) from the shared store could not be stored here: \(error)")
            }
        } else if let file {
            let bytes = [UInt8](file.readableBytesView)
            let shownFileName = fileName.map { String($0.prefix(255)) }
            @Sendable func store(into store: WorkoutStore) throws -> [Replayer.Outcome] {
                var importer = FITImporter(store: store)
                importer.rules = rules
                return try importer.importBytes(bytes, name: shownFileName ?? label)
            }
            // Rebuilt where nothing of this database can be touched, and checked.
            let scratch: WorkoutStore
            let rebuilt: [Replayer.Outcome]
            do {
                scratch = try WorkoutStore()
                rebuilt = try await WorkoutStore.blocking { [scratch] in try store(into: scratch) }
            } catch {
                throw refused("it does not rebuild (\(ShownText.cut("\(error)", to: 300)))")
            }
            guard let candidate = rebuilt.first(where: { WorkoutStore.canonical($0.summary.syncIdentifier) == key })
            else {
                throw refused(
                    "its file is another ride's ("
                        + (rebuilt.map { WorkoutStore.canonical($0.summary.syncIdentifier) }.first ?? "none")
                        + (session.map { ", session \($0) of its file" } ?? "") + ")")
            }
            guard candidate.summary.contentDigest == digest else {
                throw refused(Self.otherContent(candidate.summary.contentDigest, claimed: digest))
            }
            if let recording {
                let theirs: WorkoutStore.ExistingWorkout?
                do throws(StoreError) {
                    theirs = try await scratch.call { (store) throws(StoreError) in
                        try store.workout(syncIdentifier: key)
                    }
                } catch {
                    throw SyncError.local(error, "ride \(key)")
                }
                guard recording.source == theirs?.sourceDigest else {
                    throw refused(Self.anotherRecording(recording.workout))
                }
            }
            do {
                outcomes = try await WorkoutStore.blocking { [local] in try store(into: local) }
            } catch {
                throw SyncError(.local, "ride \(key) from the shared store could not be stored here: \(error)")
            }
        } else {
            throw refused("it does not rebuild (it has neither a journal nor a file)")
        }
        guard let outcome = outcomes.first(where: { WorkoutStore.canonical($0.summary.syncIdentifier) == key }) else {
            throw SyncError(.local, "ride \(key) from the shared store rebuilt to another ride here")
        }
        let id = outcome.summary.id
        // A replayed journal's ride took the marks as it was stored; one stored already, or a file's, takes them now.
        if ride.journal == nil || outcome.alreadyStored {
            try await localCall { try $0.adoptPulled(id, marks) }
        }
        return Pulled(syncIdentifier: key, version: version, result: .stored, id: id)
    }

    /// Why a row whose ride rebuilds to `content` is not taken, its digest claiming `claimed`.
    static func otherContent(_ content: String?, claimed: String) -> String {
        "it rebuilds to content \(content ?? "unknown"), not the \(claimed) the row claims (an edited row, or a "
            + "server that lies)"
    }

    /// Why a ride recorded here (workout `id`) is not replaced by the shared store's version.
    static func anotherRecording(_ id: Int64) -> String {
        "it was recorded here (workout \(id)) and the shared store's version is another recording under its "
            + "identity; this one is kept (`cyclelog-sync push` says if the store holds a newer version)"
    }

    /// The longest ride name taken from the shared store: `rename`'s limit.
    static let longestName = 200

    // MARK: Conflicts, duplicates, riders

    /// A version pushed with other content than the server's, not yet settled.
    public struct Conflict: Sendable, Equatable {
        public var id: Int64
        public var syncIdentifier: String
        public var version: Int
        public var incomingDigest: String?
        /// The collector that pushed the conflicting copy, which alone holds it.
        public var collector: String
        public var collectorUUID: String
        public var serverVersion: Int
        public var serverDigest: String?
        public var serverCollector: String
        public var recordedAt: Date
    }

    public func conflicts() async throws(SyncError) -> [Conflict] {
        try await conflicts(of: try await register())
    }

    func conflicts(of identity: Identity) async throws(SyncError) -> [Conflict] {
        try await server.rows(
            """
            SELECT k.id, k.sync_identifier, k.version, k.content_digest, kc.name, kc.id, r.version, r.content_digest,
                rc.name, k.recorded_at
            FROM ride_conflict k JOIN ride r USING (sync_identifier) JOIN collector kc ON kc.id = k.collector_id
            JOIN collector rc ON rc.id = r.collector_id
            WHERE r.rider_id = \(identity.riderID) AND k.resolved_at IS NULL ORDER BY k.id
            """, as: (Int64, UUID, Int, String?, String, UUID, Int, String?, String, Date).self
        ).map {
            Conflict(
                id: $0.0, syncIdentifier: $0.1.lowercased, version: $0.2, incomingDigest: $0.3, collector: $0.4,
                collectorUUID: $0.5.lowercased, serverVersion: $0.6, serverDigest: $0.7, serverCollector: $0.8,
                recordedAt: $0.9)
        }
    }

    public enum Keep: String, Sendable, CaseIterable {
        case server, local
    }

    /// Settles conflict `id`: `server` stores the server's copy here; `local` pushes this copy as the version after
    /// the server's. Only the collector that pushed the conflicting copy holds it, so only it can settle.
    public func resolve(_ id: Int64, keep: Keep) async throws(SyncError) -> String {
        let identity = try await register()
        guard let conflict = try await conflicts(of: identity).first(where: { $0.id == id }) else {
            throw SyncError(.refused, "there is no open conflict \(id): `cyclelog-sync conflicts` lists them")
        }
        guard conflict.collectorUUID == identity.collectorID.lowercased else {
            throw SyncError(
                .refused, "conflict \(id) was pushed by \(conflict.collector): settle it there, which holds that copy")
        }
        guard let local = try await localCall({ try $0.workout(syncIdentifier: conflict.syncIdentifier) }),
            let sync = UUID(uuidString: conflict.syncIdentifier)
        else {
            throw SyncError(.refused, "ride \(conflict.syncIdentifier) is no longer in this database")
        }
        let message: String
        switch keep {
        case .server:
            let pulled = try await fetch(sync, version: conflict.serverVersion, collector: conflict.serverCollector)
            message =
                "kept the shared store's version \(conflict.serverVersion) of ride \(conflict.syncIdentifier) "
                + "(workout \(pulled.id ?? local.id) here)"
        case .local:
            let next = conflict.serverVersion + 1
            try await localCall { try $0.setVersion(local.id, next) }
            let pushed = try await push(as: identity).first { $0.syncIdentifier == conflict.syncIdentifier }
            guard pushed?.result == .replaced else {
                throw SyncError(
                    .refused,
                    "ride \(conflict.syncIdentifier) as version \(next) was not taken: \(pushed?.result.rawValue ?? "not sent")"
                )
            }
            message = "pushed this copy of ride \(conflict.syncIdentifier) as version \(next)"
        }
        try await server.execute(
            "UPDATE ride_conflict SET resolved_at = now(), kept = \(keep.rawValue) WHERE id = \(id)")
        return message
    }

    /// Two rides of this rider from different collectors whose times overlap (the same bike heard twice).
    public struct Duplicate: Sendable, Equatable {
        public var first: String
        public var firstCollector: String
        public var second: String
        public var secondCollector: String
        public var overlapSeconds: Double
    }

    public func duplicates() async throws(SyncError) -> [Duplicate] {
        let identity = try await register()
        return try await server.rows(
            """
            SELECT a.sync_identifier, ca.name, b.sync_identifier, cb.name,
                extract(epoch FROM least(a.end_time, b.end_time) - greatest(a.start_time, b.start_time))::float8
            FROM ride a JOIN ride b ON a.rider_id = b.rider_id AND a.sync_identifier < b.sync_identifier
                AND a.collector_id <> b.collector_id AND a.start_time < b.end_time AND b.start_time < a.end_time
            JOIN collector ca ON ca.id = a.collector_id JOIN collector cb ON cb.id = b.collector_id
            WHERE a.rider_id = \(identity.riderID) AND NOT a.deleted AND NOT b.deleted
            ORDER BY a.start_time, a.sync_identifier, b.sync_identifier
            """, as: (UUID, String, UUID, String, Double).self
        ).map {
            Duplicate(
                first: $0.0.lowercased, firstCollector: $0.1, second: $0.2.lowercased,
                secondCollector: $0.3, overlapSeconds: $0.4)
        }
    }

    /// Makes this database's rider the server's rider `name`: the rides recorded here become theirs (each at its
    /// next version). Returns how many rides changed hands.
    public func join(_ name: String) async throws(SyncError) -> Int {
        try await checkSchema()
        guard let id = try await server.rows("SELECT id FROM rider WHERE name = \(name)", as: UUID.self).first else {
            let names = try await server.rows("SELECT name FROM rider ORDER BY name", as: String.self)
            throw SyncError(
                .refused,
                "the shared store has no rider named \(name)"
                    + (names.isEmpty ? "" : " (it has \(names.joined(separator: ", ")))"))
        }
        let moved = try await localCall { try $0.adoptRider(uuid: id.lowercased, name: name) }
        _ = try await register()
        return moved
    }

    /// A call into the local database, on a thread that may block (`WorkoutStore.call`); its error as a sync
    /// error that keeps the database's own (GRDB's result code and message) as its cause.
    func localCall<T: Sendable>(_ body: @escaping @Sendable (WorkoutStore) throws -> T) async throws(SyncError) -> T {
        do {
            return try await WorkoutStore.blocking { [local] () throws -> T in try body(local) }
        } catch let error as StoreError {
            throw SyncError.local(error)
        } catch {
            throw SyncError(.local, "\(error)")
        }
    }
}

extension UUID {
    /// The form the local database keeps: lowercase, as `cyclelog show --json` prints sync identifiers.
    var lowercased: String { uuidString.lowercased() }
}
