import Capture
import XCTest

/// The privacy filter of the HCI capture over monitor records built from the Core specification's layouts (Vol 4
/// Part E §5.4 and §7) and BlueZ's monitor opcodes: what a bug report's capture may hold.
final class HCIPrivacyFilterTests: XCTestCase {
    static let sensor = "C0:11:22:33:44:01"
    static let keyboard = "D4:55:66:77:88:99"

    /// The address as HCI carries it: least significant octet first.
    static func octets(_ address: String) -> [UInt8] {
        address.split(separator: ":").compactMap { UInt8($0, radix: 16) }.reversed()
    }

    static func leConnectionComplete(handle: UInt16, _ address: String, enhanced: Bool = false) -> [UInt8] {
        // Code, length, subevent, status, handle, role (central), peer address type (random), peer address, then
        // interval, latency, timeout, clock accuracy (and, enhanced, the two resolvable private addresses first).
        let rest: [UInt8] = (enhanced ? [UInt8](repeating: 0, count: 12) : []) + [0x18, 0, 0, 0, 0xF4, 1, 0]
        let parameters =
            [enhanced ? 0x0A : 0x01, 0, UInt8(handle & 0xFF), UInt8(handle >> 8), 0, 1] + octets(address)
            + rest
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static func advertisingReport(_ address: String, services: [UInt16], name: String) -> [UInt8] {
        var data: [UInt8] = [2, 0x01, 0x06, UInt8(1 + services.count * 2), 0x03]
        for service in services { data += [UInt8(service & 0xFF), UInt8(service >> 8)] }
        data += [UInt8(1 + name.utf8.count), 0x09] + Array(name.utf8)
        let parameters = [0x02, 1, 0x00, 0x01] + octets(address) + [UInt8(data.count)] + data + [0xC4]
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static func notification(handle: UInt16, value: [UInt8]) -> [UInt8] {
        let att: [UInt8] = [0x1B, 0x0E, 0x00] + value
        let l2cap = [UInt8(att.count), 0, 0x04, 0] + att
        return [UInt8(handle & 0xFF), UInt8(handle >> 8 | 0x20), UInt8(l2cap.count), 0] + l2cap
    }

    func filter(named: Set<String> = [], lookUp: [UInt16: String] = [:], adapter: UInt16? = nil) -> HCIPrivacyFilter {
        HCIPrivacyFilter(
            adapterIndex: adapter, sensorServices: [0x1818, 0x1816, 0x180D, 0x1826],
            isNamedSensor: { named.contains($0) }, connectionAddress: { _, handle in lookUp[handle] })
    }

    func keeps(
        _ filter: inout HCIPrivacyFilter, _ opcode: Btsnoop.MonitorOpcode, _ packet: [UInt8], index: UInt16 = 0
    )
        -> Bool
    {
        filter.keeps(opcode: opcode.rawValue, index: index, packet[...])
    }

    func testASensorThatAdvertisesItsServiceIsKeptAndAKeyboardIsNot() {
        var filter = filter()
        // The controllers' own records: the index list, a note.
        XCTAssertTrue(keeps(&filter, .newIndex, [0x01, 0x00] + Self.octets("00:AA:02:00:00:00") + Array("hci0".utf8)))
        XCTAssertTrue(keeps(&filter, .systemNote, Array("Bluetooth subsystem version 2.22\0".utf8), index: 0xFFFF))
        // LE Set Scan Enable and its Command Complete: about no one.
        XCTAssertTrue(keeps(&filter, .command, [0x0C, 0x20, 2, 1, 0]))
        XCTAssertTrue(keeps(&filter, .event, [0x0E, 4, 1, 0x0C, 0x20, 0]))
        // The power meter advertises Cycling Power; the keyboard HID (0x1812).
        XCTAssertTrue(keeps(&filter, .event, Self.advertisingReport(Self.sensor, services: [0x1818], name: "Stages")))
        XCTAssertFalse(keeps(&filter, .event, Self.advertisingReport(Self.keyboard, services: [0x1812], name: "Keys")))
        // LE Create Connection to each: scan interval, window, filter policy, peer type, address, then the rest.
        let create: (String) -> [UInt8] = {
            [0x0D, 0x20, 25, 0x60, 0, 0x60, 0, 0, 1] + Self.octets($0) + Array(repeating: 0, count: 13)
        }
        XCTAssertTrue(keeps(&filter, .command, create(Self.sensor)))
        XCTAssertFalse(keeps(&filter, .command, create(Self.keyboard)))
        XCTAssertTrue(keeps(&filter, .event, Self.leConnectionComplete(handle: 0x40, Self.sensor)))
        XCTAssertFalse(keeps(&filter, .event, Self.leConnectionComplete(handle: 0x41, Self.keyboard, enhanced: true)))
        // Their data, both ways.
        XCTAssertTrue(keeps(&filter, .aclReceived, Self.notification(handle: 0x40, value: [0x00, 0x00, 0xC8, 0x00])))
        XCTAssertTrue(keeps(&filter, .aclSent, Self.notification(handle: 0x40, value: [])))
        XCTAssertFalse(keeps(&filter, .aclReceived, Self.notification(handle: 0x41, value: Array("hunter2".utf8))))
        XCTAssertFalse(keeps(&filter, .aclSent, Self.notification(handle: 0x41, value: [])))
        // Number of Completed Packets: the sensor's alone kept; one that counts the keyboard's too dropped.
        XCTAssertTrue(keeps(&filter, .event, [0x13, 5, 1, 0x40, 0x00, 1, 0]))
        XCTAssertFalse(keeps(&filter, .event, [0x13, 9, 2, 0x40, 0x00, 0x41, 0x00, 1, 0, 1, 0]))
        // Encryption: the keyboard's long-term key reply and its Encryption Change are not kept.
        XCTAssertFalse(keeps(&filter, .command, [0x1A, 0x20, 18, 0x41, 0x00] + Array(repeating: 0xAB, count: 16)))
        XCTAssertFalse(keeps(&filter, .event, [0x08, 4, 0, 0x41, 0x00, 1]))
        XCTAssertTrue(keeps(&filter, .event, [0x08, 4, 0, 0x40, 0x00, 1]))
        // Disconnection Complete of each.
        XCTAssertFalse(keeps(&filter, .event, [0x05, 4, 0, 0x41, 0x00, 0x13]))
        XCTAssertTrue(keeps(&filter, .event, [0x05, 4, 0, 0x40, 0x00, 0x13]))
    }

    func testClassicPairingAudioAndOtherProgramsAreNeverKept() {
        var filter = filter(named: [Self.sensor])
        // Link Key Notification: address, key, type.
        XCTAssertFalse(
            keeps(&filter, .event, [0x18, 23] + Self.octets(Self.keyboard) + Array(repeating: 7, count: 17)))
        // Inquiry Result, Remote Name Request Complete, Connection Request (classic).
        XCTAssertFalse(
            keeps(&filter, .event, [0x02, 15, 1] + Self.octets(Self.keyboard) + Array(repeating: 0, count: 8)))
        XCTAssertFalse(keeps(&filter, .event, [0x07, 10, 0] + Self.octets(Self.keyboard) + Array("Ph".utf8)))
        // Create Connection (classic), Link Key Request Reply and the Command Complete that names the device.
        XCTAssertFalse(
            keeps(&filter, .command, [0x05, 0x04, 13] + Self.octets(Self.keyboard) + Array(repeating: 0, count: 7)))
        XCTAssertFalse(
            keeps(&filter, .command, [0x0B, 0x04, 22] + Self.octets(Self.keyboard) + Array(repeating: 9, count: 16)))
        XCTAssertFalse(keeps(&filter, .event, [0x0E, 10, 1, 0x0B, 0x04, 0] + Self.octets(Self.keyboard)))
        // Vendor commands and events.
        XCTAssertFalse(keeps(&filter, .command, [0x01, 0xFC, 0]))
        XCTAssertFalse(keeps(&filter, .event, [0xFF, 1, 0]))
        // Audio, vendor diagnostics, bluetoothd's log lines, management commands of other programs, and an opcode
        // from a later kernel that nobody has described yet.
        for opcode: Btsnoop.MonitorOpcode in [
            .scoSent, .scoReceived, .isoSent, .isoReceived, .vendorDiagnostic, .userLogging, .controlOpen,
            .controlClose, .controlCommand, .controlEvent,
        ] {
            XCTAssertFalse(keeps(&filter, opcode, [1, 2, 3, 4]), "\(opcode)")
        }
        XCTAssertFalse(filter.keeps(opcode: 42, index: 0, [1, 2, 3][...]))
        // Short and empty packets are dropped, never read past.
        for opcode: Btsnoop.MonitorOpcode in [.command, .event, .aclSent, .aclReceived] {
            XCTAssertFalse(keeps(&filter, opcode, []), "\(opcode)")
            XCTAssertFalse(keeps(&filter, opcode, [0x3E]), "\(opcode)")
        }
        XCTAssertFalse(keeps(&filter, .event, [0x3E, 3, 0x01, 0]))
        XCTAssertFalse(keeps(&filter, .event, [0x13, 5, 2, 0x40, 0x00]))
    }

    func testANamedSensorAndAConnectionOpenBeforeTheCaptureAreKept() {
        // The sensor never advertised while the capture ran: the recorder named it before connecting.
        var named = filter(named: [Self.sensor])
        XCTAssertTrue(keeps(&named, .event, Self.leConnectionComplete(handle: 0x40, Self.sensor, enhanced: true)))
        XCTAssertTrue(keeps(&named, .aclReceived, Self.notification(handle: 0x40, value: [1])))
        // Connections already open: the kernel's list says who is on which handle.
        var open = filter(named: [Self.sensor], lookUp: [0x40: Self.sensor, 0x41: Self.keyboard])
        XCTAssertTrue(keeps(&open, .aclReceived, Self.notification(handle: 0x40, value: [1])))
        XCTAssertFalse(keeps(&open, .aclReceived, Self.notification(handle: 0x41, value: [1])))
        XCTAssertFalse(keeps(&open, .aclReceived, Self.notification(handle: 0x42, value: [1])), "nobody on 0x42")
        // A handle given to another device after a disconnection follows the new device.
        XCTAssertTrue(keeps(&open, .event, [0x05, 4, 0, 0x40, 0x00, 0x13]))
        XCTAssertFalse(keeps(&open, .event, Self.leConnectionComplete(handle: 0x40, Self.keyboard)))
        XCTAssertFalse(keeps(&open, .aclReceived, Self.notification(handle: 0x40, value: [1])))
    }

    func testOneAdapterOnly() {
        var filter = filter(named: [Self.sensor], adapter: 1)
        XCTAssertFalse(keeps(&filter, .newIndex, [0x01, 0x00] + Self.octets("00:AA:02:00:00:00"), index: 0))
        XCTAssertTrue(keeps(&filter, .newIndex, [0x01, 0x00] + Self.octets("00:AA:02:00:00:01"), index: 1))
        XCTAssertTrue(keeps(&filter, .systemNote, Array("note\0".utf8), index: 0xFFFF))
        XCTAssertFalse(keeps(&filter, .event, Self.leConnectionComplete(handle: 0x40, Self.sensor), index: 0))
        XCTAssertTrue(keeps(&filter, .event, Self.leConnectionComplete(handle: 0x40, Self.sensor), index: 1))
    }

    func testExtendedAdvertisingReportsAreReadAtTheirOwnOffsets() {
        var filter = filter()
        // Subevent 0x0D: reports, event type (2), address type, address, primary and secondary PHY, SID, TX
        // power, RSSI, periodic interval (2), direct address type and address, data length, data.
        func report(_ address: String, _ service: UInt16) -> [UInt8] {
            let data: [UInt8] = [3, 0x03, UInt8(service & 0xFF), UInt8(service >> 8)]
            let parameters: [UInt8] =
                [0x0D, 1, 0x13, 0x00, 0x00] + Self.octets(address) + [1, 0, 0xFF, 0x7F, 0xC4, 0, 0, 0]
                + [0, 0, 0, 0, 0, 0] + [UInt8(data.count)] + data
            return [0x3E, UInt8(parameters.count)] + parameters
        }
        XCTAssertTrue(keeps(&filter, .event, report(Self.sensor, 0x180D)))
        XCTAssertFalse(keeps(&filter, .event, report(Self.keyboard, 0x1812)))
        // The heart-rate strap is a sensor from its advertisement on: its connection is kept.
        XCTAssertTrue(keeps(&filter, .event, Self.leConnectionComplete(handle: 0x40, Self.sensor, enhanced: true)))
    }
}
