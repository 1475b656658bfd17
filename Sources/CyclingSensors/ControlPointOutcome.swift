/// What a power meter's answer on the Cycling Power Control Point means for the rider (CPS: Cycling Power Control Point): whether it
/// worked, the value it reported, and what to do when it did not.
public struct ControlPointOutcome: Equatable, Sendable {
    public var succeeded: Bool
    /// The offset (in `unit`) or the crank length (mm).
    public var value: Double?
    public var unit: String?
    public var explanation: String
}

extension CyclingPowerControlPoint {
    /// Explains the response to one of the requests `cyclelog calibrate` sends. `torqueBased` is Cycling Power
    /// Feature bit 16: the offset is then in 1/32 N·m, otherwise in newtons.
    public static func outcome(of response: ControlPointMessage, torqueBased: Bool) -> ControlPointOutcome {
        let result = response.result ?? .operationFailed
        let isOffset =
            response.opCode == OpCode.startOffsetCompensation
            || response.opCode == OpCode.startEnhancedOffsetCompensation
        switch (result, response.opCode) {
        case (.success, _) where isOffset:
            guard case .integer(let raw)? = response.parameter("offsetCompensation") else {
                return ControlPointOutcome(succeeded: true, explanation: "zero offset done (no offset reported)")
            }
            let (value, unit) = torqueBased ? (Double(raw) / 32, "N·m") : (Double(raw), "N")
            return ControlPointOutcome(
                succeeded: true, value: value, unit: unit,
                explanation: "zero offset done: offset \(number(value)) \(unit) (raw \(raw)); "
                    + "a big change from the last one means the meter was loaded or something moved")
        case (.success, OpCode.setCrankLength):
            return ControlPointOutcome(succeeded: true, explanation: "crank length set")
        case (.success, OpCode.requestCrankLength):
            guard case .integer(let halfMillimetres)? = response.parameter("crankLength") else {
                return ControlPointOutcome(succeeded: false, explanation: "the meter did not report a crank length")
            }
            let millimetres = Double(halfMillimetres) / 2
            return ControlPointOutcome(
                succeeded: true, value: millimetres, unit: "mm", explanation: "crank length \(number(millimetres)) mm")
        case (.success, _):
            return ControlPointOutcome(succeeded: true, explanation: "done")
        case (.opCodeNotSupported, _) where isOffset:
            return ControlPointOutcome(
                succeeded: false,
                explanation: "this power meter does not zero over Bluetooth (not supported); "
                    + "many zero themselves while coasting, or in their maker's app")
        case (.opCodeNotSupported, OpCode.setCrankLength), (.opCodeNotSupported, OpCode.requestCrankLength):
            return ControlPointOutcome(
                succeeded: false,
                explanation: "this power meter's crank length cannot be set or read over Bluetooth (not supported); "
                    + "it is fixed, or set in the maker's app")
        case (.invalidParameter, OpCode.setCrankLength):
            return ControlPointOutcome(
                succeeded: false, explanation: "the meter refused that crank length (outside what it accepts)")
        case (.operationFailed, OpCode.startEnhancedOffsetCompensation)
        where response.unparsedParameter.first == 0x01:
            return ControlPointOutcome(
                succeeded: false,
                explanation: "zero offset failed: the cranks are not in the calibration position; put them where "
                    + "the maker's manual says (usually the measuring crank arm straight down), unclip, try again")
        case (.operationFailed, OpCode.startEnhancedOffsetCompensation)
        where response.unparsedParameter.first == 0xFF:
            let code = response.unparsedParameter.dropFirst().map { hex($0) }.joined(separator: " ")
            return ControlPointOutcome(
                succeeded: false,
                explanation: "zero offset failed with the maker's own error (\(code)); see its manual or app")
        case (.operationFailed, _) where isOffset:
            return ControlPointOutcome(
                succeeded: false,
                explanation: "zero offset failed: stop pedalling (coast or stand), unclip both feet, keep the "
                    + "cranks still and try again")
        default:
            return ControlPointOutcome(
                succeeded: false,
                explanation: "the meter answered \(result.name) to \(dialect.name(of: response.opCode))")
        }
    }

    /// An ATT error the meter answered a control-point write with, in words (CPS's control-point procedures; bluetoothd's ATT error text).
    public static func explainATTError(_ code: UInt8) -> String { attErrorWords(code, device: "meter") }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension FitnessMachineControlPoint {
    /// An ATT error the trainer answered a control-point write with, in words.
    public static func explainATTError(_ code: UInt8) -> String { attErrorWords(code, device: "trainer") }
}

/// An ATT error a sensor answered a control-point write with (CPS's control-point procedures; bluetoothd's ATT error text), said of `device`.
func attErrorWords(_ code: UInt8, device: String) -> String {
    switch code {
    case 0xFD:
        "the \(device) says indications on its control point are off (ATT error 0xFD); reconnect and try again"
    case 0xFE:
        "the \(device) is still busy with an earlier control-point request (ATT error 0xFE); wait a moment and try again"
    case 0x80:
        "the \(device) wants other connection parameters before it takes commands (ATT error 0x80); try again"
    default: "the \(device) refused the request (ATT error 0x\(hex(code)))"
    }
}
