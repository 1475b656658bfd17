/// Cycling Power Feature, 0x2A65 (read, uint32), GATT Specification Supplement — every bit including the 2-bit
/// distributed-system field (bits 20–21), which pycycling reads from the wrong bits.
public struct CyclingPowerFeature: EncodableCharacteristicValue {
    public static let characteristic = Characteristic.cyclingPowerFeature

    public struct Features: OptionSet, Equatable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let pedalPowerBalance = Features(rawValue: 1 << 0)
        public static let accumulatedTorque = Features(rawValue: 1 << 1)
        public static let wheelRevolutionData = Features(rawValue: 1 << 2)
        public static let crankRevolutionData = Features(rawValue: 1 << 3)
        public static let extremeMagnitudes = Features(rawValue: 1 << 4)
        public static let extremeAngles = Features(rawValue: 1 << 5)
        public static let topAndBottomDeadSpotAngles = Features(rawValue: 1 << 6)
        public static let accumulatedEnergy = Features(rawValue: 1 << 7)
        public static let offsetCompensationIndicator = Features(rawValue: 1 << 8)
        public static let offsetCompensation = Features(rawValue: 1 << 9)
        public static let measurementContentMasking = Features(rawValue: 1 << 10)
        public static let multipleSensorLocations = Features(rawValue: 1 << 11)
        public static let crankLengthAdjustment = Features(rawValue: 1 << 12)
        public static let chainLengthAdjustment = Features(rawValue: 1 << 13)
        public static let chainWeightAdjustment = Features(rawValue: 1 << 14)
        public static let spanLengthAdjustment = Features(rawValue: 1 << 15)
        /// Set: the sensor measures torque; clear: force (decides the unit of offset compensation).
        public static let torqueBasedMeasurementContext = Features(rawValue: 1 << 16)
        public static let instantaneousMeasurementDirection = Features(rawValue: 1 << 17)
        public static let factoryCalibrationDate = Features(rawValue: 1 << 18)
        public static let enhancedOffsetCompensation = Features(rawValue: 1 << 19)
        /// Bits 20–21: see `distributedSystemSupport`.
        public static let distributedSystemSupportMask = Features(rawValue: 0x0030_0000)
        public static let reserved = Features(rawValue: 0xFFC0_0000)

        static let names: [(bit: Int, name: String)] = [
            (0, "pedal power balance"), (1, "accumulated torque"), (2, "wheel revolution data"),
            (3, "crank revolution data"), (4, "extreme magnitudes"), (5, "extreme angles"),
            (6, "top and bottom dead spot angles"), (7, "accumulated energy"), (8, "offset compensation indicator"),
            (9, "offset compensation"), (10, "measurement content masking"), (11, "multiple sensor locations"),
            (12, "crank length adjustment"), (13, "chain length adjustment"), (14, "chain weight adjustment"),
            (15, "span length adjustment"), (16, "torque-based"), (17, "instantaneous measurement direction"),
            (18, "factory calibration date"), (19, "enhanced offset compensation"),
        ]
    }

    /// Bits 20–21 of the feature field.
    public enum DistributedSystemSupport: UInt8, Sendable {
        case unspecified = 0, notForDistributedSystems = 1, canBeUsedInDistributedSystem = 2, reserved = 3

        var words: String {
            switch self {
            case .unspecified: "unspecified (legacy sensor)"
            case .notForDistributedSystems: "not for use in a distributed system"
            case .canBeUsedInDistributedSystem: "can be used in a distributed system"
            case .reserved: "reserved value 3"
            }
        }
    }

    public var features: Features
    /// How many of the field's 4 octets the sensor sent: real meters (a Wahoo KICKR) send 2, and the bits of the
    /// octets not sent (16 to 31 for 2) are unknown, not clear.
    public var sentOctets = 4

    /// Whether bit `bit` was sent at all (a short feature field leaves the high bits unknown).
    public func knows(_ feature: Features) -> Bool {
        feature.rawValue < (sentOctets >= 4 ? UInt32.max : UInt32(1) << (8 * sentOctets))
    }

    public var distributedSystemSupport: DistributedSystemSupport {
        // Two bits can only hold 0...3, all of which are cases.
        DistributedSystemSupport(rawValue: UInt8(features.rawValue >> 20 & 0x3)) ?? .reserved
    }

    public init(features: Features) { self.features = features }

    /// The value a power meter serves: all 4 octets, little-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4)
        writer.write(features.rawValue)
        return writer.bytes
    }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        if (1...3).contains(bytes.count) {
            // Short (the GATT Specification Supplement says 4 octets): the bits that were sent, little-endian; the rest unknown.
            var value: UInt32 = 0
            for index in 0..<bytes.count { value |= UInt32(try reader.readUInt8("features")) << (8 * index) }
            features = Features(rawValue: value)
            sentOctets = bytes.count
        } else {
            features = Features(rawValue: try reader.readUInt32("features"))
        }
        try reader.expectEnd()
    }

    public var fields: [DecodedField] {
        var fields: [DecodedField] = [.flagsNamed("features", features.rawValue, names: Features.names)]
        if sentOctets < 4 {
            fields.append(
                .unsigned(
                    "featureOctets", UInt8(sentOctets),
                    meaning: "short: \(sentOctets) of 4 octets sent, bits \(8 * sentOctets) to 31 unknown"))
        } else {
            fields.append(
                .unsigned(
                    "distributedSystemSupport", distributedSystemSupport.rawValue,
                    meaning: distributedSystemSupport.words))
        }
        return fields
    }
}
