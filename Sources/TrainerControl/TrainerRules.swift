/// The numbers the trainer's control keeps to: how long it waits for an answer, and the rules that keep a rider
/// safe in ERG and steer it by a crank power meter. `record` sets the cadences and the power match's span
/// (`--erg-low-cadence`, `--erg-resume-cadence`, `--power-match-seconds`, `--power-from`); the rest are these
/// defaults.
public struct TrainerRules: Equatable, Sendable {
    /// How long a control-point write waits for the trainer's answer once the trainer took it (FTMS: the control
    /// point's answer is an indication). A write not yet taken fails on the bus instead, as BlueZ answers it (at
    /// most the 25 s a call to BlueZ waits).
    public var answerTimeout: Duration = .seconds(1)
    /// How often a write that got no answer, or a Request Control that was refused, is sent again before the
    /// rider is told.
    public var retries = 3
    /// After the rider was told: how long before cyclelog asks again, unasked (the rider may close the other app).
    public var retryPause: Duration = .seconds(10)

    /// ERG's cadence safety: a cadence under `lowCadenceRPM` for `lowCadenceDuration` drops the target to the
    /// recovery level (the lower of `recoveryShare` of the target and `recoveryWatts`) until the cadence is
    /// back above `recoveredCadenceRPM`; then the target comes back over `rampBack`. It keeps a tired rider
    /// from the "death spiral": the trainer raising the resistance as the cadence falls to hold the watts.
    public var lowCadenceRPM = 40.0
    public var lowCadenceDuration: Duration = .seconds(3)
    public var recoveredCadenceRPM = 60.0
    public var recoveryWatts = 100
    public var recoveryShare = 0.5
    public var rampBack: Duration = .seconds(5)
    /// A target change larger than this is ramped over `bigStepRamp` rather than hitting the legs at once.
    public var bigStepWatts = 100
    public var bigStepRamp: Duration = .seconds(2)
    /// Whatever the asks, no write raises ERG's target more than `bigStepWatts` above what the trainer held this
    /// long before: ERG climbs at most 100 W in any 0.4 s (about a step a flush), however many asks arrive and
    /// however fast the trainer answers.
    public var riseSpacing: Duration = .milliseconds(400)
    /// A cadence or power older than this is not a reading any more (a silent sensor, a rider who stopped).
    public var staleReading: Duration = .seconds(5)

    /// Power match: steer ERG by the crank or pedal power meter rather than by the trainer's own (often
    /// inaccurate) power. The target sent is the target minus the running offset (meter − trainer, an
    /// exponential average over `matchTimeConstant`), held within ±`matchLimitWatts`, its average frozen for
    /// `matchFreeze` after each change of the target while the trainer settles.
    public var powerFromMeter = false
    public var matchTimeConstant: Duration = .seconds(30)
    public var matchLimitWatts = 50.0
    public var matchFreeze: Duration = .seconds(3)
    /// A meter's reading pairs with a trainer's when they are at most this far apart.
    public var matchPairing: Duration = .seconds(2)

    public init() {}
}
