/// The GATT services a cycling sensor offers, by their 16-bit SIG UUIDs: what cyclelog scans for and records from.
public enum CyclingService: UInt16, CaseIterable, Sendable {
    case cyclingPower = 0x1818
    case cyclingSpeedAndCadence = 0x1816
    case heartRate = 0x180D
    case fitnessMachine = 0x1826

    /// What a rider calls it, as `scan` lists it.
    public var shortName: String {
        switch self {
        case .cyclingPower: "power"
        case .cyclingSpeedAndCadence: "speed/cadence"
        case .heartRate: "heart rate"
        case .fitnessMachine: "fitness machine"
        }
    }

    /// The measurement a recorder subscribes to on it.
    public var measurement: Characteristic {
        switch self {
        case .cyclingPower: .cyclingPowerMeasurement
        case .cyclingSpeedAndCadence: .cscMeasurement
        case .heartRate: .heartRateMeasurement
        case .fitnessMachine: .indoorBikeData
        }
    }

    /// What a recorder reads once connected: the sensor's features and where it sits (they change how its
    /// measurements read, and go into the ride's journal).
    public static let readOnConnect: Set<Characteristic> = [
        .cyclingPowerFeature, .cscFeature, .sensorLocation, .fitnessMachineFeature, .bodySensorLocation,
        // What a trainer declares it takes: every target sent is held within these.
        .supportedPowerRange, .supportedResistanceLevelRange, .supportedInclinationRange,
    ]
}
