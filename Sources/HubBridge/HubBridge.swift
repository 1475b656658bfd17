import BlueZ
import CyclingSensors
import DBus
import LiveRecording
import SensorHub
import TrainerControl
import Workouts

/// The sensor hub on Bluetooth: what the recorder sends the hub's apps (`HubMessage`: each reading re-broadcast,
/// made in the recorder for every transport) notified through a BlueZ peripheral on an adapter of its own, as one
/// power meter (Cycling Power), one speed and cadence sensor (Cycling Speed and Cadence), one heart-rate strap
/// (Heart Rate) and one Fitness Machine whose Indoor Bike Data carries the same fused values. The values an app
/// reads (features, locations) say what the notifications carry. With a recorder to pass them to (`AppRequests`),
/// the Fitness Machine also has a control point: what an app asks of it goes to the real trainer through the
/// rider's own trainer control, and the recorder's answers come back.
public actor HubBridge {
    /// The name apps list when the rider names none: short enough for the advertisement with all four services.
    public static let defaultName = "cyclelog"
    /// The hub's object path on its bus connection.
    static let root = "/org/cyclelog/hub"

    public nonisolated let adapter: BluetoothAdapter
    /// The name apps list.
    public nonisolated let name: String
    let peripheral: BlueZPeripheral

    /// The hub's services (`HubService.hub`) as BlueZ serves them.
    static func services(passingControl: Bool) -> [BlueZPeripheral.Service] {
        HubService.hub(passingControl: passingControl).map { service in
            BlueZPeripheral.Service(
                service.uuid,
                service.characteristics.map { characteristic in
                    let flags: [(HubCharacteristic.Properties, BlueZPeripheral.Characteristic.Property)] = [
                        (.read, .read), (.write, .write), (.notify, .notify), (.indicate, .indicate),
                    ]
                    return BlueZPeripheral.Characteristic(
                        characteristic.uuid, flags.filter { characteristic.properties.contains($0.0) }.map(\.1),
                        value: characteristic.value)
                })
        }
    }

    /// A hub on `adapter`, served over `connection` (a bus connection of its own, so that its traffic never waits
    /// behind the recorder's), advertised as `name`; `passingControl`: with the Fitness Machine's control point,
    /// whose writes `run` passes to its recorder.
    public init(
        connection: DBusConnection, adapter: BluetoothAdapter, name: String = defaultName,
        passingControl: Bool = false
    ) {
        self.adapter = adapter
        self.name = name
        let writes = HubWrites()
        peripheral = BlueZPeripheral(
            connection: connection, root: Self.root, services: Self.services(passingControl: passingControl),
            localName: name
        ) { uuid, value, device in
            writes.written(uuid, value, app: device.map(Self.address(ofDevice:)))
            return .accepted
        }
        self.writes = writes
    }

    /// Where what an app writes to a control point goes (the recorder), while `run` runs.
    private var trainer: (any AppRequests)?
    /// Writes to the control points, answered by `run` in the order they came.
    private let writes: HubWrites

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

    /// The hub for a whole recording: served and advertised, the recorder's `messages` sent to the apps until they
    /// end, then withdrawn; `say` is told where it advertises and which apps come and go (`stack`: BlueZ's events),
    /// or why BlueZ refused it, in which case the ride is recorded without it. What an app writes to a control
    /// point goes to `trainer` (the recorder whose `messages` these are).
    public func run(
        _ messages: AsyncStream<HubMessage>, trainer: (any AppRequests)? = nil, stack: AsyncStream<BlueZEvent>,
        say: @escaping @Sendable (String) -> Void
    ) async {
        self.trainer = trainer
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
                    guard let change = await self.apps(event) else { continue }
                    say(change.line)
                    await self.told(change)
                }
            }
            await serve(messages)
            tasks.cancelAll()
        }
    }

    /// The hub for the rides whose Start asks for it (`LiveRecorder.HubChoice.onStart`): made by `make` once the
    /// recorder's status wants it (`LiveStatus.hubWanted`), run with the recorder's messages from then on, and
    /// withdrawn once the status no longer wants it (the ride saved or cancelled), the apps still connected then let
    /// go of the trainer; until the recorder's status ends. A hub that cannot be made is said once per ride, which is
    /// recorded without it. `stack` subscribes to BlueZ's events for one hub.
    public static func forRides(
        of recorder: LiveRecorder, stack: @escaping @Sendable () async -> AsyncStream<BlueZEvent>,
        make: @escaping @Sendable () async throws -> HubBridge, say: @escaping @Sendable (String) -> Void
    ) async {
        await withTaskGroup(of: Void.self) { rides in
            // The end of the running hub's messages; `tried`: this want of the hub was acted on (made or said).
            var end: AsyncStream<HubMessage>.Continuation?
            var tried = false
            for await status in recorder.statusUpdates.subscribe() {
                if status.hubWanted, !tried {
                    tried = true
                    let hub: HubBridge
                    do {
                        hub = try await make()
                    } catch {
                        say("\(error) The ride is recorded without the hub.")
                        continue
                    }
                    let (messages, ending) = AsyncStream.makeStream(of: HubMessage.self)
                    end = ending
                    let (toApps, events) = (recorder.toApps.subscribe(), await stack())
                    rides.addTask {
                        await withTaskGroup(of: Void.self) { relay in
                            relay.addTask {
                                for await message in toApps { ending.yield(message) }
                                ending.finish()
                            }
                            await hub.run(messages, trainer: recorder, stack: events, say: say)
                            relay.cancelAll()
                        }
                        await hub.appsLeftWithTheHub(say: say)
                    }
                } else if !status.hubWanted, tried {
                    tried = false
                    end?.finish()
                    end = nil
                }
            }
            end?.finish()
        }
    }

    /// The hub withdrawn with apps still connected to it: the recorder lets go of what they held.
    func appsLeftWithTheHub(say: @Sendable (String) -> Void) async {
        let gone = connectedApps.values.map(Self.label).sorted()
        let addresses = connectedApps.values.map(\.address).sorted()
        connectedApps = [:]
        guard !addresses.isEmpty else { return }
        let change = AppChange(
            line: "the hub stopped with the ride: \(gone.joined(separator: ", ")) lost it", left: addresses)
        say(change.line)
        await told(change)
    }

    /// Starts serving and advertising. Fails in words when the adapter cannot serve or advertise.
    func start() async throws(BlueZError) {
        try await peripheral.register(on: adapter.path)
    }

    /// Sends the apps `messages` until they end or the task is cancelled, then stops advertising.
    func serve(_ messages: AsyncStream<HubMessage>) async {
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask { [writes] in
                for await write in writes.stream { await self.answer(write) }
            }
            for await message in messages { await tell(message) }
            writes.finish()
            await tasks.waitForAll()
        }
        await peripheral.unregister()
    }

    /// An app connecting to the hub, naming itself or leaving it: the line said, the app that came or gave its name
    /// (its address and name) and the addresses of the apps that left.
    public struct AppChange: Equatable, Sendable {
        public var line: String
        public var joined: Joined? = nil
        public var left: [String] = []

        public struct Joined: Equatable, Sendable {
            public var address: String
            public var name: String?
        }
    }

    /// What BlueZ says of a device on the hub's adapter: an app connecting to the hub or leaving it (the devices on
    /// that adapter are the apps; the sensors are on the recorder's).
    public func apps(_ event: BlueZEvent) -> AppChange? {
        switch event {
        case .deviceChanged(let device) where device.adapterPath == adapter.path:
            let was = connectedApps[device.path]
            guard device.connected != (was != nil) else {
                // BlueZ reads a connected app's name after the link is up: the screens name it from then on.
                guard let was, was.name == nil, let name = device.name else { return nil }
                connectedApps[device.path] = device
                return AppChange(
                    line: "the app at \(device.address) is \(name)",
                    joined: .init(address: device.address, name: name))
            }
            connectedApps[device.path] = device.connected ? device : nil
            return device.connected
                ? AppChange(
                    line: "an app connected to the hub: \(Self.label(device))",
                    joined: .init(address: device.address, name: device.name))
                : AppChange(line: "\(Self.label(device)) left the hub", left: [device.address])
        case .deviceRemoved(let path):
            guard let device = connectedApps.removeValue(forKey: path) else { return nil }
            return AppChange(line: "\(Self.label(device)) left the hub", left: [device.address])
        case .bluetoothdLeft:
            let gone = connectedApps.values.map(\.address).sorted()
            connectedApps = [:]
            return gone.isEmpty ? nil : AppChange(line: "bluetoothd stopped: the apps on the hub lost it", left: gone)
        default:
            return nil
        }
    }

    /// An app as a rider recognises it: its name and address, or its address until BlueZ has read its name.
    static func label(_ device: BluetoothDevice) -> String {
        device.name.map { "\($0) (\(device.address))" } ?? device.address
    }

    /// An app's address from its Device1 path (`…/dev_00_AA_02_00_00_06`), as bluetoothd names a writer.
    static func address(ofDevice path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard name.hasPrefix("dev_") else { return String(name) }
        return name.dropFirst(4).replacingOccurrences(of: "_", with: ":")
    }

    /// The apps connected to the hub now, by their Device1 path.
    private var connectedApps: [String: BluetoothDevice] = [:]

    /// One write to a control point, passed to the recorder: the SC Control Point's answered with what the recorder
    /// answers (without one, as `HubBroadcast` answers), the Fitness Machine's answer coming back as a `HubMessage`.
    private func answer(_ write: HubWrites.Write) async {
        switch Characteristic(rawValue: write.characteristic) {
        case .scControlPoint:
            // Carried out by the recorder, which makes what the apps are sent.
            let answer =
                await trainer?.appWroteSpeedAndCadence(write.value, by: writer(of: write))
                ?? HubBroadcast.speedAndCadenceAnswer(write.value).answer
            _ = try? await peripheral.notify(Characteristic.scControlPoint.rawValue, answer)
        case .fitnessMachineControlPoint:
            await trainer?.appWrote(write.value, by: writer(of: write))
        default:
            break
        }
    }

    /// Who wrote `write`: bluetoothd names the writer; were it not to, the one app connected wrote it.
    private func writer(of write: HubWrites.Write) -> String {
        write.app ?? (connectedApps.count == 1 ? connectedApps.values.first?.address : nil) ?? "an app"
    }

    /// The recorder told of an app that came or left.
    private func told(_ change: AppChange) async {
        if let joined = change.joined { await trainer?.appJoined(joined.address, name: joined.name) }
        for app in change.left { await trainer?.appLeft(app) }
    }

    /// What the recorder tells the apps: a reading's values notified, an answer or a status indicated, or what the
    /// real trainer declared, which an app reads from then on.
    func tell(_ message: HubMessage) async {
        for (characteristic, value) in message.characteristicValues {
            _ = try? await peripheral.notify(characteristic, value)
        }
    }
}

/// Where the hub passes what an app asks of the trainer: the recorder.
public protocol AppRequests: Sendable {
    /// App `app` (its address) connected to the hub, or gave its `name` once connected.
    func appJoined(_ app: String, name: String?) async
    /// App `app` (its address) wrote `bytes` to the hub's Fitness Machine control point.
    func appWrote(_ bytes: [UInt8], by app: String) async
    /// App `app` (its address) wrote `bytes` to the hub's SC Control Point: into the ride's journal, carried out
    /// from the next reading on; returns the answer.
    func appWroteSpeedAndCadence(_ bytes: [UInt8], by app: String) async -> [UInt8]
    /// App `app`'s link to the hub is gone.
    func appLeft(_ app: String) async
}

extension LiveRecorder: AppRequests {
    public func appJoined(_ app: String, name: String?) async {
        // The hub in this process heard what the trainer declared already.
        await appJoined(app, name: name, transport: "Bluetooth")
    }
}

/// The writes to the hub's control points, in order, for the hub to carry out after BlueZ has the write's response.
final class HubWrites: Sendable {
    struct Write: Sendable {
        let characteristic: UInt16
        let value: [UInt8]
        /// The writer's address, when bluetoothd names it.
        let app: String?
    }

    let stream: AsyncStream<Write>
    private let continuation: AsyncStream<Write>.Continuation

    init() { (stream, continuation) = AsyncStream.makeStream() }

    func written(_ characteristic: UInt16, _ value: [UInt8], app: String?) {
        continuation.yield(Write(characteristic: characteristic, value: value, app: app))
    }
    func finish() { continuation.finish() }
}
