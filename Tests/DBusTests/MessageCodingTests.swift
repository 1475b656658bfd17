import XCTest

@testable import DBus

/// Messages encoded and decoded through libdbus without a bus, checked against the wire format of the D-Bus
/// specification ("Message Protocol": header fields, alignment, marshalling of each type).
final class MessageCodingTests: XCTestCase {
    func testEveryTypeSurvivesTheWireFormat() throws {
        let body: [DBusValue] = [
            .byte(0xFF), .boolean(true), .int16(-2), .uint16(65535), .int32(-70_000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(1 << 63), .double(-0.5), .string("Stages Power L ✓"),
            .objectPath("/org/bluez/hci0/dev_C0_11_22_33_44_55"), .signature("a{sv}"),
            .bytes([0x2C, 0x00, 0x8B, 0x00]), .bytes([]), .strings([]),
            .properties([("UUIDs", .strings(["00001818-0000-1000-8000-00805f9b34fb"])), ("RSSI", .int16(-60))]),
            .structure([.string("a"), .variant(.variant(.uint32(7)))]),
        ]
        var message = DBusMessage.signal(
            path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            body: body)
        message.serial = 1  // a message read from the wire must have one
        let decoded = try DBusMessage(marshalled: try message.marshalled())
        XCTAssertEqual(decoded.body, body)
        XCTAssertEqual(decoded.signature, "ybnqiuxtdsogayayasa{sv}(sv)")
        XCTAssertEqual(decoded.path, "/org/bluez/hci0")
        XCTAssertEqual(decoded.member, "PropertiesChanged")
    }

    /// A method call with one `ay` argument, byte by byte as the specification lays it out (little-endian).
    func testMarshalledBytesFollowTheSpecification() throws {
        var message = DBusMessage.methodCall(
            destination: "org.bluez", path: "/a", interface: "x.Y", member: "M", body: [.bytes([1, 2, 3])])
        message.serial = 5
        let bytes = try message.marshalled()
        guard bytes.first == UInt8(ascii: "l") else { throw XCTSkip("big-endian machine: the vector is little-endian") }
        var expected: [UInt8] = [UInt8(ascii: "l"), 1, 0, 1]  // little-endian, METHOD_CALL, no flags, version 1
        expected += [7, 0, 0, 0]  // body length: uint32 count + 3 bytes
        expected += [5, 0, 0, 0]  // serial
        // Header fields array. The specification lets fields come in any order; libdbus writes them in the order
        // it sets them: path, destination, interface, member, then the body's signature.
        var fields: [UInt8] = []
        func pad(_ array: inout [UInt8], _ alignment: Int, base: Int) {
            while (base + array.count) % alignment != 0 { array.append(0) }
        }
        func field(_ code: UInt8, _ type: Character, _ value: String) {
            pad(&fields, 8, base: 16)
            fields += [code, 1, UInt8(ascii: type.unicodeScalars.first!), 0]
            if type == "g" {
                fields += [UInt8(value.utf8.count)] + Array(value.utf8) + [0]
            } else {
                let length = UInt32(value.utf8.count)
                fields += withUnsafeBytes(of: length.littleEndian, Array.init) + Array(value.utf8) + [0]
            }
        }
        field(1, "o", "/a")
        field(6, "s", "org.bluez")
        field(2, "s", "x.Y")
        field(3, "s", "M")
        field(8, "g", "ay")
        expected += withUnsafeBytes(of: UInt32(fields.count).littleEndian, Array.init) + fields
        pad(&expected, 8, base: 0)
        expected += [3, 0, 0, 0, 1, 2, 3]
        XCTAssertEqual(bytes, expected)
    }

    /// libdbus aborts the process on an invalid path or name; these must come back as errors instead.
    func testInvalidNamesAreErrorsNotCrashes() {
        let badPath = DBusMessage.methodCall(destination: "org.bluez", path: "no/slash", interface: "a.B", member: "M")
        XCTAssertThrowsError(try badPath.marshalled())
        let badMember = DBusMessage.methodCall(destination: "org.bluez", path: "/a", interface: "a.B", member: "M-1")
        XCTAssertThrowsError(try badMember.marshalled())
        let badValue = DBusMessage.signal(path: "/a", interface: "a.B", member: "S", body: [.objectPath("/a//b")])
        XCTAssertThrowsError(try badValue.marshalled())
        let mixed = DBusMessage.signal(
            path: "/a", interface: "a.B", member: "S", body: [.array(elementSignature: "s", [.uint32(1)])])
        XCTAssertThrowsError(try mixed.marshalled())
        let nul = DBusMessage.signal(path: "/a", interface: "a.B", member: "S", body: [.string("a\u{0}b")])
        XCTAssertThrowsError(try nul.marshalled())
    }

    func testCorruptWireBytesAreAnError() throws {
        var message = DBusMessage.signal(path: "/a", interface: "a.B", member: "S", body: [.string("hello")])
        message.serial = 1
        var bytes = try message.marshalled()
        bytes[bytes.count - 3] = 0xFF  // not UTF-8
        XCTAssertThrowsError(try DBusMessage(marshalled: bytes))
        XCTAssertThrowsError(try DBusMessage(marshalled: Array(bytes.prefix(10))))
    }

    func testMatchRuleTextAndLocalFilter() {
        let rule = MatchRule(
            sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            pathNamespace: "/org/bluez")
        XCTAssertEqual(
            rule.text,
            "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
                + "path_namespace='/org/bluez'")
        var signal = DBusMessage.signal(
            path: "/org/bluez/hci0/dev_X", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        XCTAssertTrue(rule.matches(signal))
        signal.path = "/org/bluezz"
        XCTAssertFalse(rule.matches(signal))
        signal.path = "/org/bluez"
        XCTAssertTrue(rule.matches(signal))
        signal.member = "NameAcquired"
        XCTAssertFalse(rule.matches(signal))
    }
}
