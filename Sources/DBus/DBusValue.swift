/// One D-Bus value, copied out of libdbus so that it can cross actors and modules (`Sendable`).
///
/// Arrays carry their element signature so that an empty array still has a type; a dictionary is an array of
/// `dictEntry` values, as on the wire.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case array(elementSignature: String, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    case variant(DBusValue)

    /// The value's type as a D-Bus signature.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .array(let element, _): "a" + element
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// `ay`: a byte array, the type of every characteristic value.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(elementSignature: "y", bytes.map(DBusValue.byte))
    }

    /// `as`.
    public static func strings(_ strings: [String]) -> DBusValue {
        .array(elementSignature: "s", strings.map(DBusValue.string))
    }

    /// `a{sv}`, the shape of property maps and option dictionaries; keys keep the given order.
    public static func properties(_ pairs: [(String, DBusValue)]) -> DBusValue {
        .array(elementSignature: "{sv}", pairs.map { .dictEntry(.string($0.0), .variant($0.1)) })
    }

    /// The value inside a variant (and a variant's variant); other values are returned as they are.
    public var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    public var string: String? {
        switch unwrapped {
        case .string(let text), .objectPath(let text), .signature(let text): text
        default: nil
        }
    }

    public var bool: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    /// Any integer type, widened.
    public var integer: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): v <= UInt64(Int64.max) ? Int64(v) : nil
        default: nil
        }
    }

    /// A `d`, or any integer type as a Double.
    public var number: Double? {
        if case .double(let value) = unwrapped { return value }
        return integer.map(Double.init)
    }

    /// The bytes of an `ay`.
    public var byteArray: [UInt8]? {
        guard case .array("y", let elements) = unwrapped else { return nil }
        return elements.compactMap { if case .byte(let b) = $0 { b } else { nil } }
    }

    /// The strings of an `as` or `ao`.
    public var stringArray: [String]? {
        guard case .array(_, let elements) = unwrapped else { return nil }
        let strings = elements.compactMap(\.string)
        return strings.count == elements.count ? strings : nil
    }

    /// An `a{s…}` or `a{o…}` as a dictionary (values as they are, variants included).
    public var dictionary: [String: DBusValue]? {
        guard case .array(_, let elements) = unwrapped else { return nil }
        var result: [String: DBusValue] = [:]
        for element in elements {
            guard case .dictEntry(let key, let value) = element, let name = key.string else { return nil }
            result[name] = value
        }
        return result
    }
}
