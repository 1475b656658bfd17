import BlueZ
import Concurrency
import ExitStatus
import Foundation
import RideWriting
import TrainerControl
import WorkoutStore
import Workouts

/// A live ride: finds and connects the sensors through BlueZ, subscribes to their measurements, feeds every
/// event to the same `RidePipeline` a replay uses, which writes the journal and the 1 Hz samples as they arrive
/// (a small transaction every half second), and keeps the sensors connected for as long as the ride lasts.
///
/// The rules live in two pure parts this actor routes its inputs to and whose actions it carries out: the
/// `RideController` (starts, controls, rides that start and end on their own, the status) and the
/// `SensorSupervisor` (the roster, each sensor's link with its reconnect watchdog, the connect sequence). Link
/// changes go into the journal, so a replay of the journal has the same gaps. BlueZ is reached through a
/// `SensorBus`, the database through the `RideStore`'s own thread, and time through a `RecorderClock`.
public actor LiveRecorder {
    public nonisolated let bluez: any SensorBus
    public nonisolated let options: Options
    let store: RideStore
    /// The sensors' links are told its elapsed time; the journal takes its ride time; the timers wait on it.
    let clock: any RecorderClock
    var controller: RideController
    var sensors: SensorSupervisor
    /// When the recorder last went round its loop (the service's watchdog asks).
    public private(set) var lastTick = ContinuousClock.now
    private var finished: CheckedContinuation<WorkoutSummary?, Never>?
    /// The ride saved last, returned by `run` once the recorder is over (nil after one that waits again).
    private var summary: WorkoutSummary?
    /// Why the last ride's row could not be opened.
    private var openFailure: String?
    /// Each sensor's queue of link work, served by its own child task of `run`.
    private var sensorJobs: [String: AsyncStream<SensorSupervisor.Job>.Continuation] = [:]
    /// Sensor jobs handed to their queues and not yet carried out, and trainer writes handed to its writer and not
    /// yet on the bus (a test waits for none before it moves its clock on).
    var sensorJobsInFlight = 0
    var trainerWritesInFlight = 0
    /// Starts that wait for a sensor to connect (`waitForASensor`).
    var sensorWaiters: [CheckedContinuation<Void, Never>] = []
    private var readings: LiveReadings
    /// When the notifications not yet handed to the store arrived.
    private var arrivals: [ContinuousClock.Instant] = []
    /// The smart trainer's control (`TrainerWork.swift`), its link once one connected, and its writer's queue.
    var trainerControl: TrainerControl
    var trainerLink: TrainerLink?
    var trainerWrites: AsyncStream<TrainerWrite>.Continuation?
    /// A release waiting for the trainer's answer to its Reset.
    var releaseWaiter: CheckedContinuation<Void, Never>?
    /// The structured workout of the ride (`WorkoutWork.swift`).
    var guide: WorkoutGuide?

    /// Every notification's readings, as they arrive (nothing is kept for a slow subscriber to catch up on
    /// beyond its stream's buffer).
    public nonisolated let live = Broadcast<LiveReading>(keepingLatest: false)
    /// Every control applied, in order.
    public nonisolated let controlsApplied = Broadcast<AppliedControl>(keepingLatest: false)
    /// The current status after every flush and control (dashboard, D-Bus properties, a mirror): each
    /// subscriber starts from the current status and sees the newest one.
    public nonisolated let statusUpdates = Broadcast<LiveStatus>(keepingLatest: true)
    /// What a rider should hear about, in order.
    public nonisolated let announcements = Broadcast<Announcement>(keepingLatest: false)

    public init(
        bluez: any SensorBus, store: WorkoutStore, options: Options, clock: any RecorderClock = SystemRecorderClock()
    ) {
        self.bluez = bluez
        self.clock = clock
        self.store = RideStore(store)
        self.options = options
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
    }

    /// The workout being recorded, 0 while waiting.
    public var workoutId: Int64 { controller.workoutId }

    /// Records until the ride is ended or cancelled (or, when it waits between rides, until it is stopped);
    /// returns the stored summary (nil when cancelled).
    public func run() async throws(LiveRecordingError) -> WorkoutSummary? {
        // However it ends, its subscribers hear that it did.
        defer {
            statusUpdates.finish()
            announcements.finish()
            live.finish()
            controlsApplied.finish()
        }
        let adapter = try Self.chooseAdapter(await bluez.adapters, named: options.adapter)
        sensors.adapterPath = adapter.path
        if !adapter.powered {
            do { try await bluez.powerOn(adapter.path) } catch {
                throw LiveRecordingError(.bluetooth, error.description)
            }
        }
        if sensors.roster.isEmpty { try await findSensors() }
        await perform(controller.begin(at: now(), descriptions: sensors.roster.allDescriptions))
        if !controller.rules.waits, !controller.isRiding, !controller.isOver {
            throw LiveRecordingError(.store, openFailure ?? "the database did not open the ride")
        }
        let events = await bluez.events()
        let (writes, writesContinuation) = AsyncStream<TrainerWrite>.makeStream()
        trainerWrites = writesContinuation
        // The ride's work as child tasks: BlueZ's events, the flush timer, one task per sensor that carries out its
        // link's jobs one after the other, and the trainer's writer. All end when the recorder does.
        let summary = await withTaskGroup(of: Void.self) { group in
            group.addTask { await Self.writeToTrainer(self, writes) }
            group.addTask {
                for await event in events { await self.handle(event) }
                await self.connectionLost()
            }
            group.addTask { [options, clock] in
                while !Task.isCancelled {
                    try? await clock.sleep(for: .seconds(options.flushIntervalSeconds))
                    await self.tick()
                }
            }
            for wanted in sensors.roster.wanted {
                let (jobs, continuation) = AsyncStream<SensorSupervisor.Job>.makeStream()
                sensorJobs[wanted] = continuation
                group.addTask {
                    for await job in jobs { await self.perform(job, for: wanted) }
                }
            }
            await tick()
            let summary = await withCheckedContinuation { continuation in
                if controller.isOver { continuation.resume(returning: self.summary) } else { finished = continuation }
            }
            // Never left holding a load: the Reset is on the bus before the writer ends.
            await releaseTrainer()
            group.cancelAll()
            return summary
        }
        sensorJobs = [:]
        trainerWrites = nil
        await sensors.release(bluez)
        if let problem = controller.problem { throw problem }
        return summary
    }

    private func connectionLost() async { await perform(controller.connectionLost(at: now())) }

    /// Pause, resume, lap, marker, end or cancel, from the keyboard, a signal or D-Bus. Returns why it was
    /// refused, or nil when it was applied.
    @discardableResult
    public func control(_ control: WorkoutControl) async -> String? {
        // The trainer is let go while the ride still takes events, so that its journal ends with the Reset.
        if control == .end || control == .cancel, controller.refusal(of: control) == nil { await releaseTrainer() }
        switch controller.control(control, at: now()) {
        case .success(let actions):
            await perform(actions)
            return nil
        case .failure(let refused):
            return refused.reason
        }
    }

    /// Why a control would be refused now (pausing a paused ride, anything after the end), or nil.
    public func refusal(of control: WorkoutControl) -> String? { controller.refusal(of: control) }

    /// SIGINT or SIGTERM: ends and saves a ride in progress, and stops waiting for the next one.
    public func stop() async {
        await releaseTrainer()
        await perform(controller.stop(at: now()))
    }

    /// Starts a ride now and returns its id, or (`when=pedalling`) arms one for the first pedal stroke and
    /// returns 0. Taken while waiting (`record --wait`, `record --auto`) or armed (a Start then replaces the
    /// armed one).
    public func start(_ request: StartRequest) async throws(StartRefusal) -> Int64 {
        let time = now()
        if let refusal = controller.startRefusal(
            request, at: time, anySensorConnected: sensors.anyConnected, sensorStates: sensors.linkStates,
            connecting: sensors.connecting)
        {
            throw refusal
        }
        // A start that asks for a trainer mode the trainer cannot take (or with no trainer) is refused whole, as is
        // one whose workout is not in the library.
        let trainerAsk = request.trainerControl.map { TrainerAsk.mode(TrainerMode(start: $0)) }
        if let trainerAsk, let refusal = trainerControl.refusal(of: trainerAsk) { throw .refused(refusal) }
        if let id = request.workout { _ = try await chooseWorkout(id) }
        await perform(controller.start(request, at: time, descriptions: sensors.roster.allDescriptions))
        if let source = request.powerFrom { trainerControl.steer(byMeter: source == .meter) }
        if let trainerAsk, case .success(let actions) = trainerControl.ask(trainerAsk, at: clock.elapsed) {
            await perform(actions)
        }
        guard request.when == .now else { return 0 }
        guard controller.isRiding else {
            throw .refused("the ride cannot be stored: \(openFailure ?? "the database did not open it")")
        }
        return controller.workoutId
    }

    /// The suggested workouts, pinned first, then the most recently used; the built-in ones when the database
    /// cannot say.
    public func presets() async -> [WorkoutPreset] { await store.presets() }

    /// Arrival-to-stored delays of notifications (`record --latency`, the benchmark).
    public var storeLatency: LatencyHistogram { get async { await store.latency } }

    public func status() -> LiveStatus {
        var status = controller.status(at: clock.rideMicroseconds(), sensors: sensors.statusSensors)
        status.trainer = trainerStatus
        status.workout = controller.isRiding ? guide?.status : nil
        // A step of the workout begins a lap, as in the stored ride: the dashboard's and the phone's lap agree.
        if controller.isRiding, let guide { status.lap += guide.stepLaps }
        return status
    }

    // MARK: Carrying out what the parts decide

    func perform(_ actions: [RideController.Action]) async {
        for action in actions {
            switch action {
            case .open(let request, let start):
                // Lower-case, as RFC 9562 writes a UUID and as every other ride and the shared store have it.
                let syncIdentifier = UUID().uuidString.lowercased()
                let descriptions = sensors.roster.openingDescriptions
                openFailure = nil
                do throws(StoreError) {
                    let workoutId = try await store.open(
                        syncIdentifier: syncIdentifier, startMicroseconds: start, preset: request.plan.preset)
                    await perform(
                        controller.opened(
                            workoutId: workoutId, syncIdentifier: syncIdentifier, descriptions: descriptions)
                    )
                    await perform(controller.batteries(sensors.batteries))
                    await journalTrainerTarget()
                    await openWorkout(request)
                } catch {
                    openFailure = error.description
                    await perform(controller.openFailed(error.description, at: now(), descriptions: descriptions))
                }
            case .applied(let control):
                controlsApplied.publish(control)
                if control.control == .lap { await guideLap() }
            case .save:
                await releaseTrainer()
                await save()
            case .delete(let workoutId):
                summary = nil
                await store.delete(workoutId)
                await perform(
                    controller.saved(nil, problem: nil, at: now(), descriptions: sensors.roster.allDescriptions))
            case .tell(let notice): announcements.publish(.notice(notice))
            case .rideSaved(let summary):
                announcements.publish(.rideSaved(summary))
                guide = nil
            case .publishStatus: statusUpdates.publish(status())
            case .done:
                wakeSensorWaiters()
                finished?.resume(returning: summary)
                finished = nil
            }
        }
    }

    func perform(_ steps: [SensorSupervisor.Step]) async {
        for step in steps {
            switch step {
            case .job(let job, let wanted):
                guard let jobs = sensorJobs[wanted], case .enqueued = jobs.yield(job) else { continue }
                sensorJobsInFlight += 1
            case .journal(let kind):
                trainerNoted(kind)
                await record(RideEvent(timeMicroseconds: now(), kind))
            case .show(let line): controller.message = line
            }
        }
        // Asked only while a start waits: this runs for every notification.
        if !sensorWaiters.isEmpty, sensors.anyConnected { wakeSensorWaiters() }
    }

    /// Once per flush: look for missing sensors, start due connection attempts, check for silence, write, and
    /// end a ride that is due to end.
    private func tick() async {
        guard !controller.isOver else { return }
        lastTick = ContinuousClock.now
        await perform(sensors.look(at: await bluez.devices, at: clock.elapsed))
        await setDiscovery(sensors.wantsDiscovery)
        await perform(trainerControl.tick(at: clock.elapsed))
        await guideTick()
        await flush()
        await perform(controller.dueEndings(at: clock.rideMicroseconds()))
        statusUpdates.publish(status())
    }

    private func handle(_ event: BlueZEvent) async {
        guard !controller.isOver else { return }
        guard case .notification(let characteristic, let value) = event else {
            await perform(sensors.handle(event, at: clock.elapsed))
            if event == .bluetoothdReturned { await tick() }
            return
        }
        guard let (sensor, uuid, steps) = sensors.notification(from: characteristic, at: clock.elapsed) else { return }
        await perform(steps)
        arrivals.append(ContinuousClock.now)
        let event = RideEvent(
            timeMicroseconds: now(), .notification(sensor: sensor, characteristic: uuid, value: value))
        // The arrival's readings first: they are the freshest thing a second screen shows.
        let reading = readings.reading(of: event, from: sensor)
        if let reading { live.publish(reading) }
        await record(event)
        await trainerHeard(sensor, uuid, value, reading)
    }

    // MARK: Journal and store

    func now() -> Int64 { controller.stamp(clock.rideMicroseconds()) }

    /// One event into the ride (or the pedalling watch); what it set off (a ride opened at the first pedal
    /// stroke, a control published) is carried out before the next event is taken.
    func record(_ event: RideEvent) async {
        sensors.describe(event)
        readings.note(event)
        let roster = sensors.roster
        await perform(controller.record(event, descriptions: roster.allDescriptions, name: roster.name(ofAddress:)))
    }

    /// One small transaction: the new journal events and every whole minute of samples completed, written on the
    /// store's thread while this actor goes on taking notifications.
    private func flush() async {
        guard let batch = controller.takeBatch() else {
            arrivals.removeAll(keepingCapacity: true)
            return
        }
        for observer in options.observers { observer.note(batch.events) }
        let batchArrivals = arrivals
        arrivals.removeAll(keepingCapacity: true)
        do throws(StoreError) {
            try await store.write(batch, arrivals: batchArrivals)
        } catch {
            // Kept and written with the next flush (a locked or briefly full database).
            controller.message =
                "cannot write to the database (\(error.description)); keeping the ride in memory and retrying"
        }
    }

    /// The ride ended: what is left is written and the ride saved, or found empty, or kept as a journal to recover.
    private func save() async {
        await flush()
        var problem: LiveRecordingError?
        do throws(StoreError) {
            summary = try await store.finish(
                controller.finishedWorkout(), sensorsUsed: sensors.roster.used, at: now())
            if let summary {
                for observer in options.observers {
                    if let trouble = observer.announce(summary) { announcements.publish(.notice(trouble)) }
                }
                // Said whether the recorder goes on to wait for the next ride or ends with this one.
                await sayTestResult(summary)
            } else {
                problem = LiveRecordingError(.nothingToSave, "no measurement arrived: nothing to save")
            }
        } catch {
            summary = nil
            problem = LiveRecordingError(
                .store,
                "the ride could not be saved (\(error.description)); its journal is stored: "
                    + "`cyclelog recover` saves it once the database is writable")
        }
        await perform(
            controller.saved(summary, problem: problem, at: now(), descriptions: sensors.roster.allDescriptions))
        if !controller.isOver { summary = nil }
    }
}
