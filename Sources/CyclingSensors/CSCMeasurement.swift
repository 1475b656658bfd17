/// CSC Measurement, 0x2A5B (notify), as the GATT Specification Supplement lays it out.
///
/// Bit 0 is wheel data, bit 1 crank data (an older OpenTracks had them swapped). The wheel event time
/// counts 1/1024 s here, unlike Cycling Power's 1/2048 s. Trailing bytes are tolerated and counted
/// (the GATT Specification Supplement has a receiver ignore them; OpenTracks' vector `02 C8 00 00 00 06 99` carries two).
public struct CSCMeasurement: EncodableCharacteristicValue, FieldAppending {
    public static let characteristic = Characteristic.cscMeasurement
    /// CSC's wheel event time counts 1/1024 s.
    public static let wheelTicksPerSecond = 1024.0

    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let wheelRevolutionDataPresent = Flags(rawValue: 1 << 0)
        public static let crankRevolutionDataPresent = Flags(rawValue: 1 << 1)
        public static let reserved = Flags(rawValue: 0xFC)
        static let names: [(bit: Int, name: String)] =
            [(0, "wheel revolution data"), (1, "crank revolution data")] + (2...7).map { ($0, "reserved bit \($0)") }
    }

    /// Flags as received (reserved bits kept raw).
    public var flags: Flags
    /// Wheel event time in 1/1024 s.
    public var wheelRevolutionData: WheelRevolutionData?
    public var crankRevolutionData: CrankRevolutionData?
    /// Bytes after the last flagged field (tolerated); 0 for a conformant value.
    public var trailingByteCount: Int = 0

    public init(
        flags: Flags = [], wheelRevolutionData: WheelRevolutionData? = nil,
        crankRevolutionData: CrankRevolutionData? = nil
    ) {
        self.flags = flags
        self.wheelRevolutionData = wheelRevolutionData
        self.crankRevolutionData = crankRevolutionData
        self.flags = encodedFlags
    }

    @inlinable
    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        flags = Flags(rawValue: try reader.readUInt8("flags"))
        if flags.contains(.wheelRevolutionDataPresent) {
            wheelRevolutionData = try reader.readWheelRevolutionData()
        }
        if flags.contains(.crankRevolutionDataPresent) {
            crankRevolutionData = try reader.readCrankRevolutionData()
        }
        trailingByteCount = reader.remainingCount
    }

    /// Reserved bits from `flags`, presence bits from the fields that are set.
    public var encodedFlags: Flags {
        var result = flags.subtracting([.wheelRevolutionDataPresent, .crankRevolutionDataPresent])
        if wheelRevolutionData != nil { result.insert(.wheelRevolutionDataPresent) }
        if crankRevolutionData != nil { result.insert(.crankRevolutionDataPresent) }
        return result
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 11)
        writer.write(encodedFlags.rawValue)
        if let wheelRevolutionData { writer.write(wheelRevolutionData) }
        if let crankRevolutionData { writer.write(crankRevolutionData) }
        return writer.bytes
    }

    public func appendFields(to fields: inout [DecodedField]) {
        fields.append(.flags(flags.rawValue, names: Flags.names))
        wheelRevolutionData?.appendFields(to: &fields, ticksPerSecond: Self.wheelTicksPerSecond)
        crankRevolutionData?.appendFields(to: &fields)
        if trailingByteCount > 0 { fields.append(.unsigned("trailingBytes", trailingByteCount)) }
    }
}

/// CSC Feature, 0x2A5C (read, uint16), GATT Specification Supplement.
public struct CSCFeature: EncodableCharacteristicValue {
    public static let characteristic = Characteristic.cscFeature

    public struct Features: OptionSet, Equatable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let wheelRevolutionData = Features(rawValue: 1 << 0)
        public static let crankRevolutionData = Features(rawValue: 1 << 1)
        public static let multipleSensorLocations = Features(rawValue: 1 << 2)
        static let names: [(bit: Int, name: String)] = [
            (0, "wheel revolution data"), (1, "crank revolution data"), (2, "multiple sensor locations"),
        ]
    }

    public var features: Features

    public init(features: Features) { self.features = features }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        features = Features(rawValue: try reader.readUInt16("features"))
        try reader.expectEnd()
    }

    /// The value a sensor serves: 2 octets, little-endian.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 2)
        writer.write(features.rawValue)
        return writer.bytes
    }

    public var fields: [DecodedField] {
        [.flagsNamed("features", features.rawValue, names: Features.names)]
    }
}
