/// Cycling Power Vector, 0x2A64 (notify), GATT Specification Supplement.
///
/// The force or torque array fills the rest of the value (no count field; oldest first). An odd byte
/// left over is a truncated item and an error.
public struct CyclingPowerVector: CharacteristicValue {
    public static let characteristic = Characteristic.cyclingPowerVector

    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let crankRevolutionDataPresent = Flags(rawValue: 1 << 0)
        public static let firstCrankMeasurementAnglePresent = Flags(rawValue: 1 << 1)
        public static let instantaneousForceMagnitudeArrayPresent = Flags(rawValue: 1 << 2)
        public static let instantaneousTorqueMagnitudeArrayPresent = Flags(rawValue: 1 << 3)
        /// Bits 4–5: the instantaneous measurement direction (see `measurementDirection`).
        public static let measurementDirectionMask = Flags(rawValue: 0x30)
        public static let reserved = Flags(rawValue: 0xC0)

        static let names: [(bit: Int, name: String)] = [
            (0, "crank revolution data"), (1, "first crank measurement angle"),
            (2, "force magnitude array"), (3, "torque magnitude array"), (6, "reserved bit 6"), (7, "reserved bit 7"),
        ]
    }

    public var flags: Flags
    public var crankRevolutionData: CrankRevolutionData?
    /// Degrees.
    public var firstCrankMeasurementAngle: UInt16?
    /// Newtons each, when the force array flag is set.
    public var instantaneousForceMagnitudes: [Int16]?
    /// 1/32 N·m each, when the torque array flag is set.
    public var instantaneousTorqueMagnitudes: [Int16]?

    /// 0 unknown, 1 tangential, 2 radial, 3 lateral component.
    public var measurementDirection: UInt8 { (flags.rawValue >> 4) & 0x03 }

    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        flags = Flags(rawValue: try reader.readUInt8("flags"))
        if flags.contains(.crankRevolutionDataPresent) {
            crankRevolutionData = try reader.readCrankRevolutionData()
        }
        if flags.contains(.firstCrankMeasurementAnglePresent) {
            firstCrankMeasurementAngle = try reader.readUInt16("firstCrankMeasurementAngle")
        }
        // Bits 2 and 3 are exclusive by the spec; if a sensor sets both, the bytes cannot belong to both
        // arrays, so the force array (the lower bit) takes them and the torque array stays empty.
        if flags.contains(.instantaneousForceMagnitudeArrayPresent) {
            instantaneousForceMagnitudes = try reader.readUInt16Array("instantaneousForceMagnitudes").map {
                Int16(bitPattern: $0)
            }
        } else if flags.contains(.instantaneousTorqueMagnitudeArrayPresent) {
            instantaneousTorqueMagnitudes = try reader.readUInt16Array("instantaneousTorqueMagnitudes").map {
                Int16(bitPattern: $0)
            }
        }
        try reader.expectEnd()
    }

    static let directionNames = ["unknown", "tangential", "radial", "lateral"]

    public var fields: [DecodedField] {
        var fields: [DecodedField] = [
            .flags(flags.rawValue, names: Flags.names),
            .unsigned(
                "instantaneousMeasurementDirection", measurementDirection,
                meaning: Self.directionNames[Int(measurementDirection)]),
        ]
        crankRevolutionData?.appendFields(to: &fields)
        if let firstCrankMeasurementAngle {
            fields.append(.unsigned("firstCrankMeasurementAngle", firstCrankMeasurementAngle, unit: "°"))
        }
        if let instantaneousForceMagnitudes {
            fields.append(
                DecodedField(
                    "instantaneousForceMagnitudes", .list(instantaneousForceMagnitudes.map(Int64.init)), unit: "N"))
        }
        if let instantaneousTorqueMagnitudes {
            fields.append(
                DecodedField(
                    "instantaneousTorqueMagnitudes", .list(instantaneousTorqueMagnitudes.map(Int64.init)),
                    resolution: 1 / 32, unit: "N·m"))
        }
        return fields
    }
}
