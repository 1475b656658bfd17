import WorkoutStore

/// What to do next about one ride and one service, from the ride's version and what was sent of it before (its
/// `RemoteUpload` row); pure. The uploader does the step, writes the row, and asks again until `nothing` is left:
/// the row is always written before a request that could create an activity, so a run that follows a lost answer
/// or a killed process looks the ride up before it sends it again, and a ride is uploaded once per service.
public enum UploadPlan {
    public enum Step: Equatable, Sendable {
        case nothing
        /// Send the ride's current version.
        case upload
        /// An upload of `version` was sent and its answer never came: find it by its external id first.
        case lookUp(version: Int)
        /// Strava is reading the upload: ask how it went.
        case poll(uploadId: String)
        /// intervals.icu: a newer version replaces the activity (deleted first, then the new file uploaded).
        case replace(previousRemoteId: String)
        /// Strava cannot replace a file: set the newer version's name and description on the activity.
        case updateDetails(remoteId: String)
    }

    /// The external id a ride's version is uploaded with, and found again by: its sync identifier and version.
    public static func externalIdentifier(_ syncIdentifier: String, version: Int) -> String {
        "\(WorkoutStore.canonical(syncIdentifier))-v\(version)"
    }

    /// Where `step(service:rideVersion:record:)` is `nothing` for an automatic run, as an SQL condition over the
    /// ride's row of `service` (`u`, a `remoteUpload` row) and the ride (`w`, its `version`): so that a run reads only
    /// the rides it has something to do for (`unsettledUploadableRides`). The same rule as `step`, written twice;
    /// UploadRuleTests checks that both agree on every row.
    public static func settled(_ service: Service) -> String {
        // Strava keeps its first file: a newer version whose details were set is settled.
        let detailsSet = service == .strava ? " OR coalesce(u.detailsVersion, u.version) >= w.version" : ""
        return """
            (u.state IN ('failed', 'deleted') AND u.version >= w.version)
            OR (u.state = 'uploaded' AND (u.version >= w.version OR u.remoteId IS NULL\(detailsSet)))
            """
    }

    /// `again`: the rider named the ride (`upload ID`), so a version the service refused is sent once more.
    public static func step(
        service: Service, rideVersion: Int, record: RemoteUpload?, again: Bool = false
    ) -> Step {
        guard let record else { return .upload }
        switch record.state {
        case .sending: return .lookUp(version: record.version)
        case .processing:
            return record.uploadId.map { .poll(uploadId: $0) } ?? .lookUp(version: record.version)
        case .replacing:
            return record.previousRemoteId.map { .replace(previousRemoteId: $0) } ?? .upload
        case .failed, .deleted:
            return record.version < rideVersion || again ? .upload : .nothing
        case .uploaded:
            guard record.version < rideVersion, let remoteId = record.remoteId else { return .nothing }
            switch service {
            case .intervals: return .replace(previousRemoteId: remoteId)
            case .strava:
                return (record.detailsVersion ?? record.version) < rideVersion
                    ? .updateDetails(remoteId: remoteId) : .nothing
            }
        }
    }
}
