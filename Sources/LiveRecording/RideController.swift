import RecorderInterface
import RideWriting
import Workouts

/// The rules of a live recorder's rides, without I/O: whether a ride is waited for, armed, opening, ridden or being
/// saved; which starts and controls are taken and why others are refused; rides that start at the first pedal
/// stroke and end after a time without pedalling or at their goal; the notices a rider hears; the status shown.
/// Events and times come in (the journal's microseconds, from the caller's clock), and what the recorder should do
/// comes out as `Action`s: open a ride's row, save or drop it, publish a control or the status, tell the rider.
/// Everything that waits (the database, BlueZ, timers) is the `LiveRecorder`'s.
///
///     waiting ──start / pedalling──▶ opening ──opened──▶ riding ──end, cancel, idle, goal──▶ saving ──saved──▶ waiting
///        │ ▲                           │ failed             (a recorder that does not wait ends instead: over)
///        ▼ │ cancel                    ▼
///      armed ──first pedal stroke──▶ opening
///
/// A ride being saved is sealed when its last batch is taken: what comes after belongs to the next ride (`--auto`
/// watches for its pedalling from then on, and a ride found meanwhile opens once the save has answered).
struct RideController {
    /// What the recorder was asked to do (`record`'s options).
    struct Rules: Sendable {
        var plan = WorkoutPlan()
        var autoPause: AutoPause?
        var wheelCircumferenceMillimetres: Int?
        /// `record --auto`.
        var auto: LiveRecorder.AutoRide?
        /// `record --wait`.
        var waitForStart = false
        var lowBatteryPercent = LiveStatus.lowBatteryPercent

        /// Rides start on request or on pedalling, and the recorder waits again after each one.
        var waits: Bool { auto != nil || waitForStart }

        /// The builder's configuration (the pedalling watch decodes with it too).
        var configuration: WorkoutBuilder.Configuration {
            var configuration = WorkoutBuilder.Configuration(autoPause: autoPause)
            if let wheelCircumferenceMillimetres {
                configuration.defaultWheelCircumferenceMillimetres = wheelCircumferenceMillimetres
            }
            return configuration
        }
    }

    enum Action: Sendable {
        /// Open a ride's row for `request`, starting at `startMicroseconds`, then call `opened` or `openFailed`.
        case open(StartRequest, startMicroseconds: Int64)
        /// A control was applied to the ride.
        case applied(LiveRecorder.AppliedControl)
        /// The ride ended: write what is left and save it, then call `saved`.
        case save
        /// The ride was cancelled: delete its row (workout id), then call `saved(nil, problem: nil)`.
        case delete(Int64)
        /// Something the rider should hear.
        case tell(String)
        /// A line for the status until the next (nil clears it), not announced.
        case show(String?)
        /// A ride was saved and the recorder waits for the next one (`--auto`, `--wait`).
        case rideSaved(WorkoutSummary)
        /// The status changed.
        case publishStatus
        /// The recorder is done (after a stop, or the one ride of a recorder that does not wait).
        case done
    }

    enum Phase: Equatable {
        /// No ride: waiting for a start, or (`--auto`, armed) for pedalling.
        case waiting
        /// A ride's row is being opened; the events meanwhile wait to be recorded into it.
        case opening(Opening)
        case riding
        /// Ended by the rider, and kept open until `until` (journal time) so that the End can be undone: the ride
        /// goes on as the same ride then. Saved once the time has passed, or at once on `end --now`.
        case ending(until: Int64)
        /// Ended or cancelled, being written.
        case saving
        /// Stopped for good.
        case over
    }

    struct Opening: Equatable {
        var request: StartRequest
        var startMicroseconds: Int64
        /// Recorded into the ride once it is open: the notifications it opens with, then what came meanwhile.
        var pending: [RideEvent]
        var byPedalling: Bool
        /// The recorder stopped while the row was being opened: it is deleted once it exists.
        var abandoned = false
    }

    let rules: Rules
    private let configuration: WorkoutBuilder.Configuration
    private(set) var phase = Phase.waiting
    /// The ride being recorded (kept while it is saved, for its final status); nil while waiting.
    private(set) var ride: LiveRide?
    /// A Start with `when=pedalling` waiting for the first pedal stroke.
    private(set) var armed: StartRequest?
    /// `--auto` while waiting for a ride, or a Start armed for the first pedal stroke.
    private var pedallingWatch: PedallingWatch?
    /// The ended ride's last batch was taken (`seal`): nothing more goes into it.
    private var sealed = false
    /// Pedalling found while the sealed ride was being saved: the events the next ride opens with, once it can.
    private var nextRide: [RideEvent]?
    /// SIGINT, SIGTERM or a lost bus: no ride follows this one.
    private(set) var stopRequested = false
    /// Why the ride that ended could not be saved as it should: thrown by the recorder once it is over.
    private(set) var problem: LiveRecordingError?
    /// The journal's times never go backwards (the ride clock cannot, and this makes it a rule).
    private(set) var lastEventMicroseconds: Int64 = 0
    /// The Start of the ride recorded now asked for the sensor hub (`hub=true`).
    private var rideAskedForHub = false

    init(rules: Rules) {
        self.rules = rules
        configuration = rules.configuration
    }

    /// The workout being recorded, 0 while none is.
    var workoutId: Int64 { ride?.workoutId ?? 0 }
    var isRiding: Bool {
        switch phase {
        case .riding, .saving, .ending: true
        case .waiting, .opening, .over: false
        }
    }
    var isOver: Bool { phase == .over }

    /// Whether the Start of the ride being opened, recorded (until it is saved) or armed asked for the sensor hub.
    /// A ride that began by pedalling (`--auto`) did not.
    var hubAsked: Bool {
        switch phase {
        case .opening(let opening): opening.request.hub
        case .riding, .ending, .saving: rideAskedForHub
        case .waiting, .over: armed?.hub ?? false
        }
    }

    /// A time for the journal from the clock's reading.
    mutating func stamp(_ clockMicroseconds: Int64) -> Int64 {
        lastEventMicroseconds = max(clockMicroseconds, lastEventMicroseconds)
        return lastEventMicroseconds
    }

    // MARK: Starting

    /// The recorder began: a plain `record` opens its one ride at once; one that waits watches for pedalling
    /// (`--auto`) or a Start.
    mutating func begin(at time: Int64, descriptions: [RideEvent]) -> [Action] {
        // A stop can come while the adapter is still being found (the control is on the bus by then): it stands.
        guard !stopRequested else { return [] }
        guard rules.waits else { return open(StartRequest(plan: rules.plan), at: time, byPedalling: false) }
        startWaiting(at: time, descriptions: descriptions)
        return []
    }

    /// Why a Start would be refused now, or nil. `anySensorConnected` matters to a start now, not to an armed one;
    /// `connecting` names the sensors still being connected, which a refusal names rather than asking to wake them.
    func startRefusal(
        _ request: StartRequest, at time: Int64, anySensorConnected: Bool, sensorStates: String,
        connecting: [String] = []
    ) -> LiveRecorder.StartRefusal? {
        guard phase != .over, rules.waits, !stopRequested else {
            return .refused(
                phase != .over && !stopRequested
                    ? "this recorder records one ride and takes no start: run `cyclelog record --wait` to start rides on request"
                    : "the recorder is stopping")
        }
        switch phase {
        case .riding, .saving:
            let elapsed = RecordedTotals.seconds(figures(at: time).elapsedSeconds)
            return .refused("workout \(workoutId) is being recorded (\(elapsed) in): end it first with `cyclelog end`")
        case .ending(let until):
            return .refused(
                "workout \(workoutId) has ended and is saved in \(Self.seconds(until - time)) s: "
                    + "`cyclelog end --now` saves it now")
        case .opening:
            return .refused("a workout is starting: try again in a moment")
        case .waiting, .over:
            break
        }
        guard request.when == .pedalling || anySensorConnected else {
            if !connecting.isEmpty {
                return .noSensors(
                    "no sensor is connected yet: \(connecting.joined(separator: ", ")) "
                        + "\(connecting.count == 1 ? "is" : "are") still connecting (waited "
                        + "\(Int(LiveRecorder.connectingGrace.seconds)) s); try again in a moment, or start with "
                        + "`--when pedalling` to begin at the first pedal stroke")
            }
            return .noSensors(
                "no sensor is connected (\(sensorStates)): wake them (turn the cranks, wet the strap), or add them with "
                    + "`cyclelog sensors add ADDRESS` (addresses from `cyclelog scan`)")
        }
        return nil
    }

    /// A Start that `startRefusal` took: arms it for the first pedal stroke, or opens the ride now.
    mutating func start(_ request: StartRequest, at time: Int64, descriptions: [RideEvent]) -> [Action] {
        guard request.when == .pedalling else { return open(request, at: time, byPedalling: false) }
        armed = request
        if pedallingWatch == nil { watchAfresh(at: time, descriptions: descriptions) }
        return [.tell("armed: the ride starts at the first pedal stroke"), .publishStatus]
    }

    private mutating func open(_ request: StartRequest, at time: Int64, byPedalling: Bool, pending: [RideEvent] = [])
        -> [Action]
    {
        phase = .opening(
            Opening(request: request, startMicroseconds: time, pending: pending, byPedalling: byPedalling))
        return [.open(request, startMicroseconds: time)]
    }

    /// The ride's row is open as `workoutId` under `syncIdentifier`: the journal opens with the start, the options
    /// that change the result and `descriptions` (each connected sensor's connection, wheel and reads, as they
    /// were when the ride was opened), then what came meanwhile.
    mutating func opened(workoutId: Int64, syncIdentifier: String, descriptions: [RideEvent]) -> [Action] {
        guard case .opening(let opening) = phase else { return [.delete(workoutId)] }
        guard !opening.abandoned else {
            phase = .over
            return [.delete(workoutId), .publishStatus, .done]
        }
        let start = opening.startMicroseconds
        ride = LiveRide(
            workoutId: workoutId, configuration: configuration,
            idleEnding: rules.auto.map {
                IdleEnding(endAfterSeconds: $0.endAfterSeconds, rideStartMicroseconds: start)
            }, endAtGoal: opening.request.endAtGoal)
        phase = .riding
        rideAskedForHub = opening.request.hub
        armed = nil
        pedallingWatch = nil
        var plan = opening.request.plan
        plan.syncIdentifier = syncIdentifier
        var actions = record(RideEvent(timeMicroseconds: start, .control(.start(plan))))
        // The options that change the result, so that the journal alone reproduces the ride.
        if let millimetres = rules.wheelCircumferenceMillimetres {
            actions += record(
                RideEvent(timeMicroseconds: start, .setting(.defaultWheelCircumference(millimetres: millimetres))))
        }
        if let autoPause = rules.autoPause {
            actions += record(RideEvent(timeMicroseconds: start, .setting(.autoPause(autoPause))))
        }
        for event in descriptions { actions += record(RideEvent(timeMicroseconds: start, event.kind)) }
        for event in opening.pending { actions += record(event) }
        if opening.byPedalling {
            actions.append(.show(nil))
            actions.append(.tell("pedalling: recording workout \(workoutId)"))
        } else if rules.waits {
            actions.append(.tell("recording workout \(workoutId)"))
        }
        return actions + [.publishStatus]
    }

    /// The ride's row could not be opened: a ride started by pedalling is tried again at the next pedal stroke;
    /// a Start is refused (the caller says why).
    mutating func openFailed(_ reason: String, at time: Int64, descriptions: [RideEvent]) -> [Action] {
        guard case .opening(let opening) = phase else { return [] }
        guard !opening.abandoned else {
            phase = .over
            return [.publishStatus, .done]
        }
        phase = .waiting
        var actions: [Action] = []
        if opening.byPedalling {
            actions.append(.show("a ride started but cannot be stored (\(reason)); trying again"))
            watchAfresh(at: time, descriptions: descriptions)
        } else if rules.auto != nil || armed != nil {
            watchAfresh(at: time, descriptions: descriptions)
        }
        return actions + [.publishStatus]
    }

    // MARK: Events

    /// One event for the ride (a notification, a link change, a value read): into the ride's journal, into the
    /// pedalling watch while waiting, or kept while the ride's row is being opened.
    /// `name` gives the name the rider knows a sensor's address by, for the problems it raises.
    mutating func record(
        _ event: RideEvent, descriptions: @autoclosure () -> [RideEvent] = [], name: (String) -> String = { $0 }
    ) -> [Action] {
        switch phase {
        case .opening(var opening):
            opening.pending.append(event)
            phase = .opening(opening)
            return []
        case .waiting:
            guard let opening = watchForPedalling(event, descriptions: descriptions) else { return [] }
            return open(
                armed ?? StartRequest(plan: rules.plan),
                at: opening.first?.timeMicroseconds ?? event.timeMicroseconds, byPedalling: true, pending: opening)
        case .saving where sealed:
            if nextRide != nil {
                nextRide?.append(event)
            } else {
                nextRide = watchForPedalling(event, descriptions: descriptions)
            }
            return []
        case .riding, .saving, .ending:
            return add(event, name: name)
        case .over:
            return []
        }
    }

    private mutating func add(_ event: RideEvent, name: (String) -> String = { $0 }) -> [Action] {
        guard let problems = ride?.add(event) else { return [] }
        var actions: [Action] = []
        if case .control(let control) = event.kind, let session = ride?.session {
            actions.append(
                .applied(
                    LiveRecorder.AppliedControl(
                        workoutId: workoutId, timeMicroseconds: event.timeMicroseconds, control: control,
                        controlSequence: controlSequence(session))))
        }
        if let problem = problems.last {
            // Reported as a replay reports them; the journal keeps the bytes for a later look (`cyclelog replay`).
            let problemCount = ride?.problemCount ?? 0
            actions.append(
                .show(
                    (event.sensor.map { name($0) + ": " } ?? "") + problem.message
                        + (problemCount > 1
                            ? " (\(problemCount) problems in this ride; its journal keeps every byte)" : "")))
        }
        return actions
    }

    /// The event into the pedalling watch, if one watches: the notifications a ride opens with once it shows
    /// pedalling.
    private mutating func watchForPedalling(_ event: RideEvent, descriptions: () -> [RideEvent]) -> [RideEvent]? {
        guard var watch = pedallingWatch else { return nil }
        pedallingWatch = nil  // so that adding to the copy does not copy its storage
        let opening = watch.add(event)
        pedallingWatch = watch
        guard opening != nil else {
            if watch.isDueForRestart { watchAfresh(at: event.timeMicroseconds, descriptions: descriptions()) }
            return nil
        }
        pedallingWatch = nil
        return opening
    }

    // MARK: Controls

    /// Why a control would be refused now (pausing a paused ride, anything after the end), or nil.
    func refusal(of control: WorkoutControl) -> String? {
        switch phase {
        case .ending(let until):
            // A second End saves the ride now; the rest waits for the End to be undone.
            return control == .end
                ? nil
                : "workout \(workoutId) has ended and is saved in \(Self.seconds(until - lastEventMicroseconds)) s: "
                    + "`cyclelog undo` takes the End back"
        case .riding, .saving:
            guard var session = ride?.session else { return "no workout is being recorded" }
            return session.apply(control, at: max(lastEventMicroseconds, 1))
        case .opening:
            return "the workout is starting: try again in a moment"
        case .over:
            return "no workout is being recorded"
        case .waiting:
            guard rules.waits else { return "no workout is being recorded" }
            if armed != nil {
                return control == .cancel
                    ? nil
                    : "no workout is being recorded yet: it starts at the first pedal stroke (`cyclelog cancel` disarms it)"
            }
            return rules.auto != nil
                ? "no workout is being recorded: waiting for the rider to pedal"
                : "no workout is being recorded: waiting for a start (`cyclelog start`)"
        }
    }

    /// Whole seconds, rounded up, of a time to come.
    static func seconds(_ microseconds: Int64) -> Int64 { max(0, (microseconds + 999_999) / 1_000_000) }

    /// Pause, resume, lap, marker, end or cancel at `time`: the actions, or why it was refused. An End that
    /// `endsAtOnce` is false for (the rider's, not `end --now`) keeps the ride open for the undo window.
    mutating func control(_ control: WorkoutControl, at time: Int64, endsAtOnce: Bool = true) -> Result<
        [Action], Refused
    > {
        if let refusal = refusal(of: control) { return .failure(Refused(reason: refusal)) }
        if case .ending = phase {
            phase = .saving
            ride?.endIsFinal()
            return .success([.save])
        }
        if phase == .waiting {
            // Only an armed start takes a control while waiting: a cancel disarms it.
            armed = nil
            if rules.auto == nil { pedallingWatch = nil }
            return .success([.tell("the armed start was cancelled"), .publishStatus])
        }
        let riding = phase == .riding
        var actions = record(RideEvent(timeMicroseconds: time, .control(control)))
        switch control {
        case .end where riding && !endsAtOnce:
            let until = time + UndoLedger.windowMicroseconds
            phase = .ending(until: until)
            ride?.endCanBeUndone()
            actions += [
                .tell(
                    "workout \(workoutId) ended: it is saved in \(Self.seconds(until - time)) s "
                        + "(`cyclelog undo` goes on with it, `cyclelog end --now` saves it now)"),
                .publishStatus,
            ]
        case .end where riding:
            phase = .saving
            actions.append(.save)
        case .cancel where riding:
            phase = .saving
            actions.append(.delete(workoutId))
        default:
            actions.append(.publishStatus)
        }
        return .success(actions)
    }

    /// An undo (its journal event): into the ride, which is built again without the action. The End of a ride
    /// kept open for its window is taken back too: the ride goes on, with what came since the End.
    mutating func undo(_ event: RideEvent) -> [Action] {
        guard case .control(.undo(let undone)) = event.kind else { return [] }
        if undone.verb == "end", case .ending = phase {
            phase = .riding
            ride?.endUndone()
        }
        return record(event) + [.publishStatus]
    }

    /// Whether the ride is kept open after its End, for the End to be undone.
    var isEnding: Bool {
        if case .ending = phase { true } else { false }
    }

    struct Refused: Error, Equatable {
        var reason: String
    }

    /// SIGINT or SIGTERM: ends and saves a ride in progress, and waits for no other.
    mutating func stop(at time: Int64) -> [Action] {
        stopRequested = true
        switch phase {
        case .riding, .ending:
            return (try? control(.end, at: time).get()) ?? []
        case .opening(var opening):
            opening.abandoned = true
            phase = .opening(opening)
            return []
        case .waiting:
            phase = .over
            return [.publishStatus, .done]
        case .saving, .over:
            return []
        }
    }

    /// The system bus went away: the ride in progress is saved, and the recorder ends with the reason.
    mutating func connectionLost(at time: Int64) -> [Action] {
        guard phase != .over else { return [] }
        guard isRiding, phase != .saving else {
            problem = LiveRecordingError(.bluetooth, "the connection to the system bus was lost")
            return stop(at: time)
        }
        problem = LiveRecordingError(.bluetooth, "the connection to the system bus was lost; the ride was saved")
        return [.show("the connection to the system bus was lost: saving the ride")] + stop(at: time)
    }

    /// What ends a ride on its own, checked at every flush: `--auto`'s time without pedalling, a Start's goal (its
    /// progress worked out only for a ride that ends at it).
    mutating func dueEndings(at time: Int64) -> [Action] {
        if case .ending(let until) = phase, time >= until {
            return (try? control(.end, at: time).get()) ?? []
        }
        guard phase == .riding, let ride else { return [] }
        var notice: String?
        if let auto = rules.auto, ride.idleEnding?.isDue(at: time) == true {
            notice = "no pedalling for \(Int(auto.endAfterSeconds)) s: saving workout \(workoutId)"
        } else if ride.endAtGoal, let progress = figures(at: time).goalProgress, progress >= 1 {
            notice = "goal reached: saving workout \(workoutId)"
        }
        guard let notice else { return [] }
        return [.tell(notice)] + ((try? control(.end, at: time).get()) ?? [])
    }

    /// A sensor's battery is low, at a ride's start or when it connects during one: said once per ride.
    mutating func batteries(_ sensors: [(address: String, name: String, percent: Int)]) -> [Action] {
        guard isRiding else { return [] }
        var actions: [Action] = []
        for sensor in sensors where sensor.percent <= rules.lowBatteryPercent {
            guard ride?.warnedLowBattery.contains(sensor.address) == false else { continue }
            ride?.warnedLowBattery.insert(sensor.address)
            let warning = "\(sensor.name)'s battery is at \(sensor.percent) %: charge or replace it soon"
            actions += [.show(warning), .tell(warning)]
        }
        return actions
    }

    // MARK: Writing and saving

    /// The events and the completed seconds since the last call, for the store.
    mutating func takeBatch() -> WorkoutWriter.Batch? {
        guard isRiding, !sealed, var ride else { return nil }
        self.ride = nil  // so that changing the copy does not copy its storage
        defer { self.ride = ride }
        return ride.takeBatch()
    }

    /// The ended ride's last batch and the ride as it stands, with its digests (nil when no measurement came),
    /// taken together: nothing comes into it after them. `--auto` watches for the next ride's pedalling from here,
    /// while this one is saved.
    mutating func seal(at time: Int64, descriptions: [RideEvent]) -> (WorkoutWriter.Batch?, WorkoutWriter.Finished?) {
        guard phase == .saving, !sealed else { return (nil, nil) }
        let batch = takeBatch()
        let finished = ride?.finishWorkout()
        sealed = true
        if rules.auto != nil && !stopRequested { watchAfresh(at: time, descriptions: descriptions) }
        return (batch, finished)
    }

    /// The ended ride was saved (`summary`), found empty (nil) or cancelled, or could not be saved (`problem`):
    /// back to waiting, or over.
    mutating func saved(
        _ summary: WorkoutSummary?, problem: LiveRecordingError?, at time: Int64, descriptions: [RideEvent]
    ) -> [Action] {
        guard phase == .saving else { return [] }
        sealed = false
        if rules.waits && !stopRequested {
            // The service goes on: wait for the next ride with the sensors still connected.
            var actions: [Action] = problem.map { [.tell($0.description)] } ?? []
            startWaiting(at: time, descriptions: descriptions)
            if let summary { actions.append(.rideSaved(summary)) }
            if let next = nextRide {
                nextRide = nil
                actions += open(
                    StartRequest(plan: rules.plan), at: next.first?.timeMicroseconds ?? time, byPedalling: true,
                    pending: next)
            }
            actions.append(.publishStatus)
            return actions
        }
        nextRide = nil
        if let problem { self.problem = problem }
        phase = .over
        return [.publishStatus, .done]
    }

    private mutating func startWaiting(at time: Int64, descriptions: [RideEvent]) {
        phase = .waiting
        ride = nil
        armed = nil
        // `--auto` watches for pedalling all the time (already since the saved ride was sealed, so that the next
        // ride's first strokes are in it); `--wait` only for an armed Start.
        if rules.auto == nil {
            pedallingWatch = nil
        } else if pedallingWatch == nil && nextRide == nil {
            watchAfresh(at: time, descriptions: descriptions)
        }
    }

    private mutating func watchAfresh(at time: Int64, descriptions: [RideEvent]) {
        pedallingWatch = PedallingWatch(
            configuration: configuration, descriptions: descriptions, at: time,
            lookbackSeconds: rules.auto?.lookbackSeconds ?? 3)
    }

    // MARK: Status

    /// The ride's figures at `time`, unrounded: what its rules measure (a goal, the workout's moving time); the
    /// status publishes them rounded.
    struct Figures {
        var state: RecorderState
        var elapsedSeconds: Double
        var movingSeconds: Double
        var lapElapsedSeconds: Double
        var distanceMeters: Double
        var workJoules: Double
        /// Mean of the last 3 completed seconds.
        var powerWatts: Double?
        var cadenceRPM: Double?
        var speedMetersPerSecond: Double?
        var heartRateBPM: Double?
        /// 0…1 of the goal, nil for an open ride.
        var goalProgress: Double?
        /// A sensor streaming without revolutions shows as coasting.
        var coasting: Bool
        /// Whether the ride is shown, or the waiting recorder's own state (a recorder that waits between rides).
        var showsRide: Bool
    }

    func figures(at time: Int64) -> Figures {
        let session = ride?.session ?? Session()
        let recentSamples = ride?.recentSamples ?? []
        let distanceMeters = ride?.distanceMeters ?? 0
        let workJoules = ride?.workJoules ?? 0
        let time = max(lastEventMicroseconds, time)
        let start = session.startMicroseconds ?? time
        let end = session.endMicroseconds ?? time
        let elapsed = Double(max(0, end - start)) / 1e6
        let moving = elapsed - Double(session.pausedMicroseconds(from: start, to: end)) / 1e6
        func mean(_ values: [Double?]) -> Double? {
            let present = values.compactMap { $0 }
            return present.isEmpty ? nil : present.reduce(0, +) / Double(present.count)
        }
        var progress: Double?
        switch session.plan.goal {
        case .timeSeconds(let seconds): progress = moving / seconds
        case .distanceMeters(let meters): progress = distanceMeters / meters
        case .energyJoules(let joules): progress = workJoules / joules
        case nil: progress = nil
        }
        let showsRide = isRiding || !rules.waits
        return Figures(
            state: showsRide ? RecorderState(session.state) : armed != nil ? .armed : .waiting,
            elapsedSeconds: elapsed, movingSeconds: moving,
            lapElapsedSeconds: Double(max(0, end - (session.lapStarts.last ?? start))) / 1e6,
            distanceMeters: distanceMeters, workJoules: workJoules, powerWatts: mean(recentSamples.map(\.powerWatts)),
            cadenceRPM: recentSamples.last?.cadenceRPM, speedMetersPerSecond: recentSamples.last?.speedMetersPerSecond,
            heartRateBPM: recentSamples.last?.heartRateBPM, goalProgress: progress.map { min(1, $0) },
            coasting: recentSamples.last.map { $0.powerWatts == 0 || $0.cadenceRPM == 0 } ?? false,
            showsRide: showsRide)
    }

    /// The ride's part of the published status at `time`, with the sensors as they are.
    func status(at time: Int64, sensors: [RecorderStatus.Sensor]) -> RecorderStatus {
        let figures = figures(at: time)
        let session = ride?.session ?? Session()
        var status = RecorderStatus()
        status.state = figures.state
        status.workoutId = workoutId
        status.elapsedSeconds = figures.elapsedSeconds.rounded()
        status.movingSeconds = figures.movingSeconds.rounded()
        status.powerWatts = figures.powerWatts
        status.cadenceRPM = figures.cadenceRPM
        status.speedMetersPerSecond = figures.speedMetersPerSecond
        status.heartRateBPM = figures.heartRateBPM
        status.distanceMeters = figures.distanceMeters
        status.lap = UInt32(clamping: session.lapStarts.count + 1)
        // A recorder that waits between rides shows its own state while none is recorded, and the armed plan.
        let plan = figures.showsRide ? session.plan : armed?.plan ?? WorkoutPlan()
        status.name = plan.name ?? ""
        status.location = plan.location?.rawValue ?? ""
        status.goal = plan.goal?.description ?? ""
        status.goalProgress = figures.goalProgress
        status.lapElapsedSeconds = figures.lapElapsedSeconds.rounded()
        status.workJoules = figures.workJoules.rounded()
        status.waterMillilitres = session.events.waterMillilitres ?? 0
        status.can.start = phase == .waiting && rules.waits && !stopRequested
        status.can.pause = refusal(of: .pause) == nil
        status.can.resume = refusal(of: .resume) == nil
        status.can.lap = refusal(of: .lap) == nil
        status.can.end = refusal(of: .end) == nil
        status.can.cancel = refusal(of: .cancel) == nil
        status.controlSequence = figures.showsRide ? controlSequence(session) : 0
        status.sensors = sensors.map {
            var sensor = $0
            if sensor.state == .streaming && figures.coasting { sensor.state = .zero }
            return sensor
        }
        return status
    }

    /// The ride's id in the high half, so that an expectation from one ride never matches another; the controls
    /// applied in the low half.
    private func controlSequence(_ session: Session) -> UInt64 {
        UInt64(UInt32(truncatingIfNeeded: workoutId)) << 32 | UInt64(session.events.count)
    }
}
