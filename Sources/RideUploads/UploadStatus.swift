import WorkoutStore

/// What became of each ride on each service with an account, without asking the services: `upload --status`
/// and the uploads' part of `status`.
public struct UploadStatus: Equatable, Sendable {
    public var service: Service
    public var rideId: Int64
    public var syncIdentifier: String
    public var version: Int
    public var remoteId: String?
    /// Still to do: an upload, a look-up, Strava's reading, a replacement, newer details.
    public var waiting: Bool
    /// The service refused this version (`words` say why); sent again only on request or for a newer version.
    public var refused: Bool
    public var words: String
    public var lastError: String?

    /// The services with an account, each with the start of the rides its automatic uploads cover.
    static func covered(_ folder: AccountFolder) throws -> [(service: Service, since: Int64)] {
        var services: [(service: Service, since: Int64)] = []
        for service in folder.services() {
            switch service {
            case .intervals: services.append((service, try folder.intervals()?.addedMicroseconds ?? .max))
            case .strava: services.append((service, try folder.strava()?.addedMicroseconds ?? .max))
            }
        }
        return services
    }

    /// One service's uploads in short: how many of its rows are in each state, and the rides that need a word —
    /// those that wait, then those it refused, each oldest first.
    public struct Summary: Equatable, Sendable {
        public var service: Service
        public var rows: [RemoteUpload.State: Int]
        public var rides: [UploadStatus]
    }

    /// Per service with an account, its `Summary`: what `upload --status` and `status` say without `--all`. The
    /// rides that wait are read as an automatic upload reads them (`unsettledUploadableRides`, through the mark of
    /// the last run that settled everything), so a decade of uploaded rides costs no more than a week of them.
    public static func summaries(_ store: WorkoutStore, _ folder: AccountFolder) throws -> [Summary] {
        try covered(folder).map { service, since in
            let waiting = try store.unsettledUploadableRides(
                startedFrom: since, service: service.rawValue, settled: UploadPlan.settled(service)
            ).rides
            let refused = try store.refusedUploadableRides(service: service.rawValue)
            let rides = try (waiting + refused).map { ride in
                status(service, ride, try store.remoteUpload(ride.syncIdentifier, service: service.rawValue))
            }
            return Summary(
                service: service, rows: try store.remoteUploadCounts(service: service.rawValue), rides: rides)
        }
    }

    /// The rides each service's automatic uploads cover, and every ride with an upload row.
    public static func of(_ store: WorkoutStore, _ folder: AccountFolder) throws -> [UploadStatus] {
        let services = try covered(folder)
        // Only the rides named below are read: none without an account.
        guard let earliest = services.map(\.since).min() else { return [] }
        let rides = try store.uploadableRides(
            startedFrom: earliest, orUploadedTo: services.map(\.service.rawValue))
        var statuses: [UploadStatus] = []
        for (service, since) in services {
            let rows = Dictionary(
                try store.remoteUploads(service: service.rawValue).map { ($0.syncIdentifier, $0) },
                uniquingKeysWith: { first, _ in first })
            for ride in rides where ride.startMicroseconds >= since || rows[ride.syncIdentifier] != nil {
                statuses.append(status(service, ride, rows[ride.syncIdentifier]))
            }
        }
        return statuses
    }

    static func status(_ service: Service, _ ride: WorkoutStore.UploadableRide, _ row: RemoteUpload?) -> UploadStatus {
        let step = UploadPlan.step(service: service, rideVersion: ride.version, record: row)
        let words: String
        switch (row?.state, step) {
        case (nil, _): words = "waits to be uploaded"
        case (.sending?, _):
            words = "sent, its answer lost: looked up by its external id before it is sent again"
        case (.processing?, _): words = "\(service.title) is reading upload \(row?.uploadId ?? "")"
        case (.replacing?, _): words = "version \(ride.version) is replacing activity \(row?.previousRemoteId ?? "")"
        case (.failed?, _):
            words = "REFUSED: \(row?.lastError ?? "") (`cyclelog-sync upload \(ride.id)` tries again)"
        case (.deleted?, _): words = "deleted from \(service.title) on request"
        case (.uploaded?, .replace):
            words =
                "version \(ride.version) waits to replace activity \(row?.remoteId ?? "") (version \(row?.version ?? 0))"
        case (.uploaded?, .updateDetails):
            words =
                "version \(ride.version) waits: Strava's API cannot replace the file of activity \(row?.remoteId ?? ""); "
                + "its name and description will be set"
        case (.uploaded?, _):
            if let row, row.version < ride.version {
                words =
                    "Strava keeps version \(row.version)'s file as activity \(row.remoteId ?? "") (its API cannot "
                    + "replace a file); the name and description of version \(ride.version) are set"
            } else {
                words = "uploaded as \(row?.remoteId ?? "")"
            }
        }
        return UploadStatus(
            service: service, rideId: ride.id, syncIdentifier: ride.syncIdentifier, version: ride.version,
            remoteId: row?.remoteId, waiting: step != .nothing, refused: row?.state == .failed && step == .nothing,
            words: words, lastError: row?.lastError)
    }
}
