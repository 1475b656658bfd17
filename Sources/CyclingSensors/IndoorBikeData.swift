/// Fitness Machine Indoor Bike Data, 0x2AD2 (notify), FTMS and the GATT Specification Supplement.
///
/// Flag bit 0 is inverted ("More Data"): Instantaneous Speed is present when it is **clear**. Every
/// other bit marks a field as present. Fields follow the table order, which is not flag-bit order for
/// bits 1 and 2 (Average Speed, bit 1, comes before Instantaneous Cadence, bit 2).
///
/// Trailing bytes are an error here, unlike CPS and CSC: all thirteen flag bits are defined and a
/// machine with more to say splits its record with More Data, so extra bytes mean the machine's layout
/// disagrees with its flags and every later field would be misread (a Life Fitness bike sends a cadence
/// field while bit 2 is clear). Energy fields keep 0xFFFF / 0xFF ("not available") as raw values.
public struct IndoorBikeData: EncodableCharacteristicValue, FieldAppending {
    public static let characteristic = Characteristic.indoorBikeData

    public struct Flags: OptionSet, Equatable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        /// Inverted: set means Instantaneous Speed is absent and more of the record follows.
        public static let moreData = Flags(rawValue: 1 << 0)
        public static let averageSpeedPresent = Flags(rawValue: 1 << 1)
        public static let instantaneousCadencePresent = Flags(rawValue: 1 << 2)
        public static let averageCadencePresent = Flags(rawValue: 1 << 3)
        public static let totalDistancePresent = Flags(rawValue: 1 << 4)
        public static let resistanceLevelPresent = Flags(rawValue: 1 << 5)
        public static let instantaneousPowerPresent = Flags(rawValue: 1 << 6)
        public static let averagePowerPresent = Flags(rawValue: 1 << 7)
        public static let expendedEnergyPresent = Flags(rawValue: 1 << 8)
        public static let heartRatePresent = Flags(rawValue: 1 << 9)
        public static let metabolicEquivalentPresent = Flags(rawValue: 1 << 10)
        public static let elapsedTimePresent = Flags(rawValue: 1 << 11)
        public static let remainingTimePresent = Flags(rawValue: 1 << 12)
        public static let reserved = Flags(rawValue: 0xE000)

        static let names: [(bit: Int, name: String)] = [
            (0, "more data (no speed)"), (1, "average speed"), (2, "instantaneous cadence"), (3, "average cadence"),
            (4, "total distance"), (5, "resistance level"), (6, "instantaneous power"), (7, "average power"),
            (8, "expended energy"), (9, "heart rate"), (10, "metabolic equivalent"), (11, "elapsed time"),
            (12, "remaining time"), (13, "reserved bit 13"), (14, "reserved bit 14"), (15, "reserved bit 15"),
        ]
    }

    /// Total energy (kcal), energy per hour (kcal), energy per minute (kcal): one flag, three fields.
    public struct ExpendedEnergy: Equatable, Sendable {
        public var totalEnergy: UInt16
        public var energyPerHour: UInt16
        public var energyPerMinute: UInt8
        public init(totalEnergy: UInt16, energyPerHour: UInt16, energyPerMinute: UInt8) {
            self.totalEnergy = totalEnergy
            self.energyPerHour = energyPerHour
            self.energyPerMinute = energyPerMinute
        }
    }

    public var flags: Flags
    /// 0.01 km/h; present only when More Data is clear.
    public var instantaneousSpeed: UInt16?
    /// 0.01 km/h.
    public var averageSpeed: UInt16?
    /// 0.5 rpm.
    public var instantaneousCadence: UInt16?
    /// 0.5 rpm.
    public var averageCadence: UInt16?
    /// Metres (uint24).
    public var totalDistance: UInt32?
    /// Unitless, raw sint16 (the published layouts give it no resolution).
    public var resistanceLevel: Int16?
    /// Watts.
    public var instantaneousPower: Int16?
    /// Watts.
    public var averagePower: Int16?
    public var expendedEnergy: ExpendedEnergy?
    /// Beats per minute.
    public var heartRate: UInt8?
    /// 0.1 MET.
    public var metabolicEquivalent: UInt8?
    /// Seconds.
    public var elapsedTime: UInt16?
    /// Seconds.
    public var remainingTime: UInt16?

    /// True when this notification ends a record (More Data clear); see `IndoorBikeDataAssembler`.
    public var endsRecord: Bool { !flags.contains(.moreData) }

    public init(flags: Flags = []) {
        self.flags = flags
    }

    @inlinable
    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        let flags = Flags(rawValue: try reader.readUInt16("flags"))
        self.flags = flags
        if !flags.contains(.moreData) { instantaneousSpeed = try reader.readUInt16("instantaneousSpeed") }
        if flags.contains(.averageSpeedPresent) { averageSpeed = try reader.readUInt16("averageSpeed") }
        if flags.contains(.instantaneousCadencePresent) {
            instantaneousCadence = try reader.readUInt16("instantaneousCadence")
        }
        if flags.contains(.averageCadencePresent) { averageCadence = try reader.readUInt16("averageCadence") }
        if flags.contains(.totalDistancePresent) { totalDistance = try reader.readUInt24("totalDistance") }
        if flags.contains(.resistanceLevelPresent) { resistanceLevel = try reader.readInt16("resistanceLevel") }
        if flags.contains(.instantaneousPowerPresent) {
            instantaneousPower = try reader.readInt16("instantaneousPower")
        }
        if flags.contains(.averagePowerPresent) { averagePower = try reader.readInt16("averagePower") }
        if flags.contains(.expendedEnergyPresent) {
            expendedEnergy = ExpendedEnergy(
                totalEnergy: try reader.readUInt16("totalEnergy"),
                energyPerHour: try reader.readUInt16("energyPerHour"),
                energyPerMinute: try reader.readUInt8("energyPerMinute"))
        }
        if flags.contains(.heartRatePresent) { heartRate = try reader.readUInt8("heartRate") }
        if flags.contains(.metabolicEquivalentPresent) {
            metabolicEquivalent = try reader.readUInt8("metabolicEquivalent")
        }
        if flags.contains(.elapsedTimePresent) { elapsedTime = try reader.readUInt16("elapsedTime") }
        if flags.contains(.remainingTimePresent) { remainingTime = try reader.readUInt16("remainingTime") }
        try reader.expectEnd()
    }

    /// Reserved bits from `flags`; More Data set exactly when there is no speed; presence from fields.
    public var encodedFlags: Flags {
        var result = flags.intersection(.reserved)
        if instantaneousSpeed == nil { result.insert(.moreData) }
        if averageSpeed != nil { result.insert(.averageSpeedPresent) }
        if instantaneousCadence != nil { result.insert(.instantaneousCadencePresent) }
        if averageCadence != nil { result.insert(.averageCadencePresent) }
        if totalDistance != nil { result.insert(.totalDistancePresent) }
        if resistanceLevel != nil { result.insert(.resistanceLevelPresent) }
        if instantaneousPower != nil { result.insert(.instantaneousPowerPresent) }
        if averagePower != nil { result.insert(.averagePowerPresent) }
        if expendedEnergy != nil { result.insert(.expendedEnergyPresent) }
        if heartRate != nil { result.insert(.heartRatePresent) }
        if metabolicEquivalent != nil { result.insert(.metabolicEquivalentPresent) }
        if elapsedTime != nil { result.insert(.elapsedTimePresent) }
        if remainingTime != nil { result.insert(.remainingTimePresent) }
        return result
    }

    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 30)
        writer.write(encodedFlags.rawValue)
        if let instantaneousSpeed { writer.write(instantaneousSpeed) }
        if let averageSpeed { writer.write(averageSpeed) }
        if let instantaneousCadence { writer.write(instantaneousCadence) }
        if let averageCadence { writer.write(averageCadence) }
        if let totalDistance { writer.writeUInt24(totalDistance) }
        if let resistanceLevel { writer.write(resistanceLevel) }
        if let instantaneousPower { writer.write(instantaneousPower) }
        if let averagePower { writer.write(averagePower) }
        if let expendedEnergy {
            writer.write(expendedEnergy.totalEnergy)
            writer.write(expendedEnergy.energyPerHour)
            writer.write(expendedEnergy.energyPerMinute)
        }
        if let heartRate { writer.write(heartRate) }
        if let metabolicEquivalent { writer.write(metabolicEquivalent) }
        if let elapsedTime { writer.write(elapsedTime) }
        if let remainingTime { writer.write(remainingTime) }
        return writer.bytes
    }

    public func appendFields(to fields: inout [DecodedField]) {
        fields.append(.flags(flags.rawValue, names: Flags.names))
        if let instantaneousSpeed {
            fields.append(.unsigned("instantaneousSpeed", instantaneousSpeed, resolution: 0.01, unit: "km/h"))
        }
        if let averageSpeed { fields.append(.unsigned("averageSpeed", averageSpeed, resolution: 0.01, unit: "km/h")) }
        if let instantaneousCadence {
            fields.append(.unsigned("instantaneousCadence", instantaneousCadence, resolution: 0.5, unit: "rpm"))
        }
        if let averageCadence {
            fields.append(.unsigned("averageCadence", averageCadence, resolution: 0.5, unit: "rpm"))
        }
        if let totalDistance { fields.append(.unsigned("totalDistance", totalDistance, unit: "m")) }
        if let resistanceLevel { fields.append(.signed("resistanceLevel", resistanceLevel)) }
        if let instantaneousPower { fields.append(.signed("instantaneousPower", instantaneousPower, unit: "W")) }
        if let averagePower { fields.append(.signed("averagePower", averagePower, unit: "W")) }
        if let expendedEnergy {
            fields.append(energyField("totalEnergy", UInt64(expendedEnergy.totalEnergy), missing: 0xFFFF, unit: "kcal"))
            fields.append(
                energyField("energyPerHour", UInt64(expendedEnergy.energyPerHour), missing: 0xFFFF, unit: "kcal/h"))
            fields.append(
                energyField("energyPerMinute", UInt64(expendedEnergy.energyPerMinute), missing: 0xFF, unit: "kcal/min"))
        }
        if let heartRate { fields.append(.unsigned("heartRate", heartRate, unit: "bpm")) }
        if let metabolicEquivalent {
            fields.append(.unsigned("metabolicEquivalent", metabolicEquivalent, resolution: 0.1, unit: "MET"))
        }
        if let elapsedTime { fields.append(.unsigned("elapsedTime", elapsedTime, unit: "s")) }
        if let remainingTime { fields.append(.unsigned("remainingTime", remainingTime, unit: "s")) }
    }

    private func energyField(_ key: String, _ raw: UInt64, missing: UInt64, unit: String) -> DecodedField {
        .unsigned(key, raw, unit: unit, meaning: raw == missing ? "not available" : nil)
    }
}

/// Merges Indoor Bike Data fragments into whole records.
///
/// A machine whose record does not fit one notification sends fragments with More Data set and ends
/// the record with a fragment that has it clear (the one carrying speed). Fields are merged until then;
/// a later fragment's field replaces an earlier one. A fragment that ends a record with nothing pending
/// is a record by itself.
public struct IndoorBikeDataAssembler: Sendable {
    private var pending: IndoorBikeData?

    public init() {}

    /// Adds one decoded notification; returns the complete record when this fragment ends one.
    public mutating func add(_ fragment: IndoorBikeData) -> IndoorBikeData? {
        var record = pending ?? IndoorBikeData()
        record.merge(fragment)
        if fragment.endsRecord {
            pending = nil
            return record
        }
        pending = record
        return nil
    }

    /// The fields collected so far of a record not yet ended (e.g. when the sensor disconnects).
    public var incompleteRecord: IndoorBikeData? { pending }
}

extension IndoorBikeData {
    /// Takes every field `other` carries, then derives the flags from the fields now present.
    fileprivate mutating func merge(_ other: IndoorBikeData) {
        instantaneousSpeed = other.instantaneousSpeed ?? instantaneousSpeed
        averageSpeed = other.averageSpeed ?? averageSpeed
        instantaneousCadence = other.instantaneousCadence ?? instantaneousCadence
        averageCadence = other.averageCadence ?? averageCadence
        totalDistance = other.totalDistance ?? totalDistance
        resistanceLevel = other.resistanceLevel ?? resistanceLevel
        instantaneousPower = other.instantaneousPower ?? instantaneousPower
        averagePower = other.averagePower ?? averagePower
        expendedEnergy = other.expendedEnergy ?? expendedEnergy
        heartRate = other.heartRate ?? heartRate
        metabolicEquivalent = other.metabolicEquivalent ?? metabolicEquivalent
        elapsedTime = other.elapsedTime ?? elapsedTime
        remainingTime = other.remainingTime ?? remainingTime
        flags = encodedFlags
    }
}
