import Concurrency
import DBus

/// The org.bluez object model over one long-lived D-Bus connection: the object tree kept current from
/// `InterfacesAdded`/`InterfacesRemoved`/`PropertiesChanged`, discovery, connect, reads and notify sessions
/// (which BlueZ ties to this connection), and bluetoothd leaving and returning. It knows nothing about cycling.
public actor BlueZClient {
    public static let busName = "org.bluez"
    public let connection: DBusConnection
    private var tree = ObjectTree()
    /// Characteristics this client called StartNotify on: only their Value changes are notifications.
    private var subscribed: Set<String> = []
    /// ReadValue also changes `Value`; those changes are reads, not notifications.
    private var readsInFlight: [String: Int] = [:]
    private var readEchoes: [String: [UInt8]] = [:]
    private var bluetoothdPresent = false
    /// Each subscriber's own stream of events (`events()`): ending one never ends another's.
    /// Every event to every consumer of `events()`; finished when the bus connection is gone, so that new
    /// streams end at once.
    private let eventBroadcast = Broadcast<BlueZEvent>(keepingLatest: false)
    private var listener: Task<Void, Never>?

    /// Connects to the bus BlueZ is on, subscribes to its signals and reads its objects. Fails with a rider's
    /// explanation when the bus or bluetoothd is missing or this user may not talk to it.
    public static func connect(to bus: BusAddress) async throws(BlueZError) -> BlueZClient {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(to: bus)
        } catch {
            throw BlueZError(
                DBusError(
                    name: error.name,
                    message: "cannot reach \(bus) (\(error.message)); is dbus running, or is the address right?"),
                while: "connecting to \(bus)")
        }
        let client = BlueZClient(connection: connection)
        try await client.start()
        return client
    }

    private init(connection: DBusConnection) {
        self.connection = connection
    }

    isolated deinit {
        listener?.cancel()
        eventBroadcast.finish()
    }

    /// Everything that happens from now on, in order, for one consumer; as many consumers as ask each get their
    /// own stream. It ends when the bus connection is lost, or when its consumer stops iterating.
    public func events() -> AsyncStream<BlueZEvent> {
        eventBroadcast.subscribe()
    }

    private func yield(_ event: BlueZEvent) {
        eventBroadcast.publish(event)
    }

    private func start() async throws(BlueZError) {
        do {
            // Subscribe before reading the tree so that no change falls between the two. One stream for both
            // rules keeps bluetoothd's last notifications ahead of the NameOwnerChanged that says it left.
            let ownerRule = MatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arg0: Self.busName)
            let signals = try await connection.signals(matchingAny: [MatchRule(sender: Self.busName), ownerRule])
            listener = Task { [weak self] in
                for await message in signals {
                    guard let self else { return }
                    if ownerRule.matches(message) {
                        await self.handleOwnerChange(message)
                    } else {
                        await self.handleBlueZSignal(message)
                    }
                }
                await self?.busLost()
            }
        } catch {
            throw BlueZError(error, while: "listening to BlueZ")
        }
        try await readTree()
    }

    private func readTree() async throws(BlueZError) {
        let reply = try await call(
            "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", while: "reading BlueZ's objects")
        tree = ObjectTree(managedObjects: reply.first)
        bluetoothdPresent = true
    }

    // MARK: What is known

    public var adapters: [BluetoothAdapter] { tree.adapters }
    public var devices: [BluetoothDevice] { tree.devices }
    public func device(_ path: String) -> BluetoothDevice? { tree.device(path) }
    public func characteristics(ofDevice path: String) -> [GattCharacteristic] {
        tree.characteristics(ofDevice: path)
    }
    public var isBluetoothdPresent: Bool { bluetoothdPresent }

    // MARK: Actions

    /// Turns an adapter on (`Powered` = true).
    public func powerOn(_ adapter: String) async throws(BlueZError) {
        _ = try await call(
            adapter, "org.freedesktop.DBus.Properties", "Set",
            [.string(ObjectTree.adapterInterface), .string("Powered"), .variant(.boolean(true))],
            while: "turning the Bluetooth adapter on")
    }

    /// Discovery of LE devices advertising any of the services (16-bit numbers), on this connection's session.
    public func startDiscovery(_ adapter: String, services: [UInt16]) async throws(BlueZError) {
        let filter = DBusValue.properties([
            ("UUIDs", .strings(services.map(BluetoothUUID.full))), ("Transport", .string("le")),
        ])
        _ = try await call(
            adapter, ObjectTree.adapterInterface, "SetDiscoveryFilter", [filter], while: "setting the scan filter")
        _ = try await call(adapter, ObjectTree.adapterInterface, "StartDiscovery", while: "starting the scan")
    }

    /// Stops this connection's discovery. One that is not running (BlueZ ended it: the adapter was turned off
    /// and on, bluetoothd restarted) is already what was asked for: bluetoothd's "No discovery started" is not
    /// an error here.
    public func stopDiscovery(_ adapter: String) async throws(BlueZError) {
        do throws(BlueZError) {
            _ = try await call(adapter, ObjectTree.adapterInterface, "StopDiscovery", while: "stopping the scan")
        } catch  where error.kind == .failed && error.dbus.message == "No discovery started" {
        }
    }

    /// Connects a device (LE: also resolves its GATT services). An already connected device is not an error.
    public func connect(_ device: String) async throws(BlueZError) {
        let name = tree.device(device)?.displayName ?? device
        do throws(BlueZError) {
            _ = try await call(
                device, ObjectTree.deviceInterface, "Connect", timeout: .seconds(40), while: "connecting to \(name)")
        } catch  where error.kind == .alreadyConnected {
        }
        // The reply can overtake the PropertiesChanged signals still queued for this client; read the device
        // afresh so that what this client knows agrees with the reply.
        let properties = try await call(
            device, "org.freedesktop.DBus.Properties", "GetAll", [.string(ObjectTree.deviceInterface)],
            while: "reading \(name)")
        if let changed = properties.first?.dictionary {
            tree.change(device, interface: ObjectTree.deviceInterface, changed: changed, invalidated: [])
        }
        // Resolved services whose objects this client has not all heard of: InterfacesAdded signals can still be
        // queued behind the reply, all of them or only the last (a trainer's control point after its measurement).
        // Read the objects afresh, so that a caller sees every characteristic at once.
        if tree.device(device)?.servicesResolved == true { try await readTree() }
    }

    public func disconnect(_ device: String) async throws(BlueZError) {
        let name = tree.device(device)?.displayName ?? device
        _ = try await call(device, ObjectTree.deviceInterface, "Disconnect", while: "disconnecting \(name)")
    }

    /// Reads a characteristic's value. The `Value` change BlueZ emits for it is not reported as a notification.
    public func read(_ characteristic: GattCharacteristic) async throws(BlueZError) -> [UInt8] {
        readsInFlight[characteristic.path, default: 0] += 1
        defer { readsInFlight[characteristic.path, default: 1] -= 1 }
        let reply = try await call(
            characteristic.path, ObjectTree.characteristicInterface, "ReadValue", [.properties([])],
            while: "reading \(characteristic.uuid)")
        let value = reply.first?.byteArray ?? []
        if subscribed.contains(characteristic.path) { readEchoes[characteristic.path] = value }
        return value
    }

    /// Writes a characteristic with a Write Request (the sensor acknowledges it, or answers with an ATT error:
    /// see `BlueZError.attErrorCode`).
    public func write(_ characteristic: GattCharacteristic, _ value: [UInt8]) async throws(BlueZError) {
        _ = try await call(
            characteristic.path, ObjectTree.characteristicInterface, "WriteValue",
            [.array(elementSignature: "y", value.map(DBusValue.byte)), .properties([("type", .string("request"))])],
            while: "writing \(characteristic.uuid)")
    }

    /// Waits until a connected LE device's GATT objects are there (ServicesResolved); false after `timeout`, when
    /// bluetoothd leaves, or when the calling task is cancelled. Woken by the device's PropertiesChanged, not by
    /// polling.
    public func waitForServices(_ device: String, timeout: Duration = .seconds(10)) async -> Bool {
        await waitForDevice(timeout: timeout) { $0.path == device && $0.connected && $0.servicesResolved } != nil
    }

    /// The first device `matches` accepts: one BlueZ knows already, or the first announced (InterfacesAdded,
    /// PropertiesChanged) within `timeout`; nil after it, when bluetoothd leaves, or when the calling task is
    /// cancelled.
    public func waitForDevice(
        timeout: Duration, where matches: @escaping @Sendable (BluetoothDevice) -> Bool
    ) async -> BluetoothDevice? {
        if let known = tree.devices.first(where: matches) { return known }
        // Subscribed in the same turn of the actor as the look above: no change can fall between them.
        let found = await Self.first(of: events(), within: timeout) { event -> BluetoothDevice?? in
            switch event {
            case .deviceChanged(let device) where matches(device): .some(device)
            case .bluetoothdLeft: .some(nil)
            default: nil
            }
        }
        return found ?? nil
    }

    /// The first value `pick` makes of an event of `events` (a stream from `events()`, taken before whatever is
    /// waited for was asked for), within `timeout`; nil after it, when the stream ends, or when the calling task
    /// is cancelled.
    public static func first<Value: Sendable>(
        of events: AsyncStream<BlueZEvent>, within timeout: Duration,
        _ pick: @escaping @Sendable (BlueZEvent) -> Value?
    ) async -> Value? {
        await withTaskGroup(of: Value?.self) { group in
            group.addTask {
                for await event in events {
                    if let value = pick(event) { return value }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Subscribes to notifications (or indications). BlueZ keeps the session across reconnects and re-enables
    /// the CCCD itself; the session ends when this connection leaves the bus.
    public func startNotify(_ characteristic: GattCharacteristic) async throws(BlueZError) {
        subscribed.insert(characteristic.path)
        _ = try await call(
            characteristic.path, ObjectTree.characteristicInterface, "StartNotify",
            while: "subscribing to \(characteristic.uuid)")
    }

    public func stopNotify(_ characteristic: GattCharacteristic) async throws(BlueZError) {
        subscribed.remove(characteristic.path)
        do throws(BlueZError) {
            _ = try await call(
                characteristic.path, ObjectTree.characteristicInterface, "StopNotify",
                while: "unsubscribing from \(characteristic.uuid)")
        } catch  where error.kind == .failed || error.kind == .notConnected {
            // "No notify session started" or a link already gone: nothing left to stop.
        }
    }

    /// A BlueZ method call; `InProgress` is retried a few times, as BlueZ answers it while a previous request on
    /// the same object is still running.
    private func call(
        _ path: String, _ interface: String, _ member: String, _ body: [DBusValue] = [],
        timeout: Duration = .seconds(25), while action: String
    ) async throws(BlueZError) -> [DBusValue] {
        var attempt = 0
        while true {
            do {
                return try await connection.call(
                    destination: Self.busName, path: path, interface: interface, member: member, body,
                    timeout: timeout)
            } catch {
                let failure = BlueZError(error, while: action)
                attempt += 1
                guard failure.kind == .inProgress, attempt < 5 else { throw failure }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    // MARK: Signals

    private func handleBlueZSignal(_ message: DBusMessage) {
        guard let path = message.path else { return }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard message.body.count == 2, let added = message.body[0].string else { return }
            tree.add(added, interfaces: message.body[1])
            announce(added, interfaces: message.body[1].dictionary.map { Array($0.keys) } ?? [])
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard message.body.count == 2, let removed = message.body[0].string else { return }
            let interfaces = message.body[1].stringArray ?? []
            let characteristic = tree.characteristic(removed)
            tree.remove(removed, interfaces: interfaces)
            if interfaces.contains(ObjectTree.deviceInterface) {
                yield(.deviceRemoved(path: removed))
            } else if let characteristic {
                yield(.servicesChanged(devicePath: characteristic.devicePath))
            }
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard message.body.count == 3, let interface = message.body[0].string,
                let changed = message.body[1].dictionary
            else { return }
            tree.change(path, interface: interface, changed: changed, invalidated: message.body[2].stringArray ?? [])
            if interface == ObjectTree.characteristicInterface, let value = changed["Value"]?.byteArray {
                valueChanged(path, value)
            } else if interface == ObjectTree.deviceInterface || interface == ObjectTree.batteryInterface {
                if let device = tree.device(path) { yield(.deviceChanged(device)) }
            } else if interface == ObjectTree.adapterInterface, let adapter = tree.adapter(path) {
                yield(.adapterChanged(adapter))
            }
        default:
            break
        }
    }

    private func announce(_ path: String, interfaces: [String]) {
        if interfaces.contains(ObjectTree.deviceInterface) || interfaces.contains(ObjectTree.batteryInterface),
            let device = tree.device(path)
        {
            yield(.deviceChanged(device))
        } else if interfaces.contains(ObjectTree.adapterInterface), let adapter = tree.adapter(path) {
            yield(.adapterChanged(adapter))
        } else if interfaces.contains(ObjectTree.characteristicInterface),
            let characteristic = tree.characteristic(path)
        {
            yield(.servicesChanged(devicePath: characteristic.devicePath))
        }
    }

    private func valueChanged(_ path: String, _ value: [UInt8]) {
        guard subscribed.contains(path), let characteristic = tree.characteristic(path) else { return }
        if readsInFlight[path, default: 0] > 0 || readEchoes[path] == value {
            readEchoes[path] = nil
            return
        }
        yield(.notification(characteristic: characteristic, value: value))
    }

    private func handleOwnerChange(_ message: DBusMessage) async {
        guard message.body.count == 3, let newOwner = message.body[2].string else { return }
        if newOwner.isEmpty {
            guard bluetoothdPresent else { return }
            bluetoothdPresent = false
            tree = ObjectTree()
            // The sessions died with the old bluetoothd; whoever drives the sensors subscribes again.
            subscribed.removeAll()
            yield(.bluetoothdLeft)
        } else {
            do {
                try await readTree()
                yield(.bluetoothdReturned)
            } catch {
                // It came and went again; the next NameOwnerChanged tells.
            }
        }
    }

    private func busLost() {
        bluetoothdPresent = false
        eventBroadcast.finish()
    }
}
