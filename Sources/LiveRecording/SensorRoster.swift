import BlueZ
import Workouts

/// The sensors a live recording wants, each addressed by what the rider named it (`wanted`: an address or a
/// name), never by a position: a bluetoothd restart or a removed device reshapes what BlueZ shows, not this.
/// Where BlueZ has each sensor, what it is called, its link, its battery, its subscribed measurements, and what a
/// connected sensor's journal starts with. Pure: the recorder feeds it BlueZ's devices and the ride's events.
struct SensorRoster {
    struct Sensor {
        var wanted: String
        var devicePath: String?
        var address: String?
        var name: String?
        var link: SensorLink
        var batteryPercent: Int?
        var measurementCharacteristics: [GattCharacteristic] = []

        init(wanted: String, policy: ReconnectPolicy) {
            self.wanted = wanted
            link = SensorLink(policy: policy)
        }

        var label: String { name ?? wanted }
        /// The address the journal names it by (what the rider named it until BlueZ says).
        var journalAddress: String { address ?? wanted }
    }

    private(set) var sensors: [Sensor]
    private let policy: ReconnectPolicy
    /// What each connected sensor's journal starts with (connection, wheel size, values read), by address, so a
    /// ride that starts on its own later opens with the same description of its sensors as one started by hand.
    private var descriptions: [String: [RideEvent]] = [:]

    init(wanted: [String], policy: ReconnectPolicy) {
        self.policy = policy
        sensors = []
        want(wanted)
    }

    var isEmpty: Bool { sensors.isEmpty }
    var wanted: [String] { sensors.map(\.wanted) }

    /// Replaces the wanted sensors (the ones a scan found).
    mutating func want(_ wanted: [String]) {
        sensors = wanted.map { Sensor(wanted: $0, policy: policy) }
    }

    subscript(wanted: String) -> Sensor? {
        sensors.first { $0.wanted == wanted }
    }

    /// Changes the sensor `wanted` if it is still there; returns what `change` returned.
    @discardableResult
    mutating func update<Result>(_ wanted: String, _ change: (inout Sensor) -> Result) -> Result? {
        guard let index = sensors.firstIndex(where: { $0.wanted == wanted }) else { return nil }
        return change(&sensors[index])
    }

    /// Finds each sensor among `devices` (those of the recorder's adapter) by its name or address, keeping what
    /// BlueZ says of it. Returns each found sensor with whether it is connected, and whether any is missing.
    mutating func locate(in devices: [BluetoothDevice]) -> (found: [(wanted: String, connected: Bool)], missing: Bool) {
        var found: [(wanted: String, connected: Bool)] = []
        var missing = false
        for index in sensors.indices {
            let known = sensors[index].devicePath.flatMap { path in devices.first { $0.path == path } }
            guard let device = known ?? devices.first(where: { $0.isCalled(sensors[index].wanted) }) else {
                sensors[index].devicePath = nil
                missing = true
                continue
            }
            if known == nil {
                sensors[index].devicePath = device.path
                sensors[index].address = device.address
                sensors[index].name = device.displayName
            }
            sensors[index].batteryPercent = device.batteryPercent ?? sensors[index].batteryPercent
            found.append((sensors[index].wanted, device.connected))
        }
        return (found, missing)
    }

    /// The sensor BlueZ has at `devicePath`.
    func sensor(atDevicePath devicePath: String) -> Sensor? {
        sensors.first { $0.devicePath == devicePath }
    }

    /// BlueZ no longer has the device at `devicePath` (nil: bluetoothd left, so none of them); returns the
    /// sensors that were there.
    mutating func forgetDevice(_ devicePath: String?) -> [String] {
        var gone: [String] = []
        for index in sensors.indices where sensors[index].devicePath != nil {
            guard devicePath == nil || sensors[index].devicePath == devicePath else { continue }
            sensors[index].devicePath = nil
            gone.append(sensors[index].wanted)
        }
        return devicePath == nil ? wanted : gone
    }

    /// Whether a connection attempt is under way (discovery is paused meanwhile: it slows connecting down).
    var isConnecting: Bool { sensors.contains { $0.link.attemptInFlight != nil } }

    /// The name the rider knows the sensor at `address` by.
    func name(ofAddress address: String) -> String {
        sensors.first { $0.address == address }?.name ?? address
    }

    /// The sensors that took part, to be remembered after the ride.
    var used: [(address: String, name: String?)] {
        sensors.compactMap { sensor in sensor.address.map { (address: $0, name: sensor.name) } }
    }

    /// Keeps the descriptions current: a connection starts a sensor's description, a disconnection ends it, a
    /// value read replaces the one read before.
    mutating func describe(_ event: RideEvent) {
        switch event.kind {
        case .connected(let sensor, _): descriptions[sensor] = [event]
        case .disconnected(let sensor): descriptions[sensor] = nil
        case .wheelCircumference(let sensor, _): descriptions[sensor, default: []].append(event)
        case .read(let sensor, let characteristic, _):
            var events = descriptions[sensor, default: []]
            events.removeAll {
                if case .read(_, characteristic, _) = $0.kind { return true }
                return false
            }
            descriptions[sensor] = events + [event]
        case .notification, .write, .control, .setting, .hub: break
        }
    }

    /// What a ride's journal opens with: the description of each sensor, in the roster's order.
    var openingDescriptions: [RideEvent] {
        sensors.compactMap(\.address).flatMap { descriptions[$0] ?? [] }
    }

    /// Every description, for the pedalling watch to decode with.
    var allDescriptions: [RideEvent] { Array(descriptions.values.joined()) }
}
