import GRDB

/// What was sent of one ride to one training service (intervals.icu, Strava): the row that makes an upload happen
/// once, however often the network, the service or the process fails on the way. It is written before each request
/// that could create an activity, so that a run after a lost answer knows to look the ride up first.
public struct RemoteUpload: Equatable, Sendable {
    public enum State: String, Sendable, CaseIterable {
        /// An upload of `version` was sent or is about to be; its answer is not known.
        case sending
        /// The service took the file and is still reading it (Strava: `uploadId`).
        case processing
        /// The service has the ride as `remoteId`.
        case uploaded
        /// A newer version replaces `previousRemoteId`, which is being deleted first.
        case replacing
        /// The service refused this version's file (`lastError`); a newer version, or `upload ID`, tries again.
        case failed
        /// The remote activity was deleted on request (`upload --delete-remote`).
        case deleted

        /// The states in which a row always has a next step (`UploadPlan.step`): a run reads these rows whatever
        /// its service's mark (`WorkoutStore.unsettledUploadableRides`).
        public static let underWay: [State] = [.sending, .processing, .replacing]
        /// `underWay` as SQL, in the words of the index on them (migration v25).
        static var underWaySQL: String { underWay.map { "'\($0.rawValue)'" }.joined(separator: ", ") }
    }

    public var syncIdentifier: String
    /// `intervals` or `strava`.
    public var service: String
    /// The ride's version this row is about.
    public var version: Int
    public var state: State
    public var remoteId: String?
    public var uploadId: String?
    public var previousRemoteId: String?
    /// The version whose name and description were last set on the remote activity (Strava keeps its first file).
    public var detailsVersion: Int?
    public var lastError: String?
    /// Requests that failed in a row for this ride; back to 0 once it is uploaded.
    public var attempts: Int
    public var updatedMicroseconds: Int64

    public init(
        syncIdentifier: String, service: String, version: Int, state: State, remoteId: String? = nil,
        uploadId: String? = nil, previousRemoteId: String? = nil, detailsVersion: Int? = nil,
        lastError: String? = nil, attempts: Int = 0, updatedMicroseconds: Int64 = 0
    ) {
        self.syncIdentifier = WorkoutStore.canonical(syncIdentifier)
        self.service = service
        self.version = version
        self.state = state
        self.remoteId = remoteId
        self.uploadId = uploadId
        self.previousRemoteId = previousRemoteId
        self.detailsVersion = detailsVersion
        self.lastError = lastError
        self.attempts = attempts
        self.updatedMicroseconds = updatedMicroseconds
    }
}

extension WorkoutStore {
    /// A complete ride recorded on this collector, as an upload needs it.
    public struct UploadableRide: Equatable, Sendable {
        public var id: Int64
        public var syncIdentifier: String
        public var version: Int
        public var name: String?
        public var startMicroseconds: Int64
    }

    /// The complete rides recorded here (never the ones pulled from another collector, which their own collector
    /// uploads), oldest first.
    public func uploadableRides() throws(StoreError) -> [UploadableRide] {
        try uploadableRides(startedFrom: Int64.min, orUploadedTo: [])
    }

    /// Those of them that started at or after `startedFrom`, and those with an upload row of one of `services`: the
    /// rides an automatic upload and its status cover. Read through the index on the start and the one on the
    /// rides' identities (migration v23), so that they cost the rides they name however many are stored. A row
    /// names a ride whose identity is the same in lower case (`canonical`), as everywhere else.
    public func uploadableRides(startedFrom: Int64, orUploadedTo services: [String]) throws(StoreError)
        -> [UploadableRide]
    {
        try uploadableRides(
            where: Self.startedFrom(orUploadedTo: services.count),
            StatementArguments([startedFrom as any DatabaseValueConvertible] + services))
    }

    /// The condition of `uploadableRides(startedFrom:orUploadedTo:)`, for `services` services. The rows'
    /// identities are handed over as a JSON array: SQLite, which has no statistics of the tables, takes a table
    /// for a large one and would rather read every ride in the order asked than look each identity up, but knows
    /// `json_each` for a short list.
    static func startedFrom(orUploadedTo services: Int) -> String {
        guard services > 0 else { return "startMicroseconds >= ?" }
        return """
            startMicroseconds >= ? UNION SELECT \(uploadableColumns) FROM workout WHERE \(uploadable) AND
            lower(syncIdentifier) IN (SELECT value FROM json_each((SELECT json_group_array(syncIdentifier)
            FROM remoteUpload WHERE service IN (\(Array(repeating: "?", count: services).joined(separator: ","))))))
            """
    }

    /// What an automatic upload of one service has to look at, and the change number it was read at.
    public struct UnsettledRides: Equatable, Sendable {
        public var rides: [UploadableRide]
        /// The highest `changeSequence` when they were read: the mark `markUploadsSettled` keeps once each of
        /// `rides` is settled or under way.
        public var throughChange: Int64
        /// The service's mark already says `throughChange`: there is nothing to write when the run keeps it.
        public var markCurrent: Bool
    }

    /// Those of `uploadableRides(startedFrom:orUploadedTo:)` for `service` whose row of `service` is not `settled`
    /// (or who have none), oldest first: what an automatic upload has something to do for, without reading into
    /// Swift the rides it has nothing to do for. `settled` is an SQL condition over the row, as `u`, and the ride,
    /// as `w` (the upload rule's "nothing to do": `UploadPlan.settled`). Once a run of the same `since` kept its
    /// mark (`markUploadsSettled`), only the rides changed after it and the rows under way are read: a ride
    /// settled then stays settled until it changes, as only a run writes rows, and writes them for the ride's
    /// current version.
    public func unsettledUploadableRides(startedFrom since: Int64, service: String, settled: String)
        throws(StoreError) -> UnsettledRides
    {
        try read { db in
            let latest = try Int64.fetchOne(db, sql: "SELECT max(changeSequence) FROM workout") ?? 0
            let mark = try Int64.fetchOne(
                db, sql: "SELECT throughChange FROM uploadSettled WHERE service = ? AND since = ?",
                arguments: [service, since])
            let rows =
                if let mark {
                    try Row.fetchAll(
                        db, sql: Self.unsettledQuery(settled, changedAfterMark: true),
                        arguments: [mark, since, service, service, service])
                } else {
                    try Row.fetchAll(
                        db, sql: Self.unsettledQuery(settled, changedAfterMark: false),
                        arguments: [since, service, service])
                }
            return UnsettledRides(
                rides: rows.map(Self.uploadableRide), throughChange: latest, markCurrent: mark == latest)
        }
    }

    /// Keeps that every ride an automatic upload of `service` from `since` covers, numbered `throughChange` or
    /// below, is settled or has its row under way.
    public func markUploadsSettled(service: String, since: Int64, throughChange: Int64) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO uploadSettled (service, since, throughChange) VALUES (?, ?, ?)",
                arguments: [service, since, throughChange])
        }
    }

    /// The query of `unsettledUploadableRides`: the covered rides of one service (since its mark, those changed
    /// after it and those whose row is under way), each row looked up by its key.
    static func unsettledQuery(_ settled: String, changedAfterMark: Bool) -> String {
        let covered =
            changedAfterMark
            ? """
            SELECT \(uploadableColumns) FROM workout WHERE \(uploadable) AND changeSequence > ? AND
            (startMicroseconds >= ? OR EXISTS (SELECT 1 FROM remoteUpload r
            WHERE r.syncIdentifier = lower(workout.syncIdentifier) AND r.service = ?))
            UNION SELECT \(uploadableColumns) FROM workout WHERE \(uploadable) AND
            lower(syncIdentifier) IN (SELECT value FROM json_each((SELECT json_group_array(syncIdentifier)
            FROM remoteUpload WHERE service = ? AND state IN (\(RemoteUpload.State.underWaySQL)))))
            """
            : uploadableQuery(startedFrom(orUploadedTo: 1))
        return """
            SELECT w.* FROM (\(covered)) AS w
            LEFT JOIN remoteUpload u ON u.syncIdentifier = lower(w.syncIdentifier) AND u.service = ?
            WHERE u.syncIdentifier IS NULL OR NOT (\(settled)) ORDER BY w.startMicroseconds, w.id
            """
    }

    /// Those of them whose version `service` refused (a `failed` row of that version or a newer one), oldest first:
    /// settled, so `unsettledUploadableRides` leaves them out, but a rider is told of each. The refused rows are found
    /// among the service's rows (a few bytes each), their rides by the index of the identities: no ride is read
    /// that is not shown.
    public func refusedUploadableRides(service: String) throws(StoreError) -> [UploadableRide] {
        try uploadableRides(
            where: """
                lower(syncIdentifier) IN (SELECT value FROM json_each((SELECT json_group_array(syncIdentifier)
                FROM remoteUpload WHERE service = ? AND state = 'failed'))) AND version <= (SELECT r.version
                FROM remoteUpload r WHERE r.syncIdentifier = lower(workout.syncIdentifier) AND r.service = ?)
                """, [service, service])
    }

    /// How many rows of `service` are in each state: what `upload --status` sums up without naming each ride.
    public func remoteUploadCounts(service: String) throws(StoreError) -> [RemoteUpload.State: Int] {
        try read { db in
            var counts: [RemoteUpload.State: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT state, count(*) AS rows FROM remoteUpload WHERE service = ? GROUP BY state",
                arguments: [service])
            {
                counts[RemoteUpload.State(rawValue: row["state"]) ?? .failed, default: 0] += row["rows"] as Int
            }
            return counts
        }
    }

    /// Those of them with these workout ids, oldest first; an id that is not one of them is left out. The ids are
    /// one JSON array, not a variable each: a decade named by `upload --since` is more than a statement takes.
    public func uploadableRides(ids: [Int64]) throws(StoreError) -> [UploadableRide] {
        try uploadableRides(
            where: "id IN (SELECT value FROM json_each(?))",
            [Self.jsonArray(ids)])
    }

    /// The newest of them (by its start), if there is one.
    public func newestUploadableRide() throws(StoreError) -> UploadableRide? {
        try uploadableRides(where: "1", StatementArguments(), order: "startMicroseconds DESC, id DESC LIMIT 1").first
    }

    private static let uploadableColumns = "id, syncIdentifier, version, name, startMicroseconds"
    private static let uploadable = "status = 'complete' AND collector IS NULL"

    /// The uploadable rides that also meet `condition`, in `order`.
    private func uploadableRides(
        where condition: String, _ arguments: StatementArguments, order: String = "startMicroseconds, id"
    ) throws(StoreError) -> [UploadableRide] {
        try uploadableRides(sql: Self.uploadableQuery(condition, order: order), arguments)
    }

    /// The rides `sql` selects with `uploadableColumns`.
    private func uploadableRides(sql: String, _ arguments: StatementArguments) throws(StoreError) -> [UploadableRide] {
        try read { db in try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.uploadableRide) }
    }

    private static func uploadableRide(_ row: Row) -> UploadableRide {
        UploadableRide(
            id: row["id"], syncIdentifier: canonical(row["syncIdentifier"]), version: row["version"],
            name: row["name"], startMicroseconds: row["startMicroseconds"])
    }

    static func uploadableQuery(_ condition: String, order: String = "startMicroseconds, id") -> String {
        "SELECT \(uploadableColumns) FROM workout WHERE \(uploadable) AND \(condition) ORDER BY \(order)"
    }

    public func remoteUpload(_ syncIdentifier: String, service: String) throws(StoreError) -> RemoteUpload? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM remoteUpload WHERE syncIdentifier = ? AND service = ?",
                arguments: [Self.canonical(syncIdentifier), service]
            ).map(Self.remoteUpload)
        }
    }

    /// Every upload row, of one service or of all.
    public func remoteUploads(service: String? = nil) throws(StoreError) -> [RemoteUpload] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM remoteUpload \(service == nil ? "" : "WHERE service = ?") "
                    + "ORDER BY service, syncIdentifier",
                arguments: StatementArguments(service.map { [$0] } ?? [])
            ).map(Self.remoteUpload)
        }
    }

    /// Writes the row, durably (it must be on the disk before the request it announces is sent), stamped now.
    public func saveRemoteUpload(_ upload: RemoteUpload) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO remoteUpload (syncIdentifier, service, version, state, remoteId, uploadId,
                    previousRemoteId, detailsVersion, lastError, attempts, updatedMicroseconds)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    upload.syncIdentifier, upload.service, upload.version, upload.state.rawValue, upload.remoteId,
                    upload.uploadId, upload.previousRemoteId, upload.detailsVersion, upload.lastError,
                    upload.attempts, Self.nowMicroseconds(),
                ])
        }
    }

    private static func remoteUpload(_ row: Row) -> RemoteUpload {
        RemoteUpload(
            syncIdentifier: row["syncIdentifier"], service: row["service"], version: row["version"],
            state: RemoteUpload.State(rawValue: row["state"]) ?? .failed, remoteId: row["remoteId"],
            uploadId: row["uploadId"], previousRemoteId: row["previousRemoteId"],
            detailsVersion: row["detailsVersion"], lastError: row["lastError"], attempts: row["attempts"],
            updatedMicroseconds: row["updatedMicroseconds"])
    }
}
