import BlueZ
import CyclingSensors
import DBus
import LiveRecording
import SensorHub
import Workouts

/// The sensor hub on Bluetooth: the recorder's live readings re-broadcast (`HubBroadcast`) through a BlueZ
/// peripheral on an adapter of its own, as one power meter (Cycling Power), one speed and cadence sensor (Cycling
/// Speed and Cadence), one heart-rate strap (Heart Rate) and one Fitness Machine whose Indoor Bike Data carries the
/// same fused values. The values an app reads (features, locations) say what the notifications carry. No control is
/// passed through yet: the Fitness Machine declares no target and has no control point.
public actor HubBridge {
    /// The name apps list when the rider names none: short enough for the advertisement with all four services.
    public static let defaultName = "cyclelog"
    /// The hub's object path on its bus connection.
    static let root = "/org/cyclelog/hub"

    public nonisolated let adapter: BluetoothAdapter
    /// The name apps list.
    public nonisolated let name: String
    let peripheral: BlueZPeripheral
    private var broadcast = HubBroadcast()

    /// The services the hub serves, with what a read of each characteristic answers.
    static let services: [BlueZPeripheral.Service] = [
        .init(
            0x1818,
            [
                .init(Characteristic.cyclingPowerMeasurement.rawValue, [.notify]),
                // Crank Revolution Data Supported (CPS 3.2, bit 3): each measurement carries the hub's crank
                // revolutions.
                .init(
                    Characteristic.cyclingPowerFeature.rawValue, [.read],
                    value: CyclingPowerFeature(features: .crankRevolutionData).encoded()),
                // Other (0): the power is the fused one, not one sensor's on one part of the bike.
                .init(Characteristic.sensorLocation.rawValue, [.read], value: [0x00]),
            ]),
        .init(
            0x1816,
            [
                .init(Characteristic.cscMeasurement.rawValue, [.notify]),
                // Wheel and crank revolution data (CSCS 3.2, bits 0 and 1).
                .init(
                    Characteristic.cscFeature.rawValue, [.read],
                    value: CSCFeature(features: [.wheelRevolutionData, .crankRevolutionData]).encoded()),
                // Mandatory with wheel revolution data (CSCS 3.4): an app sets the cumulative wheel revolutions.
                .init(Characteristic.scControlPoint.rawValue, [.write, .indicate]),
            ]),
        .init(
            0x180D,
            [
                .init(Characteristic.heartRateMeasurement.rawValue, [.notify]),
                // Chest (1): the strap's place.
                .init(Characteristic.bodySensorLocation.rawValue, [.read], value: [0x01]),
            ]),
        .init(
            0x1826,
            [
                .init(
                    Characteristic.fitnessMachineFeature.rawValue, [.read],
                    value: HubDeclaration.fitnessMachineFeatureWithoutControl.encoded()),
                .init(Characteristic.indoorBikeData.rawValue, [.notify]),
            ]),
    ]

    /// A hub on `adapter`, served over `connection` (a bus connection of its own, so that its traffic never waits
    /// behind the recorder's), advertised as `name`.
    public init(connection: DBusConnection, adapter: BluetoothAdapter, name: String = defaultName) {
        self.adapter = adapter
        self.name = name
        let control = SpeedAndCadenceControl()
        peripheral = BlueZPeripheral(
            connection: connection, root: Self.root, services: Self.services, localName: name
        ) { uuid, value, _ in
            guard uuid == Characteristic.scControlPoint.rawValue else { return .accepted }
            control.written(value)
            return .accepted
        }
        self.control = control
    }

    /// Writes to the SC Control Point, answered by `run` in the order they came.
    private let control: SpeedAndCadenceControl

    /// The adapter the hub advertises on: the one named, else the first that is not the recorder's own (one
    /// controller as central and peripheral at once is the known failure mode: connections drop while it
    /// advertises). Fails in words when there is none.
    public static func chooseAdapter(
        _ adapters: [BluetoothAdapter], named name: String?, recordingOn recording: String
    ) throws(LiveRecordingError) -> BluetoothAdapter {
        if let name { return try LiveRecorder.chooseAdapter(adapters, named: name) }
        guard let other = adapters.first(where: { $0.path != recording }) else {
            throw LiveRecordingError(
                .noAdapter,
                "the hub needs a Bluetooth adapter of its own beside the one the sensors are on (\(recording.split(separator: "/").last ?? "")): "
                    + "plug in a second adapter, or name the same one with --bridge-adapter at the risk of dropped "
                    + "connections")
        }
        return other
    }

    /// The hub for a whole recording: served and advertised, `readings` re-broadcast until they end, then
    /// withdrawn; `say` is told where it advertises and which apps come and go (`stack`: BlueZ's events), or why
    /// BlueZ refused it, in which case the ride is recorded without it.
    public func run<Readings: AsyncSequence & Sendable>(
        _ readings: Readings, stack: AsyncStream<BlueZEvent>, say: @escaping @Sendable (String) -> Void
    ) async where Readings.Element == LiveRecorder.LiveReading {
        do {
            try await start()
        } catch {
            say("\(error.description) The ride is recorded without the hub.")
            return
        }
        say("the hub is advertising as \"\(name)\" on \(adapter.interfaceName) (\(adapter.address))")
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await event in stack {
                    if let line = await self.apps(event) { say(line) }
                }
            }
            await serve(readings)
            tasks.cancelAll()
        }
    }

    /// Starts serving and advertising. Fails in words when the adapter cannot serve or advertise.
    func start() async throws(BlueZError) {
        try await peripheral.register(on: adapter.path)
    }

    /// Re-broadcasts `readings` until they end or the task is cancelled, then stops advertising.
    func serve<Readings: AsyncSequence & Sendable>(_ readings: Readings) async
    where Readings.Element == LiveRecorder.LiveReading {
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { [control] in
                for await written in control.writes { await self.answerControl(written) }
            }
            do {
                for try await reading in readings { await take(reading) }
            } catch {}
            control.finish()
            await tasks.waitForAll()
        }
        await peripheral.unregister()
    }

    /// What BlueZ says of a device on the hub's adapter: a line when an app connects to the hub or leaves it (the
    /// devices on that adapter are the apps; the sensors are on the recorder's).
    public func apps(_ event: BlueZEvent) -> String? {
        switch event {
        case .deviceChanged(let device) where device.adapterPath == adapter.path:
            let was = connectedApps[device.path] != nil
            guard device.connected != was else { return nil }
            connectedApps[device.path] = device.connected ? device : nil
            return device.connected
                ? "an app connected to the hub: \(Self.label(device))" : "\(Self.label(device)) left the hub"
        case .deviceRemoved(let path):
            guard let device = connectedApps.removeValue(forKey: path) else { return nil }
            return "\(Self.label(device)) left the hub"
        case .bluetoothdLeft:
            let gone = connectedApps.values.sorted { $0.address < $1.address }
            connectedApps = [:]
            return gone.isEmpty ? nil : "bluetoothd stopped: the apps on the hub lost it"
        default:
            return nil
        }
    }

    /// An app as a rider recognises it: its name and address, or its address until BlueZ has read its name.
    static func label(_ device: BluetoothDevice) -> String {
        device.name.map { "\($0) (\(device.address))" } ?? device.address
    }

    /// The apps connected to the hub now, by their Device1 path.
    private var connectedApps: [String: BluetoothDevice] = [:]

    /// One live reading: what it changes, notified to the apps subscribed.
    func take(_ reading: LiveRecorder.LiveReading) async {
        for notification in broadcast.take(reading.readings, shown: reading.shown, at: reading.arrivalMicroseconds) {
            _ = try? await peripheral.notify(notification.characteristic.rawValue, notification.value)
        }
    }

    private func answerControl(_ written: [UInt8]) async {
        let answer = broadcast.speedAndCadenceControl(written)
        _ = try? await peripheral.notify(Characteristic.scControlPoint.rawValue, answer)
    }
}

/// The SC Control Point's writes, in order, for the hub to answer after BlueZ has the write's response.
final class SpeedAndCadenceControl: Sendable {
    let writes: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation

    init() { (writes, continuation) = AsyncStream.makeStream() }

    func written(_ value: [UInt8]) { continuation.yield(value) }
    func finish() { continuation.finish() }
}
