import BlueZ
import CyclingSensors
import RecorderInterface
import Workouts

/// The sensors of a live recorder: the roster (which sensors, where BlueZ has them), each one's link, and the
/// connect sequence. What BlueZ reports and the time come in; out come `Step`s for the recorder: a job for a
/// sensor's queue (connect, subscribe again, disconnect), a link change for the journal, a line for the status.
/// The decisions are pure; the three parts of the connect sequence (`link`, `describe`, `subscribe`) are the
/// only code that calls BlueZ, through a `SensorBus`, and report back with what they found.
struct SensorSupervisor {
    enum Step: Equatable, Sendable {
        case job(Job, sensor: String)
        /// An event for the journal, at the time it is recorded.
        case journal(RideEvent.Kind)
        /// A line for the status.
        case show(String)
    }

    /// Link work for one sensor, carried out in order by the sensor's own queue.
    enum Job: Equatable, Sendable {
        case connect(attempt: Int)
        case resubscribe([GattCharacteristic])
        case disconnect(devicePath: String)
    }

    /// The services cyclelog records from.
    static let services: [UInt16] = CyclingService.allCases.map(\.rawValue)
    static let measurements = Set(CyclingService.allCases.map(\.measurement.rawValue))
    static let readOnConnect = Set(CyclingService.readOnConnect.map(\.rawValue))

    private(set) var roster: SensorRoster
    /// The adapter the sensors are reached through; another adapter of the same machine may see the same
    /// sensor, or this adapter as a device.
    var adapterPath: String?
    /// Whether this recorder has BlueZ scanning.
    var discovering = false
    private let wheelCircumferences: [String: Int]
    private let defaultWheelCircumferenceMillimetres: Int

    init(
        wanted: [String], policy: ReconnectPolicy, wheelCircumferences: [String: Int],
        defaultWheelCircumferenceMillimetres: Int
    ) {
        roster = SensorRoster(wanted: wanted, policy: policy)
        self.wheelCircumferences = wheelCircumferences
        self.defaultWheelCircumferenceMillimetres = defaultWheelCircumferenceMillimetres
    }

    /// `record --auto` names no sensor and finds none by scanning: it waits for the remembered ones.
    static let nothingToWaitFor = LiveRecordingError(
        .noSensors,
        "no sensors to wait for: `record --auto` uses the remembered sensors; add them with "
            + "`cyclelog sensors add ADDRESS` (addresses from `cyclelog scan`) or name them with --sensor")

    /// After a scan of `scanningSeconds`: every cycling sensor BlueZ lists through the adapter is wanted.
    mutating func want(found devices: [BluetoothDevice], scanningSeconds: Double) throws(LiveRecordingError) {
        let found = LiveRecorder.cyclingSensors(devices, through: adapterPath)
        guard !found.isEmpty else {
            throw LiveRecordingError(
                .noSensors,
                "no cycling sensor found in \(Int(scanningSeconds)) s of scanning: wake the sensors "
                    + "(turn the cranks, wet the heart-rate strap) and try again, or name them with --sensor")
        }
        roster.want(found.map(\.address))
    }

    /// Keeps each connected sensor's description (connection, wheel, values read) for the rides it opens.
    mutating func describe(_ event: RideEvent) { roster.describe(event) }

    var anyConnected: Bool { roster.sensors.contains(where: \.link.state.isConnected) }

    /// The sensors being connected now (found, or lost and connecting again): a start waits for them briefly.
    var connecting: [String] {
        roster.sensors.filter { [.connecting, .reconnecting].contains($0.link.state) }.map(\.label)
    }

    /// Each sensor and the state of its link, as a start refused for want of a connected sensor says them.
    var linkStates: String {
        roster.sensors.map { "\($0.label) \($0.link.state.rawValue)" }.joined(separator: ", ")
    }

    /// The sensors as the status shows them.
    var statusSensors: [RecorderStatus.Sensor] {
        roster.sensors.map {
            RecorderStatus.Sensor(
                name: $0.label, address: $0.address ?? "", state: $0.link.state, batteryPercent: $0.batteryPercent)
        }
    }

    /// The sensors whose battery level is known, for the low-battery notices.
    var batteries: [(address: String, name: String, percent: Int)] {
        roster.sensors.compactMap { sensor in
            guard let address = sensor.address, let percent = sensor.batteryPercent else { return nil }
            return (address, sensor.name ?? address, percent)
        }
    }

    /// Whether discovery should run: a sensor is missing and no connection attempt is under way (scanning slows
    /// connecting down).
    private(set) var wantsDiscovery = false

    /// BlueZ's devices as they are now (those of every adapter): each wanted sensor found is told whether it is
    /// connected.
    mutating func look(at devices: [BluetoothDevice], at time: Duration) -> [Step] {
        let (found, missing) = roster.locate(in: devices.filter { $0.adapterPath == adapterPath })
        var steps: [Step] = []
        for sensor in found { steps += apply(.seen(connected: sensor.connected), to: sensor.wanted, at: time) }
        wantsDiscovery = missing && !roster.isConnecting
        return steps
    }

    /// A BlueZ event about a device or bluetoothd; notifications go to `notification(from:at:)`.
    mutating func handle(_ event: BlueZEvent, at time: Duration) -> [Step] {
        switch event {
        case .deviceChanged(let device):
            guard let wanted = roster.sensor(atDevicePath: device.path)?.wanted else { return [] }
            roster.update(wanted) { $0.batteryPercent = device.batteryPercent ?? $0.batteryPercent }
            return device.connected ? [] : apply(.linkLost, to: wanted, at: time)
        case .deviceRemoved(let path):
            return roster.forgetDevice(path).flatMap { apply(.gone, to: $0, at: time) }
        case .bluetoothdLeft:
            discovering = false
            return [.show("bluetoothd left the bus: waiting for it to come back")]
                + roster.forgetDevice(nil).flatMap { apply(.gone, to: $0, at: time) }
        case .bluetoothdReturned:
            return [.show("bluetoothd is back: connecting the sensors again")]
        case .notification, .servicesChanged, .adapterChanged:
            return []
        }
    }

    /// A measurement from the characteristic: the sensor it came from (its journal address), or nil when it is
    /// none of ours.
    mutating func notification(from characteristic: GattCharacteristic, at time: Duration) -> (
        sensor: String, uuid: UInt16, steps: [Step]
    )? {
        guard let sensor = roster.sensor(atDevicePath: characteristic.devicePath), let uuid = characteristic.shortUUID
        else { return nil }
        return (sensor.journalAddress, uuid, apply(.notification, to: sensor.wanted, at: time))
    }

    /// Feeds one input to a sensor's link; what it says, as steps.
    mutating func apply(_ input: SensorLink.Input, to wanted: String, at time: Duration) -> [Step] {
        guard let actions = roster.update(wanted, { $0.link.handle(input, at: time) }), let sensor = roster[wanted]
        else { return [] }
        var steps: [Step] = []
        for action in actions {
            switch action {
            case .connect(let attempt):
                steps.append(.job(.connect(attempt: attempt), sensor: wanted))
            case .resubscribe:
                steps.append(.job(.resubscribe(sensor.measurementCharacteristics), sensor: wanted))
            case .disconnect:
                roster.update(wanted) { $0.measurementCharacteristics = [] }
                if let path = sensor.devicePath { steps.append(.job(.disconnect(devicePath: path), sensor: wanted)) }
            case .journalLinkUp:
                let address = sensor.journalAddress
                let wheel = wheelCircumferences[address] ?? defaultWheelCircumferenceMillimetres
                steps.append(.journal(.connected(sensor: address, name: sensor.name)))
                steps.append(.journal(.wheelCircumference(sensor: address, millimetres: wheel)))
            case .journalLinkDown:
                roster.update(wanted) { $0.measurementCharacteristics = [] }
                steps.append(.journal(.disconnected(sensor: sensor.journalAddress)))
            case .tell(let notice):
                steps.append(.show(notice.text(sensor.label)))
            }
        }
        return steps
    }

    // MARK: The connect sequence's reports

    /// The connected sensor `wanted` described itself: the values for the journal, the battery for the roster.
    mutating func described(_ wanted: String, _ description: SensorConnection.Description) -> [Step] {
        guard let address = roster[wanted]?.journalAddress else { return [] }
        var steps: [Step] = []
        if let battery = description.batteryPercent {
            steps.append(.journal(.read(sensor: address, characteristic: 0x2A19, value: [UInt8(clamping: battery)])))
            roster.update(wanted) { $0.batteryPercent = battery }
        }
        for read in description.reads {
            steps.append(.journal(.read(sensor: address, characteristic: read.characteristic, value: read.value)))
        }
        return steps
    }

    /// Connection attempt `attempt` subscribed to `measurements` (or failed with `failure`).
    mutating func subscribed(
        _ wanted: String, attempt: Int, _ measurements: [GattCharacteristic], failure: String?, at time: Duration
    ) -> [Step] {
        if let failure { return [.show(failure)] + apply(.failed(attempt: attempt), to: wanted, at: time) }
        guard roster[wanted]?.link.attemptInFlight == attempt else { return [] }
        roster.update(wanted) { $0.measurementCharacteristics = measurements }
        return apply(.subscribed(attempt: attempt), to: wanted, at: time)
    }

    /// Stops every subscription and drops every link, and the scan (the ride is over).
    func release(_ bus: any SensorBus) async {
        for sensor in roster.sensors {
            for characteristic in sensor.measurementCharacteristics { try? await bus.stopNotify(characteristic) }
            if let path = sensor.devicePath { try? await bus.disconnect(path) }
        }
        if discovering, let adapterPath { try? await bus.stopDiscovery(adapterPath) }
    }
}
