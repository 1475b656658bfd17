import BlueZ
import Concurrency
import CyclingSensors
import ExitStatus
import Foundation
import RideWriting
import StructuredWorkouts
import TrainerControl
import WorkoutStore
import Workouts

/// A live ride: finds and connects the sensors through BlueZ, subscribes to their measurements, feeds every
/// event to the same `RidePipeline` a replay uses, which writes the journal and the 1 Hz samples as they arrive
/// (a small transaction every half second), and keeps the sensors connected for as long as the ride lasts.
///
/// Every rule is the `RecorderCore`'s: this actor gives it each input with the clock's readings and carries out
/// the effects it returns (`execute`), bringing back what they found. It keeps what only a running program has:
/// the task group, the queues of each sensor's link work and of the trainer's writes, the waits, the broadcasts.
/// BlueZ is reached through a `SensorBus`, the database through the `RideStore`'s own thread, and time through a
/// `RecorderClock`.
public actor LiveRecorder {
    public nonisolated let bluez: any SensorBus
    public nonisolated let options: Options
    let store: RideStore
    /// The sensors' links are told its elapsed time; the journal takes its ride time; the timers wait on it.
    let clock: any RecorderClock
    private(set) var core: RecorderCore
    /// When the recorder last went round its loop (the service's watchdog asks).
    public private(set) var lastTick = ContinuousClock.now
    private var finished: CheckedContinuation<WorkoutSummary?, Never>?
    /// Each sensor's queue of link work, served by its own child task of `run`.
    private var sensorJobs: [String: WorkQueue<SensorSupervisor.Job>] = [:]
    /// The trainer's writes, one on the bus at a time, in order; nil outside `run`.
    private var trainerWriter: TrainerWriter?
    /// Starts waiting for a sensor to connect (`waitForASensor`), a release waiting for the trainer's answer.
    private var waiters: [Wait: [CheckedContinuation<Void, Never>]] = [:]
    /// When the notifications not yet handed to the store arrived.
    private var arrivals: [ContinuousClock.Instant] = []

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
    /// What the apps on the sensor hub are told, in order (`record --bridge`).
    public nonisolated let toApps = Broadcast<HubMessage>(keepingLatest: false)

    public init(
        bluez: any SensorBus, store: WorkoutStore, options: Options, clock: any RecorderClock = SystemRecorderClock()
    ) {
        self.bluez = bluez
        self.clock = clock
        self.store = RideStore(store)
        self.options = options
        core = RecorderCore(options: options)
    }

    /// The workout being recorded, 0 while waiting.
    public var workoutId: Int64 { core.workoutId }

    /// Records until the ride is ended or cancelled (or, when it waits between rides, until it is stopped);
    /// returns the stored summary (nil when cancelled).
    public func run() async throws(LiveRecordingError) -> WorkoutSummary? {
        // However it ends, its subscribers hear that it did.
        defer {
            statusUpdates.finish()
            announcements.finish()
            live.finish()
            controlsApplied.finish()
            toApps.finish()
        }
        core.use(adapterPath: try await SensorConnection.poweredAdapter(bluez, named: options.adapter).path)
        if core.sensors.roster.isEmpty { try await findSensors() }
        await execute(core.begin(at: time()))
        if !core.controller.rules.waits, !core.isRiding, !core.isOver {
            throw LiveRecordingError(.store, core.openFailure ?? "the database did not open the ride")
        }
        let events = await bluez.events()
        let writer = TrainerWriter()
        trainerWriter = writer
        // The ride's work as child tasks: BlueZ's events, the flush timer, one task per sensor that carries out its
        // link's jobs one after the other, and the trainer's writer. All end when the recorder does.
        let summary = await withTaskGroup(of: Void.self) { group in
            group.addTask { [bluez] in
                await writer.serve(bluez) {
                    await self.trainerWriteTaken($0)
                } failed: {
                    await self.trainerWriteFailed($0, reason: $1)
                }
            }
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
            for wanted in core.sensors.roster.wanted {
                let jobs = WorkQueue<SensorSupervisor.Job>()
                sensorJobs[wanted] = jobs
                group.addTask { await jobs.serve { await self.carryOut($0, for: wanted) } }
            }
            await tick()
            let summary = await withCheckedContinuation { continuation in
                if core.isOver { continuation.resume(returning: core.summary) } else { finished = continuation }
            }
            // Never left holding a load: the Reset is on the bus before the writer ends.
            if let release = core.release(at: time()) { await execute(release) }
            group.cancelAll()
            return summary
        }
        sensorJobs = [:]
        trainerWriter = nil
        await core.sensors.release(bluez)
        if let problem = core.controller.problem { throw problem }
        return summary
    }

    private func connectionLost() async { await execute(core.connectionLost(at: time())) }

    // MARK: Commands

    /// Pause, resume, lap, marker, end or cancel, from the keyboard or D-Bus: the rider's, which they can undo
    /// for 30 s (an End keeps the ride open for as long, unless `endsAtOnce`). Returns why it was refused, or nil
    /// when it was applied.
    @discardableResult
    public func control(_ control: WorkoutControl, endsAtOnce: Bool = false) async -> String? {
        await carryOut(core.control(control, at: time(), byRider: true, endsAtOnce: endsAtOnce))
    }

    /// Takes back the rider's action `id` (nil: the latest) within its 30 s: what was undone, in words, or why
    /// not.
    public func undo(_ id: Int64?) async -> Result<String, CommandRefusal> {
        switch core.undo(id, at: time()) {
        case .success(let outcome):
            await execute(outcome.effects)
            return .success(outcome.words)
        case .failure(let refusal):
            return .failure(refusal)
        }
    }

    /// Why a control would be refused now (pausing a paused ride, anything after the end), or nil.
    public func refusal(of control: WorkoutControl) -> String? { core.refusal(of: control) }

    /// Takes what the rider asks of the trainer (`cyclelog target`, the dashboard's keys, D-Bus, the phone), or
    /// says why not: no trainer, or a mode it does not declare (never sent to it).
    public func steer(_ ask: TrainerAsk) async -> String? {
        await carryOut(core.steer(ask, at: time(), byRider: true))
    }

    /// Skip, back, extend or the intensity, from the keyboard, D-Bus or the phone; why not, or nil.
    public func player(_ control: PlayerControl) async -> String? {
        await carryOut(core.player(control, at: time(), byRider: true))
    }

    private func carryOut(_ outcome: Result<[RecorderCore.Effect], CommandRefusal>) async -> String? {
        switch outcome {
        case .success(let effects):
            await execute(effects)
            return nil
        case .failure(let refusal):
            return refusal.reason
        }
    }

    /// SIGINT or SIGTERM: ends and saves a ride in progress, and stops waiting for the next one.
    public func stop() async { await execute(core.stop(at: time())) }

    // MARK: Apps on the sensor hub

    /// App `app` (its address) wrote `bytes` to the hub's Fitness Machine control point: passed to the trainer
    /// through the rider's own trainer control, and answered on `toApps`.
    public func appWrote(_ bytes: [UInt8], by app: String) async {
        await execute(core.appWrote(bytes, by: app, at: time()))
    }

    /// App `app` (its address) wrote `bytes` to the hub's SC Control Point: into the journal, carried out from the
    /// next reading on; returns the answer, for the hub the app wrote to to send it.
    public func appWroteSpeedAndCadence(_ bytes: [UInt8], by app: String) async -> [UInt8] {
        let (answer, effects) = core.appWroteSpeedAndCadence(bytes, by: app, at: time())
        await execute(effects)
        return answer
    }

    /// App `app` (its address) connected to the hub over `transport`, or gave its `name` once connected; the
    /// values the hub serves it from now (what the real trainer declared, once it has), which a hub in another
    /// process has not heard yet.
    @discardableResult
    public func appJoined(_ app: String, name: String?, transport: String) async
        -> [(characteristic: UInt16, value: [UInt8])]
    {
        await execute(core.appJoined(app, name: name, transport: transport))
        return core.trainerDeclared.map { HubMessage.trainerDeclared($0).characteristicValues } ?? []
    }

    /// App `app`'s link to the hub is gone.
    public func appLeft(_ app: String) async { await execute(core.appLeft(app, at: time())) }

    /// Starts a ride now and returns its id, or (`when=pedalling`) arms one for the first pedal stroke and
    /// returns 0. Taken while waiting (`record --wait`, `record --auto`) or armed (a Start then replaces the
    /// armed one). A start whose workout is not in the library is refused whole.
    public func start(_ request: StartRequest) async throws(StartRefusal) -> Int64 {
        let time = time()
        if let refusal = core.startRefusal(request, at: time) { throw refusal }
        if let id = request.workout,
            case .failure(let refusal) = await store.plannedWorkout(id, at: core.journalTime(time))
        {
            throw refusal
        }
        await execute(core.start(request, at: self.time()))
        return try core.started(request).get()
    }

    /// A start now, with no sensor connected, waits until one is: for up to `activatedGraceSeconds` after a launch
    /// that the start itself brought up (D-Bus activation by `cyclelog start` or a launcher's action), and for up
    /// to `connectingGrace` while a sensor is being connected; otherwise it is refused at once.
    public func waitForASensor() async {
        guard
            let until = core.sensorWait(
                at: clock.elapsed, launchGrace: .seconds(options.activatedGraceSeconds),
                connectingGrace: Self.connectingGrace)
        else { return }
        // Whichever comes first ends the wait: the end of the grace, or a sensor connecting (`execute`).
        await wait(for: .sensor) { [clock] in try? await clock.sleep(for: until - clock.elapsed) }
    }

    /// How long a start now waits for a sensor that is being connected (a trainer that was off a moment ago, a
    /// strap just put on): as an armed start waits for the first pedal stroke, not refused at once.
    public static let connectingGrace: Duration = .seconds(10)

    /// The suggested workouts, pinned first, then the most recently used; the built-in ones when the database
    /// cannot say. Read afresh (the status offers them as they were read last).
    public func presets() async -> [WorkoutPreset] {
        let presets = await store.presets()
        await execute(core.presetsRead(presets))
        return presets
    }

    /// Arrival-to-stored delays of notifications (`record --latency`, the benchmark).
    public var storeLatency: LatencyHistogram { get async { await store.latency } }

    public func status() -> LiveStatus { core.status(at: time()) }

    // MARK: Inputs

    func time() -> RecorderCore.Time {
        RecorderCore.Time(elapsed: clock.elapsed, rideMicroseconds: clock.rideMicroseconds())
    }

    private func tick() async {
        guard !core.isOver else { return }
        lastTick = ContinuousClock.now
        let devices = await bluez.devices
        await execute(core.tick(devices: devices, at: time()))
    }

    private func handle(_ event: BlueZEvent) async {
        guard case .notification(let characteristic, let value) = event else {
            await execute(core.handle(event, at: time()))
            if event == .bluetoothdReturned { await tick() }
            return
        }
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let arrival = Int64(wall.tv_sec) * 1_000_000 + Int64(wall.tv_nsec) / 1000
        guard let effects = core.notification(characteristic, value, arrivalMicroseconds: arrival, at: time())
        else { return }
        arrivals.append(ContinuousClock.now)
        await execute(effects)
    }

    /// No sensor named: the cycling sensors a scan finds are the ride's.
    private func findSensors() async throws(LiveRecordingError) {
        guard options.auto == nil else { throw SensorSupervisor.nothingToWaitFor }
        await execute([.discovery(true)])
        try? await clock.sleep(for: .seconds(options.discoverySeconds))
        try core.want(found: await bluez.devices, scanningSeconds: options.discoverySeconds)
    }

    // MARK: Carrying out the effects

    func execute(_ effects: [RecorderCore.Effect]) async {
        for effect in effects {
            switch effect {
            case .sensorJob(let job, let wanted):
                sensorJobs[wanted]?.enqueue(job)
            case .discovery(let on):
                guard let adapterPath = core.sensors.adapterPath else { continue }
                if let refused = await SensorConnection.discovery(on, bluez, adapterPath: adapterPath) {
                    core.show(refused)
                } else {
                    core.discoveryChanged(on)
                }
            case .observeSensor(let address): for observer in options.observers { observer.addSensor(address) }
            case .observeCharacteristics(let characteristics, let address):
                for observer in options.observers { observer.noteCharacteristics(characteristics, of: address) }
            case .subscribeTrainer(let wanted, let controlPoint, let status, let capabilities):
                do throws(BlueZError) {
                    try await bluez.startNotify(controlPoint)
                    if let status { try await bluez.startNotify(status) }
                } catch {
                    await execute(core.trainerNotSubscribed(error.description))
                    continue
                }
                await execute(core.trainerSubscribed(wanted, controlPoint: controlPoint, capabilities, at: time()))
            case .trainerWrite(let controlPoint, let request):
                _ = trainerWriter?.enqueue(controlPoint, request)
            case .awaitRelease(let deferred):
                await awaitRelease()
                if let deferred { await execute(core.resume(deferred, at: time())) }
            case .released: wake(.trainerAnswer)
            case .open(let request, let start, let descriptions):
                let answer = await store.open(request, startMicroseconds: start, at: core.journalTime(time()))
                await execute(core.opened(request, answer, descriptions: descriptions, at: time()))
            case .flush(let batch): await write(batch)
            case .save: await save()
            case .delete(let workoutId): await store.delete(workoutId)
            case .sayTestResult(let workoutId):
                if let words = await store.testResult(workoutId) { announcements.publish(.notice(words)) }
            case .readPresets: await execute(core.presetsRead(await store.presets()))
            case .live(let reading): live.publish(reading)
            case .applied(let control): controlsApplied.publish(control)
            case .announce(let announcement): announcements.publish(announcement)
            case .toApps(let message): toApps.publish(message)
            case .publishStatus: statusUpdates.publish(status())
            case .done:
                wake(.sensor)
                finished?.resume(returning: core.summary)
                finished = nil
            }
        }
        // Asked only while a start waits: this runs for every notification.
        if waiters[.sensor] != nil, core.sensors.anyConnected { wake(.sensor) }
    }

    /// One small transaction: the new journal events and every whole minute of samples completed, written on the
    /// store's thread while this actor goes on taking notifications.
    private func write(_ batch: WorkoutWriter.Batch?) async {
        guard let batch else {
            arrivals.removeAll(keepingCapacity: true)
            return
        }
        for observer in options.observers { observer.note(batch.events) }
        let batchArrivals = arrivals
        arrivals.removeAll(keepingCapacity: true)
        do throws(StoreError) {
            try await store.write(batch, arrivals: batchArrivals)
        } catch {
            core.writeFailed(error)
        }
    }

    /// The ride ended: what is left is written and the ride saved, or found empty, or kept as a journal to recover.
    private func save() async {
        let (batch, finished) = core.seal(at: time())
        await write(batch)
        let outcome = await store.finish(finished, sensorsUsed: core.sensorsUsed, at: core.journalTime(time()))
        if case .success(let summary?) = outcome {
            for observer in options.observers {
                if let trouble = observer.announce(summary) { announcements.publish(.notice(trouble)) }
            }
        }
        await execute(core.saved(outcome, at: time()))
    }

    // MARK: The sensors' queues

    private func carryOut(_ job: SensorSupervisor.Job, for wanted: String) async {
        // Each step of an attempt is told to the core, which looks the sensor up again by what the rider named it
        // (its link ignores the report of an attempt it no longer waits for).
        let sensor = core.sensors.roster[wanted]
        let device = sensor.flatMap { sensor in sensor.devicePath.map { (path: $0, label: sensor.label) } }
        await SensorConnection.carryOut(job, bluez, device: device) { attempt, step in
            let (effects, goOn) = core.connection(wanted, attempt: attempt, step, at: time())
            await execute(effects)
            return goOn
        }
    }

    // MARK: Waits

    /// What a wait of the recorder waits for.
    private enum Wait { case sensor, trainerAnswer }

    /// Waits until `wait` is woken (`wake`) or `sleep` ends, whichever comes first.
    private func wait(for wait: Wait, atMost sleep: @escaping @Sendable () async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await sleep()
                // Cancelled: woken already, and a later wait of the same kind is not this one's to end.
                if !Task.isCancelled { await self.wake(wait) }
            }
            await withCheckedContinuation { waiters[wait, default: []].append($0) }
            group.cancelAll()
        }
    }

    private func wake(_ wait: Wait) {
        for waiter in waiters.removeValue(forKey: wait) ?? [] { waiter.resume() }
    }

    /// Whether every sensor job and trainer write handed to a queue has been carried out.
    var isIdle: Bool { sensorJobs.values.allSatisfy(\.isIdle) && trainerWriter?.queue.isIdle != false }

    // MARK: The trainer

    private func trainerWriteTaken(_ request: FitnessMachineRequest) {
        core.trainerWriteTaken(request, at: time())
    }

    private func trainerWriteFailed(_ request: FitnessMachineRequest, reason: String) async {
        await execute(core.trainerWriteFailed(request, reason: reason, at: time()))
    }

    /// Waits until the writes before it (the Reset) are on the bus, then for the trainer's answer (at most
    /// `releaseAnswerWait`), so that the ride's journal has both.
    private func awaitRelease() async {
        guard let trainerWriter else { return }
        await trainerWriter.queue.drained()
        // Real time, not the recorder's clock: this bounds a wait while the recorder stops.
        await wait(for: .trainerAnswer) { try? await Task.sleep(for: Self.releaseAnswerWait) }
    }

    /// How long the recorder waits for the trainer's answer to its Reset (a trainer answers within a fraction of a
    /// second; one that does not is let go all the same).
    static let releaseAnswerWait = Duration.seconds(1)
}
