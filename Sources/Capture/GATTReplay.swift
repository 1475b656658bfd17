import CyclingSensors
import RideJournal
import Workouts

/// Turns the HCI packets of a btsnoop capture into ride events (HCI ACL, L2CAP and ATT as the Core Specification lays them out): ACL reassembly per connection,
/// L2CAP channel 0x0004, ATT notifications (0x1B), indications (0x1D) and multiple notifications (0x23), reads,
/// and the handle → characteristic map learnt from the discovery exchange, from an earlier connection to the
/// same peer, or from the user. The connections' state is held by reference: a copy made part-way through a file
/// shares it, so a file is read by one value from start to end (`read`).
public struct GATTReplay {
    /// A characteristic value handle seen in notifications that nothing mapped to a UUID.
    public struct UnmappedHandle: Equatable, Sendable {
        public var sensor: String
        public var handle: UInt16
        public var notifications: Int
    }

    private struct ConnectionKey: Hashable {
        var controller: UInt16
        var handle: UInt16
    }

    /// The open connections: a capture has a handful at a time, so a list searched in order answers each packet's
    /// look-up for less than hashing its key.
    private struct ConnectionTable {
        private var entries: [(key: ConnectionKey, connection: Connection)] = []

        subscript(key: ConnectionKey) -> Connection? {
            get { entries.first { $0.key == key }?.connection }
            set {
                let index = entries.firstIndex { $0.key == key }
                switch (index, newValue) {
                case (let index?, let connection?): entries[index].connection = connection
                case (let index?, nil): entries.remove(at: index)
                case (nil, let connection?): entries.append((key, connection))
                case (nil, nil): break
                }
            }
        }

        mutating func removeValue(forKey key: ConnectionKey) -> Connection? {
            defer { self[key] = nil }
            return self[key]
        }

        var values: [Connection] { entries.map(\.connection) }
    }

    /// A class: the hot path looks a connection up once per packet and changes it in place, where a struct would
    /// be copied out of the dictionary and back (its arrays retained and released) for every notification.
    private final class Connection {
        let address: String
        /// The capturing controller was the peripheral of this link (its peer connected to it): it is the sensor
        /// side, as when a capture holds both ends of an emulated link, and nothing on it is a sensor's value.
        let localIsPeripheral: Bool
        /// Value handle → 16-bit characteristic UUID.
        var characteristics: [UInt16: UInt16] {
            didSet { lastLookup = nil }
        }
        /// The last handle looked up and its UUID: a sensor notifies on one or two handles, so most look-ups are
        /// answered here rather than by hashing the handle.
        private var lastLookup: (handle: UInt16, uuid: UInt16?)?

        func characteristic(_ handle: UInt16) -> UInt16? {
            if let lastLookup, lastLookup.handle == handle { return lastLookup.uuid }
            let uuid = characteristics[handle]
            lastLookup = (handle, uuid)
            return uuid
        }
        /// Partly received L2CAP PDU per direction (index 0 sent, 1 received) and the octets still expected.
        var partial: [[UInt8]] = [[], []]
        var expected: [Int] = [0, 0]
        /// The last request per direction it was sent in, to match its response.
        var pendingRequest: [[UInt8]?] = [nil, nil]
        /// Enhanced ATT bearers (EATT, L2CAP enhanced credit-based channels of SPSM 0x0027): their channel ids,
        /// both ends' (a packet carries the receiver's). BlueZ opens them when both sides support them.
        var eattChannels: Set<UInt16> = []
        /// Signalling identifiers of the EATT connection requests not answered yet.
        var eattRequests: Set<UInt8> = []
        /// A partly received SDU per EATT channel and direction (K-frames), and the octets it will have.
        var eattPartial: [UInt32: (sdu: [UInt8], expected: Int)] = [:]

        init(address: String, localIsPeripheral: Bool = false, characteristics: [UInt16: UInt16] = [:]) {
            self.address = address
            self.localIsPeripheral = localIsPeripheral
            self.characteristics = characteristics
        }

        /// HCI ACL reassembly (Core Specification, HCI ACL Data packets): a fragment with PB ≠ 0b01 starts an L2CAP PDU whose first two octets
        /// give its length; continuing fragments append until it is whole. Returns the whole PDU (L2CAP header
        /// included) once complete, and what was wrong on the way. A PDU in one fragment, nearly every one, is
        /// handed back as the fragment itself, not copied.
        func reassemble(_ payload: ArraySlice<UInt8>, continuing: Bool, side: Int) -> (
            pdu: ArraySlice<UInt8>?, problems: [String]
        ) {
            var problems: [String] = []
            if continuing {
                guard expected[side] > 0 else { return (nil, ["a continuing ACL fragment without a start"]) }
                partial[side] += payload
            } else {
                if expected[side] > 0 { problems.append("an L2CAP PDU was cut short by the next one; dropped") }
                guard payload.count >= 4 else {
                    expected[side] = 0
                    return (nil, problems + ["an L2CAP header cut short"])
                }
                let length = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
                if problems.isEmpty && payload.count == 4 + length {
                    expected[side] = 0
                    return (payload, [])
                }
                partial[side] = Array(payload)
                expected[side] = 4 + length
            }
            guard partial[side].count >= expected[side] else { return (nil, problems) }
            let pdu = partial[side][...]
            let wanted = expected[side]
            partial[side] = []
            expected[side] = 0
            guard pdu.count == wanted else {
                return (nil, problems + ["an L2CAP PDU longer than its header says; dropped"])
            }
            return (pdu, problems)
        }
    }

    /// Handle maps given by the user (`--handle 0x0010=2a63`), applied to every connection.
    public var explicitMap: [UInt16: UInt16]
    public private(set) var events: [RideEvent] = []
    /// The btsnoop record number each event came from, so that a later problem can name it.
    public private(set) var eventRecords: [Int] = []
    private var currentRecord = 0
    public private(set) var problems: [CaptureProblem] = []
    private var connections = ConnectionTable()
    /// Maps learnt on one connection, carried over to later connections to the same peer (BlueZ caches).
    private var learntMaps: [String: [UInt16: UInt16]] = [:]
    private var unmapped: [String: [UInt16: Int]] = [:]
    private var unmappedOrder: [(String, UInt16)] = []
    /// L2CAP PDUs on channels other than ATT and EATT (signalling, SMP, other protocols); counted, not used.
    public private(set) var otherChannelPDUs = 0
    /// The ride's own events a live recording logged into its capture (`record --capture`), with their records.
    private var rideLog: [(event: RideEvent, record: Int)] = []

    /// The ident of the log lines in which `record --capture` keeps the ride's own events, as journal lines.
    public static let rideLogIdent = "cyclelog"
    /// The ident of the log lines in which `record --capture` keeps each sensor's handle map, as BlueZ found it:
    /// `C0:11:22:33:44:55 000e=2a63 0012=2a5b` (value handle = 16-bit UUID, hexadecimal).
    public static let handleMapIdent = "cyclelog-gatt"

    public static func handleMapLine(address: String, _ handles: [UInt16: UInt16]) -> String {
        func hex(_ value: UInt16) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        return ([address] + handles.sorted { $0.key < $1.key }.map { hex($0.key) + "=" + hex($0.value) })
            .joined(separator: " ")
    }

    public init(explicitMap: [UInt16: UInt16] = [:]) {
        self.explicitMap = explicitMap
    }

    /// Notification handles that could not be mapped, with how many notifications each carried.
    public var unmappedHandles: [UnmappedHandle] {
        unmappedOrder.map { UnmappedHandle(sensor: $0.0, handle: $0.1, notifications: unmapped[$0.0]?[$0.1] ?? 0) }
    }

    private mutating func emit(_ event: RideEvent) {
        events.append(event)
        eventRecords.append(currentRecord)
    }

    /// Reads a whole btsnoop file.
    public static func read(
        _ bytes: [UInt8], explicitMap: [UInt16: UInt16] = [:], progress: ((Double) -> Void)? = nil
    ) throws(Btsnoop.FileError) -> GATTReplay {
        try read(bytes, explicitMap: explicitMap, progress: progress, quickly: true)
    }

    /// `quickly` false sends every record the general way (`add`): what the tests hold the quick one to.
    static func read(
        _ bytes: [UInt8], explicitMap: [UInt16: UInt16], progress: ((Double) -> Void)?, quickly: Bool
    ) throws(Btsnoop.FileError) -> GATTReplay {
        var replay = GATTReplay(explicitMap: explicitMap)
        // At most one event per 35 octets (the smallest record that carries a notification: a 24-octet record
        // header, the ACL and L2CAP headers and a 3-octet ATT header): reserved once, so the lists never grow by
        // copying; the pages beyond what is used are never touched, so they cost no memory.
        replay.events.reserveCapacity(bytes.count / 35)
        replay.eventRecords.reserveCapacity(bytes.count / 35)
        let link = try Btsnoop.datalink(of: bytes)
        let fileProblems = try Btsnoop.forEachPacket(
            in: bytes, progress: progress,
            quick: quickly
                ? { record, flags, time, data in
                    replay.quickNotification(data, link: link, flags: flags, time: time, record: record)
                } : nil
        ) { record, packet in
            replay.add(packet, record: record)
        }
        replay.problems += fileProblems
        replay.mergeRideLog()
        return replay
    }

    /// A capture `record --capture` wrote holds the ride's own events as log lines: its start (name, goal),
    /// controls, settings, and what the recorder learnt of each sensor (its name, its reads, its links). Those are
    /// taken from the log, and the sensors' values from the air, those of the ride only (from its start to its end,
    /// as the recorder took them); each event at its own time.
    private mutating func mergeRideLog() {
        guard !rideLog.isEmpty else { return }
        var rides: [ClosedRange<Int64>] = []
        var opened: Int64?
        for (event, _) in rideLog {
            guard case .control(let control) = event.kind else { continue }
            switch control {
            case .start: opened = opened ?? event.timeMicroseconds
            case .end, .cancel:
                if let start = opened { rides.append(start...max(start, event.timeMicroseconds)) }
                opened = nil
            default: break
            }
        }
        if let start = opened { rides.append(start...Int64.max) }
        var merged: [(event: RideEvent, record: Int)] = rideLog
        for (event, record) in zip(events, eventRecords) {
            guard case .notification = event.kind, rides.contains(where: { $0.contains(event.timeMicroseconds) })
            else { continue }
            merged.append((event, record))
        }
        // Stable: events of the same microsecond keep the file's order.
        merged = merged.enumerated().sorted {
            ($0.element.event.timeMicroseconds, $0.offset) < ($1.element.event.timeMicroseconds, $1.offset)
        }.map(\.element)
        events = merged.map(\.event)
        eventRecords = merged.map(\.record)
    }

    /// Feeds one HCI packet.
    public mutating func add(_ packet: Btsnoop.Packet, record: Int) {
        currentRecord = record
        switch packet.type {
        case .event: event(packet, record: record)
        case .aclData: acl(packet, record: record)
        case .log: log(packet, record: record)
        case .command, .other: break
        }
    }

    /// Nearly every record of a ride's capture is a sensor's notification or indication, received in one ACL
    /// fragment on a link it knows, on a mapped handle: that record is taken here from the file's octets as `add`
    /// would take it (the same event, the same record), without the slices and look-ups of the general path, which
    /// retained and released the file and the connection a dozen times per record. Anything else answers false and
    /// takes `add`: other packets, fragments, a PDU cut short, an unmapped handle, everything that has a problem
    /// to report.
    mutating func quickNotification(
        _ packet: UnsafeBufferPointer<UInt8>, link: Btsnoop.Datalink, flags: UInt32, time: Int64, record: Int
    ) -> Bool {
        var data = packet[...]
        let controller: UInt16
        switch link {
        case .hciUnframed:
            // Received ACL data: not a command or event (bit 1), from the controller (bit 0).
            guard flags & 3 == 1 else { return false }
            controller = 0
        case .hciUART:
            guard flags & 1 == 1, data.first == 0x02 else { return false }
            data = data.dropFirst()
            controller = 0
        case .linuxMonitor:
            guard UInt16(truncatingIfNeeded: flags) == Btsnoop.MonitorOpcode.aclReceived.rawValue else { return false }
            controller = UInt16(truncatingIfNeeded: flags >> 16)
        }
        // ACL header (4), L2CAP header (4), ATT opcode and handle (3).
        guard data.count >= 11 else { return false }
        let start = data.startIndex
        let aclHeader = UInt16(data[start]) | UInt16(data[start + 1]) << 8
        let aclLength = Int(data[start + 2]) | Int(data[start + 3]) << 8
        let l2capLength = Int(data[start + 4]) | Int(data[start + 5]) << 8
        let channel = UInt16(data[start + 6]) | UInt16(data[start + 7]) << 8
        let opcode = data[start + 8]
        guard aclHeader >> 12 & 0x3 != 0b01, aclLength == data.count - 4, l2capLength == aclLength - 4,
            channel == 0x0004, opcode == 0x1B || opcode == 0x1D,
            let connection = connections[ConnectionKey(controller: controller, handle: aclHeader & 0x0FFF)],
            !connection.localIsPeripheral, connection.expected[1] == 0
        else { return false }
        let handle = UInt16(data[start + 9]) | UInt16(data[start + 10]) << 8
        let explicit = explicitMap.isEmpty ? nil : explicitMap[handle]
        guard let uuid = explicit ?? connection.characteristic(handle) else { return false }
        currentRecord = record
        emit(
            RideEvent(
                timeMicroseconds: time,
                .notification(sensor: connection.address, characteristic: uuid, value: Array(data[(start + 11)...]))))
        return true
    }

    private mutating func log(_ packet: Btsnoop.Packet, record: Int) {
        guard let (ident, message) = Btsnoop.logLine(packet.data) else { return }
        if ident == Self.handleMapIdent {
            learnHandleMap(message, record: record)
            return
        }
        guard ident == Self.rideLogIdent else { return }
        do {
            rideLog.append((try Journal.event(Substring(message)), record))
        } catch {
            if let kept = error.kept { rideLog.append((kept, record)) }
            problems.append(CaptureProblem(record: record, message: "a ride log line: \(error.message)"))
        }
    }

    /// A sensor's handle map as the recorder had it from BlueZ: for this peer's connections now and later.
    private mutating func learnHandleMap(_ line: String, record: Int) {
        let words = line.split(separator: " ")
        var handles: [UInt16: UInt16] = [:]
        for word in words.dropFirst() {
            let parts = word.split(separator: "=")
            guard parts.count == 2, let handle = UInt16(parts[0], radix: 16), let uuid = UInt16(parts[1], radix: 16)
            else {
                problems.append(CaptureProblem(record: record, message: "a handle map line cannot be read: \(line)"))
                return
            }
            handles[handle] = uuid
        }
        guard let address = words.first.map(String.init), !handles.isEmpty else { return }
        learntMaps[address, default: [:]].merge(handles) { _, given in given }
        for connection in connections.values where connection.address == address {
            connection.characteristics.merge(handles) { learnt, _ in learnt }
        }
    }

    // MARK: - HCI events: who is on which handle

    private mutating func event(_ packet: Btsnoop.Packet, record: Int) {
        let data = Array(packet.data)
        guard data.count >= 2 else { return }
        switch data[0] {
        case 0x3E where data.count >= 3 && (data[2] == 0x01 || data[2] == 0x0A):
            // LE (Enhanced) Connection Complete: code, length, subevent, status, handle (2), role, peer type,
            // peer address (6) — 14 octets before the fields this reader does not use.
            guard data.count >= 14 else {
                problems.append(CaptureProblem(record: record, message: "a truncated LE Connection Complete event"))
                return
            }
            guard data[3] == 0 else { return }
            let handle = UInt16(data[4]) | UInt16(data[5] & 0x0F) << 8
            let localIsPeripheral = data[6] == 0x01
            let address = Btsnoop.address(leastSignificantFirst: data[8..<14])
            let key = ConnectionKey(controller: packet.controllerIndex, handle: handle)
            guard !localIsPeripheral else {
                connections[key] = Connection(address: address, localIsPeripheral: true)
                return
            }
            connections[key] = Connection(address: address, characteristics: learntMaps[address] ?? [:])
            emit(RideEvent(timeMicroseconds: packet.timeMicroseconds, .connected(sensor: address, name: nil)))
        case 0x05 where data.count >= 6:
            // Disconnection Complete: status, handle, reason.
            guard data[2] == 0 else { return }
            let key = ConnectionKey(
                controller: packet.controllerIndex, handle: UInt16(data[3]) | UInt16(data[4] & 0x0F) << 8)
            if let connection = connections.removeValue(forKey: key), !connection.localIsPeripheral {
                emit(
                    RideEvent(timeMicroseconds: packet.timeMicroseconds, .disconnected(sensor: connection.address)))
            }
        default:
            break
        }
    }

    // MARK: - ACL and L2CAP

    private mutating func acl(_ packet: Btsnoop.Packet, record: Int) {
        let data = packet.data
        guard data.count >= 4 else {
            problems.append(CaptureProblem(record: record, message: "an ACL packet shorter than its 4-octet header"))
            return
        }
        let start = data.startIndex
        let header = UInt16(data[start]) | UInt16(data[start + 1]) << 8
        let handle = header & 0x0FFF
        let boundary = header >> 12 & 0x3
        let length = Int(data[start + 2]) | Int(data[start + 3]) << 8
        let payload = data.dropFirst(4)
        guard payload.count == length else {
            problems.append(
                CaptureProblem(
                    record: record, message: "an ACL packet says \(length) octets but carries \(payload.count)"))
            return
        }
        let key = ConnectionKey(controller: packet.controllerIndex, handle: handle)
        let connection: Connection
        if let known = connections[key] {
            connection = known
        } else {
            // A capture started mid-connection has no Connection Complete: an anonymous peer.
            let anonymous = "hci\(packet.controllerIndex)-handle-0x" + String(handle, radix: 16)
            connection = Connection(address: anonymous, characteristics: learntMaps[anonymous] ?? [:])
            connections[key] = connection
        }
        guard !connection.localIsPeripheral else { return }
        let (completed, messages) = connection.reassemble(
            payload, continuing: boundary == 0b01, side: packet.received ? 1 : 0)
        for message in messages { problems.append(CaptureProblem(record: record, message: message)) }
        guard let pdu = completed else { return }
        let channel = UInt16(pdu[pdu.startIndex + 2]) | UInt16(pdu[pdu.startIndex + 3]) << 8
        if channel == 0x0004 {
            // ATT's own channel, nearly every PDU: straight to it, without looking the channel up among EATT's.
            attribute(
                pdu.dropFirst(4), connection, received: packet.received, time: packet.timeMicroseconds, record: record)
            return
        }
        if channel == 0x0005 {
            leSignalling(pdu.dropFirst(4), connection)
        } else if connection.eattChannels.contains(channel) {
            if let sdu = eattSDU(pdu.dropFirst(4), channel: channel, received: packet.received, connection) {
                attribute(
                    sdu[...], connection, received: packet.received, time: packet.timeMicroseconds, record: record)
            }
            return
        }
        otherChannelPDUs += 1
    }

    // MARK: - EATT: ATT on enhanced credit-based channels

    /// LE signalling (Core Vol 3 Part A §4): a connection request for SPSM 0x0027 names the requester's channel —
    /// LE Credit Based (0x14, one channel, as BlueZ 5.66 asks) or Enhanced Credit Based (0x17, up to five) — and
    /// its response (0x15 or 0x18, the same identifier) the responder's.
    private func leSignalling(_ command: ArraySlice<UInt8>, _ connection: Connection) {
        let bytes = Array(command)
        guard bytes.count >= 4 else { return }
        let identifier = bytes[1]
        let length = Int(bytes[2]) | Int(bytes[3]) << 8
        guard bytes.count >= 4 + length else { return }
        let data = bytes[4..<(4 + length)]
        func channels(from offset: Int) -> [UInt16] {
            stride(from: data.startIndex + offset, to: data.endIndex - 1, by: 2).map {
                UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8
            }.filter { $0 != 0 }
        }
        let spsm = data.count >= 2 ? UInt16(data[data.startIndex]) | UInt16(data[data.startIndex + 1]) << 8 : 0
        switch bytes[0] {
        case 0x14 where data.count >= 10 && spsm == 0x0027:
            // SPSM, source channel id, MTU, MPS, initial credits.
            connection.eattRequests.insert(identifier)
            connection.eattChannels.formUnion(channels(from: 2).prefix(1))
        case 0x15 where data.count >= 10 && connection.eattRequests.contains(identifier):
            // Destination channel id, MTU, MPS, initial credits, result (0: accepted).
            connection.eattRequests.remove(identifier)
            if data[data.startIndex + 8] == 0 && data[data.startIndex + 9] == 0 {
                connection.eattChannels.formUnion(channels(from: 0).prefix(1))
            }
        case 0x17 where data.count >= 8:
            // SPSM, MTU, MPS, initial credits, then the source channel ids.
            guard spsm == 0x0027 else { return }
            connection.eattRequests.insert(identifier)
            connection.eattChannels.formUnion(channels(from: 8))
        case 0x18 where data.count >= 8 && connection.eattRequests.contains(identifier):
            // MTU, MPS, initial credits, result, then the destination channel ids (0 for refused ones).
            connection.eattRequests.remove(identifier)
            connection.eattChannels.formUnion(channels(from: 8))
        default:
            break
        }
    }

    /// One K-frame's payload on an EATT channel: the first of an SDU starts with the SDU's length; the ATT PDU once
    /// the SDU is whole.
    private func eattSDU(
        _ payload: ArraySlice<UInt8>, channel: UInt16, received: Bool, _ connection: Connection
    ) -> [UInt8]? {
        let key = UInt32(channel) << 1 | (received ? 1 : 0)
        if var partial = connection.eattPartial[key] {
            partial.sdu += payload
            guard partial.sdu.count >= partial.expected else {
                connection.eattPartial[key] = partial
                return nil
            }
            connection.eattPartial[key] = nil
            return partial.sdu.count == partial.expected ? partial.sdu : nil
        }
        guard payload.count >= 2 else { return nil }
        let expected = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
        let sdu = Array(payload.dropFirst(2))
        guard sdu.count < expected else { return sdu.count == expected ? sdu : nil }
        connection.eattPartial[key] = (sdu, expected)
        return nil
    }

    // MARK: - ATT

    private mutating func attribute(
        _ pdu: ArraySlice<UInt8>, _ connection: Connection, received: Bool, time: Int64, record: Int
    ) {
        guard let opcode = pdu.first else { return }
        let start = pdu.startIndex
        let side = received ? 1 : 0
        // Values and responses count only when they arrive: the same PDUs going out are this host serving its own
        // attributes to the peer.
        if !received && (opcode == 0x1B || opcode == 0x1D || opcode == 0x23 || opcode == 0x05) { return }
        switch opcode {
        case 0x1B, 0x1D:
            guard pdu.count >= 3 else {
                problems.append(CaptureProblem(record: record, message: "a notification without a handle"))
                return
            }
            deliver(
                handle: UInt16(pdu[start + 1]) | UInt16(pdu[start + 2]) << 8, value: Array(pdu.dropFirst(3)),
                connection, time)
        case 0x23:
            // Multiple Handle Value Notification: {handle, length, value} repeated.
            let pdu = Array(pdu)
            var offset = 1
            while offset < pdu.count {
                guard pdu.count - offset >= 4 else {
                    problems.append(CaptureProblem(record: record, message: "a multiple notification cut short"))
                    break
                }
                let handle = UInt16(pdu[offset]) | UInt16(pdu[offset + 1]) << 8
                let length = Int(pdu[offset + 2]) | Int(pdu[offset + 3]) << 8
                guard pdu.count - offset - 4 >= length else {
                    problems.append(
                        CaptureProblem(record: record, message: "a multiple notification value longer than the PDU"))
                    break
                }
                deliver(handle: handle, value: Array(pdu[(offset + 4)..<(offset + 4 + length)]), connection, time)
                offset += 4 + length
            }
        case 0x12, 0x52:
            // A Write Request or Command this host sent to a characteristic's value (a trainer's control point): a
            // `write` line, as the live recorder journals its own. Writes to descriptors (a CCCD) map to no
            // characteristic and are left out; one the peer sent is to this host's own attributes. (The guard is
            // not a `where`, which would bind to the last pattern only.)
            guard !received, pdu.count >= 3 else { return }
            let handle = UInt16(pdu[start + 1]) | UInt16(pdu[start + 2]) << 8
            if let uuid = map(connection)[handle] {
                emit(
                    RideEvent(
                        timeMicroseconds: time,
                        .write(sensor: connection.address, characteristic: uuid, value: Array(pdu.dropFirst(3)))))
            }
        case 0x08, 0x0A:
            // Requests whose responses we read: Read By Type (characteristic declarations) and Read.
            connection.pendingRequest[side] = Array(pdu)
        case 0x05:
            // Find Information Response: the type of every attribute in a range. A value attribute's type is its
            // characteristic's UUID, so this maps handles too when a client discovers that way.
            informationEntries(Array(pdu), into: connection)
        case 0x09:
            if received, let request = connection.pendingRequest[1 - side], request.first == 0x08 {
                declarations(Array(pdu), request: request, into: connection, record: record)
            }
            connection.pendingRequest[1 - side] = nil
        case 0x0B:
            if received, let request = connection.pendingRequest[1 - side], request.first == 0x0A, request.count >= 3 {
                let handle = UInt16(request[1]) | UInt16(request[2]) << 8
                if let uuid = map(connection)[handle] {
                    emit(
                        RideEvent(
                            timeMicroseconds: time,
                            .read(sensor: connection.address, characteristic: uuid, value: Array(pdu.dropFirst()))))
                }
            }
            connection.pendingRequest[1 - side] = nil
        case 0x01:
            connection.pendingRequest[1 - side] = nil
        default:
            break
        }
    }

    /// Read By Type Response to a 0x2803 request: {declaration handle, properties, value handle, UUID}.
    private mutating func declarations(_ pdu: [UInt8], request: [UInt8], into connection: Connection, record: Int) {
        guard request.count >= 7, request[5] == 0x03, request[6] == 0x28, pdu.count >= 2 else { return }
        let entryLength = Int(pdu[1])
        guard entryLength == 7 || entryLength == 21, (pdu.count - 2) % entryLength == 0 else {
            problems.append(
                CaptureProblem(
                    record: record, message: "a characteristic discovery response with entries of \(entryLength) octets"
                ))
            return
        }
        var offset = 2
        while offset + entryLength <= pdu.count {
            let valueHandle = UInt16(pdu[offset + 3]) | UInt16(pdu[offset + 4]) << 8
            let uuid: UInt16?
            if entryLength == 7 {
                uuid = UInt16(pdu[offset + 5]) | UInt16(pdu[offset + 6]) << 8
            } else {
                uuid = Self.shortUUID(Array(pdu[(offset + 5)..<(offset + 21)]))
            }
            if let uuid {
                connection.characteristics[valueHandle] = uuid
                learntMaps[connection.address, default: [:]][valueHandle] = uuid
            }
            offset += entryLength
        }
    }

    /// {handle, 16-bit UUID} entries (format 0x01); declarations (0x28xx) and descriptors (0x29xx) are not values.
    private mutating func informationEntries(_ pdu: [UInt8], into connection: Connection) {
        guard pdu.count >= 2, pdu[1] == 0x01 else { return }
        var offset = 2
        while offset + 4 <= pdu.count {
            let handle = UInt16(pdu[offset]) | UInt16(pdu[offset + 1]) << 8
            let uuid = UInt16(pdu[offset + 2]) | UInt16(pdu[offset + 3]) << 8
            if uuid >> 8 != 0x28 && uuid >> 8 != 0x29 && connection.characteristics[handle] == nil {
                connection.characteristics[handle] = uuid
                learntMaps[connection.address, default: [:]][handle] = uuid
            }
            offset += 4
        }
    }

    /// A 128-bit UUID (little-endian in ATT) built on the Bluetooth base UUID, as its 16-bit alias.
    static func shortUUID(_ bytes: [UInt8]) -> UInt16? {
        let base: [UInt8] = [0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00]
        guard bytes.count == 16, Array(bytes[0..<12]) == base, bytes[14] == 0, bytes[15] == 0 else { return nil }
        return UInt16(bytes[12]) | UInt16(bytes[13]) << 8
    }

    private func map(_ connection: Connection) -> [UInt16: UInt16] {
        connection.characteristics.merging(explicitMap) { _, explicit in explicit }
    }

    private mutating func deliver(handle: UInt16, value: [UInt8], _ connection: Connection, _ time: Int64) {
        // Most captures have no explicit map: skip hashing the handle into an empty one.
        let explicit = explicitMap.isEmpty ? nil : explicitMap[handle]
        if let uuid = explicit ?? connection.characteristic(handle) {
            emit(
                RideEvent(
                    timeMicroseconds: time,
                    .notification(sensor: connection.address, characteristic: uuid, value: value)))
        } else {
            if unmapped[connection.address]?[handle] == nil { unmappedOrder.append((connection.address, handle)) }
            unmapped[connection.address, default: [:]][handle, default: 0] += 1
        }
    }
}
