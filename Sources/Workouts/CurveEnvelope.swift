/// The best power of some rides taken in date order: for each duration the best mean power among their curves and
/// the ride that holds it (the first of them to reach it), with how many rides there were and how many had power.
///
/// The envelope of consecutive stretches of rides, appended in order, is the envelope of all of them, ride for ride
/// and holder for holder: the first ride to reach a duration's best is the first of the first stretch that reaches
/// it. This is what lets a window of rides be read from envelopes kept per week (`WorkoutStore`'s `powerCurveWeek`)
/// instead of from every ride's curve.
public struct CurveEnvelope: Equatable, Sendable {
    /// A ride that holds some duration's best.
    public struct Holder: Equatable, Sendable {
        public var workoutId: Int64
        public var startMicroseconds: Int64

        public init(workoutId: Int64, startMicroseconds: Int64) {
            self.workoutId = workoutId
            self.startMicroseconds = startMicroseconds
        }
    }

    public private(set) var rideCount = 0
    /// The rides whose curve has power (best 1-second power above 0 W): what a critical-power fit needs two of.
    public private(set) var poweredRideCount = 0
    public private(set) var curve = PowerCurve(watts: [])
    /// The rides that may hold a duration, in order; `sources` points into it.
    public private(set) var holders: [Holder] = []
    /// For each duration, the index in `holders` of the ride that holds it (one for each of `curve`'s durations).
    public private(set) var sources: [Int] = []

    public init() {}

    /// The envelope of `rides`, in their order.
    public init(_ rides: [RideCurve]) {
        (curve, sources) = PowerCurve.pointwiseMaximum(rides.map(\.curve))
        holders = rides.map { Holder(workoutId: $0.workoutId, startMicroseconds: $0.startMicroseconds) }
        rideCount = rides.count
        poweredRideCount = rides.count { Self.hasPower($0.curve) }
    }

    /// An envelope as it was kept; nil when its parts do not agree (a source for each duration, each one of the
    /// holders), as a damaged or foreign record would not.
    public init?(rideCount: Int, poweredRideCount: Int, curve: PowerCurve, holders: [Holder], sources: [Int]) {
        guard rideCount >= 0, (0...rideCount).contains(poweredRideCount), sources.count == curve.watts.count,
            sources.allSatisfy({ holders.indices.contains($0) })
        else { return nil }
        (self.rideCount, self.poweredRideCount, self.curve) = (rideCount, poweredRideCount, curve)
        (self.holders, self.sources) = (holders, sources)
    }

    /// Whether a ride's curve counts as one with power.
    public static func hasPower(_ curve: PowerCurve) -> Bool { (curve.watts.first ?? 0) > 0 }

    /// This envelope followed by one of later rides: a duration changes hands only to a strictly better power, or
    /// when this one has no ride that long.
    public mutating func append(_ later: CurveEnvelope) {
        let offset = holders.count
        rideCount += later.rideCount
        poweredRideCount += later.poweredRideCount
        holders += later.holders
        if later.curve.watts.count > curve.watts.count {
            let added = later.curve.watts.count - curve.watts.count
            curve.watts += repeatElement(0, count: added)
            sources += repeatElement(-1, count: added)
        }
        for index in later.curve.watts.indices where later.curve.watts[index] > curve.watts[index] || sources[index] < 0
        {
            curve.watts[index] = later.curve.watts[index]
            sources[index] = later.sources[index] + offset
        }
    }

    /// The same, durations up to `seconds` (the FTP's fit reads 20 minutes of a curve, not 12 hours).
    public func cut(toSeconds seconds: Int) -> CurveEnvelope {
        guard curve.watts.count > seconds else { return self }
        var cut = self
        cut.curve.watts.removeLast(curve.watts.count - seconds)
        cut.sources.removeLast(sources.count - seconds)
        return cut
    }

    /// The ride that holds `seconds`' best, nil beyond the longest ride.
    public func holder(seconds: Int) -> Holder? {
        seconds >= 1 && seconds <= sources.count ? holders[sources[seconds - 1]] : nil
    }
}
