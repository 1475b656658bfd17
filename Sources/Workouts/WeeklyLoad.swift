import Formats

/// Training load per week: the Training Stress Score of each week's rides added up. Weeks run Monday 00:00 to
/// Monday 00:00 UTC (ISO 8601); the last one is the week of the newest ride, so that old rides imported today
/// still show their weeks.
public struct WeeklyLoad: Equatable, Sendable {
    public struct Week: Equatable, Sendable {
        /// Monday 00:00 UTC, µs since 1970.
        public var startMicroseconds: Int64
        public var trainingStressScore: Double
        public var rides: Int
        /// Rides that week without a TSS (no power, or no FTP known on their date).
        public var ridesWithoutScore: Int
    }

    public var weeks: [Week]

    static let weekMicroseconds: Int64 = 7 * 86_400_000_000

    /// The `count` weeks ending with the newest ride's, oldest first, from each ride's start and TSS.
    public init(_ rides: [(startMicroseconds: Int64, trainingStressScore: Double?)], count: Int) {
        guard let newest = rides.map(\.startMicroseconds).max(), count > 0 else {
            weeks = []
            return
        }
        // 1970-01-01 was a Thursday: Mondays fall 4 days after each multiple of 7 days since then.
        let monday: Int64 = 4 * 86_400_000_000
        func weekStart(_ time: Int64) -> Int64 {
            let since = time - monday
            let floored = since >= 0 ? since / Self.weekMicroseconds : (since + 1) / Self.weekMicroseconds - 1
            return monday + floored * Self.weekMicroseconds
        }
        let last = weekStart(newest)
        let first = last - Int64(count - 1) * Self.weekMicroseconds
        var weeks = (0..<count).map {
            Week(
                startMicroseconds: first + Int64($0) * Self.weekMicroseconds, trainingStressScore: 0, rides: 0,
                ridesWithoutScore: 0)
        }
        for ride in rides where ride.startMicroseconds >= first {
            let index = Int((weekStart(ride.startMicroseconds) - first) / Self.weekMicroseconds)
            weeks[index].rides += 1
            if let score = ride.trainingStressScore {
                weeks[index].trainingStressScore += score
            } else {
                weeks[index].ridesWithoutScore += 1
            }
        }
        self.weeks = weeks
    }

    public var json: JSONValue {
        .array(
            weeks.map { week in
                .object([
                    ("weekStart", .string(UTCTime.formatSeconds(microseconds: week.startMicroseconds))),
                    ("trainingStressScore", .rounded(week.trainingStressScore, 1)),
                    ("rides", .integer(Int64(week.rides))),
                    ("ridesWithoutScore", .integer(Int64(week.ridesWithoutScore))),
                ])
            })
    }
}
