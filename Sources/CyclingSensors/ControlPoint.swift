/// Control-point and status messages share one shape: an op code followed by a parameter whose layout
/// depends on the op code. Each characteristic describes its op codes in a table (`OpCodeLayout`) and
/// the shared reader/writer below follows it, so the layouts live in one place per characteristic.

/// One field of an op code's parameter.
public struct ParameterLayout: Sendable {
    public enum Kind: Sendable {
        case uint8, uint16, sint16, uint24, uint32
        /// uint8 items filling the rest of the value (e.g. supported sensor locations).
        case uint8List
        /// uint16 items filling the rest of the value.
        case uint16List
    }

    public let key: String
    public let kind: Kind
    public let resolution: Double
    public let unit: String

    init(_ key: String, _ kind: Kind, resolution: Double = 1, unit: String = "") {
        self.key = key
        self.kind = kind
        self.resolution = resolution
        self.unit = unit
    }
}

/// What an op code is called and how its parameter is laid out.
public struct OpCodeLayout: Sendable {
    public let opCode: UInt8
    public let name: String
    /// Layout of the parameter sent with the request (or carried by a status message).
    public let parameter: [ParameterLayout]
    /// Layout of the response parameter that follows a success result.
    public let successResponse: [ParameterLayout]

    init(_ opCode: UInt8, _ name: String, _ parameter: [ParameterLayout] = [], response: [ParameterLayout] = []) {
        self.opCode = opCode
        self.name = name
        self.parameter = parameter
        self.successResponse = response
    }
}

/// The result code in a control-point response (shared by CPS, CSCS and FTMS; 0x05 is FTMS only).
public struct ControlPointResult: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = ControlPointResult(rawValue: 0x01)
    public static let opCodeNotSupported = ControlPointResult(rawValue: 0x02)
    public static let invalidParameter = ControlPointResult(rawValue: 0x03)
    public static let operationFailed = ControlPointResult(rawValue: 0x04)
    public static let controlNotPermitted = ControlPointResult(rawValue: 0x05)

    public var name: String {
        switch rawValue {
        case 0x01: "Success"
        case 0x02: "Op Code Not Supported"
        case 0x03: "Invalid Parameter"
        case 0x04: "Operation Failed"
        case 0x05: "Control Not Permitted"
        default: "reserved (\(rawValue))"
        }
    }
}

/// A decoded parameter value, kept as wire integers.
public enum ParameterValue: Equatable, Sendable {
    case integer(Int64)
    case list([Int64])
}

/// The op-code tables of one control-point or status characteristic.
public struct ControlPointDialect: Sendable {
    /// The op code a server uses for responses (0x20 CPS, 0x10 CSCS, 0x80 FTMS); nil for status
    /// characteristics, which carry no responses.
    let responseOpCode: UInt8?
    let layouts: [OpCodeLayout]

    func layout(for opCode: UInt8) -> OpCodeLayout? { layouts.first { $0.opCode == opCode } }
    public func name(of opCode: UInt8) -> String { layout(for: opCode)?.name ?? "reserved op code 0x\(hex(opCode))" }
}

/// A control-point request, a control-point response, or a status message, decoded by its dialect.
public struct ControlPointMessage: Equatable, Sendable {
    /// For a request or status message: its op code. For a response: the op code of the request it answers.
    public var opCode: UInt8
    /// Set for responses only.
    public var result: ControlPointResult?
    /// Parameter values in wire order, keyed like the JSON output. Empty for unknown op codes, whose
    /// bytes are in `unparsedParameter`.
    public var parameters: [(key: String, value: ParameterValue)]
    /// Parameter bytes of an op code the dialect does not know, or of a non-success response.
    public var unparsedParameter: [UInt8]

    public var isResponse: Bool { result != nil }

    /// The value of one parameter by its key.
    public func parameter(_ key: String) -> ParameterValue? { parameters.first { $0.key == key }?.value }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.opCode == rhs.opCode && lhs.result == rhs.result && lhs.unparsedParameter == rhs.unparsedParameter
            && lhs.parameters.map(\.key) == rhs.parameters.map(\.key)
            && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }

    init(decoding bytes: [UInt8], dialect: ControlPointDialect) throws(MalformedPayload) {
        var reader = ByteReader(bytes)
        let first = try reader.readUInt8("opCode")
        let layout: [ParameterLayout]?
        if let responseOpCode = dialect.responseOpCode, first == responseOpCode {
            opCode = try reader.readUInt8("requestOpCode")
            let result = ControlPointResult(rawValue: try reader.readUInt8("resultCode"))
            self.result = result
            layout = result == .success ? dialect.layout(for: opCode)?.successResponse : nil
        } else {
            opCode = first
            result = nil
            layout = dialect.layout(for: opCode)?.parameter
        }
        parameters = []
        unparsedParameter = []
        guard let layout else {
            unparsedParameter = reader.readRest()
            return
        }
        for item in layout {
            parameters.append((item.key, try reader.read(item)))
        }
        try reader.expectEnd()
    }

    func fields(dialect: ControlPointDialect) -> [DecodedField] {
        var fields: [DecodedField] = []
        let layout = dialect.layout(for: opCode)
        if let result {
            fields.append(.unsigned("responseCode", dialect.responseOpCode ?? 0))
            fields.append(.unsigned("requestOpCode", opCode, meaning: dialect.name(of: opCode)))
            fields.append(.unsigned("resultCode", result.rawValue, meaning: result.name))
        } else {
            fields.append(.unsigned("opCode", opCode, meaning: dialect.name(of: opCode)))
        }
        let items = (result == nil ? layout?.parameter : layout?.successResponse) ?? []
        for (item, parameter) in zip(items, parameters) {
            switch parameter.value {
            case .integer(let raw):
                fields.append(DecodedField(item.key, .signed(raw), resolution: item.resolution, unit: item.unit))
            case .list(let raw):
                fields.append(DecodedField(item.key, .list(raw), resolution: item.resolution, unit: item.unit))
            }
        }
        if !unparsedParameter.isEmpty {
            fields.append(DecodedField("parameter", .list(unparsedParameter.map(Int64.init))))
        }
        return fields
    }
}

extension ByteReader {
    mutating func read(_ item: ParameterLayout) throws(MalformedPayload) -> ParameterValue {
        // The reads below name a placeholder field; the table's key replaces it.
        do throws(MalformedPayload) {
            switch item.kind {
            case .uint8: return .integer(Int64(try readUInt8("parameter")))
            case .uint16: return .integer(Int64(try readUInt16("parameter")))
            case .sint16: return .integer(Int64(try readInt16("parameter")))
            case .uint24: return .integer(Int64(try readUInt24("parameter")))
            case .uint32: return .integer(Int64(try readUInt32("parameter")))
            case .uint8List: return .list(readRest().map(Int64.init))
            case .uint16List: return .list(try readUInt16Array("parameter").map(Int64.init))
            }
        } catch {
            throw MalformedPayload(field: item.key, offset: error.offset, reason: error.reason)
        }
    }
}

extension ControlPointDialect {
    /// Encodes `opCode` followed by `values` laid out as the op code's request parameter says.
    /// Values beyond the layout are ignored; missing values are written as 0.
    func encodeRequest(_ opCode: UInt8, _ values: [Int64] = []) -> [UInt8] {
        [opCode] + encodeParameter(layout(for: opCode)?.parameter ?? [], values)
    }

    /// Encodes a response (`responseOpCode`, request op code, result, success parameter).
    func encodeResponse(to opCode: UInt8, result: ControlPointResult, _ values: [Int64] = []) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(responseOpCode ?? 0)
        writer.write(opCode)
        writer.write(result.rawValue)
        // A response's parameter follows Success only (a refused Spin Down Control carries no target speeds).
        let parameter = result == .success ? encodeParameter(layout(for: opCode)?.successResponse ?? [], values) : []
        writer.write(parameter)
        return writer.bytes
    }

    private func encodeParameter(_ layout: [ParameterLayout], _ values: [Int64]) -> [UInt8] {
        var writer = ByteWriter()
        for (index, item) in layout.enumerated() {
            let value = index < values.count ? values[index] : 0
            switch item.kind {
            case .uint8: writer.write(UInt8(truncatingIfNeeded: value))
            case .uint16, .sint16: writer.write(UInt16(truncatingIfNeeded: value))
            case .uint24: writer.writeUInt24(UInt32(truncatingIfNeeded: value))
            case .uint32: writer.write(UInt32(truncatingIfNeeded: value))
            case .uint8List: values.dropFirst(index).forEach { writer.write(UInt8(truncatingIfNeeded: $0)) }
            case .uint16List: values.dropFirst(index).forEach { writer.write(UInt16(truncatingIfNeeded: $0)) }
            }
        }
        return writer.bytes
    }
}

func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
