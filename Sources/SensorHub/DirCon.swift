/// Wahoo's Direct Connect (DirCon, the mDNS service `_wahoo-fitness-tnp._tcp`): the hub's GATT services over TCP,
/// as Zwift on Apple TV, Windows and macOS reaches a trainer on the LAN. Each message is a 6-byte header (version 1,
/// message type, sequence number, response code, data length in network byte order) and its data; every UUID is the
/// full 128-bit one, written in the order it is read (the Bluetooth base UUID with the 16-bit UUID in bytes 2 and 3).
/// The client asks, the server answers with the request's type and sequence number; a notification (type 6) is the
/// server's own. Pure: bytes in, messages out.
public struct DirConMessage: Sendable, Equatable {
    public enum Kind: UInt8, Sendable {
        case discoverServices = 1
        case discoverCharacteristics = 2
        case readCharacteristic = 3
        case writeCharacteristic = 4
        case enableNotifications = 5
        case notification = 6
    }

    public enum ResponseCode: UInt8, Sendable {
        case success = 0
        case unknownMessageType = 1
        case unexpectedError = 2
        case serviceNotFound = 3
        case characteristicNotFound = 4
        case operationNotSupported = 5
        case writeFailed = 6
    }

    /// The protocol version every message carries.
    public static let version: UInt8 = 1
    public static let headerLength = 6
    /// The longest data a message to the hub may carry: a characteristic's UUID and the longest value an attribute
    /// has (512 bytes, Core 5.3 Vol 3 Part F 3.2.9). A longer length is refused before its data is read.
    public static let maximumDataLength = 16 + 512

    /// The type as sent (an unknown one is answered Unknown Message Type, not dropped).
    public var type: UInt8
    public var sequence: UInt8
    public var response: ResponseCode
    public var data: [UInt8]

    public init(_ kind: Kind, sequence: UInt8, response: ResponseCode = .success, data: [UInt8] = []) {
        self.init(type: kind.rawValue, sequence: sequence, response: response, data: data)
    }

    public init(type: UInt8, sequence: UInt8, response: ResponseCode = .success, data: [UInt8] = []) {
        self.type = type
        self.sequence = sequence
        self.response = response
        self.data = data
    }

    public var kind: Kind? { Kind(rawValue: type) }

    public func encoded() -> [UInt8] {
        [Self.version, type, sequence, response.rawValue, UInt8(data.count >> 8), UInt8(data.count & 0xFF)] + data
    }

    /// A 16-bit Bluetooth UUID as DirCon writes it: 0000xxxx-0000-1000-8000-00805F9B34FB, byte for byte.
    public static func uuid(_ short: UInt16) -> [UInt8] {
        [0, 0, UInt8(short >> 8), UInt8(short & 0xFF)] + baseTail
    }

    /// The 16-bit UUID a 128-bit one stands for; nil for one outside the Bluetooth base (no service of the hub).
    public static func shortUUID(_ bytes: ArraySlice<UInt8>) -> UInt16? {
        guard bytes.count == 16, bytes.prefix(2).allSatisfy({ $0 == 0 }), bytes.suffix(12).elementsEqual(baseTail)
        else { return nil }
        let start = bytes.startIndex
        return UInt16(bytes[start + 2]) << 8 | UInt16(bytes[start + 3])
    }

    /// The base UUID's last twelve bytes: -0000-1000-8000-00805F9B34FB.
    static let baseTail: [UInt8] = [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]
}

/// What breaks a DirCon connection: its bytes are not DirCon, or a message claims more data than any may carry.
public struct DirConError: Error, Equatable, CustomStringConvertible {
    public var description: String
}

/// The messages in a TCP stream, however its bytes arrive: each is read once its header and data are in.
public struct DirConReader: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// The whole messages `bytes` completes, in order. Throws (and the connection is closed) for a version other
    /// than 1 or a length over `DirConMessage.maximumDataLength`, checked from the header before the data is kept.
    public mutating func take(_ bytes: some Collection<UInt8>) throws(DirConError) -> [DirConMessage] {
        buffer.append(contentsOf: bytes)
        var messages: [DirConMessage] = []
        var offset = 0
        while buffer.count - offset >= DirConMessage.headerLength {
            guard buffer[offset] == DirConMessage.version else {
                throw DirConError(description: "not DirCon: version \(buffer[offset]) where 1 was expected")
            }
            let length = Int(buffer[offset + 4]) << 8 | Int(buffer[offset + 5])
            guard length <= DirConMessage.maximumDataLength else {
                throw DirConError(
                    description:
                        "a DirCon message of \(length) bytes, over the \(DirConMessage.maximumDataLength) any may carry"
                )
            }
            let end = offset + DirConMessage.headerLength + length
            guard buffer.count >= end else { break }
            messages.append(
                DirConMessage(
                    type: buffer[offset + 1], sequence: buffer[offset + 2],
                    response: DirConMessage.ResponseCode(rawValue: buffer[offset + 3]) ?? .unexpectedError,
                    data: Array(buffer[(offset + DirConMessage.headerLength)..<end])))
            offset = end
        }
        buffer.removeFirst(offset)
        return messages
    }
}

/// One app's DirCon connection to the hub: its requests answered from the hub's services (`HubService.hub`), the
/// characteristics it enabled notifications of, and what it wrote passed on (a control point's write is the app's
/// request; its answer comes later as a notification, DirCon's indication). Pure.
public struct DirConSession: Sendable {
    /// What a request gives: the answer to send, and the value written to a characteristic, if one was.
    public struct Outcome: Sendable, Equatable {
        public var answer: DirConMessage
        public var written: (characteristic: UInt16, value: [UInt8])?

        public static func == (a: Outcome, b: Outcome) -> Bool {
            a.answer == b.answer && a.written?.characteristic == b.written?.characteristic
                && a.written?.value == b.written?.value
        }
    }

    public private(set) var services: [HubService]
    /// The characteristics whose notifications the app enabled.
    public private(set) var enabled: Set<UInt16> = []

    public init(services: [HubService]) { self.services = services }

    /// The answer to one of the app's requests.
    public mutating func answer(_ request: DirConMessage) -> Outcome {
        func reply(_ response: DirConMessage.ResponseCode, _ data: [UInt8] = []) -> Outcome {
            Outcome(
                answer: DirConMessage(type: request.type, sequence: request.sequence, response: response, data: data))
        }
        guard let kind = request.kind, kind != .notification else { return reply(.unknownMessageType) }
        if kind == .discoverServices { return reply(.success, services.flatMap { DirConMessage.uuid($0.uuid) }) }
        let uuid = request.data.prefix(16)
        guard uuid.count == 16 else { return reply(.unexpectedError) }
        if kind == .discoverCharacteristics {
            guard let short = DirConMessage.shortUUID(uuid), let service = services.first(where: { $0.uuid == short })
            else { return reply(.serviceNotFound, Array(uuid)) }
            return reply(
                .success,
                Array(uuid)
                    + service.characteristics.flatMap { DirConMessage.uuid($0.uuid) + [Self.flags($0.properties)] })
        }
        guard let short = DirConMessage.shortUUID(uuid),
            let characteristic = services.lazy.flatMap(\.characteristics).first(where: { $0.uuid == short })
        else { return reply(.characteristicNotFound, Array(uuid)) }
        let value = Array(request.data.dropFirst(16))
        switch kind {
        case .readCharacteristic:
            guard characteristic.properties.contains(.read) else { return reply(.operationNotSupported, Array(uuid)) }
            return reply(.success, Array(uuid) + characteristic.value)
        case .writeCharacteristic:
            guard characteristic.properties.contains(.write) else { return reply(.operationNotSupported, Array(uuid)) }
            var outcome = reply(.success, Array(uuid))
            outcome.written = (short, value)
            return outcome
        case .enableNotifications:
            guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]), value.count == 1, value[0] <= 1
            else { return reply(.operationNotSupported, Array(uuid)) }
            if value[0] == 1 { enabled.insert(short) } else { enabled.remove(short) }
            return reply(.success, Array(uuid))
        case .discoverServices, .discoverCharacteristics, .notification:
            return reply(.unknownMessageType)
        }
    }

    /// `value` on `characteristic` for this app: a notification when it enabled them, else nothing. A read value
    /// (what the real trainer declares) is kept for the next read either way.
    public mutating func notification(_ characteristic: UInt16, _ value: [UInt8]) -> DirConMessage? {
        for s in services.indices {
            for c in services[s].characteristics.indices where services[s].characteristics[c].uuid == characteristic {
                if services[s].characteristics[c].properties.contains(.read) {
                    services[s].characteristics[c].value = value
                }
            }
        }
        guard enabled.contains(characteristic) else { return nil }
        return DirConMessage(.notification, sequence: 0, data: DirConMessage.uuid(characteristic) + value)
    }

    /// A characteristic's properties as DirCon names them: read 0x01, write 0x02, notify 0x04. DirCon has no
    /// indication (TCP delivers every message): an indicated characteristic is offered as notified.
    static func flags(_ properties: HubCharacteristic.Properties) -> UInt8 {
        var flags: UInt8 = 0
        if properties.contains(.read) { flags |= 0x01 }
        if properties.contains(.write) { flags |= 0x02 }
        if !properties.isDisjoint(with: [.notify, .indicate]) { flags |= 0x04 }
        return flags
    }
}
