import BlueZ
import CyclingSensors
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
        /// A sensor whose battery is at or below this is warned about when a ride starts or it connects.
        public var lowBatteryPercent = LiveStatus.lowBatteryPercent

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
    public static let services: [UInt16] = [0x1818, 0x1816, 0x180D, 0x1826]
    /// Whether a device offers one of `services`. BlueZ merges the discovery filters of all its clients, so a
    /// scan can show other devices too.
    public static func isCyclingSensor(_ device: BluetoothDevice) -> Bool {
        device.shortServiceUUIDs.contains(where: services.contains)
    }

    static let measurements: Set<UInt16> = [0x2A63, 0x2A5B, 0x2A37, 0x2AD2]
    static let readOnConnect: Set<UInt16> = [0x2A65, 0x2A5C, 0x2A5D, 0x2ACC, 0x2A38]

    private struct Tracked {
        var wanted: String
        var devicePath: String?
        var address: String?
        var name: String?
        var state = LiveStatus.SensorState.searching
        /// A `connect` event is in the journal and no `disconnect` after it.
        var linkUpInJournal = false
        var connecting = false
        var failures = 0
        var nextAttempt = ContinuousClock.now
        var lastNotification: ContinuousClock.Instant?
        var meanIntervalSeconds: Double?
        var resubscribedAt: ContinuousClock.Instant?
        var batteryPercent: Int?
        var measurementCharacteristics: [GattCharacteristic] = []
    }

    public let bluez: BlueZClient
    public let store: WorkoutStore
    public let options: Options
    public private(set) var workoutId: Int64 = 0
    /// A workout is being recorded (always after `run` starts, unless `record --auto` is waiting for a ride).
    private var riding = false
    /// The builder's configuration from the options (the pedalling watch decodes with it too).
    private let configuration: WorkoutBuilder.Configuration
    /// The ride being recorded; nil while `record --auto` waits for one.
    private var pipeline: RidePipeline?
    /// Problems the builder raised during this ride (a malformed notification, a refused control).
    private var problemCount = 0
    /// What each connected sensor's journal starts with (connection, wheel size, values read), so a ride that
    /// starts on its own later opens with the same description of its sensors as one started by hand.
    private var sensorDescriptions: [String: [RideEvent]] = [:]
    /// `--auto` while waiting for a ride.
    private var pedallingWatch: PedallingWatch?
    /// The end of the last second with power or cadence above zero (journal time).
    private var lastPedallingMicroseconds: Int64 = 0
    private var stopRequested = false
    private var warnedLowBattery: Set<String> = []
    /// When the recorder last went round its loop (the service's watchdog asks).
    public private(set) var lastTick = ContinuousClock.now
    private var tracked: [Tracked] = []
    private var recentSamples: [SecondSample] = []
    private var distanceMeters = 0.0
    private var workJoules = 0.0
    private var lastEventTime: Int64 = 0
    /// Event times: the wall clock at the start, then the kernel's boot-time clock (no NTP leaps in a journal).
    private let clock = RideClock()
    private var discovering = false
    private var adapterPath: String?
    private var message: String?
    private var finished: CheckedContinuation<WorkoutSummary?, Never>?
    private var outcome: WorkoutSummary??
    /// Why a ride that ended could not be saved as it should, thrown by `run` after the sensors are released.
    private var finishProblem: LiveRecordingError?
    /// The event loop and the flush timer, cancelled when the ride is over. Connection attempts and
    /// re-subscriptions are not kept: each is one short chain of BlueZ calls that ends on its own.
    private var tasks: [Task<Void, Never>] = []
    /// Arrival-to-stored delays of notifications (`record --latency`, the benchmark).
    public private(set) var storeLatency = LatencyHistogram()
    private var arrivals: [ContinuousClock.Instant] = []

    public init(bluez: BlueZClient, store: WorkoutStore, options: Options) {
        self.bluez = bluez
        self.store = store
        self.options = options
        var configuration = WorkoutBuilder.Configuration(autoPause: options.autoPause)
        if let millimetres = options.wheelCircumferenceMillimetres {
            configuration.defaultWheelCircumferenceMillimetres = millimetres
        }
        self.configuration = configuration
        tracked = options.sensors.map { Tracked(wanted: $0) }
    }

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
        }
        let adapter = try Self.chooseAdapter(await bluez.adapters, named: options.adapter)
        adapterPath = adapter.path
        if !adapter.powered {
            do { try await bluez.powerOn(adapter.path) } catch { throw LiveRecordingError(error.description) }
        }
        if tracked.isEmpty {
            guard options.auto == nil else {
                throw LiveRecordingError(
                    "no sensors to wait for: `record --auto` uses the remembered sensors; add them with "
                        + "`cyclelog sensors add ADDRESS` (addresses from `cyclelog scan`) or name them with --sensor")
            }
            try await findSensors()
        }
        if options.auto == nil {
            do { try beginRide(at: now()) } catch { throw LiveRecordingError(error.description) }
        } else {
            startWaiting()
        }
        let events = await bluez.events()
        tasks.append(
            Task { [weak self] in
                for await event in events { await self?.handle(event) }
                await self?.bluezConnectionLost()
            })
        tasks.append(
            Task { [weak self, options] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(options.flushIntervalSeconds))
                    await self?.tick()
                }
            })
        await tick()
        let summary = await withCheckedContinuation { continuation in
            if let outcome {
                continuation.resume(returning: outcome)
            } else {
                finished = continuation
            }
        }
        for task in tasks { task.cancel() }
        await releaseSensors()
        if let problem = finishProblem { throw problem }
        return summary
    }

    /// Pause, resume, lap, marker, end or cancel, from the keyboard, a signal or D-Bus. Returns why it was
    /// refused, or nil when it was applied.
    @discardableResult
    public func control(_ control: WorkoutControl) async -> String? {
        if let refusal = refusal(of: control) { return refusal }
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
            return options.auto != nil && outcome == nil
                ? "no workout is being recorded: waiting for the rider to pedal" : "no workout is being recorded"
        }
        guard var session = pipeline?.session else { return "no workout is being recorded" }
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

    // MARK: Rides that start and end on their own

    /// Opens a workout in the store whose journal starts at `start` with the sensors' descriptions.
    private func beginRide(at start: Int64) throws(StoreError) {
        var plan = options.plan
        let syncIdentifier = UUID().uuidString
        plan.syncIdentifier = syncIdentifier
        let claim = try store.beginWorkout(syncIdentifier: syncIdentifier, source: "live", startMicroseconds: start)
        workoutId = claim.workoutId
        pipeline = RidePipeline(store: store, claim: claim, configuration: configuration)
        riding = true
        warnedLowBattery = []
        problemCount = 0
        record(RideEvent(timeMicroseconds: start, .control(.start(plan))))
        // The options that change the result, so that the journal alone reproduces the ride.
        if let millimetres = options.wheelCircumferenceMillimetres {
            record(RideEvent(timeMicroseconds: start, .setting(.defaultWheelCircumference(millimetres: millimetres))))
        }
        if let autoPause = options.autoPause {
            record(RideEvent(timeMicroseconds: start, .setting(.autoPause(autoPause))))
        }
        for sensor in tracked.compactMap(\.address) {
            for event in sensorDescriptions[sensor] ?? [] { record(RideEvent(timeMicroseconds: start, event.kind)) }
        }
        lastPedallingMicroseconds = start
    }

    private func startWaiting() {
        riding = false
        workoutId = 0
        pipeline = nil
        recentSamples = []
        distanceMeters = 0
        workJoules = 0
        watchAfresh()
    }

    private func watchAfresh() {
        pedallingWatch = PedallingWatch(
            configuration: configuration, descriptions: Array(sensorDescriptions.values.joined()),
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
            try beginRide(at: opening.first?.timeMicroseconds ?? event.timeMicroseconds)
        } catch {
            message = "a ride started but cannot be stored (\(error.description)); trying again"
            return
        }
        pedallingWatch = nil
        for notification in opening { record(notification) }
        message = nil
        tellRider("pedalling: recording workout \(workoutId)")
        warnAboutLowBatteries()
    }

    /// `--auto` during a ride: ends it after `endAfterSeconds` without pedalling.
    private func endRideWhenIdle() async {
        guard riding, let auto = options.auto,
            clock.now() - lastPedallingMicroseconds > Int64(auto.endAfterSeconds * 1e6)
        else { return }
        tellRider("no pedalling for \(Int(auto.endAfterSeconds)) s: saving workout \(workoutId)")
        await control(.end)
    }

    private func tellRider(_ notice: String) {
        announcements.publish(.notice(notice))
    }

    private func warnAboutLowBatteries() {
        guard riding else { return }
        for sensor in tracked {
            guard let address = sensor.address, let battery = sensor.batteryPercent,
                battery <= options.lowBatteryPercent, !warnedLowBattery.contains(address)
            else { continue }
            warnedLowBattery.insert(address)
            let warning = "\(sensor.name ?? address)'s battery is at \(battery) %: charge or replace it soon"
            message = warning
            tellRider(warning)
        }
    }

    // MARK: Finding and connecting sensors

    private func findSensors() async throws(LiveRecordingError) {
        await setDiscovery(true)
        try? await Task.sleep(for: .seconds(options.discoverySeconds))
        let found = Self.cyclingSensors(await bluez.devices, through: adapterPath)
        guard !found.isEmpty else {
            throw LiveRecordingError(
                "no cycling sensor found in \(Int(options.discoverySeconds)) s of scanning: wake the sensors "
                    + "(turn the cranks, wet the heart-rate strap) and try again, or name them with --sensor")
        }
        tracked = found.map { Tracked(wanted: $0.address) }
    }

    /// The adapter named by its last path component (`hci1`) or its address; without a name the first one.
    public static func chooseAdapter(_ adapters: [BluetoothAdapter], named name: String?) throws(LiveRecordingError)
        -> BluetoothAdapter
    {
        guard let first = adapters.first else {
            throw LiveRecordingError(
                "no Bluetooth adapter: BlueZ sees none (check `bluetoothctl list` and `rfkill list`)")
        }
        guard let name else { return first }
        let wanted = adapters.first {
            $0.interfaceName == name || $0.address.caseInsensitiveCompare(name) == .orderedSame
        }
        guard let wanted else {
            let known = adapters.map { "\($0.interfaceName) (\($0.address))" }
            throw LiveRecordingError(
                "no Bluetooth adapter \(name): BlueZ has \(known.joined(separator: ", "))")
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
        let clock = ContinuousClock.now
        lastTick = clock
        // A sensor is reached through the chosen adapter only: another adapter of the same machine may see the
        // same sensor, or the recorder's own adapter as a device.
        let devices = await bluez.devices.filter { $0.adapterPath == adapterPath }
        var missing = false
        for index in tracked.indices {
            if tracked[index].devicePath == nil || !devices.contains(where: { $0.path == tracked[index].devicePath }) {
                if let device = devices.first(where: { $0.isCalled(tracked[index].wanted) }) {
                    tracked[index].devicePath = device.path
                    tracked[index].address = device.address
                    tracked[index].name = device.displayName
                } else {
                    tracked[index].devicePath = nil
                    missing = true
                    continue
                }
            }
            guard let path = tracked[index].devicePath, let device = devices.first(where: { $0.path == path })
            else { continue }
            tracked[index].batteryPercent = device.batteryPercent ?? tracked[index].batteryPercent
            if !device.connected || tracked[index].measurementCharacteristics.isEmpty {
                if !tracked[index].connecting && clock >= tracked[index].nextAttempt {
                    tracked[index].connecting = true
                    tracked[index].state = tracked[index].failures == 0 ? .connecting : .reconnecting
                    Task { [weak self] in await self?.connect(index) }
                }
                continue
            }
            checkSilence(index, clock)
        }
        await setDiscovery(missing && tracked.allSatisfy { !$0.connecting })
        flush()
        await endRideWhenIdle()
        publishStatus()
    }

    private func checkSilence(_ index: Int, _ clock: ContinuousClock.Instant) {
        let sensor = tracked[index]
        guard let last = sensor.lastNotification else { return }
        let limit = options.policy.staleAfterSeconds(meanIntervalSeconds: sensor.meanIntervalSeconds)
        let silent = clock - last
        guard silent > .seconds(limit) else { return }
        tracked[index].state = .stale
        if let resubscribed = sensor.resubscribedAt, resubscribed > last {
            // Re-subscribing did not help: drop the link and connect again.
            guard clock - resubscribed > .seconds(limit), let path = sensor.devicePath else { return }
            tracked[index].resubscribedAt = nil
            tracked[index].measurementCharacteristics = []
            message = "\(sensor.name ?? sensor.wanted) stayed silent: reconnecting"
            linkDown(index)
            Task { [bluez] in try? await bluez.disconnect(path) }
        } else {
            tracked[index].resubscribedAt = clock
            message = "\(sensor.name ?? sensor.wanted) went silent: subscribing again"
            let characteristics = sensor.measurementCharacteristics
            Task { [bluez] in
                for characteristic in characteristics {
                    try? await bluez.stopNotify(characteristic)
                    try? await bluez.startNotify(characteristic)
                }
            }
        }
    }

    /// Connects one sensor, reads what describes it, and subscribes to its measurements.
    private func connect(_ index: Int) async {
        defer { tracked[index].connecting = false }
        guard let path = tracked[index].devicePath else { return }
        await setDiscovery(false)
        do throws(BlueZError) {
            try await bluez.connect(path)
            // LE: the GATT objects are there once ServicesResolved is true.
            guard await bluez.waitForServices(path) else {
                throw BlueZError(
                    .init(name: "org.bluez.Error.Failed", message: "its services were not resolved within 10 s"),
                    while: "connecting to \(tracked[index].name ?? tracked[index].wanted)")
            }
            let characteristics = await bluez.characteristics(ofDevice: path)
            linkUp(index)
            let address = tracked[index].address ?? tracked[index].wanted
            if let battery = await bluez.device(path)?.batteryPercent {
                // Battery1.Percentage stands in for the Battery Level characteristic BlueZ hides (spec §8.6).
                record(
                    RideEvent(
                        timeMicroseconds: now(),
                        .read(sensor: address, characteristic: 0x2A19, value: [UInt8(clamping: battery)])))
                tracked[index].batteryPercent = battery
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
                throw BlueZError(
                    .init(
                        name: "org.bluez.Error.NotSupported",
                        message: "it offers no power, speed, cadence or heart-rate measurement"),
                    while: "using \(tracked[index].name ?? tracked[index].wanted)")
            }
            for characteristic in measurements { try await bluez.startNotify(characteristic) }
            tracked[index].measurementCharacteristics = measurements
            tracked[index].failures = 0
            tracked[index].state = .streaming
            tracked[index].lastNotification = ContinuousClock.now
            tracked[index].resubscribedAt = nil
        } catch {
            tracked[index].failures += 1
            tracked[index].state = .reconnecting
            tracked[index].measurementCharacteristics = []
            tracked[index].nextAttempt =
                ContinuousClock.now + .seconds(options.policy.backoffSeconds(afterFailures: tracked[index].failures))
            message = error.description
        }
    }

    private func linkUp(_ index: Int) {
        guard !tracked[index].linkUpInJournal else { return }
        tracked[index].linkUpInJournal = true
        let address = tracked[index].address ?? tracked[index].wanted
        record(RideEvent(timeMicroseconds: now(), .connected(sensor: address, name: tracked[index].name)))
        let wheel = options.wheelCircumferences[address] ?? configuration.defaultWheelCircumferenceMillimetres
        record(RideEvent(timeMicroseconds: now(), .wheelCircumference(sensor: address, millimetres: wheel)))
    }

    private func linkDown(_ index: Int) {
        tracked[index].measurementCharacteristics = []
        tracked[index].state = .reconnecting
        tracked[index].lastNotification = nil
        tracked[index].nextAttempt = ContinuousClock.now + .seconds(options.policy.initialBackoffSeconds)
        guard tracked[index].linkUpInJournal else { return }
        tracked[index].linkUpInJournal = false
        record(
            RideEvent(timeMicroseconds: now(), .disconnected(sensor: tracked[index].address ?? tracked[index].wanted)))
    }

    // MARK: BlueZ events

    private func handle(_ event: BlueZEvent) async {
        guard outcome == nil else { return }
        switch event {
        case .notification(let characteristic, let value):
            guard let index = tracked.firstIndex(where: { $0.devicePath == characteristic.devicePath }),
                let uuid = characteristic.shortUUID
            else { return }
            // BlueZ re-enables notifications by itself after a reconnect, so they can come before our setup.
            linkUp(index)
            let clock = ContinuousClock.now
            if let last = tracked[index].lastNotification, tracked[index].state == .streaming {
                let interval = (clock - last).seconds
                tracked[index].meanIntervalSeconds =
                    tracked[index].meanIntervalSeconds.map { 0.9 * $0 + 0.1 * interval } ?? interval
            }
            tracked[index].lastNotification = clock
            tracked[index].state = .streaming
            arrivals.append(clock)
            let address = tracked[index].address ?? tracked[index].wanted
            record(
                RideEvent(timeMicroseconds: now(), .notification(sensor: address, characteristic: uuid, value: value)))
        case .deviceChanged(let device):
            guard let index = tracked.firstIndex(where: { $0.devicePath == device.path }) else { return }
            tracked[index].batteryPercent = device.batteryPercent ?? tracked[index].batteryPercent
            if !device.connected && tracked[index].linkUpInJournal {
                message = "\(device.displayName) disconnected: reconnecting"
                linkDown(index)
            }
        case .deviceRemoved(let path):
            for index in tracked.indices where tracked[index].devicePath == path {
                linkDown(index)
                tracked[index].devicePath = nil
                tracked[index].state = .searching
            }
        case .bluetoothdLeft:
            message = "bluetoothd left the bus: waiting for it to come back"
            discovering = false
            for index in tracked.indices {
                linkDown(index)
                tracked[index].devicePath = nil
                tracked[index].state = .searching
                tracked[index].connecting = false
            }
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
            finishProblem = LiveRecordingError("the connection to the system bus was lost")
            await stop()
            return
        }
        message = "the connection to the system bus was lost: saving the ride"
        finishProblem = LiveRecordingError("the connection to the system bus was lost; the ride was saved")
        record(RideEvent(timeMicroseconds: now(), .control(.end)))
        await finish(cancelled: false)
    }

    // MARK: Journal and store

    private func now() -> Int64 {
        // The journal's times never go backwards (the ride clock cannot, and this makes it a rule).
        lastEventTime = max(clock.now(), lastEventTime)
        return lastEventTime
    }

    private func record(_ event: RideEvent) {
        describe(event)
        guard riding else {
            watchForPedalling(event)
            return
        }
        guard let problems = pipeline?.add(event), let problem = problems.last else { return }
        // Reported as a replay reports them; the journal keeps the bytes for a later look (`cyclelog replay`).
        problemCount += problems.count
        let sensor = event.sensor.map { sensorName($0) + ": " } ?? ""
        message =
            sensor + problem.message
            + (problemCount > 1 ? " (\(problemCount) problems in this ride; its journal keeps every byte)" : "")
    }

    private func sensorName(_ address: String) -> String {
        tracked.first { $0.address == address }?.name ?? address
    }

    /// Keeps `sensorDescriptions` current: a connection starts a sensor's description, a disconnection ends it.
    private func describe(_ event: RideEvent) {
        switch event.kind {
        case .connected(let sensor, _): sensorDescriptions[sensor] = [event]
        case .disconnected(let sensor): sensorDescriptions[sensor] = nil
        case .wheelCircumference(let sensor, _): sensorDescriptions[sensor, default: []].append(event)
        case .read(let sensor, let characteristic, _):
            var events = sensorDescriptions[sensor, default: []]
            events.removeAll {
                if case .read(_, characteristic, _) = $0.kind { return true }
                return false
            }
            sensorDescriptions[sensor] = events + [event]
        case .notification, .control, .setting: break
        }
    }

    /// One small transaction: the new journal events and every whole minute of samples completed.
    private func flush() {
        guard riding else {
            arrivals.removeAll(keepingCapacity: true)
            return
        }
        guard var pipeline else { return }
        self.pipeline = nil  // so that changing the copy does not copy its storage
        defer { self.pipeline = pipeline }
        let completed = pipeline.takeCompletedSamples()
        if let last = completed.last(where: PedallingWatch.isPedalling), let origin = pipeline.session.startMicroseconds
        {
            // Samples complete a few seconds late (a value holds until the next one); their own time counts.
            lastPedallingMicroseconds = max(lastPedallingMicroseconds, origin + Int64(last.second + 1) * 1_000_000)
        }
        for sample in completed {
            distanceMeters += sample.distanceMeters
            if sample.isRunning { workJoules += sample.powerWatts ?? 0 }
        }
        recentSamples = Array((recentSamples + completed).suffix(3))
        do {
            guard try pipeline.write() else { return }
            let stored = ContinuousClock.now
            for arrival in arrivals { storeLatency.add(seconds: (stored - arrival).seconds) }
            arrivals.removeAll(keepingCapacity: true)
        } catch {
            // Kept in memory and written with the next flush (a locked or briefly full database).
            message = "cannot write to the database (\(error.description)); keeping the ride in memory and retrying"
        }
    }

    private func finish(cancelled: Bool) async {
        guard outcome == nil, riding else { return }
        var summary: WorkoutSummary?
        if cancelled {
            _ = try? store.delete(workoutId)
        } else {
            flush()
            do {
                summary = try pipeline?.finish()
                if summary == nil {
                    finishProblem = LiveRecordingError("no measurement arrived: nothing to save")
                } else {
                    let used = tracked.compactMap { sensor in sensor.address.map { (address: $0, name: sensor.name) } }
                    try store.rememberSensors(used, at: now())
                }
            } catch {
                finishProblem = LiveRecordingError(
                    "the ride could not be saved (\(error.description)); its journal is stored: "
                        + "`cyclelog recover` saves it once the database is writable")
            }
        }
        if options.auto != nil && !stopRequested {
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
        for sensor in tracked {
            for characteristic in sensor.measurementCharacteristics { try? await bluez.stopNotify(characteristic) }
            if let path = sensor.devicePath { try? await bluez.disconnect(path) }
        }
        if discovering, let adapterPath { try? await bluez.stopDiscovery(adapterPath) }
    }

    // MARK: Status

    public func status() -> LiveStatus {
        let session = pipeline?.session ?? Session()
        let time = max(lastEventTime, clock.now())
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
        return LiveStatus(
            workoutId: workoutId, state: riding || options.auto == nil ? session.state.rawValue : "waiting",
            elapsedSeconds: elapsed, movingSeconds: moving,
            powerWatts: mean(recentSamples.map(\.powerWatts)), cadenceRPM: recentSamples.last?.cadenceRPM,
            speedMetersPerSecond: recentSamples.last?.speedMetersPerSecond,
            heartRateBPM: recentSamples.last?.heartRateBPM, distanceMeters: distanceMeters, workJoules: workJoules,
            lap: session.lapStarts.count + 1, goalProgress: progress.map { min(1, $0) },
            sensors: tracked.map {
                LiveStatus.Sensor(
                    name: $0.name ?? $0.wanted, address: $0.address,
                    state: $0.state == .streaming && isZero($0) ? .zero : $0.state, batteryPercent: $0.batteryPercent)
            }, message: message)
    }

    private func isZero(_ sensor: Tracked) -> Bool {
        guard let last = recentSamples.last else { return false }
        return last.powerWatts == 0 || last.cadenceRPM == 0
    }

    private func publishStatus() {
        statusUpdates.publish(status())
    }
}

/// Why a live recording could not start or could not save, in a rider's words.
public struct LiveRecordingError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
