import CyclingSensors

/// Turns successive (cumulative revolutions, last event time) pairs into a rate in revolutions per second,
/// as the CSC and Cycling Power specifications define their cumulative counters and 1/1024 s event times: wrap-around arithmetic on the counters and the event clock, an unchanged event time means
/// "no new revolution", zero after a timeout without one, and every implausible jump (sensor reset, reconnect,
/// a gap longer than the event clock's wrap period) starts a new baseline instead of producing a spike.
public struct RevolutionRate: Sendable {
    /// Ticks per second of the sensor's event clock: 1024 for cranks and CSC wheels, 2048 for CPS wheels.
    public let ticksPerSecond: Double
    /// Above this the sample is a reset or a reconnect jump, not riding (250 rpm; 120 km/h on the wheel).
    public let maximumRevolutionsPerSecond: Double
    /// Without a new revolution for this long the rate is zero (3 s for cranks, 4 s for wheels: a slow cadence still shows, a stop reads 0 soon).
    public let zeroAfterMicroseconds: Int64
    /// 16-bit counters (cranks) wrap; 32-bit wheel counters never do, a decrease is a reset (at 2 m a revolution, 2³² is 9 million km).
    public let countWraps: Bool

    private var baseline: (revolutions: UInt32, eventTime: UInt16, hostMicroseconds: Int64)?
    private var lastRevolutionHostMicroseconds: Int64 = 0
    private var rate: Double = 0
    /// Samples rejected as resets, jumps or contradictions (revolutions without time); kept for diagnostics.
    public private(set) var rejectedCount = 0

    public init(
        ticksPerSecond: Double, maximumRevolutionsPerSecond: Double, zeroAfterSeconds: Double, countWraps: Bool
    ) {
        self.ticksPerSecond = ticksPerSecond
        self.maximumRevolutionsPerSecond = maximumRevolutionsPerSecond
        self.zeroAfterMicroseconds = Int64(zeroAfterSeconds * 1_000_000)
        self.countWraps = countWraps
    }

    /// Crank cadence: 1/1024 s clock, 16-bit count, at most 250 rpm.
    public static func crank() -> RevolutionRate {
        RevolutionRate(
            ticksPerSecond: CrankRevolutionData.ticksPerSecond, maximumRevolutionsPerSecond: 250.0 / 60,
            zeroAfterSeconds: 3, countWraps: true)
    }

    /// Wheel speed for a given clock (1024 CSC, 2048 CPS) and circumference: at most 120 km/h.
    public static func wheel(ticksPerSecond: Double, circumferenceMeters: Double) -> RevolutionRate {
        RevolutionRate(
            ticksPerSecond: ticksPerSecond, maximumRevolutionsPerSecond: (120 / 3.6) / circumferenceMeters,
            zeroAfterSeconds: 4, countWraps: false)
    }

    /// The event clock wraps every 65536 ticks: beyond that host-clock gap the tick difference is ambiguous.
    private var wrapPeriodMicroseconds: Int64 { Int64(65_536 / ticksPerSecond * 1_000_000) }

    /// Forgets the baseline: after a disconnect, never compute a rate against a sample from before it.
    public mutating func reset() {
        baseline = nil
        rate = 0
    }

    /// One measurement. Returns the rate in revolutions per second to show from now on and the revolutions
    /// counted since the previous measurement (for distance), or nil when this sample only sets a baseline.
    public mutating func update(revolutions: UInt32, eventTime: UInt16, atMicroseconds host: Int64) -> (
        revolutionsPerSecond: Double, newRevolutions: UInt32
    )? {
        guard let previous = baseline, host - previous.hostMicroseconds < wrapPeriodMicroseconds,
            host >= previous.hostMicroseconds
        else {
            rebaseline(revolutions, eventTime, host)
            return nil
        }
        let ticks = eventTime &- previous.eventTime
        let counted: UInt32
        if countWraps {
            counted = UInt32(
                UInt16(truncatingIfNeeded: revolutions) &- UInt16(truncatingIfNeeded: previous.revolutions))
        } else if revolutions >= previous.revolutions {
            counted = revolutions - previous.revolutions
        } else {
            // A 32-bit wheel count going down is a reset or a battery swap, never a wrap.
            rejectedCount += 1
            rebaseline(revolutions, eventTime, host)
            return nil
        }
        if ticks == 0 {
            guard counted == 0 else {
                // Revolutions without time passing contradict the definition: start again.
                rejectedCount += 1
                rebaseline(revolutions, eventTime, host)
                return nil
            }
            // No new revolution: hold the last rate, capped by "one revolution since the last one",
            // and drop to zero when the cap falls below half of it or after the timeout.
            let sinceRevolution = host - lastRevolutionHostMicroseconds
            if sinceRevolution >= zeroAfterMicroseconds {
                rate = 0
            } else if sinceRevolution > 0 {
                let cap = 1_000_000 / Double(sinceRevolution)
                if cap < rate / 2 { rate = 0 }
            }
            baseline = (revolutions, eventTime, host)
            return (rate, 0)
        }
        let seconds = Double(ticks) / ticksPerSecond
        let newRate = Double(counted) / seconds
        guard newRate <= maximumRevolutionsPerSecond else {
            rejectedCount += 1
            rebaseline(revolutions, eventTime, host)
            return nil
        }
        // Event time moved but the count did not: report 0 as OpenTracks does.
        rate = newRate
        lastRevolutionHostMicroseconds = counted > 0 ? host : lastRevolutionHostMicroseconds
        baseline = (revolutions, eventTime, host)
        return (rate, counted)
    }

    private mutating func rebaseline(_ revolutions: UInt32, _ eventTime: UInt16, _ host: Int64) {
        baseline = (revolutions, eventTime, host)
        lastRevolutionHostMicroseconds = host
        rate = 0
    }
}
