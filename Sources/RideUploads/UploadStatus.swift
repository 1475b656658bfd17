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

    /// The rides each service's automatic uploads cover, and every ride with an upload row.
    public static func of(_ store: WorkoutStore, _ folder: AccountFolder) throws -> [UploadStatus] {
        var services: [(service: Service, since: Int64)] = []
        for service in folder.services() {
            switch service {
            case .intervals: services.append((service, try folder.intervals()?.addedMicroseconds ?? .max))
            case .strava: services.append((service, try folder.strava()?.addedMicroseconds ?? .max))
            }
        }
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
