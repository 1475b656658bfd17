import BlueZ
import CyclingSensors
import DBus
import Foundation
import LiveRecording
import Synchronization

/// A clock that moves only when the test says: the recorder's timers wait on it, its links and the journal read
/// it. Rides in it start at the wall clock's time when it was made (so that stored rides look recent).
final class ManualClock: RecorderClock, Sendable {
    private struct Sleeper {
        var id: Int
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var nextID = 0
        var sleepers: [Sleeper] = []
    }

    private let state = Mutex(State())
    private let rideOriginMicroseconds = Int64(Date().timeIntervalSince1970 * 1e6)

    var elapsed: Duration { state.withLock { $0.now } }

    func rideMicroseconds() -> Int64 {
        let (seconds, attoseconds) = elapsed.components
        return rideOriginMicroseconds + seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    func sleep(for duration: Duration) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Bool = state.withLock { state in
                    if Task.isCancelled || duration <= .zero { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: state.now + duration, continuation: continuation))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on and wakes every sleeper whose time has come.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now += duration
            let due = state.sleepers.filter { $0.deadline <= state.now }
            state.sleepers.removeAll { $0.deadline <= state.now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    var sleeperCount: Int { state.withLock { $0.sleepers.count } }
}

/// Waits, without sleeping, until `condition` holds: the recorder's tasks run meanwhile. Gives up after 10 s of
/// real time (a scenario that needs that long is broken) and says what it waited for.
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw Timeout(what: what) }
        await Task.yield()
    }
}

struct Timeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "still waiting, after 10 s, for: \(what)" }
}

/// BlueZ as a script: one adapter, the sensors the test puts there, and every call the recorder makes written
/// down with the clock's time. Connections succeed unless the test says how many to refuse; the test sends the
/// notifications, drops links and makes bluetoothd leave and return.
actor FakeSensorBus: SensorBus {
    static let adapterPath = "/org/bluez/hci0"

    struct Call: Equatable {
        var at: Duration
        var what: String
    }

    private let clock: ManualClock
    private var deviceObjects: [String: BluetoothDevice] = [:]
    private var characteristicObjects: [String: [GattCharacteristic]] = [:]
    private var values: [String: [UInt8]] = [:]
    private var writtenValues: [String: [[UInt8]]] = [:]
    /// Events not yet taken by the recorder, and whether it waits for the next one (it takes them one at a time,
    /// each handled before it asks again).
    private var queued: [BlueZEvent] = []
    private var waiting: CheckedContinuation<BlueZEvent?, Never>?
    private var listening = false
    private var present = true
    /// How many of the next connection attempts fail.
    var refusals = 0
    /// How an emulated trainer answers each control-point op code (Success when not listed); nil: it stays silent.
    var trainerAnswers: [UInt8: ControlPointResult]? = [:]
    private(set) var calls: [Call] = []

    init(clock: ManualClock) {
        self.clock = clock
    }

    // MARK: What the test sets up and does

    /// A power meter (Cycling Power: the measurement to notify, the feature to read) at `address`.
    @discardableResult
    func addPowerMeter(_ address: String, name: String, batteryPercent: Int? = nil) -> String {
        let path = Self.adapterPath + "/dev_" + address.replacingOccurrences(of: ":", with: "_")
        deviceObjects[path] = BluetoothDevice(
            path: path, adapterPath: Self.adapterPath, address: address, addressType: "random", name: name,
            serviceUUIDs: ["00001818-0000-1000-8000-00805f9b34fb"], batteryPercent: batteryPercent)
        let service = path + "/service000c"
        func characteristic(_ handle: String, _ uuid: String, _ flags: [String]) -> GattCharacteristic {
            GattCharacteristic(
                path: service + "/char" + handle, uuid: "0000\(uuid)-0000-1000-8000-00805f9b34fb",
                servicePath: service, serviceUUID: "00001818-0000-1000-8000-00805f9b34fb", devicePath: path,
                flags: flags)
        }
        let measurement = characteristic("000d", "2a63", ["notify"])
        let feature = characteristic("0010", "2a65", ["read"])
        characteristicObjects[path] = [measurement, feature]
        values[feature.path] = [0x00, 0x00, 0x00, 0x00]
        return path
    }

    /// A smart trainer (Fitness Machine: Indoor Bike Data to notify; its features, power range and resistance
    /// range to read; the control point to write, whose answers it indicates; its status) at `address`.
    @discardableResult
    func addTrainer(
        _ address: String,
        targets: [FitnessMachineFeature.TargetSetting] = [.power, .resistance, .indoorBikeSimulation],
        powerRange: [UInt8] = [0x00, 0x00, 0xDC, 0x05, 0x01, 0x00]
    ) -> String {
        let path = Self.adapterPath + "/dev_" + address.replacingOccurrences(of: ":", with: "_")
        let serviceUUID = "00001826-0000-1000-8000-00805f9b34fb"
        deviceObjects[path] = BluetoothDevice(
            path: path, adapterPath: Self.adapterPath, address: address, addressType: "random", name: "Trainer",
            serviceUUIDs: [serviceUUID])
        let service = path + "/service0020"
        func characteristic(_ handle: String, _ uuid: UInt16, _ flags: [String]) -> GattCharacteristic {
            GattCharacteristic(
                path: service + "/char" + handle,
                uuid: "0000\(String(uuid, radix: 16))-0000-1000-8000-00805f9b34fb", servicePath: service,
                serviceUUID: serviceUUID, devicePath: path, flags: flags)
        }
        let bikeData = characteristic("0021", 0x2AD2, ["notify"])
        let feature = characteristic("0024", 0x2ACC, ["read"])
        let range = characteristic("0026", 0x2AD8, ["read"])
        let controlPoint = characteristic("0028", 0x2AD9, ["write", "indicate"])
        let status = characteristic("002b", 0x2ADA, ["notify"])
        characteristicObjects[path] = [bikeData, feature, range, controlPoint, status]
        var featureBytes = [UInt8](repeating: 0, count: 8)
        let targetBits = FitnessMachineFeature(targets: targets).targetSettingFeatures
        for index in 0..<4 { featureBytes[4 + index] = UInt8(truncatingIfNeeded: targetBits >> (8 * index)) }
        featureBytes[1] = 0x40  // bit 14: power measurement
        values[feature.path] = featureBytes
        values[range.path] = powerRange
        return path
    }

    func setTrainerAnswers(_ answers: [UInt8: ControlPointResult]?) { trainerAnswers = answers }

    /// The bytes written to a device's control point, in order.
    func controlPointWrites(_ path: String) -> [[UInt8]] { writtenValues[path] ?? [] }

    /// Indoor Bike Data with power and cadence (flags 0x44: cadence and power present; speed always is).
    func notifyBikeData(_ path: String, watts: Int16, cadenceRPM: Double) {
        guard let bikeData = characteristicObjects[path]?.first, deviceObjects[path]?.connected == true else { return }
        let cadence = UInt16(cadenceRPM * 2)
        let power = UInt16(bitPattern: watts)
        emit(
            .notification(
                characteristic: bikeData,
                value: [
                    0x44, 0x00, 0xE8, 0x03, UInt8(cadence & 0xFF), UInt8(cadence >> 8), UInt8(power & 0xFF),
                    UInt8(power >> 8),
                ]))
    }

    /// Fitness Machine Status from the trainer (0xFF: control permission lost).
    func notifyStatus(_ path: String, _ value: [UInt8]) {
        guard let status = characteristicObjects[path]?.last, deviceObjects[path]?.connected == true else { return }
        emit(.notification(characteristic: status, value: value))
    }

    /// One Cycling Power Measurement (flags 0, the power as sint16) from the device at `path`, as BlueZ delivers it.
    func notifyPower(_ path: String, watts: Int16) {
        guard let measurement = characteristicObjects[path]?.first, deviceObjects[path]?.connected == true,
            measurement.notifying
        else { return }
        let bytes = UInt16(bitPattern: watts)
        emit(.notification(characteristic: measurement, value: [0x00, 0x00, UInt8(bytes & 0xFF), UInt8(bytes >> 8)]))
    }

    /// The link drops (the sensor out of range): BlueZ says Connected is false.
    func drop(_ path: String) {
        guard var device = deviceObjects[path], device.connected else { return }
        device.connected = false
        device.servicesResolved = false
        deviceObjects[path] = device
        setNotifying(path, false)
        emit(.deviceChanged(device))
    }

    /// bluetoothd stops: every object and link gone.
    func bluetoothdLeaves() {
        present = false
        for path in deviceObjects.keys {
            deviceObjects[path]?.connected = false
            deviceObjects[path]?.servicesResolved = false
            setNotifying(path, false)
        }
        emit(.bluetoothdLeft)
    }

    func bluetoothdReturns() {
        present = true
        emit(.bluetoothdReturned)
    }

    func isNotifying(_ path: String) -> Bool { characteristicObjects[path]?.first?.notifying ?? false }

    /// The calls whose description starts with `prefix`.
    func calls(_ prefix: String) -> [Call] { calls.filter { $0.what.hasPrefix(prefix) } }

    // MARK: SensorBus

    var adapters: [BluetoothAdapter] {
        present
            ? [
                BluetoothAdapter(
                    path: Self.adapterPath, address: "00:AA:01:00:00:23", name: "test", powered: true,
                    discovering: false)
            ] : []
    }

    var devices: [BluetoothDevice] { present ? deviceObjects.keys.sorted().compactMap { deviceObjects[$0] } : [] }

    func device(_ path: String) -> BluetoothDevice? { present ? deviceObjects[path] : nil }

    func characteristics(ofDevice path: String) -> [GattCharacteristic] {
        present ? characteristicObjects[path] ?? [] : []
    }

    func events() -> AsyncStream<BlueZEvent> {
        listening = true
        return AsyncStream(unfolding: { await self.next() })
    }

    /// The next event; nil once the recorder's task is cancelled (the ride is over), as BlueZ's stream ends.
    private func next() async -> BlueZEvent? {
        if !queued.isEmpty { return queued.removeFirst() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { waiting = $0 }
        } onCancel: {
            Task { await self.endWaiting() }
        }
    }

    private func endWaiting() {
        waiting?.resume(returning: nil)
        waiting = nil
        listening = false
    }

    /// Every event sent has been handled: the recorder waits for the next one.
    var isDrained: Bool { !listening || (queued.isEmpty && waiting != nil) }

    func powerOn(_ adapter: String) throws(BlueZError) { log("powerOn") }

    func startDiscovery(_ adapter: String, services: [UInt16]) throws(BlueZError) { log("startDiscovery") }

    func stopDiscovery(_ adapter: String) throws(BlueZError) { log("stopDiscovery") }

    func connect(_ path: String) throws(BlueZError) {
        log("connect \(path)")
        guard present, var device = deviceObjects[path] else {
            throw BlueZError(
                DBusError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no such device"),
                while: "connecting")
        }
        if refusals > 0 {
            refusals -= 1
            throw BlueZError(
                DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"),
                while: "connecting to \(device.displayName)")
        }
        device.connected = true
        device.servicesResolved = true
        deviceObjects[path] = device
        emit(.deviceChanged(device))
    }

    func disconnect(_ path: String) throws(BlueZError) {
        log("disconnect \(path)")
        drop(path)
    }

    func waitForServices(_ path: String, timeout: Duration) -> Bool {
        deviceObjects[path]?.servicesResolved == true
    }

    func read(_ characteristic: GattCharacteristic) throws(BlueZError) -> [UInt8] {
        log("read \(characteristic.shortUUID.map { String($0, radix: 16) } ?? characteristic.uuid)")
        return values[characteristic.path] ?? []
    }

    func write(_ characteristic: GattCharacteristic, _ value: [UInt8]) throws(BlueZError) {
        log("write \(characteristic.path) " + value.map { String(format: "%02x", $0) }.joined())
        guard characteristic.shortUUID == 0x2AD9 else { return }
        writtenValues[characteristic.devicePath, default: []].append(value)
        // The answer is an indication (FTMS's control point), after the write's own acknowledgement.
        if let answers = trainerAnswers, let opCode = value.first,
            deviceObjects[characteristic.devicePath]?.connected == true
        {
            emit(
                .notification(
                    characteristic: characteristic, value: [0x80, opCode, (answers[opCode] ?? .success).rawValue]))
        }
    }

    func startNotify(_ characteristic: GattCharacteristic) throws(BlueZError) {
        log("startNotify \(characteristic.devicePath)")
        setNotifying(characteristic.devicePath, true)
    }

    func stopNotify(_ characteristic: GattCharacteristic) throws(BlueZError) {
        log("stopNotify \(characteristic.devicePath)")
        setNotifying(characteristic.devicePath, false)
    }

    // MARK: Inside

    private func setNotifying(_ path: String, _ on: Bool) {
        guard var list = characteristicObjects[path], !list.isEmpty else { return }
        list[0].notifying = on && deviceObjects[path]?.connected == true
        characteristicObjects[path] = list
    }

    private func emit(_ event: BlueZEvent) {
        guard listening else { return }
        if let waiting {
            self.waiting = nil
            waiting.resume(returning: event)
        } else {
            queued.append(event)
        }
    }

    private func log(_ what: String) {
        calls.append(Call(at: clock.elapsed, what: what))
    }
}
