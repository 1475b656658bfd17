/// The bodies and queries the services take: `multipart/form-data` (a file and its fields), URL-encoded forms and
/// query strings.
public struct MultipartForm: Sendable {
    public let boundary: String
    public private(set) var body: [UInt8] = []

    /// `boundary` must not occur in any part; a random one is chosen by default.
    public init(boundary: String = "cyclelog-" + String(UInt64.random(in: .min ... .max), radix: 36)) {
        self.boundary = boundary
    }

    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    public mutating func add(field name: String, _ value: String) {
        part("Content-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n", Array(value.utf8))
    }

    public mutating func add(file name: String, fileName: String, contentType: String, _ bytes: [UInt8]) {
        part(
            "Content-Disposition: form-data; name=\"\(Self.quoted(name))\"; filename=\"\(Self.quoted(fileName))\"\r\n"
                + "Content-Type: \(contentType)\r\n", bytes)
    }

    /// The body with its closing boundary.
    public var finished: [UInt8] { body + Array("--\(boundary)--\r\n".utf8) }

    private mutating func part(_ headers: String, _ content: [UInt8]) {
        body += Array("--\(boundary)\r\n\(headers)\r\n".utf8)
        body += content
        body += Array("\r\n".utf8)
    }

    /// A name in a quoted header value: quotes and line breaks cannot end it early.
    private static func quoted(_ text: String) -> String {
        String(text.map { $0 == "\"" || $0 == "\r" || $0 == "\n" ? "_" : $0 })
    }
}

public enum FormEncoding {
    /// `name=value&…` with everything but unreserved characters percent-encoded (RFC 3986), as a query or an
    /// `application/x-www-form-urlencoded` body.
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    public static func escape(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                escaped.append(Character(Unicode.Scalar(byte)))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return escaped
    }

    /// A query's or form's fields, decoded (`+` as a space).
    public static func decode(_ text: Substring) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (unescape(parts[0]), parts.count > 1 ? unescape(parts[1]) : "")
        }
    }

    static func unescape(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex),
                high != utf8.endIndex, let low = utf8.index(high, offsetBy: 1, limitedBy: utf8.endIndex),
                low != utf8.endIndex,
                let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index = utf8.index(after: low)
                continue
            }
            bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index = utf8.index(after: index)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
