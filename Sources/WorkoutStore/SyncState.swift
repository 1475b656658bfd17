import Foundation
import GRDB
import RideIdentity

/// The local half of keeping rides consistent with a shared store (cyclelog-sync): whose rides these are, which
/// versions the store has acknowledged, the tombstones of deleted rides, and how the last syncs went. The store
/// itself is never contacted from here.
extension WorkoutStore {
    /// The rider of this database and this database as a collector of rides.
    public struct Rider: Equatable, Sendable {
        /// Lowercase UUIDs.
        public var uuid: String
        public var name: String
        public var collectorUUID: String
        public var collectorName: String
    }

    public func rider() throws(StoreError) -> Rider {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM rider WHERE id = 1") else {
                throw StoreError(.damaged, "the database has no rider (its rider table is empty)")
            }
            return Rider(
                uuid: row["uuid"], name: row["name"], collectorUUID: row["collectorUUID"],
                collectorName: row["collectorName"])
        }
    }

    /// `cyclelog rider NAME`.
    public func renameRider(_ name: String) throws(StoreError) {
        try write { db in try db.execute(sql: "UPDATE rider SET name = ? WHERE id = 1", arguments: [name]) }
    }

    /// This database's rides become the rider `uuid`'s (`cyclelog-sync join`): each ride recorded here gets its next
    /// version, so that the shared store takes it as that rider's. Returns how many rides changed hands.
    @discardableResult
    public func adoptRider(uuid: String, name: String) throws(StoreError) -> Int {
        try write { db in
            let current = try String.fetchOne(db, sql: "SELECT uuid FROM rider WHERE id = 1")
            try db.execute(sql: "UPDATE rider SET uuid = ?, name = ? WHERE id = 1", arguments: [uuid, name])
            guard current != uuid else { return 0 }
            try db.execute(sql: "UPDATE workout SET version = version + 1 WHERE collector IS NULL")
            return db.changesCount
        }
    }

    /// A complete ride recorded here whose version the shared store has not acknowledged.
    public struct PendingRide: Equatable, Sendable {
        public var id: Int64
        public var syncIdentifier: String
        public var version: Int
        public var contentDigest: String
        public var fitnessTest: String?
    }

    /// What a push sends: complete rides recorded here (never pulled ones, never rides being recorded) at a
    /// version or content the store has not acknowledged, oldest first.
    public func pendingRides() throws(StoreError) -> [PendingRide] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, syncIdentifier, version, journalDigest, fitnessTest FROM workout
                    WHERE status = 'complete' AND collector IS NULL AND journalDigest IS NOT NULL
                    AND digestVersion = ? AND (syncedVersion IS NOT version OR syncedDigest IS NOT journalDigest)
                    ORDER BY startMicroseconds, id
                    """, arguments: [RideIdentity.digestVersion]
            ).map {
                PendingRide(
                    id: $0["id"], syncIdentifier: $0["syncIdentifier"], version: $0["version"],
                    contentDigest: $0["journalDigest"], fitnessTest: $0["fitnessTest"])
            }
        }
    }

    /// Rides being recorded or unfinished, which a push leaves for later.
    public func unfinishedCount() throws(StoreError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM workout WHERE status <> 'complete'") ?? 0 }
    }

    /// The shared store holds `version` with `digest` of this ride (pushed, pulled, or found equal).
    public func markSynced(_ id: Int64, version: Int, digest: String?) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: "UPDATE workout SET syncedVersion = ?, syncedDigest = ? WHERE id = ?",
                arguments: [version, digest, id])
        }
    }

    /// A deleted ride: its identity and the version its deletion is.
    public struct Tombstone: Equatable, Sendable {
        public var syncIdentifier: String
        public var version: Int
        public var synced: Bool
    }

    public func tombstones(pendingOnly: Bool = false) throws(StoreError) -> [Tombstone] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM tombstone \(pendingOnly ? "WHERE synced = 0" : "") ORDER BY syncIdentifier"
            ).map { Tombstone(syncIdentifier: $0["syncIdentifier"], version: $0["version"], synced: $0["synced"]) }
        }
    }

    public func markTombstoneSynced(_ syncIdentifier: String, version: Int) throws(StoreError) {
        let syncIdentifier = Self.canonical(syncIdentifier)
        try write { db in
            try db.execute(
                sql: "UPDATE tombstone SET synced = 1 WHERE syncIdentifier = ? AND version = ?",
                arguments: [syncIdentifier, version])
        }
    }

    /// The transaction ID of shared store `store` below which every ride row of `rider` has been pulled here; nil
    /// before the first pull from it. Both are the lowercase UUIDs the store knows them by.
    public func pullHorizon(store: String, rider: String) throws(StoreError) -> Int64? {
        try read { db in
            try Int64.fetchOne(
                db, sql: "SELECT horizon FROM pullHorizon WHERE store = ? AND rider = ?",
                arguments: [store, rider])
        }
    }

    public func setPullHorizon(_ horizon: Int64, store: String, rider: String) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO pullHorizon (store, rider, horizon) VALUES (?, ?, ?)",
                arguments: [store, rider, horizon])
        }
    }

    /// What this database holds of a ride, for deciding what a pull brings.
    public struct LocalCopy: Equatable, Sendable {
        public var id: Int64?
        public var version: Int
        public var contentDigest: String?
        public var complete: Bool
        public var deleted: Bool
        public var collector: String?
        /// The version the shared store acknowledged.
        public var syncedVersion: Int?
    }

    /// Every ride this database holds or deleted, by sync identifier.
    public func localCopies() throws(StoreError) -> [String: LocalCopy] {
        try read { db in
            var copies: [String: LocalCopy] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM tombstone") {
                copies[Self.canonical(row["syncIdentifier"])] = LocalCopy(
                    id: nil, version: row["version"], contentDigest: nil, complete: true, deleted: true, collector: nil,
                    syncedVersion: (row["synced"] as Bool) ? row["version"] : nil)
            }
            // The columns a copy needs alone: a ride's row also holds its statistics, read here for every ride.
            let columns = "id, syncIdentifier, version, journalDigest, digestVersion, status, collector, syncedVersion"
            for row in try Row.fetchAll(db, sql: "SELECT \(columns) FROM workout") {
                copies[Self.canonical(row["syncIdentifier"])] = LocalCopy(
                    id: row["id"], version: row["version"], contentDigest: Self.contentDigest(row),
                    complete: WorkoutStatus(stored: row["status"]) == .complete, deleted: false,
                    collector: row["collector"], syncedVersion: row["syncedVersion"])
            }
            return copies
        }
    }

    /// What a ride brought from the shared store takes from its row: the store's version (acknowledged at it,
    /// with the content digest), the collector that recorded it (nil: this one), its fitness test's mark and its
    /// name.
    public struct PulledMarks: Sendable, Equatable {
        public var version: Int
        public var digest: String
        public var collector: String?
        public var fitnessTest: String?
        public var name: String?

        public init(version: Int, digest: String, collector: String?, fitnessTest: String?, name: String?) {
            self.version = version
            self.digest = digest
            self.collector = collector
            self.fitnessTest = fitnessTest
            self.name = name
        }
    }

    /// A ride just stored from the shared store's copy (when its replay found it stored already, or it came as a
    /// file): it takes the row's marks. A replay's own ride takes them in its last transaction
    /// (`finish(_:prepared:digests:pulled:)`).
    public func adoptPulled(_ id: Int64, _ marks: PulledMarks) throws(StoreError) {
        let testChanged = try write { db in try Self.mark(id, pulled: marks, db) }
        // Storing the ride brought the FTP history up to date already; only a fitness test's mark changes it again.
        if testChanged { try refreshFTPEstimates() }
    }

    /// Marks workout `id` with a pulled row's marks; whether its fitness test's mark changed.
    static func mark(_ id: Int64, pulled marks: PulledMarks, _ db: Database) throws -> Bool {
        let before = try String.fetchOne(db, sql: "SELECT fitnessTest FROM workout WHERE id = ?", arguments: [id])
        // The name as the recording collector has it, which may be the rider's rename of the recorded one.
        try db.execute(
            sql: """
                UPDATE workout SET version = ?, collector = ?, fitnessTest = ?, name = ?,
                renamed = (name IS NOT ?), syncedVersion = ?, syncedDigest = ? WHERE id = ?
                """,
            arguments: [
                marks.version, marks.collector, marks.fitnessTest, marks.name, marks.name, marks.version, marks.digest,
                id,
            ])
        return before != marks.fitnessTest
    }

    /// Sets a ride recorded here to `version` (a conflict settled by keeping this copy: the version after the
    /// store's).
    public func setVersion(_ id: Int64, _ version: Int) throws(StoreError) {
        try write { db in
            try db.execute(sql: "UPDATE workout SET version = ? WHERE id = ?", arguments: [version, id])
        }
    }

    /// A ride deleted in the shared store: deleted here, its tombstone already synced.
    public func deletePulled(_ syncIdentifier: String, version: Int) throws(StoreError) {
        let syncIdentifier = Self.canonical(syncIdentifier)
        try write { db in
            try db.execute(sql: "DELETE FROM workout WHERE syncIdentifier = ?", arguments: [syncIdentifier])
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO tombstone (syncIdentifier, version, deletedMicroseconds, synced)
                    VALUES (?, ?, ?, 1)
                    """, arguments: [syncIdentifier, version, Self.nowMicroseconds()])
        }
        try refreshFTPEstimates()
    }

    /// How the syncs have gone.
    public struct SyncHistory: Equatable, Sendable {
        public var lastSuccessMicroseconds: Int64?
        public var lastFailureMicroseconds: Int64?
        public var lastFailure: String?
        /// Failed attempts since the last success: what the next attempt's back-off is counted from.
        public var failuresInARow: Int
    }

    public func syncHistory() throws(StoreError) -> SyncHistory {
        try read { db in
            let row = try Row.fetchOne(db, sql: "SELECT * FROM syncStatus WHERE id = 1")
            return SyncHistory(
                lastSuccessMicroseconds: row?["lastSuccessMicroseconds"],
                lastFailureMicroseconds: row?["lastFailureMicroseconds"], lastFailure: row?["lastFailure"],
                failuresInARow: row?["failuresInARow"] ?? 0)
        }
    }

    /// Records a sync's outcome, now: nil for a success, else why it failed.
    public func recordSync(failure: String?) throws(StoreError) {
        let time = Self.nowMicroseconds()
        try write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO syncStatus (id) VALUES (1)")
            if let failure {
                try db.execute(
                    sql: """
                        UPDATE syncStatus SET lastFailureMicroseconds = ?, lastFailure = ?,
                        failuresInARow = failuresInARow + 1 WHERE id = 1
                        """, arguments: [time, failure])
            } else {
                try db.execute(
                    sql: "UPDATE syncStatus SET lastSuccessMicroseconds = ?, failuresInARow = 0 WHERE id = 1",
                    arguments: [time])
            }
        }
    }
}
