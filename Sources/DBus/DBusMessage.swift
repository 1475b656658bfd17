import CDBus

/// A D-Bus message as plain values: everything libdbus gave us is copied out before the C message is released.
public struct DBusMessage: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case methodCall
        case methodReturn
        case error
        case signal
    }

    public var kind: Kind
    public var path: String?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var destination: String?
    public var sender: String?
    /// Set by libdbus when the message is sent (or read from the wire); 0 before.
    public var serial: UInt32 = 0
    public var replySerial: UInt32 = 0
    public var body: [DBusValue]

    public init(
        kind: Kind, path: String? = nil, interface: String? = nil, member: String? = nil, errorName: String? = nil,
        destination: String? = nil, sender: String? = nil, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.destination = destination
        self.sender = sender
        self.body = body
    }

    public static func methodCall(
        destination: String?, path: String, interface: String?, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    public static func signal(path: String, interface: String, member: String, body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: member, body: body)
    }

    /// The body's signature.
    public var signature: String { body.map(\.signature).joined() }

    /// The first body value of an error reply is its human-readable message.
    public var errorMessage: String { body.first?.string ?? "" }

    /// The message in the D-Bus wire format (`dbus_message_marshal`), with the byte order of this machine.
    public func marshalled() throws(DBusError) -> [UInt8] {
        let raw = try makeRaw()
        defer { dbus_message_unref(raw) }
        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else {
            throw DBusError(name: DBusError.failedName, message: "out of memory while marshalling a message")
        }
        defer { dbus_free(buffer) }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    /// Reads a message from the D-Bus wire format (`dbus_message_demarshal`).
    public init(marshalled bytes: [UInt8]) throws(DBusError) {
        var error = cdbus_error_make()
        let raw: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                dbus_message_demarshal($0.baseAddress, Int32($0.count), &error)
            }
        }
        guard let raw else { throw DBusError(consuming: &error) }
        defer { dbus_message_unref(raw) }
        self = try DBusMessage(raw: raw)
    }

    /// Copies a libdbus message (`DBusMessage*`) into values; the caller keeps its reference.
    init(raw: OpaquePointer) throws(DBusError) {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let kind: Kind
        switch dbus_message_get_type(raw) {
        case cdbus_message_type_method_call: kind = .methodCall
        case cdbus_message_type_method_return: kind = .methodReturn
        case cdbus_message_type_error: kind = .error
        case cdbus_message_type_signal: kind = .signal
        default: throw DBusError.invalid("message of an unknown type")
        }
        self.init(
            kind: kind, path: text(dbus_message_get_path(raw)), interface: text(dbus_message_get_interface(raw)),
            member: text(dbus_message_get_member(raw)), errorName: text(dbus_message_get_error_name(raw)),
            destination: text(dbus_message_get_destination(raw)), sender: text(dbus_message_get_sender(raw)),
            body: try MessageReader.body(of: raw))
        serial = dbus_message_get_serial(raw)
        replySerial = dbus_message_get_reply_serial(raw)
    }

    /// A new libdbus message holding these values (+1 reference for the caller). Names and paths are checked
    /// first: libdbus aborts the process on an invalid one instead of returning an error.
    func makeRaw() throws(DBusError) -> OpaquePointer {
        try NameValidation.check(self)
        let raw: OpaquePointer?
        switch kind {
        case .methodCall:
            raw = dbus_message_new_method_call(destination, path, interface, member)
        case .signal:
            raw = dbus_message_new_signal(path, interface, member)
        case .methodReturn:
            raw = dbus_message_new(cdbus_message_type_method_return)
        case .error:
            raw = dbus_message_new(cdbus_message_type_error)
        }
        guard let raw else { throw DBusError(name: DBusError.failedName, message: "out of memory for a message") }
        if kind == .methodReturn || kind == .error {
            dbus_message_set_reply_serial(raw, replySerial)
            if let destination { dbus_message_set_destination(raw, destination) }
            if kind == .error { dbus_message_set_error_name(raw, errorName ?? DBusError.failedName) }
        }
        if let sender { dbus_message_set_sender(raw, sender) }
        if kind == .methodCall || kind == .signal, serial != 0 { dbus_message_set_serial(raw, serial) }
        do {
            try MessageWriter.append(body, to: raw)
        } catch {
            dbus_message_unref(raw)
            throw error
        }
        return raw
    }
}

extension DBusError {
    /// Takes the name and message out of a set `DBusError` of libdbus and frees it.
    init(consuming error: inout CDBus.DBusError) {
        let name = error.name.map { String(cString: $0) } ?? DBusError.failedName
        let message = error.message.map { String(cString: $0) } ?? ""
        dbus_error_free(&error)
        self.init(name: name, message: message)
    }
}

/// libdbus treats an invalid name or path as a programming error and aborts; anything that can come from
/// outside is checked here first.
enum NameValidation {
    static func check(_ message: DBusMessage) throws(DBusError) {
        if let path = message.path { try validate(path, "object path", dbus_validate_path) }
        if let interface = message.interface { try validate(interface, "interface name", dbus_validate_interface) }
        if let member = message.member { try validate(member, "member name", dbus_validate_member) }
        if let name = message.errorName { try validate(name, "error name", dbus_validate_error_name) }
        if let destination = message.destination { try validate(destination, "bus name", dbus_validate_bus_name) }
        if let sender = message.sender { try validate(sender, "bus name", dbus_validate_bus_name) }
    }

    static func validate(
        _ text: String, _ what: String,
        _ check: (UnsafePointer<CChar>?, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
    ) throws(DBusError) {
        var error = cdbus_error_make()
        guard !text.utf8.contains(0), text.withCString({ check($0, &error) }) != 0 else {
            if dbus_error_is_set(&error) != 0 { dbus_error_free(&error) }
            throw DBusError.invalid("\"\(text)\" is not a valid D-Bus \(what)")
        }
    }

    static func isValidSignature(_ signature: String) -> Bool {
        var error = cdbus_error_make()
        let valid = !signature.utf8.contains(0) && signature.withCString { dbus_signature_validate($0, &error) } != 0
        if dbus_error_is_set(&error) != 0 { dbus_error_free(&error) }
        return valid
    }
}
