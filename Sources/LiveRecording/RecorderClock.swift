import Foundation
import RideWriting

/// Where the live recorder's time comes from: the sensors' links and its timers measure time since the clock
/// began, the journal takes the ride's time, and every wait is the clock's. `SystemRecorderClock` is the real one;
/// a test passes a clock it moves by hand, and the recorder's scenarios then run without real time.
public protocol RecorderClock: Sendable {
    /// Time since this clock began (monotonic).
    var elapsed: Duration { get }
    /// The ride's time: microseconds since 1970 (UTC) as the wall clock said at the start, then moving as the
    /// monotonic clock does (no NTP leaps in a journal).
    func rideMicroseconds() -> Int64
    /// Returns after `duration` of this clock's time, or throws when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The machine's clocks: `ContinuousClock` for waits and links, `RideClock` (wall clock at the start, then the
/// kernel's boot-time clock) for the journal.
public struct SystemRecorderClock: RecorderClock {
    private let origin = ContinuousClock.now
    private let ride = RideClock()

    public init() {}

    public var elapsed: Duration { ContinuousClock.now - origin }
    public func rideMicroseconds() -> Int64 { ride.now() }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
