/// A request cyclelog writes to a trainer's Fitness Machine Control Point (0x2AD9), as a value: the procedures a
/// collector that steers an indoor bike needs (FTMS: Fitness Machine Control Point). `bytes` is what goes on the air; `init(decoding:)`
/// reads it back (from a journal or a capture), through the same op-code table as `FitnessMachineControlPoint`.
public enum FitnessMachineRequest: Equatable, Sendable, CustomStringConvertible {
    /// 0x00: must succeed before any other procedure (FTMS: otherwise Control Not Permitted).
    case requestControl
    /// 0x01: the machine drops its targets and control (what a collector sends when it lets go).
    case reset
    /// 0x04: uint8 in 0.1 units of the Supported Resistance Level Range.
    case setTargetResistanceLevel(tenths: UInt8)
    /// 0x05: sint16 watts (ERG).
    case setTargetPower(watts: Int16)
    /// 0x07.
    case startOrResume
    /// 0x08: 0x01 stop, 0x02 pause.
    case stopOrPause(StopOrPause)
    /// 0x11: wind, grade, rolling and wind resistance (simulation).
    case setIndoorBikeSimulation(IndoorBikeSimulation)
    /// 0x13: 0x01 start, 0x02 ignore.
    case spinDownControl(SpinDownControl)

    public enum StopOrPause: UInt8, Sendable {
        case stop = 0x01
        case pause = 0x02
    }

    public enum SpinDownControl: UInt8, Sendable {
        case start = 0x01
        case ignore = 0x02
    }

    public var opCode: UInt8 {
        switch self {
        case .requestControl: FitnessMachineControlPoint.OpCode.requestControl
        case .reset: FitnessMachineControlPoint.OpCode.reset
        case .setTargetResistanceLevel: FitnessMachineControlPoint.OpCode.setTargetResistanceLevel
        case .setTargetPower: FitnessMachineControlPoint.OpCode.setTargetPower
        case .startOrResume: FitnessMachineControlPoint.OpCode.startOrResume
        case .stopOrPause: FitnessMachineControlPoint.OpCode.stopOrPause
        case .setIndoorBikeSimulation: FitnessMachineControlPoint.OpCode.setIndoorBikeSimulationParameters
        case .spinDownControl: FitnessMachineControlPoint.OpCode.spinDownControl
        }
    }

    /// The parameter as wire integers, in the op-code table's order.
    private var parameterValues: [Int64] {
        switch self {
        case .requestControl, .reset, .startOrResume: []
        case .setTargetResistanceLevel(let tenths): [Int64(tenths)]
        case .setTargetPower(let watts): [Int64(watts)]
        case .stopOrPause(let which): [Int64(which.rawValue)]
        case .setIndoorBikeSimulation(let simulation):
            [
                Int64(simulation.windSpeedMillimetresPerSecond), Int64(simulation.gradeHundredthsOfPercent),
                Int64(simulation.rollingResistanceTenThousandths),
                Int64(simulation.windResistanceHundredthsKilogramsPerMetre),
            ]
        case .spinDownControl(let which): [Int64(which.rawValue)]
        }
    }

    /// The value written to the control point.
    public var bytes: [UInt8] { FitnessMachineControlPoint.request(opCode, parameterValues) }

    /// Reads a request cyclelog sends. A response, another op code or a parameter out of its field's meaning
    /// (a stop-or-pause of 3) is a `MalformedPayload`.
    public init(decoding bytes: [UInt8]) throws(MalformedPayload) {
        let message = try FitnessMachineControlPoint(decoding: bytes).message
        guard message.result == nil else {
            throw MalformedPayload(field: "opCode", offset: 0, reason: .invalidValue("a response, not a request"))
        }
        func integer(_ key: String) -> Int64 {
            if case .integer(let value)? = message.parameter(key) { return value }
            return 0
        }
        typealias OpCode = FitnessMachineControlPoint.OpCode
        switch message.opCode {
        case OpCode.requestControl: self = .requestControl
        case OpCode.reset: self = .reset
        case OpCode.setTargetResistanceLevel:
            self = .setTargetResistanceLevel(tenths: UInt8(truncatingIfNeeded: integer("targetResistanceLevel")))
        case OpCode.setTargetPower: self = .setTargetPower(watts: Int16(truncatingIfNeeded: integer("targetPower")))
        case OpCode.startOrResume: self = .startOrResume
        case OpCode.stopOrPause:
            guard let which = StopOrPause(rawValue: UInt8(truncatingIfNeeded: integer("stopOrPause"))) else {
                throw MalformedPayload(
                    field: "stopOrPause", offset: 1, reason: .invalidValue("not 1 (stop) or 2 (pause)"))
            }
            self = .stopOrPause(which)
        case OpCode.setIndoorBikeSimulationParameters:
            self = .setIndoorBikeSimulation(
                IndoorBikeSimulation(
                    windSpeedMillimetresPerSecond: Int16(truncatingIfNeeded: integer("windSpeed")),
                    gradeHundredthsOfPercent: Int16(truncatingIfNeeded: integer("grade")),
                    rollingResistanceTenThousandths: UInt8(truncatingIfNeeded: integer("rollingResistanceCoefficient")),
                    windResistanceHundredthsKilogramsPerMetre: UInt8(
                        truncatingIfNeeded: integer("windResistanceCoefficient"))))
        case OpCode.spinDownControl:
            guard let which = SpinDownControl(rawValue: UInt8(truncatingIfNeeded: integer("spinDownControl"))) else {
                throw MalformedPayload(
                    field: "spinDownControl", offset: 1, reason: .invalidValue("not 1 (start) or 2 (ignore)"))
            }
            self = .spinDownControl(which)
        default:
            throw MalformedPayload(
                field: "opCode", offset: 0,
                reason: .invalidValue(
                    "\(FitnessMachineControlPoint.dialect.name(of: message.opCode)) is not a request cyclelog sends"))
        }
    }

    /// The request in words, with its value in units ("Set Target Power 250 W").
    public var description: String {
        let name = FitnessMachineControlPoint.dialect.name(of: opCode)
        switch self {
        case .requestControl, .reset, .startOrResume: return name
        case .setTargetResistanceLevel(let tenths): return "\(name) \(decimal(Int(tenths), places: 1))"
        case .setTargetPower(let watts): return "\(name) \(watts) W"
        case .stopOrPause(let which): return "\(name) (\(which == .stop ? "stop" : "pause"))"
        case .setIndoorBikeSimulation(let simulation): return "\(name) \(simulation)"
        case .spinDownControl(let which): return "\(name) (\(which == .start ? "start" : "ignore"))"
        }
    }
}

/// Indoor Bike Simulation Parameters (control point op 0x11, status op 0x12) in their wire units: wind speed
/// sint16 0.001 m/s, grade sint16 0.01 %, rolling resistance Crr uint8 0.0001, wind resistance Cw uint8
/// 0.01 kg/m (FTMS: Set Indoor Bike Simulation Parameters).
public struct IndoorBikeSimulation: Equatable, Sendable, CustomStringConvertible {
    public var windSpeedMillimetresPerSecond: Int16
    public var gradeHundredthsOfPercent: Int16
    public var rollingResistanceTenThousandths: UInt8
    public var windResistanceHundredthsKilogramsPerMetre: UInt8

    public init(
        windSpeedMillimetresPerSecond: Int16, gradeHundredthsOfPercent: Int16, rollingResistanceTenThousandths: UInt8,
        windResistanceHundredthsKilogramsPerMetre: UInt8
    ) {
        self.windSpeedMillimetresPerSecond = windSpeedMillimetresPerSecond
        self.gradeHundredthsOfPercent = gradeHundredthsOfPercent
        self.rollingResistanceTenThousandths = rollingResistanceTenThousandths
        self.windResistanceHundredthsKilogramsPerMetre = windResistanceHundredthsKilogramsPerMetre
    }

    /// From physical values, each rounded to its wire unit and held within its field (a grade of 400 % is sent
    /// as the field's largest, never wrapped round to a descent). Crr 0.004 is 40 on the wire, not 0: the scale
    /// is applied, which some collectors forget.
    public init(
        gradePercent: Double, windSpeedMetresPerSecond: Double = 0, rollingResistanceCoefficient: Double = 0.004,
        windResistanceKilogramsPerMetre: Double = 0.51
    ) {
        windSpeedMillimetresPerSecond = Self.wire(windSpeedMetresPerSecond * 1000)
        gradeHundredthsOfPercent = Self.wire(gradePercent * 100)
        rollingResistanceTenThousandths = Self.wire(rollingResistanceCoefficient * 10_000)
        windResistanceHundredthsKilogramsPerMetre = Self.wire(windResistanceKilogramsPerMetre * 100)
    }

    public var gradePercent: Double { Double(gradeHundredthsOfPercent) / 100 }
    public var windSpeedMetresPerSecond: Double { Double(windSpeedMillimetresPerSecond) / 1000 }
    public var rollingResistanceCoefficient: Double { Double(rollingResistanceTenThousandths) / 10_000 }
    public var windResistanceKilogramsPerMetre: Double { Double(windResistanceHundredthsKilogramsPerMetre) / 100 }

    public var description: String {
        "grade \(decimal(Int(gradeHundredthsOfPercent), places: 2)) %, "
            + "wind \(decimal(Int(windSpeedMillimetresPerSecond), places: 3)) m/s, "
            + "Crr \(decimal(Int(rollingResistanceTenThousandths), places: 4)), "
            + "Cw \(decimal(Int(windResistanceHundredthsKilogramsPerMetre), places: 2)) kg/m"
    }

    private static func wire<T: FixedWidthInteger>(_ value: Double) -> T {
        guard value.isFinite else { return 0 }
        let rounded = value.rounded()
        if rounded <= Double(T.min) { return T.min }
        if rounded >= Double(T.max) { return T.max }
        return T(rounded)
    }
}

extension FitnessMachineFeature {
    /// The Target Setting Features bits (FTMS: Fitness Machine Feature, octets 4–7) a collector steering a bike asks about.
    public enum TargetSetting: Int, Sendable {
        case inclination = 1
        case resistance = 2
        case power = 3
        case indoorBikeSimulation = 13
        case spinDown = 15
    }

    /// Whether the machine declares it takes that target.
    public func supports(_ target: TargetSetting) -> Bool { targetSettingFeatures & (1 << target.rawValue) != 0 }

    /// The machine declares the features of a trainer: `targets` as Target Setting Features bits.
    public init(fitnessMachineFeatures: UInt32 = 0, targets: [TargetSetting]) {
        self.fitnessMachineFeatures = fitnessMachineFeatures
        targetSettingFeatures = targets.reduce(0) { $0 | 1 << UInt32($1.rawValue) }
    }
}

extension FitnessMachineControlPoint {
    /// What the trainer's answer `result` to `request` means for the rider, or nil when it is a success.
    public static func refusal(_ result: ControlPointResult, to request: UInt8) -> String? {
        let name = dialect.name(of: request)
        switch result {
        case .success: return nil
        case .controlNotPermitted where request == OpCode.requestControl:
            return "the trainer refused control: another app holds it — close Zwift or the trainer's own app"
        case .controlNotPermitted:
            return "the trainer refused \(name): cyclelog does not hold control of it (control not permitted)"
        case .opCodeNotSupported:
            return "the trainer does not support \(name) (op code not supported)"
        case .invalidParameter:
            return "the trainer refused the value of \(name) as outside what it takes (invalid parameter)"
        case .operationFailed:
            return "the trainer could not carry out \(name) (operation failed)"
        default:
            return "the trainer answered \(name) with \(result.name)"
        }
    }
}

/// `value` in units of 10^-places, written as a decimal ("4.50" for 450 and 2 places).
func decimal(_ value: Int, places: Int) -> String {
    var divisor = 1
    for _ in 0..<places { divisor *= 10 }
    let sign = value < 0 ? "-" : ""
    let magnitude = value.magnitude
    let whole = magnitude / UInt(divisor)
    var fraction = String(magnitude % UInt(divisor))
    while fraction.count < places { fraction = "0" + fraction }
    return places == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
}
