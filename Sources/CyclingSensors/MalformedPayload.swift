/// Why a characteristic value could not be decoded: the field that failed, the byte offset where it
/// starts, and what was wrong. Every decoder throws only this type.
public struct MalformedPayload: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong with the bytes at `offset`.
    public enum Reason: Equatable, Sendable, CustomStringConvertible {
        /// The field needs `needed` bytes but only `available` are left: the value is shorter than its
        /// flags promise, e.g. a notification cut at ATT_MTU − 3 = 20 bytes.
        case truncated(needed: Int, available: Int)
        /// Bytes after the last field where the characteristic's layout leaves no room for them.
        case unexpectedTrailingBytes(count: Int)
        /// The bytes are present but do not form a legal value (e.g. a string that is not UTF-8).
        case invalidValue(String)

        public var description: String {
            switch self {
            case .truncated(let needed, let available):
                return "truncated: needs \(needed) byte\(needed == 1 ? "" : "s"), \(available) left"
            case .unexpectedTrailingBytes(let count):
                return "\(count) unexpected byte\(count == 1 ? "" : "s") after the last field its flags announce"
            case .invalidValue(let why):
                return "invalid value: \(why)"
            }
        }
    }

    /// The SIG field name in lowerCamelCase, the same key `cyclelog decode --json` uses.
    public let field: String
    /// Byte offset of the field within the characteristic value.
    public let offset: Int
    public let reason: Reason

    public init(field: String, offset: Int, reason: Reason) {
        self.field = field
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "\(field) at byte \(offset): \(reason)" }
}
