import Foundation
import RideHistory
import WorkoutStore
import Workouts

/// Uploads this collector's rides to the services it has accounts for, each ride once per service by its sync
/// identifier and version (`UploadPlan`), and says what became of each. The network is reached only through an
/// `HTTPTransport`, the waits only through `pause` (both in `reach`).
public struct Uploader: Sendable {
    public let store: WorkoutStore
    public let folder: AccountFolder
    public var reach = ServiceReach()

    public init(store: WorkoutStore, folder: AccountFolder) {
        self.store = store
        self.folder = folder
    }

    /// Which rides a run looks at.
    public enum Choice: Sendable {
        /// The rides that started after the account was added, and any ride with an upload under way.
        case automatic
        /// These rides (by workout id), whenever they started; a version the service refused is sent again.
        case rides([Int64])
    }

    public struct Outcome: Equatable, Sendable {
        public enum Result: String, Sendable {
            case uploaded, alreadyThere, replaced, detailsUpdated, refused, deleted, cannotDelete
        }
        public var service: Service
        public var rideId: Int64?
        public var syncIdentifier: String
        public var version: Int
        public var result: Result
        /// What the rider is told.
        public var words: String
    }

    public struct Report: Sendable {
        public var outcomes: [Outcome] = []
        /// Why a service's run stopped before its end (unreachable: exit 75; credentials refused: exit 1).
        public var failures: [UploadError] = []
    }

    /// Uploads for each of `services` that has an account, one after the other, holding the folder's lock.
    public func run(_ services: [Service], choice: Choice, deleteRemote: Bool = false) async throws -> Report {
        try await folder.locked {
            var report = Report()
            for service in services {
                do {
                    guard let session = try session(service) else { continue }
                    try await upload(service, session, choice: choice, into: &report)
                    if deleteRemote { try await deleteRemotes(service, session, into: &report) }
                } catch let failure as UploadError {
                    report.failures.append(failure)
                }
            }
            return report
        }
    }

    /// A service's client with its account's credentials; nil without an account.
    func session(_ service: Service) throws -> Session? {
        switch service {
        case .intervals:
            guard let account = try folder.intervals() else { return nil }
            return Session(
                since: account.addedMicroseconds, leavingOut: LeftOut.types(account.without),
                remote: .intervals(try reach.intervals(account)))
        case .strava:
            guard let account = try folder.strava() else { return nil }
            return Session(
                since: account.addedMicroseconds, leavingOut: LeftOut.types(account.without),
                remote: .strava(try reach.strava(account, folder: folder)))
        }
    }

    struct Session {
        enum Remote {
            case intervals(IntervalsICU)
            case strava(Strava)
        }
        var since: Int64
        /// What the account's files are written without (`--without hr`).
        var leavingOut: Set<DataType> = []
        var remote: Remote

        var client: ServiceClient {
            switch remote {
            case .intervals(let service): service.client
            case .strava(let service): service.client
            }
        }

        func upload(_ file: RideFile) async throws -> UploadAnswer {
            switch remote {
            case .intervals(let service): try await service.upload(file)
            case .strava(let service): try await service.upload(file)
            }
        }

        func find(_ externalId: String, startMicroseconds: Int64) async throws -> String? {
            switch remote {
            case .intervals(let service): try await service.find(externalId, startMicroseconds: startMicroseconds)
            case .strava(let service): try await service.find(externalId, startMicroseconds: startMicroseconds)
            }
        }
    }

    private func upload(_ service: Service, _ session: Session, choice: Choice, into report: inout Report)
        async throws
    {
        // The rides the run covers and their rows, read once (one upload runs at a time per collector: the
        // folder's lock); each call to the store is a trip to a thread that may block and back. The rule of which
        // rides an automatic run covers is the store's, the one `UploadStatus` reports; of those, the rides with
        // nothing to do (most, once a history is uploaded) are left in the database.
        let since = session.since
        // `unsettled`: what an automatic run read, with the change number it read at; nil for rides named by the
        // rider, read whatever their rows say (such a run keeps no mark).
        let (rides, unsettled, rows) = try await store.call { store throws(StoreError) in
            let rides: [WorkoutStore.UploadableRide]
            var unsettled: WorkoutStore.UnsettledRides?
            switch choice {
            case .automatic:
                let read = try store.unsettledUploadableRides(
                    startedFrom: since, service: service.rawValue, settled: UploadPlan.settled(service))
                (rides, unsettled) = (read.rides, read)
            case .rides(let ids):
                rides = try store.uploadableRides(ids: ids)
            }
            var rows: [RemoteUpload] = []
            for ride in rides {
                if let row = try store.remoteUpload(ride.syncIdentifier, service: service.rawValue) { rows.append(row) }
            }
            return (rides, unsettled, rows)
        }
        let records = Dictionary(rows.map { ($0.syncIdentifier, $0) }, uniquingKeysWith: { $1 })
        let chosen: [WorkoutStore.UploadableRide]
        switch choice {
        case .automatic:
            chosen = rides
        case .rides(let ids):
            let found = Dictionary(rides.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            chosen = try ids.map { id in
                guard let ride = found[id] else {
                    throw UploadError(
                        "workout \(id) is not a complete ride recorded here (a ride recorded elsewhere is uploaded "
                            + "by its own collector)")
                }
                return ride
            }
        }
        let explicit: Bool
        if case .rides = choice { explicit = true } else { explicit = false }
        // Every ride the run read, brought to nothing to do or to a row under way, lets the next automatic run
        // read only what changes after (`markUploadsSettled`); a run that stops on the way (it throws) keeps none.
        var allSettled = true
        for ride in chosen {
            let record = records[ride.syncIdentifier]
            let (outcome, last) = try await upload(ride, service, session, record: record, explicit: explicit)
            if let outcome { report.outcomes.append(outcome) }
            let step = UploadPlan.step(service: service, rideVersion: ride.version, record: last)
            if step != .nothing && !(last.map { RemoteUpload.State.underWay.contains($0.state) } ?? false) {
                allSettled = false
            }
        }
        if let unsettled, allSettled, !unsettled.markCurrent {
            try await store.call { store throws(StoreError) in
                try store.markUploadsSettled(
                    service: service.rawValue, since: since, throughChange: unsettled.throughChange)
            }
        }
    }

    /// Brings one ride's upload to its end from its row (`record`): what the rider is told (nil when there was nothing
    /// to do) and the row as it was left. `explicit`: the rider named it.
    private func upload(
        _ ride: WorkoutStore.UploadableRide, _ service: Service, _ session: Session, record: RemoteUpload?,
        explicit: Bool
    ) async throws -> (outcome: Outcome?, record: RemoteUpload?) {
        var record = record
        var outcome: Outcome?
        func finish(_ result: Outcome.Result, _ words: String) {
            outcome = Outcome(
                service: service, rideId: ride.id, syncIdentifier: ride.syncIdentifier, version: ride.version,
                result: result, words: words)
        }
        /// Sends the current version; false when the service refused it (the outcome says so).
        func sendCurrent(replacing previous: String? = nil) async throws -> Bool {
            record = try await send(ride, service, session, from: record)
            switch record?.state {
            case .uploaded?:
                let id = record?.remoteId ?? ""
                if let previous {
                    finish(
                        .replaced, "version \(ride.version) replaced activity \(previous) on \(service.title) as \(id)")
                } else {
                    finish(
                        .uploaded,
                        "uploaded to \(service.title) as activity \(id)" + (record?.lastError.map { " (\($0))" } ?? ""))
                }
            case .failed?:
                finish(.refused, "REFUSED by \(service.title): \(record?.lastError ?? "")")
                return false
            default: break
            }
            return true
        }
        var again = explicit
        // Each step moves the row on; a ride needs at most a look-up, a replacement, an upload and its polls.
        for _ in 0..<6 {
            let step = UploadPlan.step(service: service, rideVersion: ride.version, record: record, again: again)
            again = false
            switch step {
            case .nothing:
                if outcome == nil, explicit, let record, record.state == .uploaded {
                    finish(.alreadyThere, "already on \(service.title) as \(record.remoteId ?? "")")
                }
                return (outcome, record)
            case .lookUp(let version):
                let externalId = UploadPlan.externalIdentifier(ride.syncIdentifier, version: version)
                if let found = try await session.find(externalId, startMicroseconds: ride.startMicroseconds) {
                    record = try await save(ride, service, version: version, .uploaded, remoteId: found, from: record)
                    finish(.uploaded, "on \(service.title) as \(found) (found by its external id after a lost answer)")
                } else if try await !sendCurrent() {
                    return (outcome, record)
                }
            case .upload:
                if try await !sendCurrent() { return (outcome, record) }
            case .poll(let uploadId):
                guard case .strava(let strava) = session.remote else { return (outcome, record) }
                record = try await poll(uploadId, ride, strava, from: record)
                switch record?.state {
                case .uploaded?:
                    finish(
                        .uploaded,
                        "uploaded to Strava as activity \(record?.remoteId ?? "")"
                            + (record?.lastError.map { " (\($0))" } ?? ""))
                case .failed?:
                    finish(.refused, "REFUSED by Strava: \(record?.lastError ?? "")")
                    return (outcome, record)
                default: break
                }
            case .replace(let previous):
                guard case .intervals(let intervals) = session.remote else { return (outcome, record) }
                record = try await save(
                    ride, service, version: ride.version, .replacing, previousRemoteId: previous, from: record)
                _ = try await intervals.delete(previous)
                if try await !sendCurrent(replacing: previous) { return (outcome, record) }
            case .updateDetails(let remoteId):
                guard case .strava(let strava) = session.remote, var updated = record else { return (outcome, record) }
                try await strava.updateDetails(remoteId, name: ride.name, description: description(ride))
                updated.detailsVersion = ride.version
                updated.lastError = nil
                try await store.call { [updated] in try $0.saveRemoteUpload(updated) }
                record = updated
                finish(
                    .detailsUpdated,
                    "Strava keeps version \(updated.version)'s file of activity \(remoteId) (its API cannot replace a "
                        + "file); the name and description of version \(ride.version) are set")
            }
        }
        return (outcome, record)
    }

    /// Uploads the ride's current version: the row says `sending` before the request leaves; a lost answer is
    /// looked up by its external id before the file is sent again.
    private func send(
        _ ride: WorkoutStore.UploadableRide, _ service: Service, _ session: Session, from record: RemoteUpload?
    ) async throws -> RemoteUpload? {
        // The file made and the row saying `sending` in one call to the store; again before each new try.
        let sending = row(ride, service, version: ride.version, .sending, from: record)
        let file = try await rideFile(ride, leavingOut: session.leavingOut, saving: sending)
        var record: RemoteUpload? = sending
        var failures = 0
        while true {
            let answer = try await session.upload(file)
            switch answer {
            case .created(let remoteId), .duplicate(let remoteId):
                let note = answer == .duplicate(remoteId: remoteId) ? "\(service.title) already had it" : nil
                return try await save(
                    ride, service, version: ride.version, .uploaded, remoteId: remoteId, error: note, from: record)
            case .processing(let uploadId):
                return try await save(
                    ride, service, version: ride.version, .processing, uploadId: uploadId, from: record)
            case .refused(let message):
                return try await save(ride, service, version: ride.version, .failed, error: message, from: record)
            case .lost(let reason, let wait):
                failures += 1
                record?.attempts += 1
                record?.lastError = reason
                if let record { try await store.call { try $0.saveRemoteUpload(record) } }
                guard failures < reach.policy.attempts else { throw session.client.tryLater(reason) }
                try await session.client.wait(for: wait, failures: failures, reason: reason)
                if let found = try await session.find(file.externalId, startMicroseconds: ride.startMicroseconds) {
                    return try await save(
                        ride, service, version: ride.version, .uploaded, remoteId: found, from: record)
                }
                record = try await save(ride, service, version: ride.version, .sending, from: record)
            }
        }
    }

    /// Asks Strava how the upload went until it is an activity or an error; still reading after the policy's
    /// polls, it is left for the next run.
    private func poll(
        _ uploadId: String, _ ride: WorkoutStore.UploadableRide, _ strava: Strava, from record: RemoteUpload?
    ) async throws -> RemoteUpload? {
        let version = record?.version ?? ride.version
        let policy = reach.policy
        for poll in 1...max(policy.statusPolls, 1) {
            switch try await strava.status(uploadId) {
            case .ready(let activity):
                return try await save(ride, .strava, version: version, .uploaded, remoteId: activity, from: record)
            case .duplicate(let activity):
                return try await save(
                    ride, .strava, version: version, .uploaded, remoteId: activity,
                    error: "Strava already had it as activity \(activity)", from: record)
            case .failed(let message):
                return try await save(ride, .strava, version: version, .failed, error: message, from: record)
            case .unknown:
                // Strava has forgotten the upload: the next step looks the ride up by its external id.
                return try await save(ride, .strava, version: version, .sending, from: record)
            case .processing:
                if poll < policy.statusPolls { try await reach.pause(policy.backoffSeconds(afterFailures: poll)) }
            }
        }
        throw UploadError("Strava is still reading upload \(uploadId); cyclelog-sync asks again later", .tryLater)
    }

    /// Deletes the remote activities of rides deleted here (intervals.icu; Strava's API cannot).
    private func deleteRemotes(_ service: Service, _ session: Session, into report: inout Report) async throws {
        let deleted = try await store.call { try $0.tombstones() }
        for tombstone in deleted {
            guard
                var record = try await store.call({
                    try $0.remoteUpload(tombstone.syncIdentifier, service: service.rawValue)
                }),
                record.state == .uploaded, let remoteId = record.remoteId
            else { continue }
            let outcome: Outcome
            switch session.remote {
            case .intervals(let intervals):
                let existed = try await intervals.delete(remoteId)
                record.state = .deleted
                try await store.call { [record] in try $0.saveRemoteUpload(record) }
                outcome = Outcome(
                    service: service, rideId: nil, syncIdentifier: record.syncIdentifier, version: record.version,
                    result: .deleted,
                    words: existed
                        ? "activity \(remoteId) deleted from intervals.icu" : "activity \(remoteId) was already gone")
            case .strava:
                outcome = Outcome(
                    service: service, rideId: nil, syncIdentifier: record.syncIdentifier, version: record.version,
                    result: .cannotDelete,
                    words: "Strava's API cannot delete an activity: delete \(remoteId) on strava.com "
                        + "(https://www.strava.com/activities/\(remoteId))")
            }
            report.outcomes.append(outcome)
        }
    }

    /// The ride's FIT file to send, written without `leavingOut`, and `row` saved once the file is made.
    private func rideFile(_ ride: WorkoutStore.UploadableRide, leavingOut: Set<DataType>, saving row: RemoteUpload)
        async throws -> RideFile
    {
        let store = store
        let found = try await WorkoutStore.blocking { () throws -> (WorkoutStore.StoredRide, [UInt8])? in
            guard let stored = try store.ride(ride.id, analysed: false) else { return nil }
            let bytes = try RideExport.file(stored, format: .fit, from: store, leavingOut: leavingOut)
            try store.saveRemoteUpload(row)
            return (stored, bytes)
        }
        guard let (stored, bytes) = found else {
            throw UploadError("workout \(ride.id) is no longer in the database")
        }
        return RideFile(
            bytes: bytes,
            fileName: RideExport.fileName(stored.summary, format: .fit),
            externalId: UploadPlan.externalIdentifier(ride.syncIdentifier, version: ride.version), name: ride.name,
            description: description(ride), startMicroseconds: ride.startMicroseconds)
    }

    /// The activity's description: where it came from, and which version of the ride it is.
    func description(_ ride: WorkoutStore.UploadableRide) -> String {
        ride.version > 1 ? "Recorded with cyclelog (version \(ride.version) of this ride)." : "Recorded with cyclelog."
    }

    @discardableResult
    private func save(
        _ ride: WorkoutStore.UploadableRide, _ service: Service, version: Int, _ state: RemoteUpload.State,
        remoteId: String? = nil, uploadId: String? = nil, previousRemoteId: String? = nil, error: String? = nil,
        from record: RemoteUpload?
    ) async throws -> RemoteUpload {
        let upload = row(
            ride, service, version: version, state, remoteId: remoteId, uploadId: uploadId,
            previousRemoteId: previousRemoteId, error: error, from: record)
        try await store.call { try $0.saveRemoteUpload(upload) }
        return upload
    }

    /// The ride's row in `state`, from the row before it (`record`): what each state keeps of it.
    private func row(
        _ ride: WorkoutStore.UploadableRide, _ service: Service, version: Int, _ state: RemoteUpload.State,
        remoteId: String? = nil, uploadId: String? = nil, previousRemoteId: String? = nil, error: String? = nil,
        from record: RemoteUpload?
    ) -> RemoteUpload {
        RemoteUpload(
            syncIdentifier: ride.syncIdentifier, service: service.rawValue, version: version, state: state,
            remoteId: remoteId ?? (state == .uploaded ? nil : record?.remoteId),
            uploadId: uploadId ?? (state == .processing ? record?.uploadId : nil),
            previousRemoteId: previousRemoteId
                ?? (state == .replacing || state == .sending ? record?.previousRemoteId : nil),
            detailsVersion: state == .uploaded ? version : record?.detailsVersion, lastError: error,
            attempts: state == .uploaded ? 0 : (record?.attempts ?? 0))
    }
}

/// Strava's tokens for one run: the access token refreshed five minutes before it expires and after a 401; a new
/// refresh token written to the account's file at once (Strava may retire the old one).
actor StravaTokens {
    private var account: StravaAccount
    private let folder: AccountFolder
    private let address: ServiceAddress
    private let reach: ServiceReach
    /// Every token this run holds, kept out of what is shown; a refresh adds the new ones.
    nonisolated let secrets: SecretList

    init(account: StravaAccount, folder: AccountFolder, address: ServiceAddress, reach: ServiceReach) {
        self.account = account
        self.folder = folder
        self.address = address
        self.reach = reach
        secrets = SecretList([account.clientSecret, account.refreshToken, account.accessToken])
    }

    func header() async throws -> String {
        if account.accessToken == nil || account.expiresAt - 300 <= Int64(Date().timeIntervalSince1970) {
            _ = try await refresh()
        }
        return "Bearer \(account.accessToken ?? "")"
    }

    /// Asks for a new access token; true when one came.
    func refresh() async throws -> Bool {
        let tokens = try await StravaAuthorization.tokens(
            address: address, clientId: account.clientId, clientSecret: account.clientSecret,
            grant: ("refresh_token", account.refreshToken), reach: reach)
        account.accessToken = tokens.accessToken
        account.refreshToken = tokens.refreshToken
        account.expiresAt = tokens.expiresAt
        secrets.add([tokens.accessToken, tokens.refreshToken])
        try folder.save(account)
        return true
    }
}
