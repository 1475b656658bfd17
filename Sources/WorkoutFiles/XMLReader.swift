import StructuredWorkouts

/// An XML element: its name, attributes, children and the text directly inside it.
struct XMLElement {
    var name: String
    /// The name in lower case: element and attribute names are matched without regard to case, as Zwift does.
    var lowercasedName: String
    var attributes: [(lowercasedName: String, value: String)]
    var children: [XMLElement]
    var text: String
    /// The line it starts on, for a message that names it.
    var line: Int

    /// The attribute named `name` (given in lower case).
    func attribute(_ name: String) -> String? {
        attributes.first { $0.lowercasedName == name }?.value
    }

    /// The first child named `name` (given in lower case).
    func child(_ name: String) -> XMLElement? { children.first { $0.lowercasedName == name } }
}

/// Just enough XML for a workout file (`.zwo`): elements, attributes in either quote, text, the five named
/// entities and numeric ones, comments, CDATA, the declaration skipped. No namespaces, and no DOCTYPE: a file with
/// one (an entity to expand, an external one to fetch) is refused, saying so. A fault names its line.
struct XMLReader {
    private let bytes: [UInt8]
    private var at = 0
    /// Lines are counted as far as a message or an element's start needs them, and from there on: once over the
    /// file in all, as elements come in order.
    private var countedOffset = 0
    private var countedLine = 1
    /// Deeper than any workout file; a hostile file cannot exhaust the stack.
    static let maximumDepth = 64

    static func document(_ bytes: [UInt8]) throws(WorkoutReadError) -> XMLElement {
        var reader = XMLReader(bytes: normalizedLineEnds(bytes))
        // A UTF-8 byte order mark.
        if reader.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.at = 3 }
        try reader.skipMisc()
        guard reader.peek == UInt8(ascii: "<") else {
            throw reader.fault("the file does not start with an XML element")
        }
        let root = try reader.element(depth: 0)
        try reader.skipMisc()
        guard reader.at >= reader.bytes.count else {
            throw reader.fault("there is more after the root element </\(root.name)>")
        }
        return root
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// CR LF and a lone CR as LF, as XML 1.0 (§2.11) has a reader do before anything else.
    static func normalizedLineEnds(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(0x0D) else { return bytes }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for (index, byte) in bytes.enumerated() {
            if byte == 0x0D {
                if index + 1 < bytes.count && bytes[index + 1] == 0x0A { continue }
                output.append(0x0A)
            } else {
                output.append(byte)
            }
        }
        return output
    }

    private var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

    /// The line of the byte at `offset`.
    private mutating func line(at offset: Int) -> Int {
        let offset = min(offset, bytes.count)
        if offset < countedOffset { (countedOffset, countedLine) = (0, 1) }
        for index in countedOffset..<offset where bytes[index] == 0x0A { countedLine += 1 }
        countedOffset = offset
        return countedLine
    }

    private mutating func fault(_ reason: String) -> WorkoutReadError {
        WorkoutReadError("line \(line(at: at))", reason)
    }

    private mutating func advance(_ count: Int = 1) { at = min(at + count, bytes.count) }

    private func starts(with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        let start = text.utf8Start
        for index in 0..<count where bytes[at + index] != start[index] { return false }
        return true
    }

    /// Moves past `end`, or to the end of the file; false when it was not found.
    private mutating func skip(past end: StaticString) -> Bool {
        while at < bytes.count {
            if starts(with: end) {
                advance(end.utf8CodeUnitCount)
                return true
            }
            at += 1
        }
        return false
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D {
            at += 1
        }
    }

    /// White space, comments and processing instructions before and after the root element; a DOCTYPE is refused.
    private mutating func skipMisc() throws(WorkoutReadError) {
        while true {
            skipSpace()
            if starts(with: "<?") {
                _ = skip(past: "?>")
            } else if starts(with: "<!--") {
                _ = skip(past: "-->")
            } else if starts(with: "<!") && !starts(with: "<![CDATA[") {
                throw fault(Self.noDeclarations)
            } else {
                return
            }
        }
    }

    /// The longest text an element or an attribute may hold: a workout's longest text (its description); and
    /// the most bytes that text may take in the file, with its references (`&amp;` is five bytes for one).
    static let maximumTextBytes = StructuredWorkout.maximumDescriptionBytes
    static let maximumRawTextBytes = 10 * maximumTextBytes

    static func tooLong(_ what: String) -> String {
        "the text of \(what) is longer than any text of a workout may be (\(StructuredWorkout.byteCount(maximumTextBytes)))"
    }

    /// Why a DOCTYPE or a declaration inside one is refused.
    static let noDeclarations =
        "a DOCTYPE or an entity declaration is not accepted in a workout file (no entities are expanded or fetched): "
        + "remove it, a .zwo needs none"

    private mutating func name() throws(WorkoutReadError) -> String {
        let start = at
        while at < bytes.count {
            let byte = bytes[at]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "<")
            {
                break
            }
            at += 1
        }
        guard at > start else { throw fault("a name is missing where an element or attribute was expected") }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    private mutating func element(depth: Int) throws(WorkoutReadError) -> XMLElement {
        guard depth < Self.maximumDepth else { throw fault("elements nested more than \(Self.maximumDepth) deep") }
        let startLine = line(at: at)
        advance()  // <
        let elementName = try name()
        var element = XMLElement(
            name: elementName, lowercasedName: elementName.lowercased(), attributes: [], children: [], text: "",
            line: startLine)
        while true {
            skipSpace()
            guard let byte = peek else { throw fault("the file ends inside the tag <\(elementName)>") }
            if byte == UInt8(ascii: "/") {
                advance()
                guard peek == UInt8(ascii: ">") else { throw fault("'/' inside <\(elementName)> not followed by '>'") }
                advance()
                return element
            }
            if byte == UInt8(ascii: ">") {
                advance()
                break
            }
            let attributeName = try name()
            skipSpace()
            guard peek == UInt8(ascii: "=") else {
                throw fault("the attribute \(attributeName) of <\(elementName)> has no '=' and value")
            }
            advance()
            skipSpace()
            guard let quote = peek, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
                throw fault("the value of \(attributeName) in <\(elementName)> is not quoted")
            }
            advance()
            let start = at
            while at < bytes.count, bytes[at] != quote {
                guard bytes[at] != UInt8(ascii: "<") else { throw fault("'<' inside the value of \(attributeName)") }
                at += 1
            }
            guard peek == quote else { throw fault("the value of \(attributeName) in <\(elementName)> never ends") }
            guard at - start <= Self.maximumRawTextBytes else { throw fault(Self.tooLong("\(attributeName)=")) }
            let value = try decoded(bytes[start..<at])
            guard value.utf8.count <= Self.maximumTextBytes else { throw fault(Self.tooLong("\(attributeName)=")) }
            element.attributes.append((attributeName.lowercased(), value))
            advance()
        }
        // Content, up to the matching end tag. White space between elements is most of a workout file's text;
        // any other text is bounded as a workout's texts are, and refused once past it, before more is read.
        var text: [UInt8] = []
        var words = 0
        while true {
            guard let byte = peek else {
                throw fault("the file ends before </\(elementName)> (opened on line \(startLine))")
            }
            if byte != UInt8(ascii: "<") {
                let start = at
                while at < bytes.count, bytes[at] != UInt8(ascii: "<") { at += 1 }
                if bytes[start..<at].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A }) {
                    text += bytes[start..<at]
                } else {
                    guard at - start <= Self.maximumRawTextBytes else { throw fault(Self.tooLong("<\(elementName)>")) }
                    let chunk = try decoded(bytes[start..<at]).utf8
                    words += chunk.count
                    guard words <= Self.maximumTextBytes else { throw fault(Self.tooLong("<\(elementName)>")) }
                    text += chunk
                }
            } else if starts(with: "</") {
                advance(2)
                let closing = try name()
                skipSpace()
                guard closing == elementName, peek == UInt8(ascii: ">") else {
                    throw fault("</\(closing)> closes <\(elementName)> (opened on line \(startLine))")
                }
                advance()
                element.text = String(decoding: text, as: UTF8.self)
                return element
            } else if starts(with: "<!--") {
                guard skip(past: "-->") else { throw fault("a comment never ends") }
            } else if starts(with: "<![CDATA[") {
                advance(9)
                let start = at
                guard skip(past: "]]>") else { throw fault("a CDATA section never ends") }
                words += at - 3 - start
                guard words <= Self.maximumTextBytes else { throw fault(Self.tooLong("<\(elementName)>")) }
                text += bytes[start..<(at - 3)]
            } else if starts(with: "<?") {
                guard skip(past: "?>") else { throw fault("a processing instruction never ends") }
            } else if starts(with: "<!") {
                throw fault(Self.noDeclarations)
            } else {
                element.children.append(try self.element(depth: depth + 1))
            }
        }
    }

    /// Text with its entities replaced. Read by byte, not by character: a reference followed by a combining mark
    /// (`&#10;` then U+05BC) is one character, which would hide its `;`.
    private mutating func decoded(_ slice: ArraySlice<UInt8>) throws(WorkoutReadError) -> String {
        guard slice.contains(UInt8(ascii: "&")) else { return String(decoding: slice, as: UTF8.self) }
        var output: [UInt8] = []
        output.reserveCapacity(slice.count)
        var index = slice.startIndex
        while index < slice.endIndex {
            guard slice[index] == UInt8(ascii: "&") else {
                output.append(slice[index])
                index += 1
                continue
            }
            let end = slice[index...].prefix(11).firstIndex(of: UInt8(ascii: ";"))
            guard let end else { throw fault("an '&' that starts no entity (write &amp;)") }
            let entity = String(decoding: slice[(index + 1)..<end], as: UTF8.self)
            switch entity {
            case "amp": output.append(UInt8(ascii: "&"))
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                let scalar: UInt32?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst())
                } else {
                    scalar = nil
                }
                guard let scalar, let character = Unicode.Scalar(scalar) else {
                    throw fault(
                        "unknown entity &\(entity.prefix(10)); (a workout file may use &amp; &lt; &gt; &quot; &apos; "
                            + "and numeric references only: no entities of its own)")
                }
                output += Array(String(character).utf8)
            }
            index = end + 1
        }
        return String(decoding: output, as: UTF8.self)
    }
}
