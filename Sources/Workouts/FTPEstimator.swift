/// A fitness test a workout can declare itself to be (the journal's `test=` word, `--test` on the command line).
public enum FitnessTest: String, Sendable, CaseIterable {
    /// A 20-minute all-out time trial: FTP = 0.95 × its 20-minute power.
    case twentyMinute = "20min"
    /// A ramp to failure in 1-minute steps: FTP = 0.75 × its best 1-minute power.
    case ramp

    /// The effort the test scores, in seconds (its best minute; its 20 minutes), and the share of it that is FTP.
    public var scoredSeconds: Int { self == .ramp ? 60 : 1200 }
    public var factor: Double { self == .ramp ? 0.75 : 0.95 }
    public var method: FTPMethod { self == .ramp ? .rampTest : .best20Minutes }
    /// `ramp test`, `20-minute test`.
    public var title: String { self == .ramp ? "ramp test" : "20-minute test" }

    /// A guided ramp is scored once this many of its minutes were ridden to their end with power: from 100 W and
    /// 20 W a minute, the fifth is at 180 W. A ramp stopped sooner never became hard, and 75 % of its best minute
    /// would be a third of a rider's FTP.
    public static let rampMinutesScored = 5
    /// The share of a test's scored seconds that must have power (a meter that dropped leaves no test to score).
    public static let scoredPowerShare = 0.9

    /// Why a ride that followed this test's workout is not scored (it did not reach the scored part), or nil when
    /// it is. `scored` is what the ride did of the workout's scored steps; nil for a ride that declared the test
    /// without following a workout, which is scored on its data alone (20 minutes, or a minute, with power).
    public func unscoredReason(_ scored: PlanCompliance.ScoredPart?) -> String? {
        guard let scored else { return nil }
        let powerShare = scored.seconds > 0 ? Double(scored.secondsWithPower) / Double(scored.seconds) : 0
        switch self {
        case .ramp:
            if scored.stepsRiddenToTheEnd < Self.rampMinutesScored {
                return "the ramp ended after \(scored.stepsRiddenToTheEnd) of its minutes, before it was hard (a ramp "
                    + "is scored from its \(Self.rampMinutesScored)th minute on)"
            }
        case .twentyMinute:
            if scored.stepsRiddenToTheEnd < scored.steps {
                return "the ride ended before the end of its 20 minutes (\(scored.seconds / 60) min ridden)"
            }
        }
        if powerShare < Self.scoredPowerShare {
            return "the power meter sent power in only \(Int((powerShare * 100).rounded(.down))) % of the test's "
                + "scored part"
        }
        return nil
    }

    /// Why a ride that declared this test is not scored, its scored effort (`basisWatts`: its best minute, its 20
    /// minutes) included: the one rule that the automatic FTP and a ride's own account of its test share.
    public func unscoredReason(_ scored: PlanCompliance.ScoredPart?, basisWatts: Double?) -> String? {
        if let reason = unscoredReason(scored) { return reason }
        guard let basisWatts, basisWatts > 0 else {
            return self == .ramp ? "it has no minute with power" : "it has no 20 minutes with power"
        }
        return nil
    }
}

/// How an FTP value came about (the `method` names of Docs/reference/json.md).
public enum FTPMethod: String, Sendable {
    case criticalPower, best20Minutes, rampTest, manual
}

/// One point of a power curve that determined an estimate: which ride, when, how long and how hard.
public struct FTPEffort: Equatable, Sendable {
    public var workoutId: Int64
    public var rideStartMicroseconds: Int64
    public var durationSeconds: Int
    public var watts: Double

    public init(workoutId: Int64, rideStartMicroseconds: Int64, durationSeconds: Int, watts: Double) {
        self.workoutId = workoutId
        self.rideStartMicroseconds = rideStartMicroseconds
        self.durationSeconds = durationSeconds
        self.watts = watts
    }
}

/// An FTP value with its provenance. Automatic values take effect at the end of the ride that produced them;
/// manual ones at the date the rider gave.
public struct FTPEstimate: Equatable, Sendable {
    public var method: FTPMethod
    public var watts: Double
    public var effectiveMicroseconds: Int64
    /// The ride after which it was estimated (nil for a manual value).
    public var workoutId: Int64?
    public var criticalPower: CriticalPowerModel?
    /// The best 20-minute power of the window (or of the test): 0.95 × it is shown beside the model's value.
    public var best20MinuteWatts: Double?
    public var windowDays: Int?
    public var efforts: [FTPEffort]

    public init(
        method: FTPMethod, watts: Double, effectiveMicroseconds: Int64, workoutId: Int64? = nil,
        criticalPower: CriticalPowerModel? = nil, best20MinuteWatts: Double? = nil, windowDays: Int? = nil,
        efforts: [FTPEffort] = []
    ) {
        self.method = method
        self.watts = watts
        self.effectiveMicroseconds = effectiveMicroseconds
        self.workoutId = workoutId
        self.criticalPower = criticalPower
        self.best20MinuteWatts = best20MinuteWatts
        self.windowDays = windowDays
        self.efforts = efforts
    }
}

/// A stored ride as the estimator sees it: when it was, what it declared, and its power curve.
public struct RideCurve: Sendable {
    public var workoutId: Int64
    public var startMicroseconds: Int64
    public var endMicroseconds: Int64
    public var fitnessTest: FitnessTest?
    /// What the ride did of its workout's scored steps, when it followed one (`FitnessTest.unscoredReason`).
    public var scoredPart: PlanCompliance.ScoredPart?
    public var curve: PowerCurve

    public init(
        workoutId: Int64, startMicroseconds: Int64, endMicroseconds: Int64, fitnessTest: FitnessTest?,
        scoredPart: PlanCompliance.ScoredPart? = nil, curve: PowerCurve
    ) {
        self.workoutId = workoutId
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
        self.fitnessTest = fitnessTest
        self.scoredPart = scoredPart
        self.curve = curve
    }
}

/// The automatic FTP, replayed over every stored ride in date order so that the history does not depend on the
/// order rides were recorded or imported in.
///
/// After each ride the rolling best curve of the rides started in the window before its end is fitted
/// (`CriticalPowerFit.envelope`) and FTP = CP when the fit passes the guards: at least two rides with power,
/// 100 W < CP < 1000 W, 1 kJ < W′ < 50 kJ, CP at most the window's best 20-minute power, a long-window point of the
/// curve within 2 % of the model, and a short effort above the model (otherwise W′ is only the fit's floor and "CP" just the steady power ridden). The value
/// in force changes only on evidence: a ride with a near-maximal effort (its own curve within 2 % of the new model
/// somewhere from 3 to 20 minutes), or — downwards only — once every effort behind the current value has left
/// the window. A ride that declares a test sets FTP from the test's protocol.
public struct FTPEstimator: Sendable {
    public var windowDays: Int
    public static let defaultWindowDays = 42
    /// How close to the model an effort must come to count as near-maximal, and the guard's long-window point.
    static let nearMaximalFraction = 0.98

    public init(windowDays: Int = FTPEstimator.defaultWindowDays) {
        self.windowDays = windowDays
    }

    public var windowMicroseconds: Int64 { Int64(windowDays) * 86_400 * 1_000_000 }

    /// Every change of the automatic FTP, oldest first.
    public func history(_ rides: [RideCurve]) -> [FTPEstimate] {
        history(rides, after: nil, scoringFrom: .min)
    }

    /// The changes that follow `current` (the value in force before the first ride scored), from the rides started
    /// at `scoringFrom` or later: the history from a ride on, the part before it unchanged. `rides` holds those and
    /// every ride of their windows (started up to `windowDays` before the end of the earliest of them).
    public func history(_ rides: [RideCurve], after current: FTPEstimate?, scoringFrom: Int64) -> [FTPEstimate] {
        let rides = rides.sorted { ($0.startMicroseconds, $0.workoutId) < ($1.startMicroseconds, $1.workoutId) }
        var history: [FTPEstimate] = []
        var firstInWindow = 0
        for (index, ride) in rides.enumerated() where ride.startMicroseconds >= scoringFrom {
            while rides[firstInWindow].startMicroseconds <= ride.endMicroseconds - windowMicroseconds {
                firstInWindow += 1
            }
            let current = history.last ?? current
            let candidate: FTPEstimate?
            if let test = ride.fitnessTest {
                candidate = testResult(ride, test)
            } else if let fit = estimate(Array(rides[firstInWindow...index]), at: ride.endMicroseconds) {
                candidate = decide(current: current, fit: fit, ride: ride)
            } else {
                candidate = nil
            }
            guard var accepted = candidate else { continue }
            accepted.workoutId = ride.workoutId
            if let current, current.method == accepted.method, abs(current.watts - accepted.watts) < 0.5 { continue }
            history.append(accepted)
        }
        return history
    }

    /// The guarded critical-power estimate of the rides given (all within one window), effective at `time`.
    public func estimate(_ window: [RideCurve], at time: Int64) -> FTPEstimate? {
        let withPower = window.filter { CurveEnvelope.hasPower($0.curve) }
        return estimate(
            FTPWindow(
                CurveEnvelope(withPower), days: windowDays, startMicroseconds: time - windowMicroseconds,
                endMicroseconds: time))
    }

    /// The same of a window's envelope. Its rides without power count among its rides but not as the two with power
    /// a fit needs; they change nothing else: a curve of 0 W never holds a duration a ride with power reaches, and
    /// the durations beyond every ride with power that they add (at 0 W) pass none of the checks below.
    func estimate(_ best: FTPWindow) -> FTPEstimate? {
        let time = best.endMicroseconds
        let curve = best.curve
        guard best.envelope.poweredRideCount >= 2, let fit = CriticalPowerFit.envelope(curve) else { return nil }
        let model = fit.model
        guard fit.shortEffortPinsWPrime, model.criticalPowerWatts > 100, model.criticalPowerWatts < 1000,
            model.wPrimeJoules > 1000,
            model.wPrimeJoules < 50_000,
            Self.comesNear(curve, model, within: CriticalPowerFit.aerobicSeconds),
            // A power held for about an hour cannot be above the best 20 minutes actually ridden: a model that says
            // so extrapolates beyond its efforts (one ride stored twice made two "rides" agree with themselves).
            let best20 = best.effort(seconds: 1200), model.criticalPowerWatts <= best20.watts
        else { return nil }
        return FTPEstimate(
            method: .criticalPower, watts: model.criticalPowerWatts, effectiveMicroseconds: time,
            criticalPower: model, best20MinuteWatts: best20.watts, windowDays: windowDays,
            efforts: [
                best.effort(seconds: fit.anaerobicPinSeconds), best.effort(seconds: fit.aerobicPinSeconds), best20,
            ]
            .compactMap { $0 })
    }

    /// Whether the new fit replaces the value in force (see the type's comment).
    private func decide(current: FTPEstimate?, fit: FTPEstimate, ride: RideCurve) -> FTPEstimate? {
        guard let current else { return fit }
        guard let model = fit.criticalPower else { return nil }
        let nearMaximal = CriticalPowerFit.anaerobicSeconds.lowerBound...CriticalPowerFit.aerobicSeconds.upperBound
        if Self.comesNear(ride.curve, model, within: nearMaximal) {
            return fit
        }
        let newestEffort = current.efforts.map(\.rideStartMicroseconds).max() ?? current.effectiveMicroseconds
        if newestEffort <= ride.endMicroseconds - windowMicroseconds, fit.watts < current.watts { return fit }
        return nil
    }

    /// Whether a curve comes within 2 % of the model at some duration in `seconds`.
    static func comesNear(_ curve: PowerCurve, _ model: CriticalPowerModel, within seconds: ClosedRange<Int>) -> Bool {
        seconds.contains { duration in
            curve.watts(seconds: duration).map { $0 >= nearMaximalFraction * model.watts(seconds: Double(duration)) }
                ?? false
        }
    }

    /// FTP from a ride that declared a test, or nil when it did not reach the test's scored part or is too short for
    /// its protocol: the FTP in force then stays.
    private func testResult(_ ride: RideCurve, _ test: FitnessTest) -> FTPEstimate? {
        let seconds = test.scoredSeconds
        let watts = ride.curve.watts(seconds: seconds)
        guard test.unscoredReason(ride.scoredPart, basisWatts: watts) == nil, let watts else { return nil }
        return FTPEstimate(
            method: test.method, watts: test.factor * watts, effectiveMicroseconds: ride.endMicroseconds,
            best20MinuteWatts: ride.curve.watts(seconds: 1200),
            efforts: [
                FTPEffort(
                    workoutId: ride.workoutId, rideStartMicroseconds: ride.startMicroseconds,
                    durationSeconds: seconds, watts: watts)
            ])
    }
}

/// A rider's own FTP decision: a manual value from a date on, or accepting the automatic value again.
public enum FTPSetting: Equatable, Sendable {
    /// `cyclelog ftp set`: this value from this date on, until a newer automatic value is accepted.
    case manual(watts: Double, fromMicroseconds: Int64)
    /// `cyclelog ftp accept`: the automatic value effective at this time, and every later one, are in force again.
    case accept(estimateMicroseconds: Int64)
}

/// The automatic history and the rider's settings together: which FTP is in force at a given time.
public struct FTPHistory: Sendable {
    public var estimates: [FTPEstimate]
    public var settings: [FTPSetting]

    public init(estimates: [FTPEstimate], settings: [FTPSetting]) {
        self.estimates = estimates.sorted { $0.effectiveMicroseconds < $1.effectiveMicroseconds }
        self.settings = settings
    }

    /// The FTP in force at `time`: the newest automatic value, unless a newer manual value holds because no
    /// automatic value after it has been accepted.
    public func inForce(at time: Int64) -> FTPEstimate? {
        let automatic = estimates.last { $0.effectiveMicroseconds <= time }
        guard let manual = manualValue(at: time) else { return automatic }
        guard let automatic, automatic.effectiveMicroseconds > manual.effectiveMicroseconds else { return manual }
        let accepted = settings.contains {
            if case .accept(let when) = $0 { return when > manual.effectiveMicroseconds && when <= time }
            return false
        }
        return accepted ? automatic : manual
    }

    /// A newer automatic value waiting for the rider to accept it while a manual value holds.
    public func pending(at time: Int64) -> FTPEstimate? {
        guard let inForce = inForce(at: time), inForce.method == .manual,
            let newest = estimates.last(where: { $0.effectiveMicroseconds <= time }),
            newest.effectiveMicroseconds > inForce.effectiveMicroseconds
        else { return nil }
        return newest
    }

    /// The critical-power model of the newest automatic value that has one, at `time` (for W′ balance; a manual
    /// FTP says nothing about W′).
    public func criticalPower(at time: Int64) -> CriticalPowerModel? {
        estimates.last { $0.effectiveMicroseconds <= time && $0.criticalPower != nil }?.criticalPower
    }

    /// Every value, automatic and manual, oldest first.
    public var entries: [FTPEstimate] {
        let manual = settings.compactMap { setting -> FTPEstimate? in
            guard case .manual(let watts, let from) = setting else { return nil }
            return FTPEstimate(method: .manual, watts: watts, effectiveMicroseconds: from)
        }
        return (estimates + manual).sorted { $0.effectiveMicroseconds < $1.effectiveMicroseconds }
    }

    private func manualValue(at time: Int64) -> FTPEstimate? {
        entries.last { $0.method == .manual && $0.effectiveMicroseconds <= time }
    }
}

/// The rides of a window of days ending at a time, their best curve and what it says: what `cyclelog ftp` and the
/// power-curve chart show.
public struct FTPWindow: Sendable {
    public var days: Int
    public var startMicroseconds: Int64
    public var endMicroseconds: Int64
    /// The best of the rides started in the window, with the ride holding each duration.
    public var envelope: CurveEnvelope

    public var curve: PowerCurve { envelope.curve }
    public var rideCount: Int { envelope.rideCount }

    /// The rides started within `days` before `endMicroseconds`.
    public init(_ allRides: [RideCurve], days: Int, endingAt endMicroseconds: Int64) {
        let start = Self.start(ending: endMicroseconds, days: days)
        self.init(
            CurveEnvelope(allRides.filter { $0.startMicroseconds > start && $0.startMicroseconds <= endMicroseconds }),
            days: days, startMicroseconds: start, endMicroseconds: endMicroseconds)
    }

    /// Where a window of `days` ending at `endMicroseconds` starts (the earliest time there is, for a damaged end
    /// so early that the window would start before it).
    public static func start(ending endMicroseconds: Int64, days: Int) -> Int64 {
        let (start, overflow) = endMicroseconds.subtractingReportingOverflow(
            FTPEstimator(windowDays: days).windowMicroseconds)
        return overflow ? .min : start
    }

    /// The window ending with the newest ride's end: what `cyclelog ftp` and the power-curve chart show, so that
    /// old rides replayed today still make a window.
    public init(endingWithNewestOf allRides: [RideCurve], days: Int) {
        self.init(allRides, days: days, endingAt: allRides.map(\.endMicroseconds).max() ?? 0)
    }

    /// The window of the rides of `envelope` (those started within it, in date order).
    public init(_ envelope: CurveEnvelope, days: Int, startMicroseconds: Int64, endMicroseconds: Int64) {
        self.days = days
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
        self.envelope = envelope
    }

    /// The ride, date and power of the best effort of `seconds`.
    public func effort(seconds: Int) -> FTPEffort? {
        guard let watts = curve.watts(seconds: seconds), let ride = envelope.holder(seconds: seconds) else {
            return nil
        }
        return FTPEffort(
            workoutId: ride.workoutId, rideStartMicroseconds: ride.startMicroseconds, durationSeconds: seconds,
            watts: watts)
    }

    /// The guarded critical-power estimate of this window.
    public var estimate: FTPEstimate? {
        FTPEstimator(windowDays: days).estimate(self)
    }
}
