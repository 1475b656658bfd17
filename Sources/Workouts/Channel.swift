/// The four things a ride records each second; the units are in the names of the values that carry them.
public enum Channel: Int, CaseIterable, Sendable, Comparable {
    case powerWatts = 0
    case cadenceRPM
    case speedMetersPerSecond
    case heartRateBPM

    public static func < (lhs: Channel, rhs: Channel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The key of this channel in JSON, with its unit: `powerWatts`, `cadenceRPM`, `speedMetersPerSecond`,
    /// `heartRateBPM`.
    public var jsonKey: String {
        switch self {
        case .powerWatts: "powerWatts"
        case .cadenceRPM: "cadenceRPM"
        case .speedMetersPerSecond: "speedMetersPerSecond"
        case .heartRateBPM: "heartRateBPM"
        }
    }

    public var name: String {
        switch self {
        case .powerWatts: "power"
        case .cadenceRPM: "cadence"
        case .speedMetersPerSecond: "speed"
        case .heartRateBPM: "heartRate"
        }
    }
}

/// One value on one channel from one sensor at one instant, with how much that source is preferred.
public struct ChannelReading: Equatable, Sendable {
    public var channel: Channel
    public var value: Double
    /// Lower is preferred: a dedicated sensor beats a trainer's estimate (see `SourceRank`).
    public var rank: Int

    public init(channel: Channel, value: Double, rank: Int) {
        self.channel = channel
        self.value = value
        self.rank = rank
    }
}

/// Source priority between sensors of different kinds, per channel. Between two sensors of the same kind the
/// one seen first wins.
enum SourceRank {
    /// Power meter first, then a trainer's own figure.
    static let cyclingPowerPower = 0, fitnessMachinePower = 1
    /// Cadence straight from a crank: the power meter's, then a CSC sensor's, then the trainer's estimate.
    static let cyclingPowerCadence = 0, cscCadence = 1, fitnessMachineCadence = 2
    /// A wheel sensor measures the wheel; a CPS wheel count is often the trainer's flywheel; then the trainer.
    static let cscSpeed = 0, cyclingPowerSpeed = 1, fitnessMachineSpeed = 2
    /// A strap measures the heart; a trainer's figure usually relays the same strap.
    static let heartRateStrap = 0, fitnessMachineHeartRate = 1
}
