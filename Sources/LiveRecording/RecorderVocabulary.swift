import BlueZ
import Workouts

/// What a live recorder publishes and answers, apart from its status: each notification's readings, the controls
/// applied, the notices for the rider, why a Start was refused; and how it picks its adapter and its sensors.
extension LiveRecorder {
    /// What one notification said, the moment it arrived (D-Bus `Live`), in every state: a second screen shows
    /// the rider's power before the ride starts too.
    public struct LiveReading: Sendable, Equatable {
        /// Counts the readings published, from 1.
        public var sequence: UInt64
        /// CLOCK_REALTIME when the notification arrived on the bus connection.
        public var arrivalMicroseconds: Int64
        /// Its time in the ride's journal (never before the one before): what the sensor hub is clocked by, so that
        /// a replay of the journal sends what the hub sent (`HubReplay`).
        public var journalMicroseconds: Int64
        public var sensor: String
        public var readings: [ChannelReading]
        /// The channels of `readings` whose source `sensor` is now, by the ride's source priority
        /// (`LiveSources`): what a screen shows; the others are another sensor's second opinion.
        public var shown: Set<Channel>
    }

    /// A control applied to a ride (D-Bus `Event`): once per control, whoever asked and however often.
    public struct AppliedControl: Sendable, Equatable {
        public var workoutId: Int64
        public var timeMicroseconds: Int64
        public var control: WorkoutControl
        /// The ride's `ControlSequence` with this control applied.
        public var controlSequence: UInt64
    }

    /// What a rider should hear about: a low battery, a ride that started or ended on its own, and (`--auto`,
    /// `--wait`) each ride saved before the recorder waits for the next one.
    public enum Announcement: Sendable {
        case notice(String)
        case rideSaved(WorkoutSummary)
    }

    /// Why a Start was refused.
    public enum StartRefusal: Error, Sendable {
        /// A ride is being recorded, or the recorder does not take Starts (a plain `record`) or is stopping.
        case refused(String)
        /// No sensor is connected to start with.
        case noSensors(String)
    }

    /// The services cyclelog records from.
    public static let services: [UInt16] = SensorSupervisor.services

    /// Whether a device offers one of `services`. BlueZ merges the discovery filters of all its clients, so a
    /// scan can show other devices too.
    public static func isCyclingSensor(_ device: BluetoothDevice) -> Bool {
        device.shortServiceUUIDs.contains(where: services.contains)
    }

    /// The adapter named by its last path component (`hci1`) or its address; without a name the first one.
    public static func chooseAdapter(_ adapters: [BluetoothAdapter], named name: String?) throws(LiveRecordingError)
        -> BluetoothAdapter
    {
        guard let first = adapters.first else {
            throw LiveRecordingError(
                .noAdapter, "no Bluetooth adapter: BlueZ sees none (check `bluetoothctl list` and `rfkill list`)")
        }
        guard let name else { return first }
        let wanted = adapters.first {
            $0.interfaceName == name || $0.address.caseInsensitiveCompare(name) == .orderedSame
        }
        guard let wanted else {
            let known = adapters.map { "\($0.interfaceName) (\($0.address))" }
            throw LiveRecordingError(
                .noAdapter, "no Bluetooth adapter \(name): BlueZ has \(known.joined(separator: ", "))")
        }
        return wanted
    }

    /// The cycling sensors among `devices` that BlueZ sees through the adapter at `adapterPath`.
    public static func cyclingSensors(_ devices: [BluetoothDevice], through adapterPath: String?) -> [BluetoothDevice] {
        devices.filter { $0.adapterPath == adapterPath && isCyclingSensor($0) }
    }
}
