/// A decoded field as a wire integer plus what is needed to show it in units: the raw value times
/// `resolution` is the value in `unit`. Used by `cyclelog decode` (raw for `--json`, scaled for the
/// table) so that presentation never re-derives the layout.
public struct DecodedField: Equatable, Sendable {
    public enum Value: Equatable, Sendable {
        case unsigned(UInt64)
        case signed(Int64)
        case list([Int64])
        case text(String)
    }

    /// SIG field name in lowerCamelCase: the key in `cyclelog decode --json`.
    public let key: String
    public let value: Value
    /// Multiply the raw value by this to get `unit` (1 for plain integers).
    public let resolution: Double
    /// Unit after scaling ("W", "rpm", "s", "%", "N·m", "°", …); empty when unitless.
    public let unit: String
    /// A word for enumerated values and flags ("Left Crank", "crank-based"), when there is one.
    public let meaning: String?

    public init(_ key: String, _ value: Value, resolution: Double = 1, unit: String = "", meaning: String? = nil) {
        self.key = key
        self.value = value
        self.resolution = resolution
        self.unit = unit
        self.meaning = meaning
    }

    static func unsigned<T: BinaryInteger>(
        _ key: String, _ raw: T, resolution: Double = 1, unit: String = "", meaning: String? = nil
    ) -> DecodedField {
        DecodedField(key, .unsigned(UInt64(raw)), resolution: resolution, unit: unit, meaning: meaning)
    }

    static func signed<T: BinaryInteger>(
        _ key: String, _ raw: T, resolution: Double = 1, unit: String = "", meaning: String? = nil
    ) -> DecodedField {
        DecodedField(key, .signed(Int64(raw)), resolution: resolution, unit: unit, meaning: meaning)
    }

    /// The flags field, with the names of the set bits as its meaning.
    static func flags<T: BinaryInteger>(_ raw: T, names: [(bit: Int, name: String)]) -> DecodedField {
        flagsNamed("flags", raw, names: names)
    }

    /// A bit field, with the names of the set bits (or "none") as its meaning.
    static func flagsNamed<T: BinaryInteger>(_ key: String, _ raw: T, names: [(bit: Int, name: String)]) -> DecodedField
    {
        let set = names.filter { raw >> $0.bit & 1 == 1 }.map(\.name)
        return .unsigned(key, raw, meaning: set.isEmpty ? "none" : set.joined(separator: ", "))
    }
}

/// A characteristic value type: decodes from the bytes of one notification, indication or read.
public protocol CharacteristicValue: Equatable, Sendable {
    /// The characteristic this type decodes.
    static var characteristic: Characteristic { get }
    /// Decodes one value; throws `MalformedPayload` naming the field and byte offset that failed.
    init(decoding bytes: [UInt8]) throws(MalformedPayload)
    /// The decoded fields in wire order, absent fields omitted.
    var fields: [DecodedField] { get }
}

/// A characteristic value that can also be written back to bytes (the measurements, for emulated
/// sensors and round-trip tests; control-point requests).
public protocol EncodableCharacteristicValue: CharacteristicValue {
    /// The bytes of this value; `decode(encode(x)) == x`.
    func encoded() -> [UInt8]
}
