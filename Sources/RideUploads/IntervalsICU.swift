import Foundation
import WorkoutStore

/// What an upload's POST came to.
enum UploadAnswer: Equatable {
    /// The service has the activity.
    case created(remoteId: String)
    /// The service took the file and reads it later (Strava's upload id).
    case processing(uploadId: String)
    /// The service already had this ride (Strava: "duplicate of activity N").
    case duplicate(remoteId: String)
    /// The answer was lost or a failure: look the ride up before sending it again.
    case lost(reason: String, waitSeconds: Double?)
    /// The service refused the file, in its words.
    case refused(String)
}

/// What a service is asked about one ride: the file, the names, the identity it is found again by.
struct RideFile: Sendable {
    var bytes: [UInt8]
    var fileName: String
    /// The ride's sync identifier and version (`RemoteUploads.externalIdentifier`).
    var externalId: String
    var name: String?
    var description: String
    var startMicroseconds: Int64
}

/// intervals.icu's REST API as documented in its API cookbook: Basic authentication with the user `API_KEY` and the
/// personal key; activities uploaded as `multipart/form-data` with `external_id`; activities listed by local dates;
/// an activity deleted by id; planned workouts as calendar events of category WORKOUT, each with its workout file.
struct IntervalsICU: Sendable {
    let account: IntervalsAccount
    let client: ServiceClient

    static func authorization(_ account: IntervalsAccount) -> String {
        "Basic " + Data("API_KEY:\(account.apiKey)".utf8).base64EncodedString()
    }

    private var athletePath: String { "/api/v1/athlete/\(FormEncoding.escape(account.athlete))" }

    func upload(_ ride: RideFile) async throws -> UploadAnswer {
        var form = MultipartForm()
        form.add(file: "file", fileName: ride.fileName, contentType: "application/octet-stream", ride.bytes)
        var query = [("external_id", ride.externalId), ("description", ride.description)]
        if let name = ride.name { query.insert(("name", name), at: 0) }
        let request = ServiceRequest(
            .POST, athletePath + "/activities?" + FormEncoding.encode(query),
            headers: [("Content-Type", form.contentType), ("Accept", "application/json")], body: form.finished)
        switch try await client.send(request) {
        case .lost(let reason, let wait): return .lost(reason: reason, waitSeconds: wait)
        case .answer(let response):
            switch RetryPolicy.verdict(response) {
            case .success:
                guard let id = identifier(jsonObject(response)?["id"]) else {
                    return .lost(reason: "intervals.icu answered the upload without an activity id", waitSeconds: nil)
                }
                return .created(remoteId: id)
            case .unauthorized: throw client.refusedCredentials()
            default: return .refused(client.redaction().apply(RetryPolicy.message(response)))
            }
        }
    }

    /// The activity uploaded with `externalId`, among the athlete's activities of the ride's day (a day either
    /// side, for the athlete's time zone).
    func find(_ externalId: String, startMicroseconds: Int64) async throws -> String? {
        let start = Date(timeIntervalSince1970: Double(startMicroseconds) / 1_000_000)
        let query = FormEncoding.encode([
            ("oldest", LocalDay.day(of: start, offset: -1, in: .gmt)),
            ("newest", LocalDay.day(of: start, offset: 1, in: .gmt)),
        ])
        let response = try await client.expect(
            ServiceRequest(.GET, athletePath + "/activities?" + query, headers: [("Accept", "application/json")]),
            doing: "list the activities")
        guard let activities = jsonArray(response) else {
            throw UploadError("intervals.icu answered the list of activities with something that is not one")
        }
        return activities.first { $0["external_id"] as? String == externalId }.flatMap { identifier($0["id"]) }
    }

    /// Deletes an activity; true when it was there.
    func delete(_ remoteId: String) async throws -> Bool {
        let request = ServiceRequest(.DELETE, "/api/v1/activity/\(FormEncoding.escape(remoteId))")
        switch try await client.send(request) {
        case .lost(let reason, _): throw client.tryLater(reason)
        case .answer(let response):
            switch RetryPolicy.verdict(response) {
            case .success: return true
            case .notFound: return false
            case .unauthorized: throw client.refusedCredentials()
            default:
                throw UploadError(
                    "intervals.icu refused to delete activity \(remoteId): "
                        + client.redaction().apply(RetryPolicy.message(response)))
            }
        }
    }

    /// A planned workout of the athlete's calendar.
    struct PlannedEvent {
        var id: String
        /// The local day it is planned for.
        var day: String
        var name: String
        var description: String?
        var fileName: String
        var file: [UInt8]
    }

    /// The calendar's workouts from `oldest` to `newest` (local days), each with its `.zwo` file.
    func plannedWorkouts(oldest: String, newest: String) async throws -> (events: [PlannedEvent], skipped: [String]) {
        let query = FormEncoding.encode([
            ("oldest", oldest), ("newest", newest), ("category", "WORKOUT"), ("ext", "zwo"),
        ])
        let response = try await client.expect(
            ServiceRequest(.GET, athletePath + "/events?" + query, headers: [("Accept", "application/json")]),
            doing: "list the planned workouts")
        guard let events = jsonArray(response) else {
            throw UploadError("intervals.icu answered the calendar with something that is not a list of events")
        }
        var planned: [PlannedEvent] = []
        var skipped: [String] = []
        for event in events where (event["category"] as? String ?? "WORKOUT") == "WORKOUT" {
            let name = (event["name"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? "Planned workout"
            guard let id = identifier(event["id"]), let date = event["start_date_local"] as? String, date.count >= 10
            else {
                skipped.append("\(name): the event has no id or day")
                continue
            }
            guard let encoded = event["workout_file_base64"] as? String,
                let file = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters)
            else {
                skipped.append("\(name) (\(date.prefix(10))): no workout file (a planned ride without steps)")
                continue
            }
            planned.append(
                PlannedEvent(
                    id: id, day: String(date.prefix(10)), name: name,
                    description: (event["description"] as? String).flatMap { $0.isEmpty ? nil : $0 },
                    fileName: event["workout_filename"] as? String ?? "\(id).zwo", file: [UInt8](file)))
        }
        return (planned, skipped)
    }
}
