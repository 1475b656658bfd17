import Formats
import WorkoutStore
import Workouts

/// The stored rides, newest first, narrowed by date and text: `cyclelog list` and `GET /api/v1/workouts`.
public enum RideList {
    /// Rides that started in a range of dates, whose name or source holds a text.
    public struct Filter: Equatable, Sendable {
        /// Started at or after this time (µs since 1970, UTC).
        public var sinceMicroseconds: Int64?
        /// Started before this time.
        public var beforeMicroseconds: Int64?
        /// Found in the name or the source, whatever the case.
        public var text: String?

        public init(sinceMicroseconds: Int64? = nil, beforeMicroseconds: Int64? = nil, text: String? = nil) {
            self.sinceMicroseconds = sinceMicroseconds
            self.beforeMicroseconds = beforeMicroseconds
            self.text = text
        }

        /// The filter the words of a query or of the command line name: `since` and `until` a date (YYYY-MM-DD,
        /// `until` through the end of that day) or a UTC time; empty words mean no limit.
        public static func parse(since: String?, until: String?, text: String?) -> Result<Filter, FilterError> {
            var filter = Filter()
            if let since, !since.isEmpty {
                guard let start = UTCTime.parseDate(since) else { return .failure(FilterError(word: "since", since)) }
                filter.sinceMicroseconds = start
            }
            if let until, !until.isEmpty {
                guard let end = UTCTime.parseDate(until) else { return .failure(FilterError(word: "until", until)) }
                // A date is the whole day; a time is that moment.
                filter.beforeMicroseconds = until.utf8.count == 10 ? end + 86_400_000_000 : end + 1
            }
            if let text, !text.isEmpty { filter.text = text }
            return .success(filter)
        }

        func admits(_ entry: WorkoutStore.ListEntry) -> Bool {
            if let sinceMicroseconds, entry.startMicroseconds < sinceMicroseconds { return false }
            if let beforeMicroseconds, entry.startMicroseconds >= beforeMicroseconds { return false }
            if let text {
                let wanted = text.lowercased()
                return (entry.name ?? "").lowercased().contains(wanted) || entry.source.lowercased().contains(wanted)
            }
            return true
        }
    }

    /// A date that is not one.
    public struct FilterError: Error, CustomStringConvertible {
        public let word: String
        public let value: String

        init(word: String, _ value: String) {
            self.word = word
            self.value = value
        }

        public var description: String {
            "\(word) takes a date (2024-05-01) or a UTC time (2024-05-01T06:30:00Z), not '\(value)'"
        }
    }

    public static func entries(in store: WorkoutStore, _ filter: Filter = Filter()) throws(StoreError)
        -> [WorkoutStore.ListEntry]
    {
        try page(in: store, filter, newest: nil).entries
    }

    /// How many rides `cyclelog list` shows unless told `--all`: a screenful.
    public static let pageSize = 20

    /// The newest `newest` rides the filter admits (all of them when nil), and how many it admits.
    public struct Page: Equatable, Sendable {
        public var entries: [WorkoutStore.ListEntry]
        public var admitted: Int

        public init(entries: [WorkoutStore.ListEntry], admitted: Int) {
            self.entries = entries
            self.admitted = admitted
        }
    }

    /// The newest rides the filter admits, or the newest of those after `position` (the next page: older rides);
    /// `admitted` counts every ride the filter admits. The dates are the store's index's to narrow; a text is looked
    /// for in every ride of those dates (any case, as Swift compares it, which SQLite's `lower` does not for all
    /// scripts).
    public static func page(
        in store: WorkoutStore, _ filter: Filter, after position: WorkoutStore.ListPosition? = nil, newest limit: Int?
    ) throws(StoreError) -> Page {
        let since = filter.sinceMicroseconds ?? Int64.min
        let before = filter.beforeMicroseconds ?? Int64.max
        guard since < before else { return Page(entries: [], admitted: 0) }
        guard filter.text == nil else {
            let admitted = try store.list(startedIn: since..<before, newest: nil).filter(filter.admits)
            let shown =
                position.map { position in
                    admitted.filter { ($0.startMicroseconds, $0.id) < (position.startMicroseconds, position.id) }
                } ?? admitted
            return Page(entries: limit.map { Array(shown.prefix($0)) } ?? shown, admitted: admitted.count)
        }
        let entries = try store.list(startedIn: since..<before, after: position, newest: limit)
        // A first page that is not full holds them all; a full one, or a later one, is counted.
        guard position != nil || (limit != nil && entries.count == limit) else {
            return Page(entries: entries, admitted: entries.count)
        }
        return Page(entries: entries, admitted: try store.count(startedIn: since..<before))
    }

    /// A ride's Training Stress Score against the FTP in force when it started, as `show` gives it.
    public static func trainingStressScore(_ entry: WorkoutStore.ListEntry, _ history: FTPHistory) -> Double? {
        guard let np = entry.normalizedPowerWatts, let moving = entry.movingSeconds,
            let ftp = history.inForce(at: entry.startMicroseconds)
        else { return nil }
        return PowerMetrics.trainingStressScore(normalizedPowerWatts: np, movingSeconds: moving, ftpWatts: ftp.watts)
    }

    /// The TSS per week of the complete rides (one of each group of overlapping rides), the `weeks` weeks ending with the newest ride's.
    public static func weeklyLoad(in store: WorkoutStore, weeks: Int) throws(StoreError) -> WeeklyLoad {
        let history = try store.ftpHistory()
        let setAside = try store.rideOverlaps().setAside
        let rides = try store.list().filter { $0.status == .complete && !setAside.contains($0.id) }
        return WeeklyLoad(rides.map { ($0.startMicroseconds, trainingStressScore($0, history)) }, count: weeks)
    }

    /// The JSON array of `cyclelog list --json` (keys in Docs/guide/replay.md), NP and TSS as `show` has them.
    /// `sameRideAs`: for a ride the statistics leave out, the overlapping ride they count instead.
    public static func json(_ entries: [WorkoutStore.ListEntry], ftp history: FTPHistory, overlaps: RideOverlaps)
        -> JSONValue
    {
        .array(
            entries.map { entry in
                .object([
                    ("id", .integer(entry.id)),
                    ("syncIdentifier", .string(entry.syncIdentifier)),
                    ("contentDigest", .optionalString(entry.contentDigest)),
                    ("name", .optionalString(entry.name)),
                    ("status", .string(entry.status.rawValue)),
                    ("beingWritten", .bool(entry.beingWritten)),
                    ("start", .string(UTCTime.formatSeconds(microseconds: entry.startMicroseconds))),
                    ("elapsedSeconds", .rounded(entry.elapsedSeconds, 3)),
                    ("distanceMeters", .rounded(entry.distanceMeters, 2)),
                    ("averagePowerWatts", .rounded(entry.averagePowerWatts, 1)),
                    ("normalizedPowerWatts", .rounded(entry.normalizedPowerWatts, 1)),
                    ("trainingStressScore", .rounded(trainingStressScore(entry, history), 1)),
                    ("source", .string(entry.source)),
                    ("sameRideAs", overlaps.countedInstead(of: entry.id).map { .integer($0) } ?? .null),
                ])
            })
    }
}
