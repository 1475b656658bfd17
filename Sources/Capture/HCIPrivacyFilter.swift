/// Which records of the kernel's HCI monitor channel a capture keeps, so that a capture sent with a bug report holds
/// the controllers and the sensors and nobody else: the controllers coming and going and their own facts; commands
/// and events that concern no connection (or a sensor's); the ACL data of the sensors' connections. Dropped: the
/// data of every other connection (a phone's audio, a keyboard), commands and events that name another device by
/// its address or its connection, classic discovery and pairing (link keys), vendor diagnostics, other programs'
/// management commands and log lines, SCO and ISO audio. What is not known to be about no one else is dropped.
///
/// A sensor is an address the caller names (`isNamedSensor`: the sensors a ride connects to) or one that advertised
/// one of `sensorServices` in this capture.
public struct HCIPrivacyFilter {
    private struct ConnectionKey: Hashable {
        var index: UInt16
        var handle: UInt16
    }

    /// Only this controller's records (and those of no controller), or every controller's when nil.
    public let adapterIndex: UInt16?
    private let sensorServices: Set<UInt16>
    private let isNamedSensor: (String) -> Bool
    /// The peer address of a connection the capture did not see open (it was open before the capture started).
    private let connectionAddress: (_ index: UInt16, _ handle: UInt16) -> String?
    private var peers: [ConnectionKey: String] = [:]
    private var advertisedSensors: Set<String> = []

    public init(
        adapterIndex: UInt16? = nil, sensorServices: Set<UInt16>, isNamedSensor: @escaping (String) -> Bool,
        connectionAddress: @escaping (_ index: UInt16, _ handle: UInt16) -> String? = { _, _ in nil }
    ) {
        self.adapterIndex = adapterIndex
        self.sensorServices = sensorServices
        self.isNamedSensor = isNamedSensor
        self.connectionAddress = connectionAddress
    }

    /// Whether the capture keeps this record (`packet`: what follows the monitor header).
    public mutating func keeps(opcode rawOpcode: UInt16, index: UInt16, _ packet: ArraySlice<UInt8>) -> Bool {
        // Index 0xFFFF is no controller: the system notes.
        if let adapterIndex, index != adapterIndex, index != 0xFFFF { return false }
        guard let opcode = Btsnoop.MonitorOpcode(rawValue: rawOpcode) else { return false }
        let data = Array(packet)
        switch opcode {
        case .newIndex, .deleteIndex, .openIndex, .closeIndex, .indexInfo, .systemNote:
            if opcode == .deleteIndex { peers = peers.filter { $0.key.index != index } }
            return true
        case .command:
            return keepsCommand(data, index: index)
        case .event:
            return keepsEvent(data, index: index)
        case .aclSent, .aclReceived:
            guard data.count >= 2 else { return false }
            return isSensorConnection(index, handle(data, at: 0))
        case .scoSent, .scoReceived, .vendorDiagnostic, .userLogging, .controlOpen, .controlClose,
            .controlCommand, .controlEvent, .isoSent, .isoReceived:
            return false
        }
    }

    // MARK: - Who is who

    private func isSensor(_ address: String) -> Bool {
        advertisedSensors.contains(address) || isNamedSensor(address)
    }

    private mutating func isSensorConnection(_ index: UInt16, _ handle: UInt16) -> Bool {
        let key = ConnectionKey(index: index, handle: handle)
        if let peer = peers[key] { return isSensor(peer) }
        guard let peer = connectionAddress(index, handle) else { return false }
        peers[key] = peer
        return isSensor(peer)
    }

    /// A 12-bit connection handle, little-endian at `offset`.
    private func handle(_ data: [UInt8], at offset: Int) -> UInt16 {
        UInt16(data[offset]) | UInt16(data[offset + 1] & 0x0F) << 8
    }

    private func address(_ data: [UInt8], at offset: Int) -> String? {
        guard data.count >= offset + 6 else { return nil }
        return Btsnoop.address(leastSignificantFirst: data[offset..<(offset + 6)])
    }

    /// Whether the connection named by the handle at `offset` is a sensor's (false when the packet is too short).
    private mutating func namesSensorConnection(_ data: [UInt8], index: UInt16, at offset: Int) -> Bool {
        data.count >= offset + 2 && isSensorConnection(index, handle(data, at: offset))
    }

    // MARK: - Commands (opcode 2 octets, parameter length, parameters from offset 3)

    private mutating func keepsCommand(_ data: [UInt8], index: UInt16) -> Bool {
        guard data.count >= 3 else { return false }
        let opcode = UInt16(data[0]) | UInt16(data[1]) << 8
        switch opcode {
        case 0x0406, 0x041D:
            // Disconnect, Read Remote Version Information: a connection handle first.
            return namesSensorConnection(data, index: index, at: 3)
        case 0x2013, 0x2015, 0x2016, 0x2019, 0x201A, 0x201B, 0x2020, 0x2021, 0x2022, 0x2030, 0x2032:
            // LE commands on one connection (update, channel map, features, encryption and its keys, data
            // length, PHY): a connection handle first.
            return namesSensorConnection(data, index: index, at: 3)
        case 0x200D:
            // LE Create Connection: scan interval and window, filter policy, peer address type, peer address.
            return address(data, at: 9).map(isSensor) ?? false
        case 0x2043:
            // LE Extended Create Connection: filter policy, own and peer address type, peer address.
            return address(data, at: 6).map(isSensor) ?? false
        case 0x2011, 0x2012, 0x2027, 0x2028:
            // The filter accept and resolving lists (the latter with identity keys): type, address.
            return address(data, at: 4).map(isSensor) ?? false
        default:
            // The controller's own set-up (OGF 3, 4, 5) and the rest of LE (scanning, advertising, own address);
            // classic connections and pairing (OGF 1), link policy (OGF 2) and vendor commands (OGF 0x3F) name
            // other devices or say nothing a replay needs.
            let group = opcode >> 10
            return group == 0x03 || group == 0x04 || group == 0x05 || group == 0x08
        }
    }

    // MARK: - Events (code, parameter length, parameters from offset 2)

    private mutating func keepsEvent(_ data: [UInt8], index: UInt16) -> Bool {
        guard data.count >= 2 else { return false }
        switch data[0] {
        case 0x0E:
            // Command Complete: number of packets, the command's opcode. Classic link control (OGF 1) answers
            // name the device the command was about.
            return data.count >= 5 && (UInt16(data[3]) | UInt16(data[4]) << 8) >> 10 != 0x01
        case 0x0F, 0x10, 0x1A:
            // Command Status, Hardware Error, Data Buffer Overflow.
            return true
        case 0x05, 0x08, 0x0C, 0x30, 0x59:
            // Disconnection Complete, Encryption Change (v1, v2), Read Remote Version Complete, Encryption Key
            // Refresh Complete: status, then the connection handle.
            let keeps = namesSensorConnection(data, index: index, at: 3)
            if data[0] == 0x05, data.count >= 5 {
                peers[ConnectionKey(index: index, handle: handle(data, at: 3))] = nil
            }
            return keeps
        case 0x13:
            // Number of Completed Packets: kept only when every connection it counts is a sensor's.
            guard data.count >= 3, data.count >= 3 + Int(data[2]) * 4 else { return false }
            return (0..<Int(data[2])).allSatisfy { namesSensorConnection(data, index: index, at: 3 + $0 * 2) }
        case 0x3E:
            return keepsLEEvent(data, index: index)
        default:
            // Classic connections, discovery and pairing (addresses, names, link keys), vendor events.
            return false
        }
    }

    private mutating func keepsLEEvent(_ data: [UInt8], index: UInt16) -> Bool {
        guard data.count >= 3 else { return false }
        switch data[2] {
        case 0x01, 0x0A:
            // LE (Enhanced) Connection Complete: status, handle, role, peer address type, peer address.
            guard let peer = address(data, at: 8) else { return false }
            if data[3] == 0 { peers[ConnectionKey(index: index, handle: handle(data, at: 4))] = peer }
            return isSensor(peer)
        case 0x02:
            // LE Advertising Report: number of reports, then event type, address type, address, data length,
            // data, RSSI. One report per event is what controllers send; several are dropped whole.
            guard data.count >= 13, data[3] == 1 else { return false }
            let length = Int(data[12])
            guard let advertiser = address(data, at: 6), data.count >= 13 + length else { return false }
            return isAdvertisedSensor(advertiser, data[13..<(13 + length)])
        case 0x0D:
            // LE Extended Advertising Report: number of reports, event type (2), address type, address, PHYs,
            // SID, TX power, RSSI, periodic interval (2), direct address type and address, data length, data.
            guard data.count >= 28, data[3] == 1 else { return false }
            let length = Int(data[27])
            guard let advertiser = address(data, at: 7), data.count >= 28 + length else { return false }
            return isAdvertisedSensor(advertiser, data[28..<(28 + length)])
        case 0x03, 0x04, 0x0C:
            // Connection Update Complete, Read Remote Features Complete, PHY Update Complete: status, handle.
            return namesSensorConnection(data, index: index, at: 4)
        case 0x05, 0x06, 0x07, 0x14:
            // Long Term Key Request, Remote Connection Parameter Request, Data Length Change, Channel Selection
            // Algorithm: the handle first.
            return namesSensorConnection(data, index: index, at: 3)
        default:
            // Directed advertising, periodic advertising, isochronous channels.
            return false
        }
    }

    /// Whether an advertiser is a sensor, learning it when its advertising data lists one of `sensorServices`
    /// (16-bit service UUID lists, AD types 0x02 and 0x03, or 16-bit service data, 0x16).
    private mutating func isAdvertisedSensor(_ advertiser: String, _ advertising: ArraySlice<UInt8>) -> Bool {
        var offset = advertising.startIndex
        while offset < advertising.endIndex {
            let length = Int(advertising[offset])
            let end = offset + 1 + length
            guard length > 0, end <= advertising.endIndex else { break }
            let type = advertising[offset + 1]
            let values = advertising[(offset + 2)..<end]
            var uuids: [UInt16] = []
            if type == 0x02 || type == 0x03 {
                uuids = stride(from: values.startIndex, to: values.endIndex - 1, by: 2).map {
                    UInt16(values[$0]) | UInt16(values[$0 + 1]) << 8
                }
            } else if type == 0x16, values.count >= 2 {
                uuids = [UInt16(values[values.startIndex]) | UInt16(values[values.startIndex + 1]) << 8]
            }
            if uuids.contains(where: sensorServices.contains) { advertisedSensors.insert(advertiser) }
            offset = end
        }
        return isSensor(advertiser)
    }
}
