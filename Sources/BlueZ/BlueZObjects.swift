import DBus
import Foundation

/// `org.bluez.Adapter1` as last seen.
public struct BluetoothAdapter: Sendable, Equatable {
    public var path: String
    public var address: String
    public var name: String
    public var powered: Bool
    public var discovering: Bool

    /// The kernel's name for it, `hci0`: the last component of its object path.
    public var interfaceName: String { String(path.split(separator: "/").last ?? "") }

    public init(path: String, address: String, name: String, powered: Bool, discovering: Bool) {
        self.path = path
        self.address = address
        self.name = name
        self.powered = powered
        self.discovering = discovering
    }
}

/// `org.bluez.Device1` (and `org.bluez.Battery1` where BlueZ's battery plugin exports it) as last seen.
public struct BluetoothDevice: Sendable, Equatable {
    public var path: String
    public var adapterPath: String
    /// `C0:11:22:33:44:55`.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    /// Absent until the device advertised or reported a name.
    public var name: String?
    /// Always present: the user's alias, else the name, else the address.
    public var alias: String
    /// Only meaningful while discovering (BlueZ drops it when discovery stops).
    public var rssiDBm: Int?
    /// Advertised and resolved service UUIDs, 128-bit lower case.
    public var serviceUUIDs: [String]
    public var connected: Bool
    public var servicesResolved: Bool
    public var batteryPercent: Int?

    public init(
        path: String, adapterPath: String, address: String, addressType: String = "public", name: String?,
        alias: String? = nil, rssiDBm: Int? = nil, serviceUUIDs: [String], connected: Bool = false,
        servicesResolved: Bool = false, batteryPercent: Int? = nil
    ) {
        self.path = path
        self.adapterPath = adapterPath
        self.address = address
        self.addressType = addressType
        self.name = name
        self.alias = alias ?? name ?? address
        self.rssiDBm = rssiDBm
        self.serviceUUIDs = serviceUUIDs
        self.connected = connected
        self.servicesResolved = servicesResolved
        self.batteryPercent = batteryPercent
    }

    /// The name a rider knows the sensor by.
    public var displayName: String { name ?? alias }

    /// The 16-bit SIG numbers of its services.
    public var shortServiceUUIDs: [UInt16] { serviceUUIDs.compactMap(BluetoothUUID.short) }

    /// Whether a rider's `wanted` (an address or a name, in any case) names this device.
    public func isCalled(_ wanted: String) -> Bool {
        address.caseInsensitiveCompare(wanted) == .orderedSame
            || displayName.caseInsensitiveCompare(wanted) == .orderedSame
    }
}

/// `org.bluez.GattCharacteristic1` with the UUID of the service it belongs to.
public struct GattCharacteristic: Sendable, Equatable {
    public var path: String
    public var uuid: String
    public var servicePath: String
    public var serviceUUID: String
    public var devicePath: String
    /// `read`, `notify`, `indicate`, `write`, …
    public var flags: [String]
    public var notifying: Bool

    public init(
        path: String, uuid: String, servicePath: String, serviceUUID: String, devicePath: String, flags: [String],
        notifying: Bool = false
    ) {
        self.path = path
        self.uuid = uuid
        self.servicePath = servicePath
        self.serviceUUID = serviceUUID
        self.devicePath = devicePath
        self.flags = flags
        self.notifying = notifying
    }

    public var shortUUID: UInt16? { BluetoothUUID.short(uuid) }
    /// The handle its values travel on. BlueZ names a characteristic's object after its declaration's handle
    /// (`…/service000c/char000d`), and the value's attribute immediately follows the declaration (Core Vol 3 Part G
    /// §3.3); nil for a path named otherwise.
    public var valueHandle: UInt16? {
        guard let name = path.split(separator: "/").last, name.hasPrefix("char"),
            let declaration = UInt16(name.dropFirst(4), radix: 16), declaration < .max
        else { return nil }
        return declaration + 1
    }
    public var canNotify: Bool { flags.contains("notify") || flags.contains("indicate") }
    public var canRead: Bool { flags.contains("read") }
}

/// What happens on the Bluetooth side, in order, for whoever drives the sensors.
public enum BlueZEvent: Sendable, Equatable {
    /// A notification or indication: a Value change on a characteristic this client subscribed to that is not
    /// the echo of a ReadValue.
    case notification(characteristic: GattCharacteristic, value: [UInt8])
    /// A device appeared (discovery) or one of its properties changed (Connected, ServicesResolved, RSSI,
    /// battery).
    case deviceChanged(BluetoothDevice)
    case deviceRemoved(path: String)
    /// GATT objects of a device appeared or went (services resolved, or BlueZ dropped its cache).
    case servicesChanged(devicePath: String)
    /// An adapter appeared or changed (Powered, Discovering).
    case adapterChanged(BluetoothAdapter)
    /// bluetoothd left the bus (stopped, crashed or restarting): every connection and notify session is gone.
    case bluetoothdLeft
    /// bluetoothd is back and its objects are read again.
    case bluetoothdReturned
}

/// The object tree of `org.bluez`: path → interface → property → value (variants unwrapped).
struct ObjectTree: Sendable {
    var objects: [String: [String: [String: DBusValue]]] = [:]

    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let batteryInterface = "org.bluez.Battery1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"

    init() {}

    /// From `GetManagedObjects`' `a{oa{sa{sv}}}`.
    init(managedObjects: DBusValue?) {
        for (path, interfaces) in managedObjects?.dictionary ?? [:] {
            add(path, interfaces: interfaces)
        }
    }

    mutating func add(_ path: String, interfaces: DBusValue) {
        for (interface, properties) in interfaces.dictionary ?? [:] {
            var values = objects[path]?[interface] ?? [:]
            for (name, value) in properties.dictionary ?? [:] { values[name] = value.unwrapped }
            objects[path, default: [:]][interface] = values
        }
    }

    mutating func remove(_ path: String, interfaces: [String]) {
        for interface in interfaces { objects[path]?[interface] = nil }
        if objects[path]?.isEmpty == true { objects[path] = nil }
    }

    mutating func change(_ path: String, interface: String, changed: [String: DBusValue], invalidated: [String]) {
        var values = objects[path]?[interface] ?? [:]
        for (name, value) in changed { values[name] = value.unwrapped }
        for name in invalidated { values[name] = nil }
        objects[path, default: [:]][interface] = values
    }

    func adapter(_ path: String) -> BluetoothAdapter? {
        guard let p = objects[path]?[Self.adapterInterface] else { return nil }
        return BluetoothAdapter(
            path: path, address: p["Address"]?.string ?? "", name: p["Alias"]?.string ?? p["Name"]?.string ?? "",
            powered: p["Powered"]?.bool ?? false, discovering: p["Discovering"]?.bool ?? false)
    }

    func device(_ path: String) -> BluetoothDevice? {
        guard let p = objects[path]?[Self.deviceInterface] else { return nil }
        let address = p["Address"]?.string ?? ""
        return BluetoothDevice(
            path: path, adapterPath: p["Adapter"]?.string ?? "", address: address,
            addressType: p["AddressType"]?.string ?? "public", name: p["Name"]?.string,
            alias: p["Alias"]?.string ?? address, rssiDBm: p["RSSI"]?.integer.map { Int($0) },
            serviceUUIDs: (p["UUIDs"]?.stringArray ?? []).map { $0.lowercased() },
            connected: p["Connected"]?.bool ?? false, servicesResolved: p["ServicesResolved"]?.bool ?? false,
            batteryPercent: objects[path]?[Self.batteryInterface]?["Percentage"]?.integer.map { Int($0) })
    }

    func characteristic(_ path: String) -> GattCharacteristic? {
        guard let p = objects[path]?[Self.characteristicInterface], let servicePath = p["Service"]?.string,
            let service = objects[servicePath]?[Self.serviceInterface]
        else { return nil }
        return GattCharacteristic(
            path: path, uuid: (p["UUID"]?.string ?? "").lowercased(), servicePath: servicePath,
            serviceUUID: (service["UUID"]?.string ?? "").lowercased(), devicePath: service["Device"]?.string ?? "",
            flags: p["Flags"]?.stringArray ?? [], notifying: p["Notifying"]?.bool ?? false)
    }

    var adapters: [BluetoothAdapter] { objects.keys.sorted().compactMap(adapter) }
    var devices: [BluetoothDevice] { objects.keys.sorted().compactMap(device) }

    func characteristics(ofDevice devicePath: String) -> [GattCharacteristic] {
        objects.keys.sorted().compactMap(characteristic).filter { $0.devicePath == devicePath }
    }
}
