import XCTest

@testable import FIT

final class FITEncoderTests: XCTestCase {
    func testCRCIsCRC16ARC() {
        // The catalogue check value of CRC-16/ARC (poly 0x8005 reflected, init 0) for "123456789".
        XCTAssertEqual(FITCRC.compute(Array("123456789".utf8)), 0xBB3D)
    }

    func testHeaderAndEmptyFileFollowTheProtocol() {
        let file = FITEncoder().file()
        XCTAssertEqual(file.count, 14 + 2)
        XCTAssertEqual(Array(file[0..<2]), [14, 0x10], "header size 14, protocol 1.0")
        XCTAssertEqual(Array(file[4..<8]), [0, 0, 0, 0], "no data records")
        XCTAssertEqual(Array(file[8..<12]), Array(".FIT".utf8))
        let headerCRC = FITCRC.compute(file[0..<12])
        XCTAssertEqual(Array(file[12..<14]), [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)])
        // A file's CRC over everything including its own CRC is 0.
        XCTAssertEqual(FITCRC.compute(file), 0)
    }

    func testDefinitionAndDataBytes() {
        var fit = FITEncoder()
        fit.define(local: 3, global: 20, fields: [.init(253, .uint32), .init(7, .uint16), .init(3, .uint8)])
        fit.write(local: 3, [.number(1_000_000_000), .number(250), .number(nil)])
        let records = Array(fit.file().dropFirst(14).dropLast(2))
        XCTAssertEqual(
            records,
            [
                0x43, 0, 0, 20, 0, 3, 253, 4, 0x86, 7, 2, 0x84, 3, 1, 0x02,  // definition: record, 3 fields
                0x03, 0x00, 0xCA, 0x9A, 0x3B, 0xFA, 0x00, 0xFF,  // 1e9 LE, 250 W, heart rate invalid
            ])
    }

    func testValuesAFieldCannotHoldAreWrittenAsInvalid() {
        var fit = FITEncoder()
        fit.define(local: 0, global: 20, fields: [.init(4, .uint8), .init(27, .string, size: 4)])
        fit.write(local: 0, [.number(255), .text("héé")])
        let records = Array(fit.file().dropFirst(14).dropLast(2))
        // 255 is uint8's invalid value; "h" + "é" (2 bytes) fill 3 of 4 bytes and the next "é" would not fit.
        XCTAssertEqual(Array(records.suffix(5)), [0xFF, 0x68, 0xC3, 0xA9, 0x00])
    }

    func testTimestampsCountFromTheFITEpoch() {
        // 1989-12-31T00:00:00Z is 631065600 s after the Unix epoch.
        XCTAssertEqual(FITEncoder.timestamp(microseconds: 631_065_600_000_000), 0)
        XCTAssertEqual(FITEncoder.timestamp(microseconds: 631_065_601_999_999), 1)
    }
}
