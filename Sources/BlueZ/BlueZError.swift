import DBus
import ExitStatus
import Foundation

/// A BlueZ or bus failure, in words a rider understands, with the D-Bus error kept for logs and decisions.
public struct BlueZError: ExplainedError, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The D-Bus policy does not let this user talk to org.bluez.
        case accessDenied
        /// bluetoothd is not on the bus.
        case bluetoothdNotRunning
        /// The adapter is off (or missing).
        case adapterNotReady
        /// Another operation on the same object is running; worth retrying.
        case inProgress
        case notConnected
        case alreadyConnected
        case notSupported
        case notPermitted
        case timedOut
        /// The bus itself went away.
        case busLost
        case failed
    }

    public var kind: Kind
    public var dbus: DBusError
    /// What was being done, e.g. "connecting to Stages Power L".
    public var action: String

    /// Bluetooth cannot be used.
    public var exitStatus: ExitStatus { .cannotUse }
    /// The D-Bus error as BlueZ or the bus named it.
    public var cause: String? { "\(dbus.name): \(dbus.message)" }

    public init(_ dbus: DBusError, while action: String) {
        self.dbus = dbus
        self.action = action
        kind = Self.kind(of: dbus)
    }

    static func kind(of error: DBusError) -> Kind {
        switch error.name {
        case DBusError.accessDeniedName, "org.bluez.Error.NotAuthorized": .accessDenied
        case DBusError.serviceUnknownName, "org.freedesktop.DBus.Error.NameHasNoOwner": .bluetoothdNotRunning
        case "org.bluez.Error.NotReady", "org.bluez.Error.NoSuchAdapter": .adapterNotReady
        case "org.bluez.Error.InProgress": .inProgress
        case "org.bluez.Error.NotConnected": .notConnected
        case "org.bluez.Error.AlreadyConnected": .alreadyConnected
        case "org.bluez.Error.NotSupported": .notSupported
        case "org.bluez.Error.NotPermitted": .notPermitted
        case DBusError.noReplyName, DBusError.timeoutName: .timedOut
        case DBusError.disconnectedName: .busLost
        default: .failed
        }
    }

    /// The ATT error code the sensor answered with, where BlueZ passes one on as `org.bluez.Error.Failed`
    /// "Operation failed with ATT error: 0xNN" (application and profile codes 0x80–0xFF among them; bluetoothd's src/error.c).
    public var attErrorCode: UInt8? {
        guard kind == .failed, let range = dbus.message.range(of: "ATT error: 0x") else { return nil }
        return UInt8(dbus.message[range.upperBound...].prefix(2), radix: 16)
    }

    public var description: String {
        let detail = dbus.message.isEmpty ? dbus.name : dbus.message
        switch kind {
        case .accessDenied:
            return """
                \(action): this user may not talk to BlueZ (\(dbus.name)). The D-Bus policy for org.bluez \
                (/etc/dbus-1/system.d/bluetooth.conf) allows members of the 'bluetooth' group: run \
                `sudo usermod -aG bluetooth $USER`, then log out and back in.
                """
        case .bluetoothdNotRunning:
            return "\(action): bluetoothd is not running (nobody owns org.bluez on the bus). "
                + "Start it with `sudo systemctl start bluetooth`."
        case .adapterNotReady:
            return "\(action): the Bluetooth adapter is off or missing. "
                + "Turn it on with `bluetoothctl power on` (and check `rfkill list`)."
        case .inProgress: return "\(action): BlueZ is still busy with the previous request (\(detail))."
        case .notConnected: return "\(action): the sensor is not connected."
        case .alreadyConnected: return "\(action): the sensor is already connected."
        case .notSupported: return "\(action): the sensor does not support this (\(detail))."
        case .notPermitted: return "\(action): the sensor refused (\(detail))."
        case .timedOut: return "\(action): BlueZ did not answer in time."
        case .busLost: return "\(action): the connection to the system bus was lost."
        case .failed: return "\(action): \(detail)."
        }
    }
}
