import CDBus

/// Appends values to a libdbus message through `DBusMessageIter` (`dbus_message_iter_append_basic`,
/// `dbus_message_iter_open_container`).
enum MessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(message, &iterator)
        for value in values { try append(value, &iterator) }
    }

    private static func append(_ value: DBusValue, _ iterator: inout DBusMessageIter) throws(DBusError) {
        var ok: dbus_bool_t = 1
        switch value {
        case .byte(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_byte, &v)
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            ok = dbus_message_iter_append_basic(&iterator, cdbus_type_boolean, &v)
        case .int16(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_int16, &v)
        case .uint16(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_uint16, &v)
        case .int32(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_int32, &v)
        case .uint32(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_uint32, &v)
        case .int64(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_int64, &v)
        case .uint64(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_uint64, &v)
        case .double(var v): ok = dbus_message_iter_append_basic(&iterator, cdbus_type_double, &v)
        case .string(let text):
            // libdbus stops at a NUL; D-Bus strings cannot hold one.
            guard !text.utf8.contains(0) else { throw DBusError.invalid("a D-Bus string cannot contain NUL") }
            ok = appendText(text, cdbus_type_string, &iterator)
        case .objectPath(let path):
            try NameValidation.validate(path, "object path", dbus_validate_path)
            ok = appendText(path, cdbus_type_object_path, &iterator)
        case .signature(let signature):
            guard NameValidation.isValidSignature(signature) else {
                throw DBusError.invalid("\"\(signature)\" is not a valid D-Bus signature")
            }
            ok = appendText(signature, cdbus_type_signature, &iterator)
        case .array(let element, let elements):
            guard NameValidation.isValidSignature("a" + element) else {
                throw DBusError.invalid("\"a\(element)\" is not a valid D-Bus signature")
            }
            for item in elements where item.signature != element {
                throw DBusError.invalid("an array of \(element) holds a value of type \(item.signature)")
            }
            try container(cdbus_type_array, element, &iterator) { (sub) throws(DBusError) in
                if element == "y" {
                    // One copy of the whole payload instead of one call per byte.
                    var bytes: [UInt8] = elements.map { if case .byte(let b) = $0 { b } else { 0 } }
                    let done = bytes.withUnsafeMutableBufferPointer { buffer -> dbus_bool_t in
                        var base = buffer.baseAddress
                        return dbus_message_iter_append_fixed_array(&sub, cdbus_type_byte, &base, Int32(buffer.count))
                    }
                    if done == 0 { throw outOfMemory }
                } else {
                    for item in elements { try append(item, &sub) }
                }
            }
        case .dictEntry(let key, let entry):
            try container(cdbus_type_dict_entry, nil, &iterator) { (sub) throws(DBusError) in
                try append(key, &sub)
                try append(entry, &sub)
            }
        case .structure(let fields):
            try container(cdbus_type_struct, nil, &iterator) { (sub) throws(DBusError) in
                for field in fields { try append(field, &sub) }
            }
        case .variant(let inner):
            try container(cdbus_type_variant, inner.signature, &iterator) { (sub) throws(DBusError) in
                try append(inner, &sub)
            }
        }
        if ok == 0 { throw outOfMemory }
    }

    private static let outOfMemory = DBusError(name: DBusError.failedName, message: "out of memory for a message")

    private static func appendText(_ text: String, _ type: Int32, _ iterator: inout DBusMessageIter) -> dbus_bool_t {
        text.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, type, &p)
        }
    }

    private static func container(
        _ type: Int32, _ signature: String?, _ iterator: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iterator, type, $0, &sub) }
            } else {
                dbus_message_iter_open_container(&iterator, type, nil, &sub)
            }
        guard opened != 0 else { throw outOfMemory }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iterator, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iterator, &sub) != 0 else { throw outOfMemory }
    }
}

/// Reads a libdbus message's body into values (`dbus_message_iter_get_basic`, `dbus_message_iter_recurse`).
enum MessageReader {
    static func body(of message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return try sequence(&iterator)
    }

    private static func sequence(_ iterator: inout DBusMessageIter) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != cdbus_type_invalid {
            values.append(try value(&iterator))
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func basic<T: BitwiseCopyable>(_ iterator: inout DBusMessageIter, _ zero: T) -> T {
        var value = zero
        withUnsafeMutableBytes(of: &value) { dbus_message_iter_get_basic(&iterator, $0.baseAddress) }
        return value
    }

    private static func text(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func value(_ iterator: inout DBusMessageIter) throws(DBusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case cdbus_type_byte: return .byte(basic(&iterator, UInt8(0)))
        case cdbus_type_boolean: return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case cdbus_type_int16: return .int16(basic(&iterator, Int16(0)))
        case cdbus_type_uint16: return .uint16(basic(&iterator, UInt16(0)))
        case cdbus_type_int32: return .int32(basic(&iterator, Int32(0)))
        case cdbus_type_uint32: return .uint32(basic(&iterator, UInt32(0)))
        case cdbus_type_int64: return .int64(basic(&iterator, Int64(0)))
        case cdbus_type_uint64: return .uint64(basic(&iterator, UInt64(0)))
        case cdbus_type_double: return .double(basic(&iterator, Double(0)))
        case cdbus_type_string: return .string(text(&iterator))
        case cdbus_type_object_path: return .objectPath(text(&iterator))
        case cdbus_type_signature: return .signature(text(&iterator))
        case cdbus_type_array:
            let whole = signature(&iterator)
            let element = String(whole.dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            if element == "y" {
                var base: UnsafeMutablePointer<UInt8>?
                var count: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &base, &count)
                let bytes = base.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? []
                return .bytes(bytes)
            }
            return .array(elementSignature: element, try sequence(&sub))
        case cdbus_type_dict_entry:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            let pair = try sequence(&sub)
            guard pair.count == 2 else { throw DBusError.invalid("a dictionary entry without a key and a value") }
            return .dictEntry(pair[0], pair[1])
        case cdbus_type_struct:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .structure(try sequence(&sub))
        case cdbus_type_variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &sub)
            return .variant(try value(&sub))
        default:
            // Unix file descriptors: cyclelog never asks for one (no AcquireNotify), so one is a peer's mistake.
            throw DBusError.invalid(
                "a value of D-Bus type '\(Character(UnicodeScalar(UInt8(truncatingIfNeeded: type))))' cannot be read")
        }
    }

    private static func signature(_ iterator: inout DBusMessageIter) -> String {
        guard let pointer = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(pointer) }
        return String(cString: pointer)
    }
}
