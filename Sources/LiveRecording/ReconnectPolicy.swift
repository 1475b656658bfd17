/// When to try a lost sensor again and when a silent one counts as stale. Pure, so the timing rules are tested
/// without a bus.
public struct ReconnectPolicy: Sendable, Equatable {
    /// First retry after this long; doubled after each failure up to `maximumBackoffSeconds`. The cap is short
    /// because a sensor that comes back (rider back in range, battery swapped) should stream within seconds.
    public var initialBackoffSeconds = 1.0
    public var maximumBackoffSeconds = 5.0
    /// A connected sensor is stale after this many expected intervals without a notification…
    public var silentIntervals = 5.0
    /// …but never before this many seconds (sensors at 1 Hz and below, and the first seconds after connecting).
    public var minimumSilenceSeconds = 3.0

    public init() {}

    /// The wait before attempt number `failures + 1`.
    public func backoffSeconds(afterFailures failures: Int) -> Double {
        guard failures > 0 else { return 0 }
        return min(initialBackoffSeconds * Double(1 << min(failures - 1, 20)), maximumBackoffSeconds)
    }

    /// How long without a notification makes a sensor stale, given its mean interval between notifications.
    public func staleAfterSeconds(meanIntervalSeconds: Double?) -> Double {
        max(minimumSilenceSeconds, (meanIntervalSeconds ?? 1) * silentIntervals)
    }
}
