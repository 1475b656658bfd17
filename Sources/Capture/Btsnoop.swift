import RideJournal

/// The btsnoop container (BlueZ's doc/btsnoop-protocol.rst, Wireshark's wiretap/btsnoop.c): a 16-octet big-endian header, then records of a 24-octet header and
/// the packet. Datalinks 1001 (HCI unframed), 1002 (H4, Android's `btsnoop_hci.log`) and 2001 (Linux monitor,
/// `btmon -w`) are understood.
public enum Btsnoop {
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// Microseconds from "midnight 1 Jan 0 AD" to the Unix epoch (Wireshark's `KUnixTimeBase`).
    public static let unixEpochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

    public enum Datalink: UInt32, Sendable {
        case hciUnframed = 1001
        case hciUART = 1002
        case linuxMonitor = 2001
    }

    /// The kinds of record of the kernel's monitor channel, a datalink 2001 record's flags (BlueZ's `monitor/bt.h`).
    public enum MonitorOpcode: UInt16, Sendable {
        case newIndex = 0, deleteIndex, command, event, aclSent, aclReceived, scoSent, scoReceived
        case openIndex, closeIndex, indexInfo, vendorDiagnostic, systemNote, userLogging
        case controlOpen, controlClose, controlCommand, controlEvent, isoSent, isoReceived
    }

    /// What an HCI packet is, whatever the datalink encoded it as.
    public enum PacketType: Sendable, Equatable {
        case command
        case event
        case aclData
        /// A program's log line (monitor records only: btmon shows it as "ident: message"): how cyclelog keeps a
        /// live ride's own events in its capture.
        case log
        /// New Index, SCO, ISO, notes, vendor diagnostics…: nothing a GATT replay needs.
        case other
    }

    /// One HCI packet with its direction and controller.
    public struct Packet: Sendable, Equatable {
        public var type: PacketType
        /// True from controller to host (received), false from host to controller (sent).
        public var received: Bool
        /// Controller index (monitor files); 0 otherwise.
        public var controllerIndex: UInt16
        public var timeMicroseconds: Int64
        /// The HCI packet without the H4 type octet.
        public var data: ArraySlice<UInt8>

        public init(
            type: PacketType, received: Bool, controllerIndex: UInt16 = 0, timeMicroseconds: Int64,
            data: ArraySlice<UInt8>
        ) {
            self.type = type
            self.received = received
            self.controllerIndex = controllerIndex
            self.timeMicroseconds = timeMicroseconds
            self.data = data
        }
    }

    public enum FileError: Error, Equatable, CustomStringConvertible {
        case notBtsnoop
        case unsupportedVersion(UInt32)
        case unsupportedDatalink(UInt32)

        public var description: String {
            switch self {
            case .notBtsnoop: "not a btsnoop file (it does not start with \"btsnoop\\0\")"
            case .unsupportedVersion(let version): "btsnoop version \(version) is not supported (only 1)"
            case .unsupportedDatalink(let link):
                "datalink \(link) is not supported (only 1001 HCI, 1002 H4 and 2001 Linux monitor)"
            }
        }
    }

    /// "C0:11:22:33:44:55" from the six octets of a Bluetooth address as HCI carries it (least significant first).
    public static func address(leastSignificantFirst octets: ArraySlice<UInt8>) -> String {
        octets.reversed().map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    /// The ident and message of a log record's packet (`Packet.data` of a `.log` packet), or nil when it is
    /// not one.
    public static func logLine(_ data: ArraySlice<UInt8>) -> (ident: String, message: String)? {
        guard data.count >= 2 else { return nil }
        let identEnd = data.startIndex + 2 + Int(data[data.startIndex + 1])
        guard identEnd <= data.endIndex else { return nil }
        func text(_ bytes: ArraySlice<UInt8>) -> String {
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return (text(data[(data.startIndex + 2)..<identEnd]), text(data[identEnd...]))
    }

    static func bigEndian32(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    static func bigEndian64(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> Int64 {
        Int64(bitPattern: UInt64(bigEndian32(bytes, offset)) << 32 | UInt64(bigEndian32(bytes, offset + 4)))
    }

    /// Reads the header; returns the datalink.
    public static func datalink(of bytes: [UInt8]) throws(FileError) -> Datalink {
        guard bytes.count >= 16, Array(bytes[0..<8]) == magic else { throw .notBtsnoop }
        let (version, link) = bytes.withUnsafeBufferPointer { (bigEndian32($0, 8), bigEndian32($0, 12)) }
        guard version == 1 else { throw .unsupportedVersion(version) }
        guard let datalink = Datalink(rawValue: link) else { throw .unsupportedDatalink(link) }
        return datalink
    }

    /// Calls `body` with each record's packet, in file order, numbering records from 1. A record cut short by
    /// the end of the file is reported and ends the walk; everything before it is used.
    ///
    /// `quick`, when given, sees each record first, as its flags, time and packet octets straight from the file
    /// (valid only during the call); a record it answers true for is taken, and `body` never sees it. A reader
    /// takes its common case so without making a packet (a slice that holds the file) for each of 100 000 records.
    /// `progress` gets the fraction of the file read, every 5 000 records.
    public static func forEachPacket(
        in bytes: [UInt8], progress: ((Double) -> Void)? = nil,
        quick: ((_ record: Int, _ flags: UInt32, _ time: Int64, _ data: UnsafeBufferPointer<UInt8>) -> Bool)? = nil,
        _ body: (_ record: Int, _ packet: Packet) -> Void
    ) throws(FileError) -> [CaptureProblem] {
        let link = try datalink(of: bytes)
        return bytes.withUnsafeBufferPointer { file in
            var offset = 16
            var record = 0
            var problems: [CaptureProblem] = []
            while offset < file.count {
                record += 1
                guard file.count - offset >= 24 else {
                    problems.append(
                        CaptureProblem(
                            record: record,
                            message: "the file ends inside a record header (\(file.count - offset) of 24 octets)"))
                    break
                }
                let included = Int(bigEndian32(file, offset + 4))
                let flags = bigEndian32(file, offset + 8)
                // Wrapping: a damaged timestamp is judged by the time-jump rule, never trapped on here.
                let time = bigEndian64(file, offset + 16) &- unixEpochOffsetMicroseconds
                let start = offset + 24
                guard file.count - start >= included else {
                    problems.append(
                        CaptureProblem(
                            record: record,
                            message: "the file ends inside the record (\(file.count - start) of \(included) octets)"))
                    break
                }
                offset = start + included
                if let progress, record % 5000 == 1 { progress(Double(offset) / Double(file.count)) }
                if let quick, quick(record, flags, time, UnsafeBufferPointer(rebasing: file[start..<offset])) {
                    continue
                }
                if let packet = packet(link, flags: flags, time: time, data: bytes[start..<offset]) {
                    body(record, packet)
                } else if link == .hciUART {
                    problems.append(CaptureProblem(record: record, message: "an empty or unknown H4 packet"))
                }
            }
            return problems
        }
    }

    private static func packet(_ link: Datalink, flags: UInt32, time: Int64, data: ArraySlice<UInt8>) -> Packet? {
        let received = flags & 1 == 1
        switch link {
        case .hciUnframed:
            let type: PacketType = flags & 2 == 0 ? .aclData : (received ? .event : .command)
            return Packet(type: type, received: received, timeMicroseconds: time, data: data)
        case .hciUART:
            guard let first = data.first else { return nil }
            let type: PacketType
            switch first {
            case 0x01: type = .command
            case 0x02: type = .aclData
            case 0x04: type = .event
            case 0x03, 0x05: type = .other
            default: return nil
            }
            return Packet(type: type, received: received, timeMicroseconds: time, data: data.dropFirst())
        case .linuxMonitor:
            let index = UInt16(truncatingIfNeeded: flags >> 16)
            let type: PacketType
            let incoming: Bool
            switch MonitorOpcode(rawValue: UInt16(truncatingIfNeeded: flags)) {
            case .command?: (type, incoming) = (.command, false)
            case .event?: (type, incoming) = (.event, true)
            case .aclSent?: (type, incoming) = (.aclData, false)
            case .aclReceived?: (type, incoming) = (.aclData, true)
            case .userLogging?: (type, incoming) = (.log, false)
            default: (type, incoming) = (.other, false)
            }
            return Packet(
                type: type, received: incoming, controllerIndex: index, timeMicroseconds: time, data: data)
        }
    }
}

/// Writes btsnoop files (H4 or Linux monitor): live HCI captures, fixtures, emulation and the round-trip tests. A
/// capture written while it is taken takes the bytes written so far out with `drain()` after each record, so that
/// a file cut short by a crash holds every record before the cut.
public struct BtsnoopWriter: Sendable {
    public let datalink: Btsnoop.Datalink
    public private(set) var bytes: [UInt8]

    public init(datalink: Btsnoop.Datalink) {
        self.datalink = datalink
        bytes = Btsnoop.magic
        append32(1)
        append32(datalink.rawValue)
    }

    private mutating func append32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// Appends one HCI packet (without H4 type octet); the writer adds the framing the datalink needs.
    public mutating func append(_ type: Btsnoop.PacketType, received: Bool, timeMicroseconds: Int64, _ data: [UInt8]) {
        var payload = data
        var flags: UInt32
        switch datalink {
        case .hciUnframed, .hciUART:
            flags = received ? 1 : 0
            if type == .command || type == .event { flags |= 2 }
            if datalink == .hciUART {
                let h4: UInt8 = type == .command ? 0x01 : type == .event ? 0x04 : 0x02
                payload.insert(h4, at: 0)
            }
        case .linuxMonitor:
            let opcode: Btsnoop.MonitorOpcode
            switch type {
            case .command: opcode = .command
            case .event: opcode = .event
            case .aclData: opcode = received ? .aclReceived : .aclSent
            case .log: opcode = .userLogging
            case .other: opcode = .systemNote
            }
            flags = UInt32(opcode.rawValue)
        }
        appendRecord(flags: flags, timeMicroseconds: timeMicroseconds, payload[...])
    }

    /// Appends one record of the kernel's monitor channel as it came (datalink 2001 only): its opcode and controller
    /// index become the record's flags, as `btmon -w` writes them.
    public mutating func appendMonitor(
        opcode: UInt16, index: UInt16, timeMicroseconds: Int64, _ packet: ArraySlice<UInt8>
    ) {
        precondition(datalink == .linuxMonitor, "monitor records need datalink 2001")
        appendRecord(flags: UInt32(index) << 16 | UInt32(opcode), timeMicroseconds: timeMicroseconds, packet)
    }

    /// Appends a log line of `ident` (datalink 2001 only), as BlueZ's programs log into the monitor: priority,
    /// the ident's length, the ident and the message, each NUL-terminated. Priority 6 is syslog's "info".
    public mutating func appendLog(ident: String, _ message: String, timeMicroseconds: Int64) {
        let name = Array(ident.utf8) + [0]
        appendMonitor(
            opcode: Btsnoop.MonitorOpcode.userLogging.rawValue, index: 0xFFFF, timeMicroseconds: timeMicroseconds,
            ([6, UInt8(name.count)] + name + Array(message.utf8) + [0])[...])
    }

    /// The 24-octet record header (original and included length, flags, cumulative drops, time) and the packet.
    private mutating func appendRecord(flags: UInt32, timeMicroseconds: Int64, _ payload: ArraySlice<UInt8>) {
        append32(UInt32(payload.count))
        append32(UInt32(payload.count))
        append32(flags)
        append32(0)
        let stamp = UInt64(bitPattern: timeMicroseconds &+ Btsnoop.unixEpochOffsetMicroseconds)
        append32(UInt32(stamp >> 32))
        append32(UInt32(stamp & 0xFFFF_FFFF))
        bytes += payload
    }

    /// The bytes appended since the last drain (the file header first), taken out of the writer.
    public mutating func drain() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    /// An LE Connection Complete event (Core Specification, HCI events) for `address` ("C0:11:22:33:44:55") on `handle`.
    public mutating func appendConnection(handle: UInt16, address: String, timeMicroseconds: Int64) {
        let octets = address.split(separator: ":").compactMap { UInt8($0, radix: 16) }.reversed()
        var event: [UInt8] = [0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x00, 0x01]
        event += octets
        event += [0x18, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00]
        append(.event, received: true, timeMicroseconds: timeMicroseconds, event)
    }

    /// A Disconnection Complete event (reason 0x08, supervision timeout).
    public mutating func appendDisconnection(handle: UInt16, timeMicroseconds: Int64) {
        append(
            .event, received: true, timeMicroseconds: timeMicroseconds,
            [0x05, 4, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x08])
    }

    /// One ATT PDU on `handle`, split into ACL fragments of at most `aclPayloadLimit` octets (27 without Data
    /// Length Extension), as a controller would deliver it.
    public mutating func appendATT(
        handle: UInt16, received: Bool, timeMicroseconds: Int64, _ pdu: [UInt8], aclPayloadLimit: Int = 27
    ) {
        let l2cap = [UInt8(pdu.count & 0xFF), UInt8(pdu.count >> 8), 0x04, 0x00] + pdu
        var offset = 0
        while offset < l2cap.count {
            let chunk = Array(l2cap[offset..<min(offset + aclPayloadLimit, l2cap.count)])
            // PB 0b10 starts a PDU from the controller, 0b00 from the host; 0b01 continues one.
            let boundary: UInt16 = offset > 0 ? 0x1000 : (received ? 0x2000 : 0x0000)
            let header = handle & 0x0FFF | boundary
            append(
                .aclData, received: received, timeMicroseconds: timeMicroseconds,
                [UInt8(header & 0xFF), UInt8(header >> 8), UInt8(chunk.count & 0xFF), UInt8(chunk.count >> 8)] + chunk)
            offset += chunk.count
        }
    }
}
