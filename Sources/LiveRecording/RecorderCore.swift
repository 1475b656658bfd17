import BlueZ
import CyclingSensors
import Formats
import RecorderInterface
import RideWriting
import SensorHub
import StructuredWorkouts
import TrainerControl
import WorkoutStore
import Workouts

/// Every rule of a live recorder, in one pure value: the ride (`RideController`), the sensors (`SensorSupervisor`),
/// the smart trainer's control (`TrainerControl`) and the structured workout (`WorkoutGuide`), and each rule that
/// joins two of them. Each input (a BlueZ event, a tick, a command, what the store or the bus answered) comes with
/// the clock's readings and returns the `Effect`s to carry out, in order; `LiveRecorder` carries them out and
/// brings back what they found. Nothing here waits, reads a clock or calls BlueZ or SQLite, so a test drives the
/// interplay with plain calls and explicit times.
///
/// The rules that join the parts live here once each: a ride that opens journals the trainer's target and begins
/// its workout; a step's target is asked of the trainer (and asked again after a refusal or a reconnection); a
/// lap press ends an open step; a pause holds the player (it moves by moving time); the trainer is let go before
/// a ride ends or is cancelled and before the recorder stops; a lost trainer link stops the writes; the readings
/// steer the cadence safety and the power match; a guided ramp test ends the ride. So does the one line the
/// status shows (`notice`).
struct RecorderCore {
    /// The clock's two readings for one input: `elapsed` (monotonic) for the sensors' links, the trainer's
    /// timeouts and ramps; `rideMicroseconds` for the journal.
    struct Time: Sendable, Equatable {
        var elapsed: Duration
        var rideMicroseconds: Int64
    }

    /// What the recorder carries out for the core, in the order given.
    enum Effect: Sendable {
        /// Link work for one sensor's queue (connect, subscribe again, disconnect).
        case sensorJob(SensorSupervisor.Job, sensor: String)
        /// BlueZ's discovery on or off; the outcome comes back as `discoveryChanged` or `show`.
        case discovery(Bool)
        /// A sensor about to be connected, and the characteristics it has once linked, for the ride's observers (a
        /// capture of the ride's traffic names them).
        case observeSensor(address: String)
        case observeCharacteristics([GattCharacteristic], address: String)
        /// A connected trainer's control point (and status) to subscribe; the outcome comes back as
        /// `trainerSubscribed` or `trainerNotSubscribed`.
        case subscribeTrainer(
            sensor: String, controlPoint: GattCharacteristic, status: GattCharacteristic?, TrainerCapabilities)
        /// A request for the trainer's writer (already in the journal); its taking comes back as `trainerWriteTaken`,
        /// a failure as `trainerWriteFailed`.
        case trainerWrite(GattCharacteristic, FitnessMachineRequest)
        /// Wait until every write before this is on the bus and the trainer has answered its Reset (at most
        /// `LiveRecorder.releaseAnswerWait`), then bring back `then` (`resume`).
        case awaitRelease(then: Deferred?)
        /// The trainer answered its Reset: a wait for it is over.
        case released
        /// Open the ride's row (and read its Start's workout from the library), and tell `opened` the answer.
        case open(StartRequest, startMicroseconds: Int64, descriptions: [RideEvent])
        /// Write the journal's new events and completed seconds (nil: nothing to write); a failure comes back as
        /// `writeFailed`.
        case flush(WorkoutWriter.Batch?)
        /// Write what is left, then save the ended ride (`seal`, `sensorsUsed`); the outcome comes back as
        /// `saved`.
        case save
        /// Drop the cancelled ride's row.
        case delete(Int64)
        /// A guided test was saved: say the FTP it gives.
        case sayTestResult(workoutId: Int64)
        /// Read the presets offered from the store: `presetsRead`.
        case readPresets
        case live(LiveRecorder.LiveReading)
        case applied(LiveRecorder.AppliedControl)
        case announce(LiveRecorder.Announcement)
        /// For the apps on the sensor hub.
        case toApps(HubMessage)
        case publishStatus
        /// The recorder is over.
        case done
    }

    /// What waits for the trainer to be let go.
    enum Deferred: Sendable, Equatable {
        /// An End or a Cancel (the trainer's Reset goes into the ride's journal before the ride ends): the rider's
        /// (an action that can be undone), and whether an End saves the ride at once.
        case control(WorkoutControl, byRider: Bool, endsAtOnce: Bool)
        /// SIGINT or SIGTERM.
        case stop
        /// The ride ended on its own (a goal, `--auto`, a ramp test).
        case save
    }

    private(set) var controller: RideController
    private(set) var sensors: SensorSupervisor
    private(set) var trainerControl: TrainerControl
    /// The trainer's link: which sensor it is and its control point.
    private(set) var trainerLink: TrainerLink?
    /// The structured workout of the ride.
    private(set) var guide: WorkoutGuide?
    private var readings: LiveReadings
    /// A structured workout every ride follows unless its Start names another.
    private let defaultWorkout: LiveRecorder.WorkoutChoice?
    /// How the sensor hub runs beside the recorder.
    private let hubChoice: LiveRecorder.HubChoice
    /// The one line the status shows: the latest problem or notice worth seeing.
    private(set) var notice: String?
    /// The ride saved last, returned once the recorder is over (nil after one that waits again).
    private(set) var summary: WorkoutSummary?
    /// Why the last ride's row could not be opened.
    private(set) var openFailure: String?
    /// The sensors (journal addresses) that have given a cadence.
    private var cadenceSources: Set<String> = []
    /// The presets the status offers (`SuggestedWorkouts`), as the store read them last: made once per change, not
    /// for every status.
    private(set) var suggestedWorkouts: [RecorderStatus.SuggestedWorkout] = []
    /// When (on the elapsed clock) the presets are read again.
    private var presetsDue: Duration = .zero
    /// The rider's actions of this ride that can still be undone.
    private(set) var undoLedger = UndoLedger()
    /// A rider's command is being carried out: the controls it applies are actions the rider can undo.
    private var riderActing = false
    /// What the trainer was asked when the rider's End let it go (without a workout, which asks its own again):
    /// asked again if the End is undone.
    private var trainerBeforeEnd: TrainerAsk?
    /// An app's hold on the trainer through the sensor hub (`record --bridge`).
    private(set) var appControl = AppControl()
    /// What the rider asked of the trainer when an app took it: asked again once the app lets it go.
    private var riderAskBeforeApp: TrainerAsk?
    /// The apps connected to the sensor hub, by address, with the name each gave (once BlueZ read one) and the
    /// transport it came over ("Bluetooth", "DirCon"), in the order they came.
    private(set) var hubApps: [(address: String, name: String?, transport: String)] = []
    /// An app's request whose answer is the real trainer's answer to the first write it caused.
    private var awaitedAnswer: AwaitedAnswer?
    /// What the real trainer declared once subscribed: what a hub's Fitness Machine offers its apps.
    private(set) var trainerDeclared: TrainerCapabilities?
    /// What the sensor hub sends for each reading, made for every reading whether an app listens or not: an app
    /// that connects over DirCon in the middle of a ride hears what a hub that ran from its start sends.
    private var hubOutput = HubOutput()
    /// Whether the hub for the rides that ask for it (`HubChoice.onStart`) was wanted at the last reading: a hub
    /// that comes up begins its output afresh, as the replay of its ride's journal does.
    private var hubWasWanted = false

    struct AwaitedAnswer: Sendable, Equatable {
        var appOpCode: UInt8
        var trainerOpCode: UInt8
        /// When it was written (elapsed): unanswered after `appAnswerWait`, the app is told Operation Failed.
        var since: Duration
    }

    /// How long an app's answer waits for the real trainer's (FTMS gives a server 30 s; an app riding ERG sends
    /// its next target within seconds).
    static let appAnswerWait: Duration = .seconds(3)

    struct TrainerLink: Sendable, Equatable {
        var wanted: String
        var journalAddress: String
        var controlPoint: GattCharacteristic
    }

    init(options: LiveRecorder.Options) {
        let rules = RideController.Rules(
            plan: options.plan, autoPause: options.autoPause,
            wheelCircumferenceMillimetres: options.wheelCircumferenceMillimetres, auto: options.auto,
            waitForStart: options.waitForStart, lowBatteryPercent: options.lowBatteryPercent)
        controller = RideController(rules: rules)
        let wheel = rules.configuration.defaultWheelCircumferenceMillimetres
        sensors = SensorSupervisor(
            wanted: options.sensors, policy: options.policy, wheelCircumferences: options.wheelCircumferences,
            defaultWheelCircumferenceMillimetres: wheel)
        readings = LiveReadings(defaultWheelCircumferenceMillimetres: wheel)
        trainerControl = TrainerControl(
            rules: options.trainerRules, mode: options.trainerMode, targetWatts: options.trainerTargetWatts)
        defaultWorkout = options.workout
        hubChoice = options.hub
    }

    var workoutId: Int64 { controller.workoutId }
    var isRiding: Bool { controller.isRiding }
    var isOver: Bool { controller.isOver }

    /// A time for the journal (never before the last one).
    mutating func journalTime(_ time: Time) -> Int64 { controller.stamp(time.rideMicroseconds) }

    // MARK: The recorder's life

    /// The adapter to use, before anything else.
    mutating func use(adapterPath: String) { sensors.adapterPath = adapterPath }

    /// No sensor named: the cycling sensors a scan found are the ride's.
    mutating func want(found devices: [BluetoothDevice], scanningSeconds: Double) throws(LiveRecordingError) {
        try sensors.want(found: devices, scanningSeconds: scanningSeconds)
    }

    mutating func begin(at time: Time) -> [Effect] {
        ride(controller.begin(at: journalTime(time), descriptions: sensors.roster.allDescriptions), at: time)
    }

    /// Once per flush: look for missing sensors, start due connection attempts, check for silence, move the
    /// trainer's ramp and the workout on, write, and end a ride that is due to end.
    mutating func tick(devices: [BluetoothDevice], at time: Time) -> [Effect] {
        guard !controller.isOver else { return [] }
        var effects = sensorSteps(sensors.look(at: devices, at: time.elapsed), at: time)
        if time.elapsed >= presetsDue {
            // The rider may change them from another program (`cyclelog presets add`) while the recorder runs.
            presetsDue = time.elapsed + Self.presetsReadInterval
            effects.append(.readPresets)
        }
        effects += discovery(sensors.wantsDiscovery)
        effects += trainer(trainerControl.tick(at: time.elapsed), at: time)
        effects += appAnswerOverdue(at: time)
        effects += guideTick(at: time)
        effects.append(.flush(controller.takeBatch()))
        effects += ride(controller.dueEndings(at: time.rideMicroseconds), at: time)
        return effects + [.publishStatus]
    }

    /// SIGINT or SIGTERM: the trainer let go, a ride in progress ended and saved, no other waited for.
    mutating func stop(at time: Time) -> [Effect] {
        release(at: time, then: .stop) ?? ride(controller.stop(at: journalTime(time)), at: time)
    }

    /// The system bus went away.
    mutating func connectionLost(at time: Time) -> [Effect] {
        ride(controller.connectionLost(at: journalTime(time)), at: time)
    }

    /// Lets the trainer go (a Reset, then a wait for its answer), when it is held; nil when it is not.
    mutating func release(at time: Time, then deferred: Deferred? = nil) -> [Effect]? {
        let actions = trainerControl.release(at: time.elapsed)
        guard !actions.isEmpty else { return nil }
        return trainer(actions, at: time) + [.awaitRelease(then: deferred)]
    }

    /// The trainer was let go: what waited for it.
    mutating func resume(_ deferred: Deferred, at time: Time) -> [Effect] {
        switch deferred {
        case .control(let control, let byRider, let endsAtOnce):
            riderActing = byRider
            defer { riderActing = false }
            guard
                case .success(let actions) = controller.control(
                    control, at: journalTime(time), endsAtOnce: endsAtOnce)
            else { return [] }
            return ride(actions, at: time)
        case .stop: return ride(controller.stop(at: journalTime(time)), at: time)
        case .save: return [.save]
        }
    }

    // MARK: Commands

    /// Why a Start would be refused now: the ride's state, no sensor, or a trainer mode the trainer cannot take.
    /// (Whether its workout is in the library is the store's to say.)
    func startRefusal(_ request: StartRequest, at time: Time) -> LiveRecorder.StartRefusal? {
        if let refusal = controller.startRefusal(
            request, at: time.rideMicroseconds, anySensorConnected: sensors.anyConnected,
            sensorStates: sensors.linkStates, connecting: sensors.connecting)
        {
            return refusal
        }
        if let ask = Self.trainerAsk(request), let refusal = trainerControl.refusal(of: ask) {
            return .refused(refusal)
        }
        if request.hub, case .none(let why) = hubChoice { return .refused("hub=true: \(why)") }
        return nil
    }

    /// A Start that was not refused: the ride opened (or armed), the trainer steered as it asks.
    mutating func start(_ request: StartRequest, at time: Time) -> [Effect] {
        var effects = ride(
            controller.start(request, at: journalTime(time), descriptions: sensors.roster.allDescriptions), at: time)
        if let source = request.powerFrom { trainerControl.steer(byMeter: source == .meter) }
        if let ask = Self.trainerAsk(request), case .success(let actions) = trainerControl.ask(ask, at: time.elapsed) {
            effects += trainer(actions, at: time)
        }
        return effects
    }

    /// What a Start's caller is told once its effects are carried out: the ride's id, 0 when armed.
    func started(_ request: StartRequest) -> Result<Int64, LiveRecorder.StartRefusal> {
        guard request.when == .now else { return .success(0) }
        guard controller.isRiding else {
            return .failure(.refused("the ride cannot be stored: \(openFailure ?? "the database did not open it")"))
        }
        return .success(controller.workoutId)
    }

    private static func trainerAsk(_ request: StartRequest) -> TrainerAsk? {
        request.trainerControl.map { TrainerAsk.mode(TrainerMode(start: $0)) }
    }

    /// Why a control would be refused now, or nil.
    func refusal(of control: WorkoutControl) -> String? { controller.refusal(of: control) }

    /// Pause, resume, lap, marker, intake, end or cancel. An End or a Cancel lets the trainer go first, while the
    /// ride still takes events, so that its journal ends with the Reset. `byRider`: a command (the rider can
    /// undo it, and their End keeps the ride open for that unless `endsAtOnce`), not a rule of the recorder.
    mutating func control(
        _ control: WorkoutControl, at time: Time, byRider: Bool = false, endsAtOnce: Bool = true
    ) -> Result<[Effect], CommandRefusal> {
        if let refusal = controller.refusal(of: control) { return .failure(.refused(refusal)) }
        let endsAtOnce = endsAtOnce || !byRider
        if control == .end {
            let ask = trainerControl.currentAsk
            trainerBeforeEnd = byRider && guide == nil && ask != .mode(.free) && trainerLink != nil ? ask : nil
        }
        if control == .end || control == .cancel,
            let release = release(at: time, then: .control(control, byRider: byRider, endsAtOnce: endsAtOnce))
        {
            return .success(release)
        }
        riderActing = byRider
        defer { riderActing = false }
        if byRider { _ = actionTime(time) }
        switch controller.control(control, at: journalTime(time), endsAtOnce: endsAtOnce) {
        case .success(let actions): return .success(ride(actions, at: time))
        case .failure(let refused): return .failure(.refused(refused.reason))
        }
    }

    /// A rider's action's journal time: after the last one's, so that an undo's time and verb name one line.
    private mutating func actionTime(_ time: Time) -> Int64 {
        let last = undoLedger.entries.last?.action.timeMicroseconds ?? .min
        return controller.stamp(max(time.rideMicroseconds, last + 1))
    }

    // MARK: Undo

    /// Takes back the rider's action `id` (nil: the latest), within its 30 s: an `undo` into the journal, which
    /// builds the ride again without it, and what the journal alone does not put back (the trainer's target
    /// before it, the workout's player before it, a ride kept open after its End going on). Returns what was
    /// undone, in words, or why not.
    mutating func undo(_ id: Int64?, at time: Time) -> Result<(effects: [Effect], words: String), CommandRefusal> {
        guard controller.phase == .riding || controller.isEnding else {
            return .failure(.refused("no workout is being recorded: there is nothing to undo"))
        }
        let now = max(time.rideMicroseconds, controller.lastEventMicroseconds)
        let entry: UndoLedger.Entry
        switch undoLedger.entry(id, at: now) {
        case .success(let found): entry = found
        case .failure(let refusal): return .failure(.refused(refusal.reason))
        }
        if controller.isEnding && entry.action.verb != "end" {
            return .failure(.refused("the ride has ended: undo the End first (`cyclelog undo`)"))
        }
        if entry.action.verb == "trainer" {
            let state = trainerControl.state(at: time.elapsed)
            guard state != .absent && state != .disconnected, trainerLink != nil else {
                return .failure(
                    .refused("\(entry.words) cannot be undone: the trainer is not connected to be asked again"))
            }
        }
        let standsOver: UndoLedger.Entry? =
            switch entry.action.verb {
            case "player": undoLedger.laterAction(after: entry.id, where: UndoLedger.movedThePlayer)
            case "trainer": undoLedger.laterAction(after: entry.id) { $0.action.verb == "trainer" }
            default: nil
            }
        if let later = standsOver {
            return .failure(.refused("\(entry.words) cannot be undone before \(later.words): undo that first"))
        }
        let event = RideEvent(timeMicroseconds: journalTime(time), .control(.undo(entry.action)))
        undoLedger.markUndone(entry.id)
        var effects = ride(controller.undo(event), at: time)
        if let before = entry.trainerBefore, case .success(let actions) = trainerControl.ask(before, at: time.elapsed) {
            // Not journalled: the undo itself says that the target before it holds again.
            effects += trainer(actions, at: time)
        }
        if let before = entry.guideBefore,
            undoLedger.laterAction(after: entry.id, where: UndoLedger.movedThePlayer) == nil
        {
            guide = before
            // The player is back where it was: its target is asked of the trainer again.
            guide?.trainerRefused()
            effects += guideTick(at: time)
        }
        if entry.action.verb == "end" {
            guide?.trainerRefused()
            effects += tell("the End is undone: workout \(workoutId) goes on")
        } else {
            effects += tell("undone: \(entry.words)")
        }
        return .success((effects + [.publishStatus], entry.words))
    }

    /// What the rider asks of the trainer: into the journal (what the ride's trainer statistics are measured
    /// against) and to the trainer; refused with no trainer or a mode it does not declare (never sent to it).
    mutating func steer(_ ask: TrainerAsk, at time: Time, byRider: Bool = false) -> Result<[Effect], CommandRefusal> {
        let before = trainerControl.currentAsk
        switch trainerControl.ask(ask, at: time.elapsed) {
        case .success(let actions):
            var effects: [Effect] = []
            if byRider, appControl.appHoldsControl {
                // The rider's ask from any screen takes the trainer back from the app, which is told so.
                riderAskBeforeApp = nil
                let taken = appControl.riderTakesControl()
                effects += journalHolder(held: true, at: time) + taken.flatMap { appEffect($0, at: time) }
                effects += sendToApps(.machineStatus([FitnessMachineStatus.OpCode.controlPermissionLost]), at: time)
            }
            if byRider && controller.phase == .riding {
                undoLedger.took(
                    UndoneAction(timeMicroseconds: actionTime(time), verb: "trainer"),
                    words: trainerControl.currentAsk.words, type: .trainer, trainerBefore: before)
            }
            return .success(effects + journalTrainerTarget(at: time) + trainer(actions, at: time) + [.publishStatus])
        case .failure(let refusal):
            return .failure(.refused(refusal.reason))
        }
    }

    /// Skip, back, extend or the intensity: into the journal, then to the player.
    mutating func player(_ control: PlayerControl, at time: Time, byRider: Bool = false) -> Result<
        [Effect], CommandRefusal
    > {
        guard controller.phase == .riding, guide != nil else {
            return .failure(.refused("no structured workout is being ridden"))
        }
        if byRider {
            undoLedger.took(
                UndoneAction(timeMicroseconds: actionTime(time), verb: "player"), words: control.shownWords,
                guideBefore: guide)
        }
        var effects = record(RideEvent(timeMicroseconds: journalTime(time), .setting(.player(control))), at: time)
        effects += guided(guide?.apply(control) ?? [], at: time)
        return .success(effects + [.publishStatus])
    }

    typealias CommandRefusal = LiveRecorder.CommandRefusal

    // MARK: What the store answered

    /// How often the presets are read again while the recorder runs.
    static let presetsReadInterval: Duration = .seconds(3)

    /// The presets as the store has them: the status is published again when they changed.
    mutating func presetsRead(_ presets: [WorkoutPreset]) -> [Effect] {
        let offered = presets.map(RecorderStatus.SuggestedWorkout.init)
        guard offered != suggestedWorkouts else { return [] }
        suggestedWorkouts = offered
        return [.publishStatus]
    }

    /// The store's answer to the ride's opening. Its row open: the ride begins, the low batteries are said, the
    /// trainer's target and the workout (the Start's, read from the library; nil for the recorder's own) go into
    /// the journal. Not open: nothing can be recorded, and why is said.
    mutating func opened(
        _ request: StartRequest, _ answer: Result<RideStore.OpenedRide, StoreError>, descriptions: [RideEvent],
        at time: Time
    ) -> [Effect] {
        let opened: RideStore.OpenedRide
        switch answer {
        case .success(let ride): opened = ride
        case .failure(let error):
            openFailure = error.description
            return ride(
                controller.openFailed(error.description, at: journalTime(time), descriptions: descriptions), at: time)
        }
        var effects = ride(
            controller.opened(
                workoutId: opened.workoutId, syncIdentifier: opened.syncIdentifier, descriptions: descriptions),
            at: time)
        effects += ride(controller.batteries(sensors.batteries), at: time)
        effects += journalTrainerTarget(at: time)
        return effects + openWorkout(request, opened.workout, at: time)
    }

    /// The journal's new events and completed seconds, for the store.
    mutating func takeBatch() -> WorkoutWriter.Batch? { controller.takeBatch() }

    /// The ended ride's last batch and the ride as it stands, with its digests (nil when no measurement came):
    /// what comes after them belongs to the next ride.
    mutating func seal(at time: Time) -> (batch: WorkoutWriter.Batch?, finished: WorkoutWriter.Finished?) {
        controller.seal(at: journalTime(time), descriptions: sensors.roster.allDescriptions)
    }

    var sensorsUsed: [(address: String, name: String?)] { sensors.roster.used }

    /// A write failed: it is kept and written with the next flush (a locked or briefly full database).
    mutating func writeFailed(_ error: StoreError) {
        notice = "cannot write to the database (\(error.description)); keeping the ride in memory and retrying"
    }

    /// The ended ride was saved (`summary`), found empty (nil), or could not be saved: back to waiting, or over.
    mutating func saved(_ outcome: Result<WorkoutSummary?, StoreError>, at time: Time) -> [Effect] {
        var effects: [Effect] = []
        var problem: LiveRecordingError?
        switch outcome {
        case .success(let saved):
            summary = saved
            if let saved {
                // Said whether the recorder goes on to wait for the next ride or ends with this one.
                if saved.plan.fitnessTest != nil { effects.append(.sayTestResult(workoutId: saved.id)) }
            } else {
                problem = LiveRecordingError(.nothingToSave, "no measurement arrived: nothing to save")
            }
        case .failure(let error):
            summary = nil
            problem = LiveRecordingError(
                .store,
                "the ride could not be saved (\(error.description)); its journal is stored: "
                    + "`cyclelog recover` saves it once the database is writable")
        }
        // A start's hub ends with its ride: the next one's begins afresh, even with no reading between.
        hubWasWanted = false
        effects += ride(
            controller.saved(
                summary, problem: problem, at: journalTime(time), descriptions: sensors.roster.allDescriptions),
            at: time)
        if !controller.isOver { summary = nil }
        return effects
    }

    // MARK: What BlueZ said

    /// A BlueZ event about a device or bluetoothd.
    mutating func handle(_ event: BlueZEvent, at time: Time) -> [Effect] {
        guard !controller.isOver else { return [] }
        return sensorSteps(sensors.handle(event, at: time.elapsed), at: time)
    }

    /// A notification, arrived at `arrivalMicroseconds` (the wall clock): nil when it is none of ours. Its
    /// readings first (the freshest thing a second screen shows), then the journal, then the trainer's control.
    mutating func notification(
        _ characteristic: GattCharacteristic, _ value: [UInt8], arrivalMicroseconds: Int64, at time: Time
    ) -> [Effect]? {
        guard !controller.isOver,
            let (sensor, uuid, steps) = sensors.notification(from: characteristic, at: time.elapsed)
        else { return nil }
        var effects = sensorSteps(steps, at: time)
        let event = RideEvent(
            timeMicroseconds: journalTime(time), .notification(sensor: sensor, characteristic: uuid, value: value))
        let reading = readings.reading(of: event, from: sensor, arrivalMicroseconds: arrivalMicroseconds)
        if let reading {
            effects.append(.live(reading))
            effects += hubSends(reading)
            if reading.readings.contains(where: { $0.channel == .cadenceRPM }) { cadenceSources.insert(sensor) }
        }
        effects += record(event, at: time)
        return effects + trainerHeard(sensor, uuid, value, reading, at: time)
    }

    /// What the hub sends its apps for `reading`, when a hub runs: a Bluetooth hub (the whole time or for this
    /// ride) or an app connected over DirCon.
    private mutating func hubSends(_ reading: LiveRecorder.LiveReading) -> [Effect] {
        let wanted = hubChoice == .onStart && controller.hubAsked
        if wanted && !hubWasWanted { hubOutput = HubOutput() }
        hubWasWanted = wanted
        let notifications = hubOutput.take(reading)
        let overDirCon = hubApps.contains { $0.transport == "DirCon" }
        guard !notifications.isEmpty, hubChoice == .always || wanted || overDirCon else { return [] }
        return [.toApps(.readings(notifications, overDirCon: overDirCon))]
    }

    mutating func discoveryChanged(_ on: Bool) { sensors.discovering = on }

    /// A line for the status (a failure of BlueZ's the recorder met).
    mutating func show(_ line: String) { notice = line }

    /// A trainer write the trainer took (its ATT Write Response came): its answer is awaited from now.
    mutating func trainerWriteTaken(_ request: FitnessMachineRequest, at time: Time) {
        trainerControl.written(request, at: time.elapsed)
    }

    /// A trainer write that failed on the bus, with BlueZ's reason in words.
    mutating func trainerWriteFailed(_ request: FitnessMachineRequest, reason: String, at time: Time) -> [Effect] {
        let failed = awaitedAnswer?.trainerOpCode == request.opCode ? answerAwaited(.operationFailed, at: time) : []
        return trainer(trainerControl.writeFailed(request, reason: reason, at: time.elapsed), at: time) + failed
    }

    // MARK: An app on the sensor hub

    /// App `app` (its address) wrote `bytes` to the hub's Fitness Machine control point: into the journal, then
    /// through the rider's own trainer control (the declared range, the ramp, the cadence safety), answered (an ask
    /// that makes a trainer write with the trainer's answer to it, once it comes), and the answer into the journal.
    /// While the app holds the trainer the workout's targets wait.
    mutating func appWrote(_ bytes: [UInt8], by app: String, at time: Time) -> [Effect] {
        let exchange = HubExchange.written(
            app: app, characteristic: Characteristic.fitnessMachineControlPoint.rawValue, value: bytes)
        var effects = record(RideEvent(timeMicroseconds: journalTime(time), .hub(exchange)), at: time)
        let held = appControl.appHoldsControl
        let control = trainerControl
        let appEffects = appControl.written(bytes, by: app) { control.refusal(of: $0) }
        effects += journalHolder(held: held, at: time)
        if !held, appControl.appHoldsControl {
            riderAskBeforeApp = trainerControl.currentAsk
            if guide != nil { effects += tell("an app holds the trainer: the workout's targets wait until it lets go") }
        }
        var answeredByTheTrainer = false
        for effect in appEffects {
            switch effect {
            case .ask:
                // A request before the last was answered supersedes it: the trainer control took the last one.
                effects += answerAwaited(.success, at: time)
                let asked = appEffect(effect, at: time)
                effects += asked
                if let first = asked.lazy.compactMap(Self.trainerRequest).first, let opCode = bytes.first {
                    awaitedAnswer = AwaitedAnswer(appOpCode: opCode, trainerOpCode: first.opCode, since: time.elapsed)
                    answeredByTheTrainer = true
                }
            case .answer(let answer) where answeredByTheTrainer && answer.last == ControlPointResult.success.rawValue:
                // The app is told what the trainer answers, once it has.
                continue
            default:
                effects += appEffect(effect, at: time)
            }
        }
        return effects + [.publishStatus]
    }

    /// App `app` (its address) wrote `bytes` to the hub's SC Control Point: into the journal, and carried out
    /// from the first reading after its time there, as the replay of the journal does (`HubOutput`). Returns the
    /// answer, which the hub the app wrote to sends it.
    mutating func appWroteSpeedAndCadence(_ bytes: [UInt8], by app: String, at time: Time)
        -> (answer: [UInt8], effects: [Effect])
    {
        let exchange = HubExchange.written(
            app: app, characteristic: Characteristic.scControlPoint.rawValue, value: bytes)
        let stamp = journalTime(time)
        let answer = hubOutput.speedAndCadenceWritten(bytes, at: stamp)
        return (answer, record(RideEvent(timeMicroseconds: stamp, .hub(exchange)), at: time))
    }

    private static func trainerRequest(_ effect: Effect) -> FitnessMachineRequest? {
        if case .trainerWrite(_, let request) = effect { return request }
        return nil
    }

    /// The app's awaited answer indicated now, with `result` (the trainer's, or Operation Failed when it gave none).
    private mutating func answerAwaited(_ result: ControlPointResult, at time: Time) -> [Effect] {
        guard let awaited = awaitedAnswer else { return [] }
        awaitedAnswer = nil
        return sendToApps(
            .controlPointAnswer(FitnessMachineControlPoint.response(to: awaited.appOpCode, result: result)), at: time)
    }

    /// The trainer answered a write: the app's request that caused it is answered the same.
    private mutating func trainerAnswered(_ value: [UInt8], at time: Time) -> [Effect] {
        // 0x80 (the Response Code, FTMS 4.16.2), the request's op code, the result.
        guard let awaited = awaitedAnswer, value.count >= 3, value[0] == 0x80, value[1] == awaited.trainerOpCode
        else { return [] }
        return answerAwaited(ControlPointResult(rawValue: value[2]), at: time)
    }

    /// An app's answer the trainer left unanswered for `appAnswerWait`: Operation Failed, said.
    private mutating func appAnswerOverdue(at time: Time) -> [Effect] {
        guard let awaited = awaitedAnswer, time.elapsed - awaited.since >= Self.appAnswerWait else { return [] }
        return answerAwaited(.operationFailed, at: time)
            + tell("the trainer did not answer the app's request: the app was told it failed")
    }

    /// App `app` (its address) connected to the hub over `transport`, or gave its `name` once connected.
    mutating func appJoined(_ app: String, name: String?, transport: String = "Bluetooth") -> [Effect] {
        if let index = hubApps.firstIndex(where: { $0.address == app }) {
            hubApps[index].name = name ?? hubApps[index].name
        } else {
            hubApps.append((app, name, transport))
        }
        return [.publishStatus]
    }

    /// App `app`'s link to the hub is gone: if it held the trainer, the trainer is the rider's again.
    mutating func appLeft(_ app: String, at time: Time) -> [Effect] {
        let held = appControl.appHoldsControl
        if appControl.holder == app { awaitedAnswer = nil }
        let released = appControl.disconnected(app)
        let effects = journalHolder(held: held, at: time) + released.flatMap { appEffect($0, at: time) }
        hubApps.removeAll { $0.address == app }
        return effects + [.publishStatus]
    }

    /// An app on the hub as a rider recognises it: "Zwift (00:AA:…)", or its address until it gave a name.
    private func appLabel(_ app: String) -> String {
        guard let name = hubApps.first(where: { $0.address == app })?.name else { return app }
        return "\(name) (\(app))"
    }

    /// The trainer's holder into the journal when it changed from `held` (whether an app held it before; one app
    /// holds it at a time, so an app's hold only ever follows the rider's): a ride's time under an app's control is
    /// measured from these lines.
    private mutating func journalHolder(held: Bool, at time: Time) -> [Effect] {
        let holder = appControl.holder
        guard held != (holder != nil) else { return [] }
        let name = holder.flatMap { app in hubApps.first { $0.address == app }?.name }
        return record(RideEvent(timeMicroseconds: journalTime(time), .hub(.holder(app: holder, name: name))), at: time)
    }

    private mutating func appEffect(_ effect: AppControl.Effect, at time: Time) -> [Effect] {
        switch effect {
        case .ask(let ask):
            switch trainerControl.ask(ask, at: time.elapsed) {
            case .success(let actions): return journalTrainerTarget(at: time) + trainer(actions, at: time)
            case .failure(let refusal): return tell("the app's ask was refused: \(refusal.reason)")
            }
        case .release: return appReleased(at: time)
        case .answer(let bytes): return sendToApps(.controlPointAnswer(bytes), at: time)
        case .tell(let words): return tell(words)
        }
    }

    /// The app let the trainer go (or lost its link): never left holding the app's load. The trainer is reset,
    /// then asked what the rider asked before the app took it; a workout asks its step again at the next tick.
    private mutating func appReleased(at time: Time) -> [Effect] {
        let before = riderAskBeforeApp
        riderAskBeforeApp = nil
        var effects = release(at: time) ?? []
        guide?.trainerRefused()
        if guide == nil, let before, before != .mode(.free),
            case .success(let actions) = trainerControl.ask(before, at: time.elapsed)
        {
            effects += trainer(actions, at: time)
        }
        return effects + journalTrainerTarget(at: time)
    }

    /// `message` for the apps on the hub; what is indicated to them into the journal first.
    private mutating func sendToApps(_ message: HubMessage, at time: Time) -> [Effect] {
        let sent: HubExchange? =
            switch message {
            case .controlPointAnswer(let bytes):
                .sent(characteristic: Characteristic.fitnessMachineControlPoint.rawValue, value: bytes)
            case .machineStatus(let bytes):
                .sent(characteristic: Characteristic.fitnessMachineStatus.rawValue, value: bytes)
            case .trainerDeclared, .readings: nil
            }
        let journalled = sent.map { record(RideEvent(timeMicroseconds: journalTime(time), .hub($0)), at: time) } ?? []
        return journalled + [.toApps(message)]
    }

    // MARK: The connect sequence's reports

    /// A step of connection attempt `attempt` of sensor `wanted` ended (`SensorConnection`): the effects, and
    /// whether the attempt goes on.
    mutating func connection(_ wanted: String, attempt: Int, _ step: SensorConnection.Step, at time: Time)
        -> (effects: [Effect], goOn: Bool)
    {
        switch step {
        case .starting:
            // Discovery off first: BlueZ connects more reliably without a scan.
            let observe = sensors.roster[wanted]?.address.map { [Effect.observeSensor(address: $0)] } ?? []
            return (discovery(false) + observe, true)
        case .linkFailed(let line):
            if let line { notice = line }
            return (
                sensorSteps(sensors.apply(.failed(attempt: attempt), to: wanted, at: time.elapsed), at: time), false
            )
        case .linked(let characteristics):
            let effects = sensorSteps(
                sensors.apply(.linkEstablished(attempt: attempt), to: wanted, at: time.elapsed), at: time)
            guard let address = sensors.roster[wanted]?.journalAddress else { return (effects, false) }
            return (effects + [.observeCharacteristics(characteristics, address: address)], true)
        case .described(let description):
            // Its values into the journal, a low battery said.
            let effects =
                sensorSteps(sensors.described(wanted, description), at: time)
                + ride(controller.batteries(sensors.batteries), at: time)
            return (effects, true)
        case .subscribed(let measurements, let failure, let characteristics, let reads):
            return (
                subscribed(
                    wanted, attempt: attempt, measurements, failure: failure, characteristics: characteristics,
                    reads: reads, at: time), false
            )
        }
    }

    /// The sensor's measurements subscribed (or not): when it is a trainer with a control point, that is
    /// subscribed next, with what it declared when it was described.
    private mutating func subscribed(
        _ wanted: String, attempt: Int, _ measurements: [GattCharacteristic], failure: String?,
        characteristics: [GattCharacteristic], reads: [(characteristic: UInt16, value: [UInt8])], at time: Time
    ) -> [Effect] {
        let effects = sensorSteps(
            sensors.subscribed(wanted, attempt: attempt, measurements, failure: failure, at: time.elapsed), at: time)
        guard failure == nil, sensors.roster[wanted]?.link.state.isConnected == true,
            trainerLink == nil || trainerLink?.wanted == wanted,
            let controlPoint = characteristics.first(where: {
                $0.shortUUID == Characteristic.fitnessMachineControlPoint.rawValue
            })
        else { return effects }
        let status = characteristics.first {
            $0.shortUUID == Characteristic.fitnessMachineStatus.rawValue && $0.canNotify
        }
        return effects + [
            .subscribeTrainer(
                sensor: wanted, controlPoint: controlPoint, status: status, Self.capabilities(reads))
        ]
    }

    /// The trainer's control point is subscribed: the control is told what the trainer declares, and what the
    /// rider or the workout asked is sent again.
    mutating func trainerSubscribed(
        _ wanted: String, controlPoint: GattCharacteristic, _ capabilities: TrainerCapabilities, at time: Time
    ) -> [Effect] {
        guard let address = sensors.roster[wanted]?.journalAddress else { return [] }
        trainerLink = TrainerLink(wanted: wanted, journalAddress: address, controlPoint: controlPoint)
        trainerDeclared = capabilities
        return [.toApps(.trainerDeclared(capabilities))]
            + trainer(trainerControl.connected(capabilities, at: time.elapsed), at: time)
    }

    mutating func trainerNotSubscribed(_ reason: String) -> [Effect] {
        tell(
            "the trainer is recorded but cannot be steered: its control point could not be subscribed (\(reason))")
    }

    /// What a trainer declares, from the values read when it connected.
    static func capabilities(_ reads: [(characteristic: UInt16, value: [UInt8])]) -> TrainerCapabilities {
        func value(_ characteristic: Characteristic) -> [UInt8]? {
            reads.last { $0.characteristic == characteristic.rawValue }?.value
        }
        return TrainerCapabilities(
            features: value(.fitnessMachineFeature).flatMap { try? FitnessMachineFeature(decoding: $0) },
            powerRange: value(.supportedPowerRange).flatMap { try? SupportedPowerRange(decoding: $0).range },
            resistanceRange: value(.supportedResistanceLevelRange).flatMap {
                try? SupportedResistanceLevelRange(decoding: $0).range
            },
            inclinationRange: value(.supportedInclinationRange).flatMap {
                try? SupportedInclinationRange(decoding: $0).range
            })
    }

    // MARK: Waiting for a sensor

    /// Until when (on the elapsed clock) a start now waits for a sensor: up to `launchGrace` after a launch that
    /// the start brought up, up to `connectingGrace` while a sensor is being connected; nil: not at all.
    func sensorWait(at elapsed: Duration, launchGrace: Duration, connectingGrace: Duration) -> Duration? {
        guard !controller.isOver, !sensors.anyConnected else { return nil }
        if elapsed < launchGrace {
            return max(launchGrace, sensors.connecting.isEmpty ? .zero : elapsed + connectingGrace)
        }
        return sensors.connecting.isEmpty ? nil : elapsed + connectingGrace
    }

    // MARK: Status

    func status(at time: Time) -> LiveStatus {
        var status = LiveStatus(
            published: controller.status(at: time.rideMicroseconds, sensors: sensors.statusSensors))
        status.published.suggestedWorkouts = suggestedWorkouts
        status.screen.message = notice
        status.hubWanted = hubChoice == .onStart && controller.hubAsked
        if controller.phase == .riding || controller.isEnding,
            let offer = undoLedger.offer(at: max(time.rideMicroseconds, controller.lastEventMicroseconds))
        {
            status.published.undoId = offer.entry.id
            status.published.undoAction = offer.entry.words
            status.published.undoType = offer.entry.type.rawValue
            status.published.undoSecondsLeft = offer.secondsLeft
        }
        describeTrainer(&status, at: time.elapsed)
        status.published.hubApps = hubApps.map { "\(appLabel($0.address)) over \($0.transport)" }.joined(
            separator: ", ")
        if let holder = appControl.holder { status.published.trainerHolder = appLabel(holder) }
        if controller.isRiding, let guide {
            guide.describe(&status)
            // A step of the workout begins a lap, as in the stored ride: the dashboard's and the phone's lap agree.
            status.published.lap = UInt32(clamping: Int(status.published.lap) + guide.stepLaps)
        }
        return status
    }

    /// The trainer's control as the status shows it; nothing while no trainer has connected.
    private func describeTrainer(_ status: inout LiveStatus, at time: Duration) {
        let state = trainerControl.state(at: time)
        guard state != .absent else { return }
        let mode = trainerControl.mode
        let target = mode == .erg ? trainerControl.targetWatts : nil
        let offset = mode == .erg ? trainerControl.powerMatchOffsetWatts : nil
        status.published.trainerMode = mode
        status.published.trainerState = state
        status.published.targetPowerWatts = target.map(Double.init)
        status.published.gradePercent = mode == .simulation ? trainerControl.gradePercent : nil
        status.published.resistanceLevel = mode == .resistance ? trainerControl.resistancePercent : nil
        status.published.powerMatchOffsetWatts = offset.map { ($0 * 10).rounded() / 10 }
        status.published.trainerMessage = trainerControl.message ?? ""
        status.screen.trainerTargetWatts = target
        status.screen.trainerGradePercent = status.published.gradePercent
        status.screen.trainerNowWatts = mode == .erg ? Int(trainerControl.effectiveWatts(at: time).rounded()) : nil
        status.screen.powerMatchOffsetWatts = offset
    }

    // MARK: The rules that join the parts

    /// One event into the ride (or the pedalling watch), the roster and the live readings.
    private mutating func record(_ event: RideEvent, at time: Time) -> [Effect] {
        sensors.describe(event)
        readings.note(event)
        let roster = sensors.roster
        return ride(
            controller.record(event, descriptions: roster.allDescriptions, name: roster.name(ofAddress:)), at: time)
    }

    private mutating func ride(_ actions: [RideController.Action], at time: Time) -> [Effect] {
        var effects: [Effect] = []
        for action in actions {
            switch action {
            case .open(let request, let start):
                openFailure = nil
                undoLedger.reset()
                effects.append(
                    .open(request, startMicroseconds: start, descriptions: sensors.roster.openingDescriptions))
            case .applied(let control):
                effects.append(.applied(control))
                let guideBefore = guide
                var movedThePlayer = false
                if control.control == .lap {
                    // A lap press ends an open step.
                    let guidance = guide?.lapPressed() ?? []
                    movedThePlayer = !guidance.isEmpty
                    effects += guided(guidance, at: time)
                }
                if riderActing,
                    let action = RideEvent(timeMicroseconds: control.timeMicroseconds, .control(control.control))
                        .undoable
                {
                    undoLedger.took(
                        action, words: actionWords(control.control),
                        type: control.control.name == "intake" ? .intake : .ride,
                        trainerBefore: control.control == .end ? trainerBeforeEnd : nil,
                        guideBefore: movedThePlayer ? guideBefore : nil)
                }
            case .save:
                // The trainer is let go before the ride is written for the last time.
                effects += release(at: time, then: .save) ?? [.save]
            case .delete(let workoutId):
                summary = nil
                hubWasWanted = false
                effects.append(.delete(workoutId))
                effects += ride(
                    controller.saved(
                        nil, problem: nil, at: journalTime(time), descriptions: sensors.roster.allDescriptions),
                    at: time)
            case .tell(let words): effects.append(.announce(.notice(words)))
            case .show(let line): notice = line
            case .rideSaved(let saved):
                effects.append(.announce(.rideSaved(saved)))
                guide = nil
            case .publishStatus: effects.append(.publishStatus)
            case .done: effects.append(.done)
            }
        }
        return effects
    }

    private mutating func sensorSteps(_ steps: [SensorSupervisor.Step], at time: Time) -> [Effect] {
        var effects: [Effect] = []
        for step in steps {
            switch step {
            case .job(let job, let wanted): effects.append(.sensorJob(job, sensor: wanted))
            case .journal(let kind):
                // The trainer's link going down stops its writes until it is back.
                if case .disconnected(let address) = kind, address == trainerLink?.journalAddress {
                    trainerControl.disconnected()
                }
                effects += record(RideEvent(timeMicroseconds: journalTime(time), kind), at: time)
            case .show(let line): notice = line
            }
        }
        return effects
    }

    private mutating func trainer(_ actions: [TrainerControl.Action], at time: Time) -> [Effect] {
        var effects: [Effect] = []
        for action in actions {
            switch action {
            case .write(let request):
                guard let link = trainerLink else { continue }
                let write = RideEvent.Kind.write(
                    sensor: link.journalAddress, characteristic: Characteristic.fitnessMachineControlPoint.rawValue,
                    value: request.bytes)
                effects += record(RideEvent(timeMicroseconds: journalTime(time), write), at: time)
                effects.append(.trainerWrite(link.controlPoint, request))
            case .tell(let words): effects += tell(words)
            }
        }
        return effects
    }

    /// The rider's mode and target into the journal (`trainer erg 250`), when the rider changes them and when a
    /// ride opens with a mode.
    private mutating func journalTrainerTarget(at time: Time) -> [Effect] {
        let target: TrainerTarget =
            switch trainerControl.mode {
            case .erg: .erg(watts: trainerControl.targetWatts)
            case .simulation: .simulation(gradeHundredthsPercent: Int((trainerControl.gradePercent * 100).rounded()))
            case .resistance: .resistance(percent: Int(trainerControl.resistancePercent.rounded()))
            case .free: .free
            }
        guard target != .free || trainerLink != nil else { return [] }
        return record(RideEvent(timeMicroseconds: journalTime(time), .setting(.trainerTarget(target))), at: time)
    }

    /// A notification that concerns the trainer: an answer, a status, or a reading the control steers by.
    private mutating func trainerHeard(
        _ sensor: String, _ characteristic: UInt16, _ value: [UInt8], _ reading: LiveRecorder.LiveReading?,
        at time: Time
    ) -> [Effect] {
        guard let link = trainerLink else { return [] }
        if sensor == link.journalAddress {
            switch Characteristic(rawValue: characteristic) {
            case .fitnessMachineControlPoint:
                let released: [Effect] =
                    value.starts(with: [0x80, FitnessMachineControlPoint.OpCode.reset]) ? [.released] : []
                return released + trainer(trainerControl.indicated(value, at: time.elapsed), at: time)
                    + trainerAnswered(value, at: time)
            case .fitnessMachineStatus: return trainer(trainerControl.status(value, at: time.elapsed), at: time)
            default: break
            }
        }
        guard let reading else { return [] }
        var effects: [Effect] = []
        for item in reading.readings {
            switch item.channel {
            case .cadenceRPM: effects += trainer(trainerControl.cadence(item.value, at: time.elapsed), at: time)
            case .powerWatts where sensor == link.journalAddress:
                effects += trainer(trainerControl.trainerPower(item.value, at: time.elapsed), at: time)
            case .powerWatts: trainerControl.meterPower(item.value, at: time.elapsed)
            default: break
            }
        }
        return effects
    }

    /// The ride opened: its workout (its Start's, else the recorder's own) goes into the journal and is followed.
    private mutating func openWorkout(
        _ request: StartRequest, _ workout: Result<PlannedWorkout, LiveRecorder.StartRefusal>?, at time: Time
    ) -> [Effect] {
        var effects: [Effect] = []
        var choice = defaultWorkout
        if let id = request.workout {
            switch workout {
            case .success(let planned): choice = LiveRecorder.WorkoutChoice(id: id, planned: planned)
            case .failure(.refused(let reason)):
                effects += tell(reason)
                choice = nil
            case .failure(.noSensors), nil: choice = nil
            }
        }
        guard let choice else {
            guide = nil
            return effects
        }
        effects += record(RideEvent(timeMicroseconds: journalTime(time), .setting(.workout(choice.planned))), at: time)
        if choice.intensityPercent != 100 {
            let intensity = RideEvent.Kind.setting(.player(.intensity(percent: choice.intensityPercent)))
            effects += record(RideEvent(timeMicroseconds: journalTime(time), intensity), at: time)
        }
        guide = WorkoutGuide(
            id: choice.id, planned: choice.planned, intensityPercent: choice.intensityPercent,
            endsWhenPedallingStops: request.plan.fitnessTest == .ramp)
        if choice.planned.workout.needsFTP, choice.planned.ftpWatts == nil {
            effects += tell(
                "no FTP is known: the steps in % of FTP have no target (`cyclelog ftp set WATTS`, or `--ftp`)")
        }
        return effects + guided(guide?.advance(movingSeconds: 0, distanceMeters: 0, cadenceRPM: nil) ?? [], at: time)
    }

    /// Each flush: the player moved on by the ride's moving time and distance (so a pause holds it). A cadence
    /// missing while the sensor that gave it is lost does not end a ramp test.
    private mutating func guideTick(at time: Time) -> [Effect] {
        guard guide != nil, controller.isRiding else { return [] }
        let status = controller.figures(at: time.rideMicroseconds)
        guard status.state == .running else { return [] }
        // Lost: a sensor that gave a cadence whose link is down in the journal now (the roster's own record of it).
        let cadenceLost =
            status.cadenceRPM == nil
            && sensors.roster.sensors.contains {
                !$0.link.linkUpInJournal && cadenceSources.contains($0.journalAddress)
            }
        return guided(
            guide?.advance(
                movingSeconds: status.movingSeconds, distanceMeters: status.distanceMeters,
                cadenceRPM: status.cadenceRPM, cadenceLost: cadenceLost) ?? [], at: time)
    }

    private mutating func guided(_ actions: [WorkoutGuide.Action], at time: Time) -> [Effect] {
        var effects: [Effect] = []
        for action in actions {
            switch action {
            case .steer(let ask):
                // No trainer (yet), or an app holds it: the targets are shown, and asked again once one connects
                // or the app lets go.
                if appControl.appHoldsControl || trainerControl.refusal(of: ask) != nil {
                    guide?.trainerRefused()
                    continue
                }
                switch steer(ask, at: time) {
                case .success(let steered): effects += steered
                case .failure(let refusal):
                    guide?.trainerRefused()
                    effects += tell(refusal.reason)
                }
            case .tell(let words): effects += tell(words)
            case .end(let words):
                effects += tell(words)
                if case .success(let ended) = control(.end, at: time) { effects += ended }
            }
        }
        return effects
    }

    /// An action as the screens offer to undo it: "lap 4", "water 250ml", "marker “top”".
    private func actionWords(_ control: WorkoutControl) -> String {
        switch control {
        case .lap: "lap \((controller.ride?.session.lapStarts.count ?? 0) + 1 + (guide?.stepLaps ?? 0))"
        case .intake(let intake): intake.description
        case .marker(let text): "marker “\(ShownText.cut(text, to: 30))”"
        default: control.name
        }
    }

    private mutating func tell(_ words: String) -> [Effect] {
        notice = words
        return [.announce(.notice(words))]
    }

    private mutating func discovery(_ on: Bool) -> [Effect] {
        guard on != sensors.discovering, sensors.adapterPath != nil else { return [] }
        return [.discovery(on)]
    }
}

extension TrainerMode {
    /// The mode a start's `control=` asks for (`none`: free).
    init(start choice: StartRequest.TrainerChoice) {
        switch choice {
        case .erg: self = .erg
        case .sim: self = .simulation
        case .resistance: self = .resistance
        case .none: self = .free
        }
    }
}
