/// Cycling Power Measurement, 0x2A63 (notify), as the GATT Specification Supplement lays it out.
///
/// Fields are read in table order, each only when its flag bit is set; every value is the wire integer
/// (power in W, signed; balance in 1/2 %; torque in 1/32 N·m; wheel time 1/2048 s; crank time
/// 1/1024 s; energy in kJ). Trailing bytes after the last flagged field are tolerated and counted in
/// `trailingByteCount`, as the GATT Specification Supplement asks receivers to ignore them.
public struct CyclingPowerMeasurement: EncodableCharacteristicValue, FieldAppending {
    public static let characteristic = Characteristic.cyclingPowerMeasurement
    /// The wheel event time of Cycling Power counts 1/2048 s (CSC uses 1/1024 s).
    public static let wheelTicksPerSecond = 2048.0

    /// The flags field (uint16). Bits 1, 3 and 12 qualify data without adding a field.
    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        public static let pedalPowerBalancePresent = Flags(rawValue: 1 << 0)
        /// Pedal power balance refers to the left pedal (clear: reference unknown).
        public static let pedalPowerBalanceReferenceLeft = Flags(rawValue: 1 << 1)
        public static let accumulatedTorquePresent = Flags(rawValue: 1 << 2)
        /// Accumulated torque is crank-based (clear: wheel-based).
        public static let accumulatedTorqueSourceCrank = Flags(rawValue: 1 << 3)
        public static let wheelRevolutionDataPresent = Flags(rawValue: 1 << 4)
        public static let crankRevolutionDataPresent = Flags(rawValue: 1 << 5)
        public static let extremeForceMagnitudesPresent = Flags(rawValue: 1 << 6)
        public static let extremeTorqueMagnitudesPresent = Flags(rawValue: 1 << 7)
        public static let extremeAnglesPresent = Flags(rawValue: 1 << 8)
        public static let topDeadSpotAnglePresent = Flags(rawValue: 1 << 9)
        public static let bottomDeadSpotAnglePresent = Flags(rawValue: 1 << 10)
        public static let accumulatedEnergyPresent = Flags(rawValue: 1 << 11)
        /// Offset compensation indicator; its exact meaning is not published, kept as data.
        public static let offsetCompensationIndicator = Flags(rawValue: 1 << 12)
        /// Bits 13–15: reserved; ignored but kept raw.
        public static let reserved = Flags(rawValue: 0xE000)

        /// Bits that only announce a field; the encoder derives them from the fields present.
        public static let presenceBits: Flags = [
            .pedalPowerBalancePresent, .accumulatedTorquePresent, .wheelRevolutionDataPresent,
            .crankRevolutionDataPresent, .extremeForceMagnitudesPresent, .extremeTorqueMagnitudesPresent,
            .extremeAnglesPresent, .topDeadSpotAnglePresent, .bottomDeadSpotAnglePresent, .accumulatedEnergyPresent,
        ]

        static let names: [(bit: Int, name: String)] = [
            (0, "pedal power balance"), (1, "balance reference left"), (2, "accumulated torque"),
            (3, "torque source crank"), (4, "wheel revolution data"), (5, "crank revolution data"),
            (6, "extreme force magnitudes"), (7, "extreme torque magnitudes"), (8, "extreme angles"),
            (9, "top dead spot angle"), (10, "bottom dead spot angle"), (11, "accumulated energy"),
            (12, "offset compensation indicator"), (13, "reserved bit 13"), (14, "reserved bit 14"),
            (15, "reserved bit 15"),
        ]
    }

    /// A maximum and minimum pair under one flag (force in N, or torque in 1/32 N·m), both signed.
    public struct ExtremeMagnitudes: Equatable, Sendable {
        public var maximum: Int16
        public var minimum: Int16
        public init(maximum: Int16, minimum: Int16) {
            self.maximum = maximum
            self.minimum = minimum
        }
    }

    /// The crank angles at which the extremes occurred: two 12-bit values packed in 3 bytes.
    public struct ExtremeAngles: Equatable, Sendable {
        /// Degrees, 0…4095 (12 bits).
        public var maximumAngle: UInt16
        /// Degrees, 0…4095 (12 bits).
        public var minimumAngle: UInt16
        public init(maximumAngle: UInt16, minimumAngle: UInt16) {
            self.maximumAngle = maximumAngle & 0x0FFF
            self.minimumAngle = minimumAngle & 0x0FFF
        }
    }

    /// The flags as received (presence bits as sent; qualifier and reserved bits kept raw).
    public var flags: Flags
    /// Watts, signed: negative values are legal (sint16).
    public var instantaneousPower: Int16
    /// Share of the reference pedal in 1/2 % (see `Flags.pedalPowerBalanceReferenceLeft`).
    public var pedalPowerBalance: UInt8?
    /// 1/32 N·m, wraps at 2^16 (= 2048 N·m).
    public var accumulatedTorque: UInt16?
    /// Wheel event time in 1/2048 s.
    public var wheelRevolutionData: WheelRevolutionData?
    public var crankRevolutionData: CrankRevolutionData?
    /// Newtons.
    public var extremeForceMagnitudes: ExtremeMagnitudes?
    /// 1/32 N·m.
    public var extremeTorqueMagnitudes: ExtremeMagnitudes?
    public var extremeAngles: ExtremeAngles?
    /// Degrees.
    public var topDeadSpotAngle: UInt16?
    /// Degrees.
    public var bottomDeadSpotAngle: UInt16?
    /// Kilojoules.
    public var accumulatedEnergy: UInt16?
    /// Bytes after the last flagged field (tolerated: a receiver ignores them); 0 for a conformant value.
    public var trailingByteCount: Int = 0

    public init(
        flags: Flags = [], instantaneousPower: Int16, pedalPowerBalance: UInt8? = nil, accumulatedTorque: UInt16? = nil,
        wheelRevolutionData: WheelRevolutionData? = nil, crankRevolutionData: CrankRevolutionData? = nil,
        extremeForceMagnitudes: ExtremeMagnitudes? = nil, extremeTorqueMagnitudes: ExtremeMagnitudes? = nil,
        extremeAngles: ExtremeAngles? = nil, topDeadSpotAngle: UInt16? = nil, bottomDeadSpotAngle: UInt16? = nil,
        accumulatedEnergy: UInt16? = nil
    ) {
        self.flags = flags
        self.instantaneousPower = instantaneousPower
        self.pedalPowerBalance = pedalPowerBalance
        self.accumulatedTorque = accumulatedTorque
        self.wheelRevolutionData = wheelRevolutionData
        self.crankRevolutionData = crankRevolutionData
        self.extremeForceMagnitudes = extremeForceMagnitudes
        self.extremeTorqueMagnitudes = extremeTorqueMagnitudes
        self.extremeAngles = extremeAngles
        self.topDeadSpotAngle = topDeadSpotAngle
        self.bottomDeadSpotAngle = bottomDeadSpotAngle
        self.accumulatedEnergy = accumulatedEnergy
        self.flags = encodedFlags
    }

    @inlinable
    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        let flags = Flags(rawValue: try reader.readUInt16("flags"))
        self.flags = flags
        instantaneousPower = try reader.readInt16("instantaneousPower")
        if flags.contains(.pedalPowerBalancePresent) {
            pedalPowerBalance = try reader.readUInt8("pedalPowerBalance")
        }
        if flags.contains(.accumulatedTorquePresent) {
            accumulatedTorque = try reader.readUInt16("accumulatedTorque")
        }
        if flags.contains(.wheelRevolutionDataPresent) {
            wheelRevolutionData = try reader.readWheelRevolutionData()
        }
        if flags.contains(.crankRevolutionDataPresent) {
            crankRevolutionData = try reader.readCrankRevolutionData()
        }
        if flags.contains(.extremeForceMagnitudesPresent) {
            extremeForceMagnitudes = ExtremeMagnitudes(
                maximum: try reader.readInt16("maximumForceMagnitude"),
                minimum: try reader.readInt16("minimumForceMagnitude"))
        }
        if flags.contains(.extremeTorqueMagnitudesPresent) {
            extremeTorqueMagnitudes = ExtremeMagnitudes(
                maximum: try reader.readInt16("maximumTorqueMagnitude"),
                minimum: try reader.readInt16("minimumTorqueMagnitude"))
        }
        if flags.contains(.extremeAnglesPresent) {
            // Little-endian uint24: maximum in the low 12 bits, minimum in the high 12.
            let packed = try reader.readUInt24("extremeAngles")
            extremeAngles = ExtremeAngles(
                maximumAngle: UInt16(packed & 0x0FFF), minimumAngle: UInt16(packed >> 12 & 0x0FFF))
        }
        if flags.contains(.topDeadSpotAnglePresent) {
            topDeadSpotAngle = try reader.readUInt16("topDeadSpotAngle")
        }
        if flags.contains(.bottomDeadSpotAnglePresent) {
            bottomDeadSpotAngle = try reader.readUInt16("bottomDeadSpotAngle")
        }
        if flags.contains(.accumulatedEnergyPresent) {
            accumulatedEnergy = try reader.readUInt16("accumulatedEnergy")
        }
        trailingByteCount = reader.remainingCount
    }

    /// The flags this value encodes with: qualifier and reserved bits from `flags`, presence bits from
    /// the fields that are set, so an encoded value never disagrees with its own flags.
    public var encodedFlags: Flags {
        var result = flags.subtracting(.presenceBits)
        if pedalPowerBalance != nil { result.insert(.pedalPowerBalancePresent) }
        if accumulatedTorque != nil { result.insert(.accumulatedTorquePresent) }
        if wheelRevolutionData != nil { result.insert(.wheelRevolutionDataPresent) }
        if crankRevolutionData != nil { result.insert(.crankRevolutionDataPresent) }
        if extremeForceMagnitudes != nil { result.insert(.extremeForceMagnitudesPresent) }
        if extremeTorqueMagnitudes != nil { result.insert(.extremeTorqueMagnitudesPresent) }
        if extremeAngles != nil { result.insert(.extremeAnglesPresent) }
        if topDeadSpotAngle != nil { result.insert(.topDeadSpotAnglePresent) }
        if bottomDeadSpotAngle != nil { result.insert(.bottomDeadSpotAnglePresent) }
        if accumulatedEnergy != nil { result.insert(.accumulatedEnergyPresent) }
        return result
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 34)
        writer.write(encodedFlags.rawValue)
        writer.write(instantaneousPower)
        if let pedalPowerBalance { writer.write(pedalPowerBalance) }
        if let accumulatedTorque { writer.write(accumulatedTorque) }
        if let wheelRevolutionData { writer.write(wheelRevolutionData) }
        if let crankRevolutionData { writer.write(crankRevolutionData) }
        if let extremeForceMagnitudes {
            writer.write(extremeForceMagnitudes.maximum)
            writer.write(extremeForceMagnitudes.minimum)
        }
        if let extremeTorqueMagnitudes {
            writer.write(extremeTorqueMagnitudes.maximum)
            writer.write(extremeTorqueMagnitudes.minimum)
        }
        if let extremeAngles {
            writer.writeUInt24(UInt32(extremeAngles.maximumAngle) | UInt32(extremeAngles.minimumAngle) << 12)
        }
        if let topDeadSpotAngle { writer.write(topDeadSpotAngle) }
        if let bottomDeadSpotAngle { writer.write(bottomDeadSpotAngle) }
        if let accumulatedEnergy { writer.write(accumulatedEnergy) }
        return writer.bytes
    }

    public func appendFields(to fields: inout [DecodedField]) {
        fields.append(.flags(flags.rawValue, names: Flags.names))
        fields.append(.signed("instantaneousPower", instantaneousPower, unit: "W"))
        if let pedalPowerBalance {
            let reference = flags.contains(.pedalPowerBalanceReferenceLeft) ? "left pedal" : "reference unknown"
            fields.append(
                .unsigned("pedalPowerBalance", pedalPowerBalance, resolution: 0.5, unit: "%", meaning: reference))
        }
        if let accumulatedTorque {
            let source = flags.contains(.accumulatedTorqueSourceCrank) ? "crank-based" : "wheel-based"
            fields.append(
                .unsigned("accumulatedTorque", accumulatedTorque, resolution: 1 / 32, unit: "N·m", meaning: source))
        }
        wheelRevolutionData?.appendFields(to: &fields, ticksPerSecond: Self.wheelTicksPerSecond)
        crankRevolutionData?.appendFields(to: &fields)
        if let extremeForceMagnitudes {
            fields.append(.signed("maximumForceMagnitude", extremeForceMagnitudes.maximum, unit: "N"))
            fields.append(.signed("minimumForceMagnitude", extremeForceMagnitudes.minimum, unit: "N"))
        }
        if let extremeTorqueMagnitudes {
            fields.append(
                .signed("maximumTorqueMagnitude", extremeTorqueMagnitudes.maximum, resolution: 1 / 32, unit: "N·m"))
            fields.append(
                .signed("minimumTorqueMagnitude", extremeTorqueMagnitudes.minimum, resolution: 1 / 32, unit: "N·m"))
        }
        if let extremeAngles {
            fields.append(.unsigned("maximumAngle", extremeAngles.maximumAngle, unit: "°"))
            fields.append(.unsigned("minimumAngle", extremeAngles.minimumAngle, unit: "°"))
        }
        if let topDeadSpotAngle { fields.append(.unsigned("topDeadSpotAngle", topDeadSpotAngle, unit: "°")) }
        if let bottomDeadSpotAngle { fields.append(.unsigned("bottomDeadSpotAngle", bottomDeadSpotAngle, unit: "°")) }
        if let accumulatedEnergy { fields.append(.unsigned("accumulatedEnergy", accumulatedEnergy, unit: "kJ")) }
        if trailingByteCount > 0 { fields.append(.unsigned("trailingBytes", trailingByteCount)) }
    }
}
