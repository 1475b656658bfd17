/// Cumulative wheel revolutions and the time of the last wheel event, a pair under one flag bit.
///
/// The event-time clock differs by service: 1/2048 s in Cycling Power (0x2A63), 1/1024 s in CSC
/// (0x2A5B) — see `ticksPerSecond` on each measurement type. The count is uint32 and a decrease is a
/// reset or reverse motion, never a wrap (the Cycling Power Service's cumulative crank revolutions); the event time wraps at 2^16.
public struct WheelRevolutionData: Equatable, Sendable {
    public var cumulativeWheelRevolutions: UInt32
    public var lastWheelEventTime: UInt16

    public init(cumulativeWheelRevolutions: UInt32, lastWheelEventTime: UInt16) {
        self.cumulativeWheelRevolutions = cumulativeWheelRevolutions
        self.lastWheelEventTime = lastWheelEventTime
    }
}

/// Cumulative crank revolutions (uint16, wraps) and the time of the last crank event (1/1024 s in every
/// service, wraps every 64 s).
public struct CrankRevolutionData: Equatable, Sendable {
    public var cumulativeCrankRevolutions: UInt16
    public var lastCrankEventTime: UInt16

    /// Crank event times count 1/1024 s in CPS, CSC and the power vector alike.
    public static let ticksPerSecond = 1024.0

    public init(cumulativeCrankRevolutions: UInt16, lastCrankEventTime: UInt16) {
        self.cumulativeCrankRevolutions = cumulativeCrankRevolutions
        self.lastCrankEventTime = lastCrankEventTime
    }
}

extension ByteReader {
    @inlinable mutating func readWheelRevolutionData() throws(MalformedPayload) -> WheelRevolutionData {
        return WheelRevolutionData(
            cumulativeWheelRevolutions: try readUInt32("cumulativeWheelRevolutions"),
            lastWheelEventTime: try readUInt16("lastWheelEventTime"))
    }

    @inlinable mutating func readCrankRevolutionData() throws(MalformedPayload) -> CrankRevolutionData {
        return CrankRevolutionData(
            cumulativeCrankRevolutions: try readUInt16("cumulativeCrankRevolutions"),
            lastCrankEventTime: try readUInt16("lastCrankEventTime"))
    }
}

extension ByteWriter {
    @inlinable mutating func write(_ wheel: WheelRevolutionData) {
        write(wheel.cumulativeWheelRevolutions)
        write(wheel.lastWheelEventTime)
    }

    @inlinable mutating func write(_ crank: CrankRevolutionData) {
        write(crank.cumulativeCrankRevolutions)
        write(crank.lastCrankEventTime)
    }
}

// Appended in place: `decode` builds a million field lists, and a list per pair of fields cost an allocation each.
extension WheelRevolutionData {
    func appendFields(to fields: inout [DecodedField], ticksPerSecond: Double) {
        fields.append(.unsigned("cumulativeWheelRevolutions", cumulativeWheelRevolutions, unit: "rev"))
        fields.append(.unsigned("lastWheelEventTime", lastWheelEventTime, resolution: 1 / ticksPerSecond, unit: "s"))
    }
}

extension CrankRevolutionData {
    func appendFields(to fields: inout [DecodedField]) {
        fields.append(.unsigned("cumulativeCrankRevolutions", cumulativeCrankRevolutions, unit: "rev"))
        fields.append(
            .unsigned("lastCrankEventTime", lastCrankEventTime, resolution: 1 / Self.ticksPerSecond, unit: "s"))
    }
}
