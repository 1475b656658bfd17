import BlueZ
import CyclingSensors
import DBus
import ExitStatus
import Foundation
import Recording
import WorkoutStore
import Workouts

/// A live ride: finds and connects the sensors through BlueZ, subscribes to their measurements, feeds every
/// event to the same `RidePipeline` a replay uses, which writes the journal and the 1 Hz samples as they arrive
/// (a small transaction every half second), and keeps the sensors connected for as long as the ride lasts.
///
/// The reconnect watchdog: a sensor whose link drops is connected again with backoff; a connected sensor that
/// goes silent is re-subscribed, and if that does not help, disconnected and connected again; bluetoothd
/// leaving the bus is survived by waiting for it and starting over. Link changes go into the journal, so a
/// replay of the journal has the same gaps (silence shows from the timing of the notifications themselves).
public actor LiveRecorder {
    public struct Options: Sendable {
        /// Addresses or names; empty uses every cycling sensor found while scanning.
        public var sensors: [String] = []
        /// The adapter's name (`hci1`) or address; nil for the first one BlueZ lists.
        public var adapter: String?
        public var plan = WorkoutPlan()
        public var autoPause: AutoPause?
        /// For sensors without their own; nil leaves the builder's default. Written into the journal as its
        /// `wheel *` line, as `autoPause` is as its `auto-pause` line.
        public var wheelCircumferenceMillimetres: Int?
        /// Per-address wheel circumferences the rider set (remembered sensors).
        public var wheelCircumferences: [String: Int] = [:]
        /// How long to scan for sensors when none are named.
        public var discoverySeconds = 8.0
        public var flushIntervalSeconds = 0.5
        public var policy = ReconnectPolicy()
        /// `record --auto`: wait for pedalling, end after a time without it, wait for the next ride.
        public var auto: AutoRide?
        /// `record --wait`: connect the sensors and wait for a Start (D-Bus, `cyclelog start`); after each ride,
        /// wait for the next Start with the sensors still connected.
        public var waitForStart = false
        /// Started by the bus for a start (D-Bus activation): how long after the launch a start may wait for the
        /// sensors to connect.
        public var activatedGraceSeconds = 0.0
        /// A sensor whose battery is at or below this is warned about when a ride starts or it connects.
        public var lowBatteryPercent = LiveStatus.lowBatteryPercent
        /// `record --capture`: told each sensor's address before it is connected (its connection's traffic is
        /// kept), its handle map before it is subscribed to, and the ride's journal events as they are stored.
        public var capture: HCICapture?
        /// `record --sync-trigger`: rewritten after each saved ride, for the path unit that starts cyclelog-sync.
        public var savedRideSignal: SavedRideSignal?

        public init() {}
    }

    /// Rides that start and end on their own (`record --auto`), for a box by the trainer that nobody touches.
    public struct AutoRide: Sendable {
        /// A ride ends after this long without power or cadence above zero, whether the sensors are there or
        /// not. Shorter gaps (a dropout, a stop at the lights) are part of the ride.
        public var endAfterSeconds: Double
        /// The notifications from this long before pedalling was noticed open the ride, so its first
        /// revolutions count (a cadence needs two crank events).
        public var lookbackSeconds = 3.0

        public init(endAfterSeconds: Double = 300) { self.endAfterSeconds = endAfterSeconds }
    }

    /// The services cyclelog records from, and the characteristics it subscribes to and reads.
    public static let services: [UInt16] = CyclingService.allCases.map(\.rawValue)
    /// Whether a device offers one of `services`. BlueZ merges the discovery filters of all its clients, so a
    /// scan can show other devices too.
    public static func isCyclingSensor(_ device: BluetoothDevice) -> Bool {
        device.shortServiceUUIDs.contains(where: services.contains)
    }

    static let measurements = Set(CyclingService.allCases.map(\.measurement.rawValue))
    static let readOnConnect = Set(CyclingService.readOnConnect.map(\.rawValue))

    public let bluez: any SensorBus
    public let store: WorkoutStore
    public let options: Options
    /// A workout is being recorded (always after `run` starts, unless `record --auto` is waiting for a ride).
    private var riding = false
    /// The builder's configuration from the options (the pedalling watch decodes with it too).
    private let configuration: WorkoutBuilder.Configuration
    /// The ride being recorded (kept after it ended, for its final status); nil while `record --auto` waits.
    private var ride: LiveRide?
    /// The workout being recorded, 0 while waiting.
    public var workoutId: Int64 { ride?.workoutId ?? 0 }
    /// `--auto` while waiting for a ride, or a Start armed for the first pedal stroke.
    private var pedallingWatch: PedallingWatch?
    /// A Start with `when=pedalling` waiting for the first pedal stroke.
    private var armed: StartRequest?
    /// Rides start on request or on pedalling, and the recorder waits again after each one.
    private var waits: Bool { options.auto != nil || options.waitForStart }
    private var stopRequested = false
    /// The sensors' links are told its elapsed time; the journal takes its ride time; the timers wait on it.
    private let clock: any RecorderClock
    /// When the recorder last went round its loop (the service's watchdog asks).
    public private(set) var lastTick = ContinuousClock.now
    /// The sensors wanted, by what the rider named them (also after an `await`).
    private var roster: SensorRoster
    private var lastEventTime: Int64 = 0
    private var discovering = false
    private var adapterPath: String?
    private var message: String?
    private var finished: CheckedContinuation<WorkoutSummary?, Never>?
    private var outcome: WorkoutSummary??
    /// Why a ride that ended could not be saved as it should, thrown by `run` after the sensors are released.
    private var finishProblem: LiveRecordingError?
    /// The event loop and the flush timer, cancelled when the ride is over. Connection attempts and
    /// re-subscriptions are not kept: each is one short chain of BlueZ calls that ends on its own.
    /// Each sensor's queue of link work, served by its own child task of `run`.
    private var sensorJobs: [String: AsyncStream<SensorJob>.Continuation] = [:]

    /// Sensor jobs handed to their queues and not yet carried out (a test waits for none before it moves its
    /// clock on).
    private(set) var sensorJobsInFlight = 0

    private enum SensorJob {
        case connect(attempt: Int)
        case resubscribe([GattCharacteristic])
        case disconnect(devicePath: String)
    }
    /// Each notification's own readings, for `live`.
    private var instant: InstantReadings
    private var liveSequence: UInt64 = 0
    /// Arrival-to-stored delays of notifications (`record --latency`, the benchmark).
    public private(set) var storeLatency = LatencyHistogram()
    private var arrivals: [ContinuousClock.Instant] = []

    public init(
        bluez: any SensorBus, store: WorkoutStore, options: Options, clock: any RecorderClock = SystemRecorderClock()
    ) {
        self.bluez = bluez
        self.clock = clock
        self.store = store
        self.options = options
        var configuration = WorkoutBuilder.Configuration(autoPause: options.autoPause)
        if let millimetres = options.wheelCircumferenceMillimetres {
            configuration.defaultWheelCircumferenceMillimetres = millimetres
        }
        self.configuration = configuration
        instant = InstantReadings(
            defaultWheelCircumferenceMillimetres: configuration.defaultWheelCircumferenceMillimetres)
        roster = SensorRoster(wanted: options.sensors, policy: options.policy)
    }

    /// What one notification said, the moment it arrived (D-Bus `Live`), in every state: a second screen shows
    /// the rider's power before the ride starts too.
    public struct LiveReading: Sendable, Equatable {
        /// Counts the readings published, from 1.
        public var sequence: UInt64
        /// CLOCK_REALTIME when the notification arrived on the bus connection.
        public var arrivalMicroseconds: Int64
        public var sensor: String
        public var readings: [ChannelReading]
    }

    /// Every notification's readings, as they arrive (nothing is kept for a slow subscriber to catch up on
    /// beyond its stream's buffer).
    public nonisolated let live = Broadcast<LiveReading>(keepingLatest: false)

    /// A control applied to a ride (D-Bus `Event`): once per control, whoever asked and however often.
    public struct AppliedControl: Sendable, Equatable {
        public var workoutId: Int64
        public var timeMicroseconds: Int64
        public var control: WorkoutControl
        /// The ride's `ControlSequence` with this control applied.
        public var controlSequence: UInt64
    }

    /// Every control applied, in order.
    public nonisolated let controlsApplied = Broadcast<AppliedControl>(keepingLatest: false)

    /// The current status after every flush and control (dashboard, D-Bus properties, a mirror): each
    /// subscriber starts from the current status and sees the newest one.
    public nonisolated let statusUpdates = Broadcast<LiveStatus>(keepingLatest: true)

    /// What a rider should hear about, in order: a low battery, a ride that started or ended on its own, and
    /// (`--auto`) each ride saved before the recorder waits for the next one.
    public nonisolated let announcements = Broadcast<Announcement>(keepingLatest: false)

    public enum Announcement: Sendable {
        case notice(String)
        case rideSaved(WorkoutSummary)
    }

    /// Records until the ride is ended or cancelled; returns the stored summary (nil when cancelled).
    public func run() async throws(LiveRecordingError) -> WorkoutSummary? {
        // However it ends, its subscribers hear that it did.
        defer {
            statusUpdates.finish()
            announcements.finish()
            live.finish()
            controlsApplied.finish()
        }
        let adapter = try Self.chooseAdapter(await bluez.adapters, named: options.adapter)
        adapterPath = adapter.path
        if !adapter.powered {
            do { try await bluez.powerOn(adapter.path) } catch {
                throw LiveRecordingError(.bluetooth, error.description)
            }
        }
        if roster.isEmpty {
            guard options.auto == nil else {
                throw LiveRecordingError(
                    .noSensors,
                    "no sensors to wait for: `record --auto` uses the remembered sensors; add them with "
                        + "`cyclelog sensors add ADDRESS` (addresses from `cyclelog scan`) or name them with --sensor")
            }
            try await findSensors()
        }
        if waits {
            startWaiting()
        } else {
            do { try beginRide(at: now(), StartRequest(plan: options.plan)) } catch {
                throw LiveRecordingError(.store, error.description)
            }
        }
        let events = await bluez.events()
        // The ride's work as child tasks: BlueZ's events, the flush timer, and one task per sensor that carries
        // out its link's actions one after the other. All end when the ride does.
        let summary = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events { await self.handle(event) }
                await self.bluezConnectionLost()
            }
            group.addTask { [options, clock] in
                while !Task.isCancelled {
                    try? await clock.sleep(for: .seconds(options.flushIntervalSeconds))
                    await self.tick()
                }
            }
            for wanted in roster.wanted {
                let (jobs, continuation) = AsyncStream<SensorJob>.makeStream()
                sensorJobs[wanted] = continuation
                group.addTask {
                    for await job in jobs {
                        await self.perform(job, for: wanted)
                        await self.jobDone()
                    }
                }
            }
            await tick()
            let summary = await withCheckedContinuation { continuation in
                if let outcome {
                    continuation.resume(returning: outcome)
                } else {
                    finished = continuation
                }
            }
            group.cancelAll()
            return summary
        }
        sensorJobs = [:]
        await releaseSensors()
        if let problem = finishProblem { throw problem }
        return summary
    }

    /// Pause, resume, lap, marker, end or cancel, from the keyboard, a signal or D-Bus. Returns why it was
    /// refused, or nil when it was applied.
    @discardableResult
    public func control(_ control: WorkoutControl) async -> String? {
        if let refusal = refusal(of: control) { return refusal }
        if !riding, armed != nil, control == .cancel {
            disarm()
            return nil
        }
        let time = now()
        record(RideEvent(timeMicroseconds: time, .control(control)))
        switch control {
        case .end: await finish(cancelled: false)
        case .cancel: await finish(cancelled: true)
        default: publishStatus()
        }
        return nil
    }

    /// Why a control would be refused now (pausing a paused ride, anything after the end), or nil.
    public func refusal(of control: WorkoutControl) -> String? {
        guard outcome == nil, riding else {
            guard outcome == nil, waits else { return "no workout is being recorded" }
            if armed != nil {
                return control == .cancel
                    ? nil
                    : "no workout is being recorded yet: it starts at the first pedal stroke (`cyclelog cancel` disarms it)"
            }
            return options.auto != nil
                ? "no workout is being recorded: waiting for the rider to pedal"
                : "no workout is being recorded: waiting for a start (`cyclelog start`)"
        }
        guard var session = ride?.session else { return "no workout is being recorded" }
        return session.apply(control, at: max(lastEventTime, 1))
    }

    /// SIGINT or SIGTERM: ends and saves a ride in progress, and stops waiting for the next one.
    public func stop() async {
        stopRequested = true
        if riding {
            await control(.end)
        } else if outcome == nil {
            outcome = .some(nil)
            finished?.resume(returning: nil)
            finished = nil
        }
    }

    // MARK: Rides started on request

    /// Why a Start was refused.
    public enum StartRefusal: Error, Sendable {
        /// A ride is being recorded, or the recorder does not take Starts (a plain `record`) or is stopping.
        case refused(String)
        /// No sensor is connected to start with.
        case noSensors(String)
    }

    /// Starts a ride now and returns its id, or (`when=pedalling`) arms one for the first pedal stroke and
    /// returns 0. Taken while waiting (`record --wait`, `record --auto`) or armed (a Start then replaces the
    /// armed one).
    public func start(_ request: StartRequest) throws(StartRefusal) -> Int64 {
        guard outcome == nil, waits else {
            throw .refused(
                outcome == nil
                    ? "this recorder records one ride and takes no start: run `cyclelog record --wait` to start rides on request"
                    : "the recorder is stopping")
        }
        if riding {
            let elapsed = RecordedTotals.seconds(status().elapsedSeconds)
            throw .refused("workout \(workoutId) is being recorded (\(elapsed) in): end it first with `cyclelog end`")
        }
        if request.when == .pedalling {
            armed = request
            if pedallingWatch == nil { watchAfresh() }
            tellRider("armed: the ride starts at the first pedal stroke")
            publishStatus()
            return 0
        }
        guard roster.sensors.contains(where: \.link.state.isConnected) else {
            let states = roster.sensors.map { "\($0.label) \($0.link.state.rawValue)" }.joined(separator: ", ")
            throw .noSensors(
                "no sensor is connected (\(states)): wake them (turn the cranks, wet the strap), or add them with "
                    + "`cyclelog sensors add ADDRESS` (addresses from `cyclelog scan`)")
        }
        do { try beginRide(at: now(), request) } catch {
            throw .refused("the ride cannot be stored: \(error.description)")
        }
        armed = nil
        pedallingWatch = nil
        tellRider("recording workout \(workoutId)")
        warnAboutLowBatteries()
        publishStatus()
        return workoutId
    }

    /// The suggested workouts, pinned first, then the most recently used; the built-in ones when the database
    /// cannot say.
    public func presets() -> [WorkoutPreset] {
        (try? store.presets().map(\.preset)) ?? WorkoutPreset.builtIn
    }

    /// A recorder that the start itself brought up (D-Bus activation by `cyclelog start` or a launcher's action,
    /// `activatedGraceSeconds`) waits until a sensor is connected, for up to that long after its launch; otherwise
    /// a start without sensors is refused at once.
    public func waitForASensorAfterLaunch() async {
        while clock.elapsed < .seconds(options.activatedGraceSeconds), outcome == nil,
            !roster.sensors.contains(where: \.link.state.isConnected)
        {
            try? await clock.sleep(for: .milliseconds(200))
        }
    }

    /// Cancels an armed Start: back to waiting.
    private func disarm() {
        armed = nil
        if options.auto == nil { pedallingWatch = nil }
        tellRider("the armed start was cancelled")
        publishStatus()
    }

    /// `endAtGoal`: ends the ride once its goal is reached.
    private func endRideAtGoal() async {
        guard riding, ride?.endAtGoal == true, let progress = status().goalProgress, progress >= 1 else { return }
        tellRider("goal reached: saving workout \(workoutId)")
        await control(.end)
    }

    // MARK: Rides that start and end on their own

    /// Opens a workout in the store whose journal starts at `start` with the sensors' descriptions.
    private func beginRide(at start: Int64, _ request: StartRequest) throws(StoreError) {
        var plan = request.plan
        // Lower-case, as RFC 9562 writes a UUID and as every other ride and the shared store have it.
        let syncIdentifier = UUID().uuidString.lowercased()
        plan.syncIdentifier = syncIdentifier
        let claim = try store.beginWorkout(syncIdentifier: syncIdentifier, source: "live", startMicroseconds: start)
        // Recently used presets come first among the suggestions; not worth failing a ride over.
        if let preset = plan.preset { try? store.presetUsed(preset, at: start) }
        ride = LiveRide(
            claim: claim, store: store, configuration: configuration,
            idleEnding: options.auto.map {
                IdleEnding(endAfterSeconds: $0.endAfterSeconds, rideStartMicroseconds: start)
            }, endAtGoal: request.endAtGoal)
        riding = true
        record(RideEvent(timeMicroseconds: start, .control(.start(plan))))
        // The options that change the result, so that the journal alone reproduces the ride.
        if let millimetres = options.wheelCircumferenceMillimetres {
            record(RideEvent(timeMicroseconds: start, .setting(.defaultWheelCircumference(millimetres: millimetres))))
        }
        if let autoPause = options.autoPause {
            record(RideEvent(timeMicroseconds: start, .setting(.autoPause(autoPause))))
        }
        for event in roster.openingDescriptions { record(RideEvent(timeMicroseconds: start, event.kind)) }
    }

    private func startWaiting() {
        riding = false
        ride = nil
        armed = nil
        // `--auto` watches for pedalling all the time; `--wait` only for an armed Start.
        if options.auto != nil { watchAfresh() } else { pedallingWatch = nil }
    }

    private func watchAfresh() {
        pedallingWatch = PedallingWatch(
            configuration: configuration, descriptions: roster.allDescriptions,
            at: now(), lookbackSeconds: options.auto?.lookbackSeconds ?? 3)
    }

    /// While waiting: watches the event for pedalling, and starts the ride with the last few seconds.
    private func watchForPedalling(_ event: RideEvent) {
        guard var watch = pedallingWatch else { return }
        pedallingWatch = nil  // so that adding to the copy does not copy its storage
        let opening = watch.add(event)
        pedallingWatch = watch
        guard let opening else {
            if watch.isDueForRestart { watchAfresh() }
            return
        }
        do {
            try beginRide(
                at: opening.first?.timeMicroseconds ?? event.timeMicroseconds, armed ?? StartRequest(plan: options.plan)
            )
        } catch {
            message = "a ride started but cannot be stored (\(error.description)); trying again"
            return
        }
        pedallingWatch = nil
        armed = nil
        for notification in opening { record(notification) }
        message = nil
        tellRider("pedalling: recording workout \(workoutId)")
        warnAboutLowBatteries()
    }

    /// `--auto` during a ride: ends it after `endAfterSeconds` without pedalling.
    private func endRideWhenIdle() async {
        guard riding, let auto = options.auto, ride?.idleEnding?.isDue(at: clock.rideMicroseconds()) == true else {
            return
        }
        tellRider("no pedalling for \(Int(auto.endAfterSeconds)) s: saving workout \(workoutId)")
        await control(.end)
    }

    private func tellRider(_ notice: String) {
        announcements.publish(.notice(notice))
    }

    private func warnAboutLowBatteries() {
        guard riding else { return }
        for sensor in roster.sensors {
            guard let address = sensor.address, let battery = sensor.batteryPercent,
                battery <= options.lowBatteryPercent, ride?.warnedLowBattery.contains(address) == false
            else { continue }
            ride?.warnedLowBattery.insert(address)
            let warning = "\(sensor.name ?? address)'s battery is at \(battery) %: charge or replace it soon"
            message = warning
            tellRider(warning)
        }
    }

    // MARK: Finding and connecting sensors

    private func findSensors() async throws(LiveRecordingError) {
        await setDiscovery(true)
        try? await clock.sleep(for: .seconds(options.discoverySeconds))
        let found = Self.cyclingSensors(await bluez.devices, through: adapterPath)
        guard !found.isEmpty else {
            throw LiveRecordingError(
                .noSensors,
                "no cycling sensor found in \(Int(options.discoverySeconds)) s of scanning: wake the sensors "
                    + "(turn the cranks, wet the heart-rate strap) and try again, or name them with --sensor")
        }
        roster.want(found.map(\.address))
    }

    /// The adapter named by its last path component (`hci1`) or its address; without a name the first one.
    public static func chooseAdapter(_ adapters: [BluetoothAdapter], named name: String?) throws(LiveRecordingError)
        -> BluetoothAdapter
    {
        guard let first = adapters.first else {
            throw LiveRecordingError(
                .noAdapter, "no Bluetooth adapter: BlueZ sees none (check `bluetoothctl list` and `rfkill list`)")
        }
        guard let name else { return first }
        let wanted = adapters.first {
            $0.interfaceName == name || $0.address.caseInsensitiveCompare(name) == .orderedSame
        }
        guard let wanted else {
            let known = adapters.map { "\($0.interfaceName) (\($0.address))" }
            throw LiveRecordingError(
                .noAdapter, "no Bluetooth adapter \(name): BlueZ has \(known.joined(separator: ", "))")
        }
        return wanted
    }

    /// The cycling sensors among `devices` that BlueZ sees through the adapter at `adapterPath`.
    public static func cyclingSensors(_ devices: [BluetoothDevice], through adapterPath: String?) -> [BluetoothDevice] {
        devices.filter { $0.adapterPath == adapterPath && isCyclingSensor($0) }
    }

    private func setDiscovery(_ on: Bool) async {
        guard on != discovering, let adapterPath else { return }
        do {
            if on {
                try await bluez.startDiscovery(adapterPath, services: Self.services)
            } else {
                try await bluez.stopDiscovery(adapterPath)
            }
            discovering = on
        } catch {
            message = error.description
        }
    }

    /// Once per flush: find missing sensors, start due connection attempts, check for silence, write.
    private func tick() async {
        guard outcome == nil else { return }
        lastTick = ContinuousClock.now
        // A sensor is reached through the chosen adapter only: another adapter of the same machine may see the
        // same sensor, or the recorder's own adapter as a device.
        let (found, missing) = roster.locate(in: await bluez.devices.filter { $0.adapterPath == adapterPath })
        for sensor in found { apply(.seen(connected: sensor.connected), to: sensor.wanted) }
        await setDiscovery(missing && !roster.isConnecting)
        await flush()
        await endRideWhenIdle()
        await endRideAtGoal()
        publishStatus()
    }

    private func queue(_ job: SensorJob, for wanted: String) {
        guard let jobs = sensorJobs[wanted], case .enqueued = jobs.yield(job) else { return }
        sensorJobsInFlight += 1
    }

    /// Feeds one input to a sensor's link and carries out what it says.
    private func apply(_ input: SensorLink.Input, to wanted: String) {
        let time = clock.elapsed
        guard let actions = roster.update(wanted, { $0.link.handle(input, at: time) }), let sensor = roster[wanted]
        else { return }
        for action in actions {
            switch action {
            case .connect(let attempt):
                queue(.connect(attempt: attempt), for: wanted)
            case .resubscribe:
                queue(.resubscribe(sensor.measurementCharacteristics), for: wanted)
            case .disconnect:
                roster.update(wanted) { $0.measurementCharacteristics = [] }
                if let path = sensor.devicePath { queue(.disconnect(devicePath: path), for: wanted) }
            case .journalLinkUp:
                let address = sensor.journalAddress
                record(RideEvent(timeMicroseconds: now(), .connected(sensor: address, name: sensor.name)))
                let wheel = options.wheelCircumferences[address] ?? configuration.defaultWheelCircumferenceMillimetres
                record(RideEvent(timeMicroseconds: now(), .wheelCircumference(sensor: address, millimetres: wheel)))
            case .journalLinkDown:
                roster.update(wanted) { $0.measurementCharacteristics = [] }
                record(RideEvent(timeMicroseconds: now(), .disconnected(sensor: sensor.journalAddress)))
            case .tell(let notice):
                message = notice.text(sensor.label)
            }
        }
    }

    private func jobDone() { sensorJobsInFlight -= 1 }

    private func perform(_ job: SensorJob, for wanted: String) async {
        switch job {
        case .connect(let attempt):
            await connect(wanted, attempt: attempt)
        case .resubscribe(let characteristics):
            for characteristic in characteristics {
                try? await bluez.stopNotify(characteristic)
                try? await bluez.startNotify(characteristic)
            }
        case .disconnect(let path):
            try? await bluez.disconnect(path)
        }
    }

    /// Connection attempt `attempt` of one sensor: connects, reads what describes it, and subscribes to its
    /// measurements, then tells the sensor's link how it went. After every `await` the sensor is looked up again
    /// by its identity, and the link ignores the report of an attempt it no longer waits for.
    private func connect(_ wanted: String, attempt: Int) async {
        guard let path = roster[wanted]?.devicePath else {
            apply(.failed(attempt: attempt), to: wanted)
            return
        }
        await setDiscovery(false)
        func label() -> String { roster[wanted]?.label ?? wanted }
        if let address = roster[wanted]?.address { options.capture?.addSensor(address) }
        do throws(BlueZError) {
            try await bluez.connect(path)
            // LE: the GATT objects are there once ServicesResolved is true.
            guard await bluez.waitForServices(path, timeout: .seconds(10)) else {
                message = "\(label()) connected, but its services were not resolved within 10 s: trying again"
                apply(.failed(attempt: attempt), to: wanted)
                return
            }
            let characteristics = await bluez.characteristics(ofDevice: path)
            apply(.linkEstablished(attempt: attempt), to: wanted)
            guard let address = roster[wanted]?.journalAddress else { return }
            options.capture?.noteCharacteristics(characteristics, of: address)
            if let battery = await bluez.device(path)?.batteryPercent {
                // Battery1.Percentage stands in for the Battery Level characteristic BlueZ hides (spec §8.6).
                record(
                    RideEvent(
                        timeMicroseconds: now(),
                        .read(sensor: address, characteristic: 0x2A19, value: [UInt8(clamping: battery)])))
                roster.update(wanted) { $0.batteryPercent = battery }
                warnAboutLowBatteries()
            }
            for characteristic in characteristics {
                guard let uuid = characteristic.shortUUID, Self.readOnConnect.contains(uuid), characteristic.canRead
                else { continue }
                if let value = try? await bluez.read(characteristic) {
                    record(
                        RideEvent(timeMicroseconds: now(), .read(sensor: address, characteristic: uuid, value: value)))
                }
            }
            let measurements = characteristics.filter {
                $0.canNotify && $0.shortUUID.map(Self.measurements.contains) == true
            }
            guard !measurements.isEmpty else {
                // A problem of the sensor's own, not of BlueZ: said in words, with no D-Bus error name.
                message = "\(label()) offers no power, speed, cadence or heart-rate measurement"
                apply(.failed(attempt: attempt), to: wanted)
                return
            }
            for characteristic in measurements { try await bluez.startNotify(characteristic) }
            guard roster[wanted]?.link.attemptInFlight == attempt else { return }
            roster.update(wanted) { $0.measurementCharacteristics = measurements }
            apply(.subscribed(attempt: attempt), to: wanted)
        } catch {
            message = error.description
            apply(.failed(attempt: attempt), to: wanted)
        }
    }

    // MARK: BlueZ events

    private func handle(_ event: BlueZEvent) async {
        guard outcome == nil else { return }
        switch event {
        case .notification(let characteristic, let value):
            guard let sensor = roster.sensor(atDevicePath: characteristic.devicePath),
                let uuid = characteristic.shortUUID
            else { return }
            apply(.notification, to: sensor.wanted)
            arrivals.append(ContinuousClock.now)
            var arrival = timespec()
            clock_gettime(CLOCK_REALTIME, &arrival)
            let event = RideEvent(
                timeMicroseconds: now(),
                .notification(sensor: sensor.journalAddress, characteristic: uuid, value: value))
            record(event)
            let readings = instant.add(event)
            if !readings.isEmpty {
                liveSequence += 1
                live.publish(
                    LiveReading(
                        sequence: liveSequence,
                        arrivalMicroseconds: Int64(arrival.tv_sec) * 1_000_000 + Int64(arrival.tv_nsec) / 1000,
                        sensor: sensor.journalAddress, readings: readings))
            }
        case .deviceChanged(let device):
            guard let wanted = roster.sensor(atDevicePath: device.path)?.wanted else { return }
            roster.update(wanted) { $0.batteryPercent = device.batteryPercent ?? $0.batteryPercent }
            if !device.connected { apply(.linkLost, to: wanted) }
        case .deviceRemoved(let path):
            for wanted in roster.forgetDevice(path) { apply(.gone, to: wanted) }
        case .bluetoothdLeft:
            message = "bluetoothd left the bus: waiting for it to come back"
            discovering = false
            for wanted in roster.forgetDevice(nil) { apply(.gone, to: wanted) }
        case .bluetoothdReturned:
            message = "bluetoothd is back: connecting the sensors again"
            await tick()
        case .servicesChanged, .adapterChanged:
            break
        }
    }

    private func bluezConnectionLost() async {
        guard outcome == nil else { return }
        stopRequested = true
        guard riding else {
            finishProblem = LiveRecordingError(.bluetooth, "the connection to the system bus was lost")
            await stop()
            return
        }
        message = "the connection to the system bus was lost: saving the ride"
        finishProblem = LiveRecordingError(.bluetooth, "the connection to the system bus was lost; the ride was saved")
        record(RideEvent(timeMicroseconds: now(), .control(.end)))
        await finish(cancelled: false)
    }

    // MARK: Journal and store

    private func now() -> Int64 {
        // The journal's times never go backwards (the ride clock cannot, and this makes it a rule).
        lastEventTime = max(clock.rideMicroseconds(), lastEventTime)
        return lastEventTime
    }

    private func record(_ event: RideEvent) {
        roster.describe(event)
        // Notifications reach the instant readings once, as they arrive (`handle`): the ones a ride opens with
        // are recorded a second time.
        if case .notification = event.kind {} else { _ = instant.add(event) }
        guard riding else {
            watchForPedalling(event)
            return
        }
        let problems = ride?.add(event)
        if case .control(let control) = event.kind, let session = ride?.session {
            controlsApplied.publish(
                AppliedControl(
                    workoutId: workoutId, timeMicroseconds: event.timeMicroseconds, control: control,
                    controlSequence: controlSequence(session)))
        }
        guard let problem = problems?.last else { return }
        // Reported as a replay reports them; the journal keeps the bytes for a later look (`cyclelog replay`).
        let problemCount = ride?.problemCount ?? 0
        let sensor = event.sensor.map { roster.name(ofAddress: $0) + ": " } ?? ""
        message =
            sensor + problem.message
            + (problemCount > 1 ? " (\(problemCount) problems in this ride; its journal keeps every byte)" : "")
    }

    /// One small transaction: the new journal events and every whole minute of samples completed, written by
    /// the store writer while this actor goes on taking notifications.
    private func flush() async {
        guard riding else {
            arrivals.removeAll(keepingCapacity: true)
            return
        }
        guard var ride else { return }
        self.ride = nil  // so that changing the copy does not copy its storage
        let batch = ride.takeBatch()
        options.capture?.note(batch.events)
        // Back in place before the wait: events go on arriving meanwhile.
        self.ride = ride
        let storeWriter = ride.storeWriter
        let batchArrivals = arrivals
        arrivals.removeAll(keepingCapacity: true)
        do {
            guard try await storeWriter.write(batch) else {
                arrivals = batchArrivals + arrivals
                return
            }
            let stored = ContinuousClock.now
            for arrival in batchArrivals { storeLatency.add(seconds: (stored - arrival).seconds) }
        } catch {
            // Kept by the writer and written with the next flush (a locked or briefly full database).
            arrivals = batchArrivals + arrivals
            message = "cannot write to the database (\(error.description)); keeping the ride in memory and retrying"
        }
    }

    private func finish(cancelled: Bool) async {
        guard outcome == nil, riding else { return }
        var summary: WorkoutSummary?
        if cancelled {
            _ = try? store.delete(workoutId)
        } else {
            await flush()
            do throws(StoreError) {
                if let finished = ride?.finishWorkout() {
                    summary = try await ride?.storeWriter.finish(finished)
                } else {
                    try await ride?.storeWriter.discard()
                }
                if let summary {
                    if let problem = options.savedRideSignal?.announce(summary) { tellRider(problem) }
                    try store.rememberSensors(roster.used, at: now())
                } else {
                    finishProblem = LiveRecordingError(.nothingToSave, "no measurement arrived: nothing to save")
                }
            } catch {
                finishProblem = LiveRecordingError(
                    .store,
                    "the ride could not be saved (\(error.description)); its journal is stored: "
                        + "`cyclelog recover` saves it once the database is writable")
            }
        }
        if waits && !stopRequested {
            // The service goes on: wait for the next ride with the sensors still connected.
            if let problem = finishProblem { tellRider(problem.description) }
            finishProblem = nil
            startWaiting()
            if let summary { announcements.publish(.rideSaved(summary)) }
            publishStatus()
            return
        }
        riding = false
        outcome = .some(summary)
        publishStatus()
        finished?.resume(returning: summary)
        finished = nil
    }

    private func releaseSensors() async {
        for sensor in roster.sensors {
            for characteristic in sensor.measurementCharacteristics { try? await bluez.stopNotify(characteristic) }
            if let path = sensor.devicePath { try? await bluez.disconnect(path) }
        }
        if discovering, let adapterPath { try? await bluez.stopDiscovery(adapterPath) }
    }

    // MARK: Status

    public func status() -> LiveStatus {
        let session = ride?.session ?? Session()
        let recentSamples = ride?.recentSamples ?? []
        let distanceMeters = ride?.distanceMeters ?? 0
        let workJoules = ride?.workJoules ?? 0
        let time = max(lastEventTime, clock.rideMicroseconds())
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
        var can = LiveStatus.Can()
        can.start = outcome == nil && waits && !riding
        can.pause = refusal(of: .pause) == nil
        can.resume = refusal(of: .resume) == nil
        can.lap = refusal(of: .lap) == nil
        can.end = refusal(of: .end) == nil
        can.cancel = refusal(of: .cancel) == nil
        let lapStart = session.lapStarts.last ?? start
        // A recorder that waits between rides shows its own state while none is recorded.
        let showsRide = riding || !waits
        var status = LiveStatus(
            workoutId: workoutId, state: showsRide ? session.state.rawValue : armed != nil ? "armed" : "waiting",
            elapsedSeconds: elapsed, movingSeconds: moving,
            powerWatts: mean(recentSamples.map(\.powerWatts)), cadenceRPM: recentSamples.last?.cadenceRPM,
            speedMetersPerSecond: recentSamples.last?.speedMetersPerSecond,
            heartRateBPM: recentSamples.last?.heartRateBPM, distanceMeters: distanceMeters, workJoules: workJoules,
            lap: session.lapStarts.count + 1, goalProgress: progress.map { min(1, $0) },
            sensors: roster.sensors.map {
                LiveStatus.Sensor(
                    name: $0.label, address: $0.address,
                    state: $0.link.state == .streaming && isZero($0) ? .zero : $0.link.state,
                    batteryPercent: $0.batteryPercent)
            }, message: message)
        status.plan = showsRide ? session.plan : armed?.plan ?? WorkoutPlan()
        status.can = can
        status.controlSequence = showsRide ? controlSequence(session) : 0
        status.lapElapsedSeconds = Double(max(0, end - lapStart)) / 1e6
        status.waterMillilitres = session.events.waterMillilitres ?? 0
        return status
    }

    /// The ride's id in the high half, so that an expectation from one ride never matches another; the controls
    /// applied in the low half.
    private func controlSequence(_ session: Session) -> UInt64 {
        UInt64(UInt32(truncatingIfNeeded: workoutId)) << 32 | UInt64(session.events.count)
    }

    private func isZero(_ sensor: SensorRoster.Sensor) -> Bool {
        guard let last = ride?.recentSamples.last else { return false }
        return last.powerWatts == 0 || last.cadenceRPM == 0
    }

    private func publishStatus() {
        statusUpdates.publish(status())
    }
}

/// Why a live recording could not start or could not save, in a rider's words.
public struct LiveRecordingError: ExplainedError, Sendable {
    /// What kind of problem, for programs; `description` says it in words.
    public enum Code: String, Sendable {
        /// No adapter, or not the one named.
        case noAdapter
        /// No sensor found, or none remembered for `--auto`.
        case noSensors
        /// BlueZ or the system bus refused or went away.
        case bluetooth
        /// The database could not store the ride (its journal is kept).
        case store
        /// Nothing arrived to save.
        case nothingToSave
        /// The power meter's control point is missing, silent or answered something malformed.
        case controlPoint
    }

    public var code: Code
    public var description: String

    /// No adapter or no bus means Bluetooth cannot be used; the rest is this ride's failure.
    public var exitStatus: ExitStatus {
        switch code {
        case .noAdapter, .bluetooth: .cannotUse
        case .noSensors, .store, .nothingToSave, .controlPoint: .failed
        }
    }

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}
