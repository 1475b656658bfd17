import CyclingSensors
import TrainerControl

/// The hub's Fitness Machine control point as an app on the other side of the bridge writes to it (Zwift asking
/// for 250 W, a grade, a Reset): each write turned into what the rider's own trainer control is asked — so that
/// the declared range, the ramp and the cadence safety hold whatever the app asks — and into the answer the app is
/// owed, an indication of 0x80, the request's op code and a result code (Fitness Machine Service 1.0, 4.16.2).
///
/// An app holds the trainer from its Request Control until it sends Reset or Stop, its link goes, or the rider
/// takes the trainer back from a screen; after that the app is told Control Not Permitted until its link is made
/// again. A refusal of the trainer control (the trainer cannot do that mode, none is connected) is answered
/// Operation Failed and said in words. Pure: the recorder hands it each write and the trainer control's refusal
/// of an ask, and carries out what comes back, in order.
public struct AppControl: Sendable {
    /// What to do with an app's write, in order.
    public enum Effect: Equatable, Sendable {
        /// Ask the trainer control this, as a rider's ask.
        case ask(TrainerAsk)
        /// The app let the trainer go: back to the rider's own control (a Reset of the trainer when nothing of the
        /// rider's is asked).
        case release
        /// Indicate this on the hub's control point.
        case answer([UInt8])
        /// Say this to the rider and write it in the ride's journal.
        case tell(String)
    }

    /// The hub's declared Supported Resistance Level Range, 0 to 25.5 in steps of 0.1 (a Set Target Resistance
    /// Level's uint8 in tenths reaches no higher): the level an app asks is that share of the real trainer's range.
    public static let resistanceLevelTenths: ClosedRange<Int> = 0...255

    /// The app (its address) that holds the trainer now, if any.
    public private(set) var holder: String?
    /// Whether an app holds the trainer now.
    public var appHoldsControl: Bool { holder != nil }
    /// The apps the rider took the trainer back from, refused until their link is made again.
    private var refusedApps: Set<String> = []

    public init() {}

    /// A write of app `app` (its address) to the hub's control point. `refusal` is the trainer control's reason it
    /// would refuse an ask (`TrainerControl.refusal(of:)`), or nil.
    public mutating func written(_ bytes: [UInt8], by app: String, refusal: (TrainerAsk) -> String?) -> [Effect] {
        guard let opCode = bytes.first else {
            return [.tell("an app wrote nothing to the trainer's control point: not answered")]
        }
        func answer(_ result: ControlPointResult) -> Effect {
            .answer(FitnessMachineControlPoint.response(to: opCode, result: result))
        }
        guard Self.taken.contains(opCode) else {
            return [answer(.opCodeNotSupported)]
        }
        let request: FitnessMachineRequest
        do {
            request = try FitnessMachineRequest(decoding: bytes)
        } catch {
            return [answer(.invalidParameter), .tell("an app's \(Self.name(of: opCode)) was not understood: \(error)")]
        }
        if request != .requestControl, holder != app {
            return [answer(.controlNotPermitted)]
        }
        let ask: TrainerAsk
        switch request {
        case .requestControl:
            if let holder, holder != app {
                return [
                    answer(.controlNotPermitted), .tell("an app (\(app)) asked for the trainer: \(holder) holds it"),
                ]
            }
            guard !refusedApps.contains(app) else {
                return [
                    answer(.controlNotPermitted), .tell("an app (\(app)) asked for the trainer: the rider holds it"),
                ]
            }
            let told: [Effect] = holder == nil ? [.tell("an app (\(app)) holds the trainer")] : []
            holder = app
            return told + [answer(.success)]
        case .reset, .stopOrPause:
            holder = nil
            return [.release, answer(.success), .tell("the app let the trainer go (\(request))")]
        case .startOrResume:
            return [answer(.success)]
        case .setTargetPower(let watts):
            guard watts >= 0 else { return [answer(.invalidParameter)] }
            ask = .power(watts: Int(watts))
        case .setTargetResistanceLevel(let tenths):
            ask = .resistance(percent: Double(tenths) / Double(Self.resistanceLevelTenths.upperBound) * 100)
        case .setIndoorBikeSimulation(let simulation):
            ask = .grade(percent: Double(simulation.gradeHundredthsOfPercent) / 100)
        case .spinDownControl:
            // Answered as not supported before it is read (`taken`); a spin-down is the rider's
            // `cyclelog calibrate`, never an app's.
            return [answer(.opCodeNotSupported)]
        }
        if let refusal = refusal(ask) {
            return [answer(.operationFailed), .tell("the app's \(request) was refused: \(refusal)")]
        }
        return [.ask(ask), answer(.success)]
    }

    /// App `app`'s link is gone: the trainer goes back to the rider if that app held it, never left holding what
    /// the app asked.
    public mutating func disconnected(_ app: String) -> [Effect] {
        refusedApps.remove(app)
        guard holder == app else { return [] }
        holder = nil
        return [.release, .tell("the app's link is gone: the trainer is the rider's again")]
    }

    /// The rider took the trainer back from a screen: the app that held it is refused until its link is made again.
    public mutating func riderTakesControl() -> [Effect] {
        guard let holder else { return [] }
        refusedApps.insert(holder)
        self.holder = nil
        return [.tell("the rider took the trainer back from the app")]
    }

    /// The op codes the hub takes (its Fitness Machine Feature declares power, resistance and simulation targets):
    /// any other is not supported, whoever holds the trainer; one of these that does not read is an invalid parameter.
    private static let taken: Set<UInt8> = {
        typealias OpCode = FitnessMachineControlPoint.OpCode
        return [
            OpCode.requestControl, OpCode.reset, OpCode.setTargetResistanceLevel, OpCode.setTargetPower,
            OpCode.startOrResume, OpCode.stopOrPause, OpCode.setIndoorBikeSimulationParameters,
        ]
    }()

    private static func name(of opCode: UInt8) -> String { FitnessMachineControlPoint.dialect.name(of: opCode) }
}
