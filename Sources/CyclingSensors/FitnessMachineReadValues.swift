/// Fitness Machine Feature, 0x2ACC (read): two little-endian uint32 bit fields (FTMS).
/// (Wireshark 4.0 reads them big-endian; we do not.)
public struct FitnessMachineFeature: CharacteristicValue {
    public static let characteristic = Characteristic.fitnessMachineFeature

    public var fitnessMachineFeatures: UInt32
    public var targetSettingFeatures: UInt32

    static let machineFeatureNames: [(bit: Int, name: String)] = [
        (0, "average speed"), (1, "cadence"), (2, "total distance"), (3, "inclination"), (4, "elevation gain"),
        (5, "pace"), (6, "step count"), (7, "resistance level"), (8, "stride count"), (9, "expended energy"),
        (10, "heart rate measurement"), (11, "metabolic equivalent"), (12, "elapsed time"), (13, "remaining time"),
        (14, "power measurement"), (15, "force on belt and power output"), (16, "user data retention"),
    ]
    static let targetSettingNames: [(bit: Int, name: String)] = [
        (0, "speed"), (1, "inclination"), (2, "resistance"), (3, "power"), (4, "heart rate"),
        (5, "expended energy"), (6, "step number"), (7, "stride number"), (8, "distance"), (9, "training time"),
        (10, "time in two heart rate zones"), (11, "time in three heart rate zones"),
        (12, "time in five heart rate zones"), (13, "indoor bike simulation parameters"),
        (14, "wheel circumference"), (15, "spin down control"), (16, "cadence"),
    ]

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        fitnessMachineFeatures = try reader.readUInt32("fitnessMachineFeatures")
        targetSettingFeatures = try reader.readUInt32("targetSettingFeatures")
        try reader.expectEnd()
    }

    /// The value a fitness machine serves: both bit fields, little-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(fitnessMachineFeatures)
        writer.write(targetSettingFeatures)
        return writer.bytes
    }

    public var fields: [DecodedField] {
        [
            .flagsNamed("fitnessMachineFeatures", fitnessMachineFeatures, names: Self.machineFeatureNames),
            .flagsNamed("targetSettingFeatures", targetSettingFeatures, names: Self.targetSettingNames),
        ]
    }
}

/// Supported Power Range, 0x2AD8, and Supported Resistance Level Range, 0x2AD6 (read): sint16 minimum,
/// sint16 maximum, uint16 minimum increment (FTMS). Power in W; resistance in 0.1 units.
public struct SupportedRange: Equatable, Sendable {
    public var minimum: Int16
    public var maximum: Int16
    public var minimumIncrement: UInt16

    public init(minimum: Int16, maximum: Int16, minimumIncrement: UInt16) {
        self.minimum = minimum
        self.maximum = maximum
        self.minimumIncrement = minimumIncrement
    }

    /// The value a fitness machine serves: minimum, maximum, increment, little-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 6)
        writer.write(minimum)
        writer.write(maximum)
        writer.write(minimumIncrement)
        return writer.bytes
    }

    /// `minimum<name>`, `maximum<name>` and the increment's key, in the range's resolution and unit.
    func fields(_ name: String, _ incrementKey: String, resolution: Double, unit: String) -> [DecodedField] {
        [
            .signed("minimum" + name, minimum, resolution: resolution, unit: unit),
            .signed("maximum" + name, maximum, resolution: resolution, unit: unit),
            .unsigned(incrementKey, minimumIncrement, resolution: resolution, unit: unit),
        ]
    }

    init(
        decoding bytes: [UInt8], minimumField: StaticString, maximumField: StaticString, incrementField: StaticString
    ) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        minimum = try reader.readInt16(minimumField)
        maximum = try reader.readInt16(maximumField)
        minimumIncrement = try reader.readUInt16(incrementField)
        try reader.expectEnd()
    }
}

/// Supported Power Range, 0x2AD8: watts.
public struct SupportedPowerRange: CharacteristicValue {
    public static let characteristic = Characteristic.supportedPowerRange
    public var range: SupportedRange

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        range = try SupportedRange(
            decoding: bytes, minimumField: "minimumPower", maximumField: "maximumPower",
            incrementField: "minimumPowerIncrement")
    }

    public var fields: [DecodedField] { range.fields("Power", "minimumPowerIncrement", resolution: 1, unit: "W") }
}

/// Supported Resistance Level Range, 0x2AD6: unitless, resolution 0.1.
public struct SupportedResistanceLevelRange: CharacteristicValue {
    public static let characteristic = Characteristic.supportedResistanceLevelRange
    public var range: SupportedRange

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        range = try SupportedRange(
            decoding: bytes, minimumField: "minimumResistanceLevel", maximumField: "maximumResistanceLevel",
            incrementField: "minimumResistanceIncrement")
    }

    public var fields: [DecodedField] {
        range.fields("ResistanceLevel", "minimumResistanceIncrement", resolution: 0.1, unit: "")
    }
}

/// Training Status, 0x2AD3 (read/notify): flags, status, optional UTF-8 string (FTMS).
public struct TrainingStatus: CharacteristicValue {
    public static let characteristic = Characteristic.trainingStatus

    public var flags: UInt8
    public var status: UInt8
    public var statusString: String?

    static let statusNames = [
        "Other", "Idle", "Warming Up", "Low Intensity Interval", "High Intensity Interval", "Recovery Interval",
        "Isometric", "Heart Rate Control", "Fitness Test", "Speed Outside of Control Region - Low",
        "Speed Outside of Control Region - High", "Cool Down", "Watt Control", "Manual Mode (Quick Start)",
        "Pre-Workout", "Post-Workout",
    ]

    public var statusName: String {
        Int(status) < Self.statusNames.count ? Self.statusNames[Int(status)] : "reserved (\(status))"
    }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        flags = try reader.readUInt8("flags")
        status = try reader.readUInt8("trainingStatus")
        // Bit 0: a string follows; bit 1: it continues in a later read (extended string).
        if flags & 0x03 != 0 {
            statusString = try reader.readText("trainingStatusString")
        }
        try reader.expectEnd()
    }

    public var fields: [DecodedField] {
        var fields: [DecodedField] = [
            .flags(flags, names: [(0, "training status string"), (1, "extended string")]),
            .unsigned("trainingStatus", status, meaning: statusName),
        ]
        if let statusString { fields.append(DecodedField("trainingStatusString", .text(statusString))) }
        return fields
    }
}

extension ByteReader {
    /// Reads the rest of the value as UTF-8.
    mutating func readText(_ field: StaticString) throws(MalformedPayload) -> String {
        let start = offset
        guard let text = String(validating: readRest(), as: UTF8.self) else {
            throw MalformedPayload(field: "\(field)", offset: start, reason: .invalidValue("not UTF-8"))
        }
        return text
    }
}

/// Supported Inclination Range, 0x2AD5 (read): sint16 minimum, sint16 maximum, uint16 minimum increment, in
/// 0.1 % (FTMS; the same layout as the power and resistance ranges).
public struct SupportedInclinationRange: CharacteristicValue {
    public static let characteristic = Characteristic.supportedInclinationRange
    public var range: SupportedRange

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        range = try SupportedRange(
            decoding: bytes, minimumField: "minimumInclination", maximumField: "maximumInclination",
            incrementField: "minimumInclinationIncrement")
    }

    public var fields: [DecodedField] {
        range.fields("Inclination", "minimumInclinationIncrement", resolution: 0.1, unit: "%")
    }
}
