/// A failed D-Bus operation. `name` is the D-Bus error name (`org.bluez.Error.NotReady`,
/// `org.freedesktop.DBus.Error.AccessDenied`, …) so that callers can map it to words a rider understands.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// Errors raised by this library itself rather than by a peer.
    public static let timeoutName = "org.freedesktop.DBus.Error.Timeout"
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"
    public static let invalidArgumentsName = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownObjectName = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownPropertyName = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let accessDeniedName = "org.freedesktop.DBus.Error.AccessDenied"
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    public static let failedName = "org.freedesktop.DBus.Error.Failed"
    /// The calling task was cancelled before the reply came (never sent by a bus; this library's own).
    public static let cancelledName = "org.cyclelog.DBus.Error.Cancelled"

    static func invalid(_ message: String) -> DBusError { DBusError(name: invalidArgumentsName, message: message) }
}
