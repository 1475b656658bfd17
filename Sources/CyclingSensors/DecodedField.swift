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

    /// SIG field name in lowerCamelCase: the key in `cyclelog decode --json`, written there as it is (a letter,
    /// then letters and digits: nothing JSON escapes).
    public let key: String
    public let value: Value
    /// Multiply the raw value by this to get `unit` (1 for plain integers).
    public let resolution: Double
    /// Unit after scaling ("W", "rpm", "s", "%", "N·m", "°", …); empty when unitless.
    public let unit: String
    /// A word for enumerated values and flags ("Left Crank", "crank-based"), when there is one.
    public var meaning: String? {
        if case .word(let word) = description { return word }
        var parts: [String] = []
        forEachMeaningPart { parts.append($0) }
        return parts.joined(separator: ", ")
    }

    /// The parts `meaning` joins with ", ": its word, or a bit field's set bits' names ("none" when none is set).
    /// For a writer that copies them out without building the joined text.
    public func forEachMeaningPart(_ body: (String) -> Void) {
        switch description {
        case .word(let word):
            if let word { body(word) }
        case .setBits(let names):
            guard case .unsigned(let raw) = value else { return }
            var any = false
            for (bit, name) in names where raw >> bit & 1 == 1 {
                body(name)
                any = true
            }
            if !any { body("none") }
        }
    }

    /// Whether this is a bit field (flags, features), whose value reads best in hexadecimal.
    public var isBitField: Bool {
        if case .setBits = description { return true }
        return false
    }

    /// What `meaning` is made from. A bit field keeps its table of names and joins the set ones only when asked:
    /// `decode --json` never shows them, and building them cost more than decoding the value.
    private enum Description: Sendable {
        case word(String?)
        case setBits(names: [(bit: Int, name: String)])
    }
    private let description: Description

    public init(_ key: String, _ value: Value, resolution: Double = 1, unit: String = "", meaning: String? = nil) {
        self.init(key, value, resolution: resolution, unit: unit, description: .word(meaning))
    }

    private init(_ key: String, _ value: Value, resolution: Double, unit: String, description: Description) {
        self.key = key
        self.value = value
        self.resolution = resolution
        self.unit = unit
        self.description = description
    }

    public static func == (lhs: DecodedField, rhs: DecodedField) -> Bool {
        lhs.key == rhs.key && lhs.value == rhs.value && lhs.resolution == rhs.resolution && lhs.unit == rhs.unit
            && lhs.meaning == rhs.meaning
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
        DecodedField(key, .unsigned(UInt64(raw)), resolution: 1, unit: "", description: .setBits(names: names))
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

/// A value decoded by the million (`cyclelog decode` of a long log) appends its fields to a list the caller
/// reuses, so that a value costs no list of its own; `fields` is that list made fresh.
public protocol FieldAppending: CharacteristicValue {
    /// Appends the decoded fields, in wire order, to `fields`.
    func appendFields(to fields: inout [DecodedField])
}

extension FieldAppending {
    public var fields: [DecodedField] {
        var fields: [DecodedField] = []
        // Room for the usual few (a power meter sends 3 to 6); the rare longer value grows the list once.
        fields.reserveCapacity(8)
        appendFields(to: &fields)
        return fields
    }
}

/// A characteristic value that can also be written back to bytes (the measurements, for emulated
/// sensors and round-trip tests; control-point requests).
public protocol EncodableCharacteristicValue: CharacteristicValue {
    /// The bytes of this value; `decode(encode(x)) == x`.
    func encoded() -> [UInt8]
}
