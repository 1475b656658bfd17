import Concurrency
import DBus

/// A GATT server and its advertisement, served to bluetoothd from this process: BlueZ's GattManager1 reads the
/// services from an object manager of ours, LEAdvertisingManager1 reads the advertisement's properties, and from then
/// on bluetoothd calls our characteristics for every read, write and subscription of a connected app
/// (doc/org.bluez.GattManager.rst, org.bluez.GattCharacteristic.rst, org.bluez.LEAdvertisement.rst). A value is
/// notified by announcing it as the characteristic's `Value`: bluetoothd sends it to every app subscribed to it,
/// as a notification or an indication as that app asked. It knows nothing about cycling.
public actor BlueZPeripheral {
    public struct Characteristic: Sendable, Equatable {
        /// GattCharacteristic1's `Flags`, as BlueZ spells them.
        public enum Property: String, Sendable, Equatable {
            case read, write, notify, indicate
            case writeWithoutResponse = "write-without-response"
        }

        public var uuid: UInt16
        public var properties: [Property]
        /// What a read answers until `notify` changes it.
        public var value: [UInt8]

        public init(_ uuid: UInt16, _ properties: [Property], value: [UInt8] = []) {
            self.uuid = uuid
            self.properties = properties
            self.value = value
        }
    }

    public struct Service: Sendable, Equatable {
        public var uuid: UInt16
        public var characteristics: [Characteristic]

        public init(_ uuid: UInt16, _ characteristics: [Characteristic]) {
            self.uuid = uuid
            self.characteristics = characteristics
        }
    }

    /// How a write is answered at the ATT level. A control point's own answer (a Response Code) is an indication
    /// after an accepted write, not this.
    public enum WriteAnswer: Sendable, Equatable {
        case accepted
        /// ATT 0xFE, Procedure Already in Progress: the previous write's answer has not been indicated yet.
        case procedureInProgress
        /// An application error, 0x80–0x9F (BlueZ 5.66 passes no other code from an application).
        case applicationError(UInt8)
    }

    public enum Event: Sendable, Equatable {
        /// bluetoothd's first app subscribed to the characteristic (StartNotify).
        case subscribed(UInt16)
        /// Its last app unsubscribed or went away (StopNotify).
        case unsubscribed(UInt16)
        /// An app confirmed an indication of it.
        case confirmed(UInt16)
        /// bluetoothd stopped advertising us (the adapter was powered off or went away).
        case advertisementReleased
    }

    /// Who a write came from (the app's Device1 path, when bluetoothd says) and what it wrote.
    public typealias WriteHandler =
        @Sendable (_ characteristic: UInt16, _ value: [UInt8], _ device: String?) async ->
        WriteAnswer

    /// The longest attribute value ATT allows (Core 5.3, Vol 3, Part F, 3.2.9): longer writes are refused before
    /// the handler sees them.
    public static let maximumValueBytes = 512
    /// A legacy advertisement's data (Core 5.3, Vol 6, Part B, 2.3.1.1); what it holds is counted before it is
    /// handed to bluetoothd, which would otherwise refuse it without saying what did not fit.
    public static let advertisingDataBytes = 31

    public let connection: DBusConnection
    public nonisolated let root: String
    public let services: [Service]
    public let localName: String
    private let writeHandler: WriteHandler
    private var values: [UInt16: [UInt8]] = [:]
    private var notifying: Set<UInt16> = []
    private var adapter: String?
    /// Each characteristic's object path, by its UUID (every notification looks its path up).
    private let characteristicPaths: [UInt16: String]
    private let eventBroadcast = Broadcast<Event>(keepingLatest: false)

    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"

    /// `root` is this application's object path on `connection`; `localName` is what scanning apps list.
    public init(
        connection: DBusConnection, root: String, services: [Service], localName: String,
        onWrite writeHandler: @escaping WriteHandler
    ) {
        self.connection = connection
        self.root = root
        self.services = services
        self.localName = localName
        self.writeHandler = writeHandler
        var paths: [UInt16: String] = [:]
        for (s, service) in services.enumerated() {
            for (c, characteristic) in service.characteristics.enumerated() {
                values[characteristic.uuid] = characteristic.value
                paths[characteristic.uuid] = Self.objectPath(root, service: s, characteristic: c)
            }
        }
        characteristicPaths = paths
    }

    /// Each subscription change, confirmation and release from now on, for one consumer.
    public func events() -> AsyncStream<Event> { eventBroadcast.subscribe() }

    /// The object path of a service of the application at `root`, or of one of its characteristics.
    static func objectPath(_ root: String, service: Int, characteristic: Int? = nil) -> String {
        "\(root)/service\(service)" + (characteristic.map { "/char\($0)" } ?? "")
    }
    nonisolated func servicePath(_ index: Int) -> String { Self.objectPath(root, service: index) }
    nonisolated func characteristicPath(_ service: Int, _ index: Int) -> String {
        Self.objectPath(root, service: service, characteristic: index)
    }
    public nonisolated var advertisementPath: String { "\(root)/advertisement" }

    /// The bytes of the advertising data: Flags, the services' 16-bit UUIDs and the complete local name.
    public nonisolated var advertisingDataCount: Int {
        3 + 2 + 2 * services.count + 2 + localName.utf8.count
    }

    /// Serves the services and the advertisement on `adapter` (e.g. /org/bluez/hci1). Fails in words when the
    /// name does not fit the advertisement, bluetoothd is missing, or the adapter cannot serve or advertise.
    public func register(on adapter: String) async throws(BlueZError) {
        let doing = "offering the hub's services on \(adapter.split(separator: "/").last.map(String.init) ?? adapter)"
        guard advertisingDataCount <= Self.advertisingDataBytes else {
            let room = Self.advertisingDataBytes - (advertisingDataCount - localName.utf8.count)
            throw BlueZError(
                DBusError(
                    name: "org.bluez.Error.InvalidLength",
                    message: "the name \"\(localName)\" is \(localName.utf8.count) bytes; with \(services.count) "
                        + "services an advertisement has room for \(max(room, 0))"),
                while: doing)
        }
        do {
            try await exportObjects()
            try await call(Self.gattManager, "RegisterApplication", on: adapter, [.objectPath(root), .properties([])])
        } catch {
            await withdrawObjects()
            throw BlueZError(Self.missingManager(error, "GattManager1"), while: doing)
        }
        do {
            try await call(
                Self.advertisingManager, "RegisterAdvertisement", on: adapter,
                [.objectPath(advertisementPath), .properties([])])
        } catch {
            try? await call(Self.gattManager, "UnregisterApplication", on: adapter, [.objectPath(root)])
            await withdrawObjects()
            throw BlueZError(Self.missingManager(error, "LEAdvertisingManager1"), while: doing)
        }
        self.adapter = adapter
    }

    /// A call of one of BlueZ's managers on `adapter`.
    private func call(_ manager: String, _ member: String, on adapter: String, _ body: [DBusValue])
        async throws(DBusError)
    {
        _ = try await connection.call(
            destination: BlueZClient.busName, path: adapter, interface: manager, member: member, body)
    }

    /// An adapter without BlueZ's manager (a BlueZ built without it, an adapter without LE) answers "no such
    /// method": said as what it means.
    static func missingManager(_ error: DBusError, _ manager: String) -> DBusError {
        guard
            [DBusError.unknownMethodName, DBusError.unknownObjectName, "org.freedesktop.DBus.Error.UnknownInterface"]
                .contains(error.name)
        else { return error }
        return DBusError(
            name: error.name,
            message: "this adapter offers programs no \(manager == "GattManager1" ? "GATT server" : "advertising") "
                + "(BlueZ's org.bluez.\(manager) is not on it; BlueZ 5.66 has it on every adapter that supports LE)")
    }

    /// Stops advertising and serving; apps still connected lose the services. Safe to call more than once.
    public func unregister() async {
        guard let adapter else { return }
        self.adapter = nil
        try? await call(
            Self.advertisingManager, "UnregisterAdvertisement", on: adapter, [.objectPath(advertisementPath)])
        try? await call(Self.gattManager, "UnregisterApplication", on: adapter, [.objectPath(root)])
        await withdrawObjects()
    }

    /// Sends `value` to every app subscribed to the characteristic (and answers reads with it from now on).
    /// Returns whether anyone was subscribed.
    @discardableResult
    public func notify(_ uuid: UInt16, _ value: [UInt8]) async throws(DBusError) -> Bool {
        values[uuid] = value
        guard notifying.contains(uuid), let path = path(of: uuid) else { return false }
        try await connection.setProperties(
            ["Value": .bytes(value)], interface: Self.characteristicInterface, path: path, announcingUnchanged: true)
        return true
    }

    public func isNotifying(_ uuid: UInt16) -> Bool { notifying.contains(uuid) }

    private func path(of uuid: UInt16) -> String? { characteristicPaths[uuid] }

    // MARK: The objects bluetoothd reads and calls

    private func exportObjects() async throws(DBusError) {
        try await connection.exportObjectManager(at: root)
        for (s, service) in services.enumerated() {
            try await connection.export(
                [
                    ExportedInterface(
                        name: Self.serviceInterface, properties: [.init("UUID", "s"), .init("Primary", "b")])
                ],
                at: servicePath(s),
                properties: [
                    Self.serviceInterface: [
                        "UUID": .string(BluetoothUUID.full(service.uuid)), "Primary": .boolean(true),
                    ]
                ])
            for (c, characteristic) in service.characteristics.enumerated() {
                try await connection.export(
                    [characteristicInterface(characteristic.uuid)], at: characteristicPath(s, c),
                    properties: [
                        Self.characteristicInterface: [
                            "UUID": .string(BluetoothUUID.full(characteristic.uuid)),
                            "Service": .objectPath(servicePath(s)),
                            "Flags": .strings(characteristic.properties.map(\.rawValue)),
                            "Notifying": .boolean(false),
                        ]
                    ])
            }
        }
        try await connection.export(
            [advertisementInterface()], at: advertisementPath,
            properties: [
                Self.advertisementInterface: [
                    "Type": .string("peripheral"),
                    "ServiceUUIDs": .strings(services.map { BluetoothUUID.hex4($0.uuid) }),
                    "LocalName": .string(localName),
                    "Discoverable": .boolean(true),
                ]
            ])
    }

    private func withdrawObjects() async {
        for (s, service) in services.enumerated() {
            for c in service.characteristics.indices { await connection.unexport(characteristicPath(s, c)) }
            await connection.unexport(servicePath(s))
        }
        await connection.unexport(advertisementPath)
        for uuid in notifying { eventBroadcast.publish(.unsubscribed(uuid)) }
        notifying = []
    }

    private nonisolated func characteristicInterface(_ uuid: UInt16) -> ExportedInterface {
        let options = ExportedInterface.Argument("options", "a{sv}")
        return ExportedInterface(
            name: Self.characteristicInterface,
            methods: [
                .init("ReadValue", in: [options], out: [.init("value", "ay")]) { [weak self] call throws(DBusError) in
                    guard let self else { throw DBusError(name: "org.bluez.Error.Failed", message: "gone") }
                    return [.bytes(try await self.read(uuid, options: call.body[0]))]
                },
                .init("WriteValue", in: [.init("value", "ay"), options], inArrivalOrder: true) {
                    [weak self] call throws(DBusError) in
                    guard let self else { throw DBusError(name: "org.bluez.Error.Failed", message: "gone") }
                    try await self.write(uuid, call.body[0].byteArray ?? [], options: call.body[1])
                    return []
                },
                .init("StartNotify") { [weak self] _ in
                    await self?.setNotifying(uuid, true)
                    return []
                },
                .init("StopNotify") { [weak self] _ in
                    await self?.setNotifying(uuid, false)
                    return []
                },
                .init("Confirm") { [weak self] _ in
                    await self?.publish(.confirmed(uuid))
                    return []
                },
            ],
            properties: [
                .init("UUID", "s"), .init("Service", "o"), .init("Flags", "as"), .init("Notifying", "b"),
                .init("Value", "ay"),
            ])
    }

    private nonisolated func advertisementInterface() -> ExportedInterface {
        ExportedInterface(
            name: Self.advertisementInterface,
            methods: [
                .init("Release") { [weak self] _ in
                    await self?.released()
                    return []
                }
            ],
            properties: [
                .init("Type", "s"), .init("ServiceUUIDs", "as"), .init("LocalName", "s"), .init("Discoverable", "b"),
            ])
    }

    private func publish(_ event: Event) { eventBroadcast.publish(event) }

    private func released() {
        adapter = nil
        eventBroadcast.publish(.advertisementReleased)
    }

    /// `ReadValue`: the value from the `offset` option on (a long read comes in pieces).
    private func read(_ uuid: UInt16, options: DBusValue) throws(DBusError) -> [UInt8] {
        let value = values[uuid] ?? []
        let offset = Int(options.dictionary?["offset"]?.integer ?? 0)
        guard offset <= value.count else {
            throw DBusError(name: "org.bluez.Error.InvalidOffset", message: "offset \(offset) of \(value.count)")
        }
        return Array(value[offset...])
    }

    /// `WriteValue`: whole values only (a prepared write at an offset is refused), within ATT's length, then the
    /// owner's answer.
    private func write(_ uuid: UInt16, _ value: [UInt8], options: DBusValue) async throws(DBusError) {
        let options = options.dictionary ?? [:]
        guard (options["offset"]?.integer ?? 0) == 0 else {
            throw DBusError(name: "org.bluez.Error.InvalidOffset", message: "a value is written whole")
        }
        guard value.count <= Self.maximumValueBytes else {
            throw DBusError(
                name: "org.bluez.Error.InvalidValueLength",
                message: "\(value.count) bytes; a value holds at most \(Self.maximumValueBytes)")
        }
        switch await writeHandler(uuid, value, options["device"]?.string) {
        case .accepted: return
        case .procedureInProgress:
            throw DBusError(name: "org.bluez.Error.InProgress", message: "the previous request is being answered")
        case .applicationError(let code):
            // bluetoothd reads the code from the message; outside 0x80–0x9F it would answer Unlikely Error instead.
            let code = (0x80...0x9F).contains(code) ? code : 0x80
            throw DBusError(name: "org.bluez.Error.Failed", message: "0x" + String(code, radix: 16))
        }
    }

    private func setNotifying(_ uuid: UInt16, _ on: Bool) async {
        guard on != notifying.contains(uuid), let path = path(of: uuid) else { return }
        if on { notifying.insert(uuid) } else { notifying.remove(uuid) }
        try? await connection.setProperties(
            ["Notifying": .boolean(on)], interface: Self.characteristicInterface, path: path)
        eventBroadcast.publish(on ? .subscribed(uuid) : .unsubscribed(uuid))
    }
}
