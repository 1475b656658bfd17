import ArgumentParser
import BlueZ
import CyclingSensors
import DBus
import Dispatch
import ExitStatus
import Formats
import Foundation
import HubBridge
import LiveRecording
import ProgramMain
import RecorderInterface
import RecorderService
import Recording
import SensorSetup
import ServiceLifecycle
import WorkoutStore
import Workouts

/// `--bus` and `--control-bus`: which D-Bus buses to use. BlueZ is on the system bus; the recorder's control
/// object is on the session bus unless told otherwise (never confused: Docs/guide/recording.md).
struct BusOptions: ParsableArguments {
    @Option(
        help: "The bus BlueZ is on: system, session or a D-Bus address (default: $CYCLELOG_DBUS_ADDRESS, else system).")
    var bus: String?

    @Option(help: "The Bluetooth adapter to use, by name (hci1) or address (default: the first one BlueZ lists).")
    var adapter: String?

    var bluezBus: BusAddress {
        BusAddress(bus ?? ProcessInfo.processInfo.environment["CYCLELOG_DBUS_ADDRESS"] ?? "system")
    }

    func connectBlueZ() async throws -> BlueZClient {
        try await BlueZClient.connect(to: bluezBus)
    }
}

/// The bus of the recorder's control object.
extension ControlBusOptions {
    var address: BusAddress { BusAddress(busName) }
}

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Lists nearby cycling sensors (power, speed/cadence, heart rate, trainers) through BlueZ.")

    @Option(help: "Seconds to scan.")
    var timeout: Double = 8

    @Flag(help: "One JSON object per sensor: name, address, addressType, rssiDBm, services, batteryPercent.")
    var json = false

    @OptionGroup var buses: BusOptions

    func run() async throws {
        let bluez = try await buses.connectBlueZ()
        let sensors = try await SensorSearch.open(bluez, adapterName: buses.adapter).scan(for: .seconds(timeout))
        for device in sensors {
            let services = device.shortServiceUUIDs.map { String(format: "%04x", $0) }
            if json {
                var object: [(String, JSONValue)] = [
                    ("name", .string(device.displayName)), ("address", .string(device.address)),
                    ("addressType", .string(device.addressType)),
                    ("rssiDBm", device.rssiDBm.map { .number(Double($0)) } ?? .null),
                    ("services", .array(services.map(JSONValue.string))),
                    ("batteryPercent", device.batteryPercent.map { .number(Double($0)) } ?? .null),
                ]
                object.append(("connected", .bool(device.connected)))
                sayOnStandardOutput(JSONValue.object(object).rendered())
            } else {
                let kinds = device.shortServiceUUIDs.compactMap(Self.serviceName).joined(separator: ", ")
                sayOnStandardOutput(
                    "\(device.address)  \(device.displayName)  \(device.rssiDBm.map { "\($0) dBm" } ?? "-")  \(kinds)"
                        + (device.batteryPercent.map { "  battery \($0) %" } ?? ""))
            }
        }
        if sensors.isEmpty && !json {
            sayOnStandardOutput(
                "no cycling sensors found in \(Int(timeout)) s: wake them (turn the cranks, wet the strap) and try again"
            )
        }
    }

    static func serviceName(_ uuid: UInt16) -> String? {
        CyclingService(rawValue: uuid)?.shortName
    }
}

struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Records a ride from live sensors through BlueZ until it is ended (e, Ctrl-C, `cyclelog end`).",
        discussion: """
            Uses the sensors named with --sensor, else the ones recorded with before, else every cycling sensor \
            found while scanning. On a terminal it shows a live dashboard; keys: space pause/resume, l lap, e end, \
            c cancel, m marker (typed), w water (--water-step), s start (with --wait); with a trainer + / - 10 W \
            and f free; with a workout (--workout) n next step, b back, x one more minute, + / - 5 % intensity. \
            SIGINT and SIGTERM end and \
            save the ride. Other programs control it over D-Bus \
            (org.cyclelog.Recorder on the session bus; see the recording guide).

            With --wait it connects the sensors and waits for a start (`cyclelog start`, D-Bus Start) with each \
            ride's name, goal and preset; after each ride it waits for the next start.

            With --auto it waits for the remembered sensors, starts a workout when power or cadence appear (or on \
            a start), ends it after --end-after without pedalling (or without sensors), and waits for the next \
            ride: what the cyclelog service runs. Under systemd (Type=notify) it reports readiness and answers the \
            watchdog.
            """)

    @Option(name: .customLong("sensor"), help: "A sensor's address or name; repeat for several.")
    var sensors: [String] = []

    @Option(help: "The workout's name.")
    var name: String?

    @Option(help: "A goal: time (45m, 1h30m), distance (30km, 20mi) or energy (600kJ).")
    var goal: String?

    @Flag(exclusivity: .exclusive, help: "Where the ride is.")
    var location: WorkoutLocationFlag?

    @Flag(help: "Pause the timer automatically when standing still (always on with --auto).")
    var autoPause = false

    @Flag(help: "Start and end rides on their own, one after the other, until stopped (the service).")
    var auto = false

    @Flag(help: "Connect the sensors and wait for `cyclelog start`; after each ride, wait for the next one.")
    var wait = false

    @Option(help: "With --auto: end a ride after this long without pedalling or without sensors (90s, 5m, 1h).")
    var endAfter = "5m"

    @Option(help: "What the dashboard's w key logs: one glass of water (250ml, 0.33l, 12oz).")
    var waterStep = "250ml"

    @Option(help: "Members of this Unix group may also control the ride over D-Bus (the service: cyclelog).")
    var controlGroup: String?

    @OptionGroup var wheel: WheelOptions
    @OptionGroup(title: "Smart trainer") var trainer: TrainerOptions
    @OptionGroup(title: "Structured workout") var workout: WorkoutOptions
    @OptionGroup(title: "Sensor hub") var hub: BridgeOptions

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var buses: BusOptions
    @OptionGroup var control: ControlBusOptions

    @Option(
        help: ArgumentHelp(
            "Also write the Bluetooth traffic of the ride's sensors to this btsnoop file, as `btmon -w` does.",
            discussion: "Needs CAP_NET_RAW (see `cyclelog capture --help`); without it the ride is recorded alone.",
            valueName: "file"))
    var capture: String?

    @Option(
        help: ArgumentHelp(
            "After each saved ride, write its sync identifier and version to this file.",
            discussion:
                "A systemd path unit watching the file (cyclelog-sync.path) then starts cyclelog-sync at once.",
            valueName: "file"))
    var syncTrigger: String?

    @Flag(help: "Print a plain status line every few seconds even on a terminal.")
    var plain = false

    @Flag(help: "At the end, print how long notifications took from arrival to the database (p50, p99, max).")
    var latency = false

    @Flag(help: "Log what the recorder and its service do to standard error (also: CYCLELOG_LOG_LEVEL=debug).")
    var verbose = false

    func validate() throws {
        if wait && !auto && (name != nil || goal != nil || location != nil) {
            throw ValidationError(
                "with --wait each ride takes its name, goal and place from its start: `cyclelog start --name … --goal …`"
            )
        }
        if let goal, WorkoutGoal(goal) == nil {
            throw ValidationError("--goal takes a time (45m), a distance (30km) or an energy (600kJ), not '\(goal)'")
        }
        guard Intake(.water, waterStep) != nil else {
            throw ValidationError("--water-step takes \(Intake.forms(.water)), not '\(waterStep)'")
        }
        guard case .timeSeconds = WorkoutGoal(endAfter) else {
            throw ValidationError("--end-after takes a time such as 90s, 5m or 1h, not '\(endAfter)'")
        }
        try hub.validate(takesStarts: wait || auto)
    }

    var endAfterSeconds: Double {
        if case .timeSeconds(let seconds) = WorkoutGoal(endAfter) { return seconds }
        return 300
    }

    func run() async throws {
        // What was asked is checked first, then Bluetooth: a mistake or a box without an adapter creates nothing
        // (the database is read, not made, until the recorder can start).
        let reading = try WorkoutStore(path: database.path, access: .read)
        let chosen = try workout.choice(reading, at: Int64(Date().timeIntervalSince1970 * 1_000_000))
        for entry in try reading.list() where entry.status != .complete {
            printError(
                "cyclelog: workout \(entry.id) was cut short (crash, kill or power cut); `cyclelog recover` saves it")
        }
        let bluez = try await buses.connectBlueZ()
        let bridge = try await hub.hub(bus: buses.bluezBus, bluez: bluez, recordingAdapter: buses.adapter)
        let store = try database.open()
        var options = LiveRecorder.Options()
        options.adapter = buses.adapter
        options.plan = WorkoutPlan(name: name, goal: goal.flatMap(WorkoutGoal.init), location: location?.value)
        options.autoPause = autoPause ? AutoPause() : nil
        options.auto = auto ? LiveRecorder.AutoRide(endAfterSeconds: endAfterSeconds) : nil
        options.waitForStart = wait
        options.wheelCircumferenceMillimetres = wheel.wheelCircumference
        trainer.apply(to: &options)
        options.hub =
            bridge != nil
            ? .always
            : await hub.choice(takesStarts: wait || auto, bluez: bluez, recordingAdapter: buses.adapter)
        options.workout = chosen
        options.sensors = sensors
        let known = try await store.call { (store) throws(StoreError) in try store.knownSensors() }
        // dbus-daemon names itself to the services it starts.
        options.complete(
            knownSensors: known, startedByTheBus: ProcessInfo.processInfo.environment["DBUS_STARTER_ADDRESS"] != nil)
        let hciCapture = capture.flatMap {
            CaptureCommand.forRide(file: $0, adapter: buses.adapter, sensors: options.sensors)
        }
        options.observers = [hciCapture as (any RideObserver)?, syncTrigger.map(SavedRideSignal.init(path:))]
            .compactMap { $0 }
        let recorder = LiveRecorder(bluez: bluez, store: store, options: options)
        let logger = Logs.logger("record", verbose: verbose)
        let (address, owners) = (control.address, controlGroup)
        let service = RecordingService(
            recorder: recorder, exportControl: { await Self.exportControl(recorder, on: address, group: owners) },
            serviceManager: ServiceManagerNotifier(), logger: logger)
        let interactive = !plain && isatty(0) == 1 && isatty(1) == 1
        let display = LiveDisplay(
            interactive: interactive, recorder: recorder,
            waterStep: Intake(.water, waterStep) ?? Intake(.water, "250ml")!)
        let keys = interactive ? display.startKeys() : nil
        defer { display.stopKeys(keys) }
        // SIGINT and SIGTERM start a graceful shutdown: the service ends and saves the ride.
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigint, .sigterm], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await status in recorder.statusUpdates.subscribe() { await display.show(status) }
            }
            tasks.addTask {
                for await announcement in recorder.announcements.subscribe() {
                    switch announcement {
                    case .notice(let notice): display.notice(notice)
                    case .rideSaved(let summary):
                        // Unbuffered, so that in a pipe or the service's journal each summary comes before the
                        // next ride.
                        let text = SummaryText.render(summary, calibrations: CalibrationText.before(summary, in: store))
                        StandardStream.output.write(text + "\n")
                    }
                }
            }
            if let bytes = keys?.bytes { tasks.addTask { await display.follow(bytes) } }
            if let bridge {
                // Subscribed before the recorder starts, so that the hub sends every reading.
                let (messages, stack) = (recorder.toApps.subscribe(), await bluez.events())
                tasks.addTask {
                    await bridge.run(messages, trainer: recorder, stack: stack) {
                        printError("cyclelog: \($0)")
                    }
                }
            }
            if options.hub == .onStart {
                let (hub, bus, adapter) = (hub, buses.bluezBus, buses.adapter)
                tasks.addTask {
                    await HubBridge.forRides(
                        of: recorder, stack: { await bluez.events() },
                        make: { try await hub.make(bus: bus, bluez: bluez, recordingAdapter: adapter) },
                        say: { printError("cyclelog: \($0)") })
                }
            }
            if let hciCapture, let file = capture {
                tasks.addTask {
                    let outcome = await hciCapture.run()
                    printError(CaptureCommand.report(outcome, file: file))
                    // The ride goes on without the rest of its capture.
                    if let problem = outcome.problem { printError("cyclelog: \(problem)") }
                }
            }
            try await group.run()
            hciCapture?.stop()
            // The recorder finished its streams as it ended; the presenters end with them, the keys now.
            display.stopKeys(keys)
            try await tasks.waitForAll()
        }
        if latency { Self.printLatency(await recorder.storeLatency) }
        switch service.result {
        case .success(let summary?):
            sayOnStandardOutput(SummaryText.render(summary, calibrations: CalibrationText.before(summary, in: store)))
        case .success(nil):
            sayOnStandardOutput(
                auto || wait ? "Stopped while waiting for a ride." : "The ride was cancelled; nothing was saved.")
        case .failure(let error):
            throw error
        case nil:
            throw CommandFailure("the recorder stopped before it started")
        }
    }

    private static func printLatency(_ histogram: LatencyHistogram) {
        func milliseconds(_ seconds: Double?) -> String { seconds.map { String(Int(($0 * 1000).rounded())) } ?? "-" }
        printError(
            "store latency: \(histogram.count) notifications, p50 \(milliseconds(histogram.quantileSeconds(0.5))) ms, "
                + "p99 \(milliseconds(histogram.quantileSeconds(0.99))) ms, "
                + "max \(milliseconds(histogram.count > 0 ? histogram.maximumSeconds : nil)) ms")
    }

    /// The control object (its connection kept open by the service for the whole ride), or nil with a warning:
    /// the ride is recorded all the same.
    private static func exportControl(
        _ recorder: LiveRecorder, on address: BusAddress, group: String?
    ) async -> RecorderControl.Exported? {
        do {
            let connection = try await DBusConnection.connect(to: address)
            return try await RecorderControl.export(on: connection, recorder: recorder, controlGroup: group)
        } catch {
            printError(
                "cyclelog: recording without remote control: \(error.description). Other programs control the "
                    + "ride through \(address); run inside a desktop session, or use --control-bus.")
            return nil
        }
    }
}

enum WorkoutLocationFlag: String, EnumerableFlag {
    case indoor
    case outdoor

    var value: WorkoutLocation { self == .indoor ? .indoor : .outdoor }
}

/// `cyclelog pause|resume|lap|end|cancel|start|marker|water`: one method call on the running recorder.
struct ControlCommand {
    /// Sends `command`; its reply. A refusal or a wrong argument exits 1 with the recorder's words; no recorder on
    /// the bus exits 1 for a control of a ride (there is no ride), 2 for a start, marker or drink (`noRecorder`:
    /// there is no recorder to take it, and the message says how to start one).
    @discardableResult
    static func call(_ command: RecorderCommand, bus: BusAddress, noRecorder: ExitStatus = .failed) async throws
        -> [DBusValue]
    {
        let connection = try await connect(bus)
        do {
            return try await RecorderClient(connection).send(command, requestId: UUID().uuidString.lowercased())
        } catch {
            let missing = RecorderControl.isMissing(error)
            throw CommandFailure(
                missing && noRecorder != .failed
                    ? "no recorder is running on \(bus): start one with `cyclelog record --wait` (or, for the "
                        + "service, `systemctl start cyclelog`)"
                    : Self.explain(error, bus),
                missing ? noRecorder : .failed)
        }
    }

    /// The recorder's bus, or the one failure every command that asks the recorder ends with when it cannot be
    /// reached (no session bus here, a bus that went away): in words, with where the recorder is, status 2 (what
    /// the command needs cannot be used).
    static func connect(_ bus: BusAddress) async throws -> DBusConnection {
        do {
            return try await DBusConnection.connect(to: bus)
        } catch {
            throw CommandFailure(
                "cannot reach \(bus) (\(error.message)), so no recorder either: the recorder's control object is on "
                    + "the session bus of a desktop session, or on the system bus for the service (--control-bus system)",
                .cannotUse)
        }
    }

    static func explain(_ error: DBusError, _ bus: BusAddress) -> String {
        if RecorderControl.isMissing(error) {
            return "no ride is being recorded (nothing owns \(RecorderControl.busName) on \(bus))"
        }
        switch error.name {
        case RecorderControl.refusedError, RecorderControl.noSensorsError, DBusError.invalidArgumentsName,
            DBusConnection.noSessionBusName:
            return error.message
        default: return error.description
        }
    }
}

extension ControlCommand {
    /// The recorder's status (`GetAll`), answered within `timeout`.
    static func status(_ bus: BusAddress, timeout: Duration = .seconds(25)) async throws -> RecorderStatus {
        let client = RecorderClient(try await connect(bus))
        do {
            return try await client.status(timeout: timeout)
        } catch {
            throw CommandFailure(explain(error, bus))
        }
    }

    /// The recorder's status now, or nil when it cannot be asked (it ended, the bus went).
    static func statusIfAny(_ bus: BusAddress) async -> RecorderStatus? {
        try? await status(bus, timeout: .seconds(2))
    }

    /// "workout 7", from the status read before a control (after an end there may be nobody to ask).
    static func workout(_ status: RecorderStatus?) -> String {
        status.flatMap { $0.workoutId > 0 ? "workout \($0.workoutId)" : nil } ?? "the ride"
    }

    /// Sends `command` and prints what it did, in words (a control that answers nothing looks like it failed).
    /// `applied` tells the status after the command from one read before the recorder has applied it.
    static func callAndSay(
        _ command: RecorderCommand, bus: BusAddress, noRecorder: ExitStatus = .failed,
        applied: (_ before: RecorderStatus?, _ after: RecorderStatus) -> Bool = { _, _ in true },
        _ said: (_ before: RecorderStatus?, _ after: RecorderStatus?) -> String
    ) async throws {
        let before = await statusIfAny(bus)
        try await call(command, bus: bus, noRecorder: noRecorder)
        let said = said(before, await status(bus) { applied(before, $0) })
        sayOnStandardOutput(said.prefix(1).uppercased() + said.dropFirst())
    }

    /// The status once `applied` holds of it, read again every 50 ms for at most 2 s (nil: nobody answers). An
    /// End is applied after its reply has gone, so that the caller hears the answer before a recorder that
    /// finishes leaves the bus; a status read at once may still show the ride before it.
    static func status(_ bus: BusAddress, once applied: (RecorderStatus) -> Bool) async -> RecorderStatus? {
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            let status = await statusIfAny(bus)
            guard let status, !applied(status), ContinuousClock.now < deadline else { return status }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// A command that is one of the ride's controls (pause, resume, lap, end, cancel).
protocol RecorderMethodCommand: AsyncParsableCommand {
    static var workoutControl: WorkoutControl { get }
    var control: ControlBusOptions { get }
    /// What the command did, from the recorder's status before and after it (nil: it could not be asked).
    static func said(before: RecorderStatus?, after: RecorderStatus?) -> String
}

extension RecorderMethodCommand {
    func run() async throws {
        try await ControlCommand.callAndSay(.control(Self.workoutControl), bus: control.address, Self.said)
    }
}

struct Pause: RecorderMethodCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pauses the ride being recorded.")
    static let workoutControl = WorkoutControl.pause
    @OptionGroup var control: ControlBusOptions

    static func said(before: RecorderStatus?, after: RecorderStatus?) -> String {
        "\(ControlCommand.workout(before)) is paused"
            + (after.flatMap { $0.elapsedSeconds.isFinite ? $0.elapsedSeconds : nil }.map {
                " at \(SummaryText.duration($0))"
            } ?? "") + "."
    }
}

struct Resume: RecorderMethodCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resumes the paused ride.")
    static let workoutControl = WorkoutControl.resume
    @OptionGroup var control: ControlBusOptions

    static func said(before: RecorderStatus?, after: RecorderStatus?) -> String {
        "\(ControlCommand.workout(before)) goes on."
    }
}

struct Lap: RecorderMethodCommand {
    static let configuration = CommandConfiguration(
        commandName: "lap", abstract: "Starts a new lap in the ride being recorded.")
    static let workoutControl = WorkoutControl.lap
    @OptionGroup var control: ControlBusOptions

    static func said(before: RecorderStatus?, after: RecorderStatus?) -> String {
        (after.map { "lap \($0.lap)" } ?? "a new lap")
            + " of \(ControlCommand.workout(before)) has started."
    }
}

struct End: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "end", abstract: "Ends the ride being recorded and saves it.",
        discussion: """
            The ride is saved 30 s after the End, so that `cyclelog undo` (or Undo on any screen) can take the \
            End back and go on with the same ride; `--now` saves it at once, as does a second End.
            """)
    @Flag(help: "Save the ride at once, without the 30 s in which the End can be undone.") var now = false
    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        // A first End leaves the ride ended for 30 s; a second one saves it (the recorder then waits, or exits).
        try await ControlCommand.callAndSay(
            now ? .endNow : .control(.end), bus: control.address,
            applied: { before, after in now || (before?.state == .ended) != (after.state == .ended) }
        ) { before, after in
            let workout = ControlCommand.workout(before)
            guard !now, let left = after?.undoSecondsLeft, after?.state == .ended else {
                return "\(workout) is ended and saved (`cyclelog show last`)."
            }
            return "\(workout) is ended: it is saved in \(Int(left)) s (`cyclelog undo` goes on with it, "
                + "`cyclelog end --now` saves it now)."
        }
    }
}

struct Undo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undo", abstract: "Takes back an action of the ride being recorded, within 30 s.",
        discussion: """
            Without ACTION, the latest action is undone: a lap, a marker, a drink, a pause or a resume, the \
            workout's skip, back, extend or intensity, the trainer's mode or target, or the End. `cyclelog status` \
            shows the action that can be undone and its number. A start is undone by `cyclelog cancel`.
            """)
    @Argument(help: "The number of the action to undo (`cyclelog status`: Undo); the latest when left out.")
    var action: Int64?
    @OptionGroup var control: ControlBusOptions

    func validate() throws {
        if let action, action < 1 { throw ValidationError("ACTION is the number of an action, from 1") }
    }

    func run() async throws {
        let reply = try await ControlCommand.call(.undo(action: action), bus: control.address)
        sayOnStandardOutput("Undone: \(reply.first?.string ?? "the action").")
    }
}

struct Cancel: RecorderMethodCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancels the ride being recorded; nothing is saved.")
    static let workoutControl = WorkoutControl.cancel
    @OptionGroup var control: ControlBusOptions

    static func said(before: RecorderStatus?, after: RecorderStatus?) -> String {
        "\(ControlCommand.workout(before)) is cancelled: nothing of it is saved."
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Shows the ride being recorded: its state, times, readings, sensors, trainer and workout.")
    @OptionGroup var control: ControlBusOptions
    @Flag(help: "Every D-Bus property, as one JSON object with the property names as keys (for scripts).")
    var json = false

    func run() async throws {
        let status = try await ControlCommand.status(control.address)
        if json {
            sayOnStandardOutput(JSONValue.object(status.jsonFields).rendered())
        } else {
            for line in StatusText.render(status) { sayOnStandardOutput(line) }
        }
    }
}

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Saves rides that were cut short (crash, kill, power cut) from their stored journals.")
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let outcomes = try RideRecovery.run(try database.open())
        guard !outcomes.isEmpty else {
            sayOnStandardOutput("Nothing to recover: every stored ride is complete.")
            return
        }
        var failed = false
        for outcome in outcomes {
            switch outcome {
            case .busy(let id):
                sayOnStandardOutput("Workout \(id) is being recorded or replayed right now; left alone.")
            case .discarded(let id):
                sayOnStandardOutput("Discarded workout \(id): it was cut short before any of its data was stored.")
            case .recovered(let id, let summary):
                sayOnStandardOutput("Recovered workout \(id):")
                sayOnStandardOutput(SummaryText.render(summary))
            case .failed(let id, let error):
                failed = true
                printError("cyclelog: workout \(id): \(error.description)")
            }
        }
        if failed { throw ExitStatus.failed.saidAlready }
    }
}
