import TestSupport
import XCTest

@testable import FIT

/// The FIT reader on hand-made bytes laid out by the protocol (header, definition and data records, compressed
/// timestamp headers, big-endian definitions, developer fields, chained files) and on damaged copies of a real file.
final class FITDecoderTests: XCTestCase {
    /// A FIT file around `records`: the 14-byte header with its CRC, then the records and the file CRC.
    func file(_ records: [UInt8]) -> [UInt8] {
        let size = UInt32(records.count)
        var header: [UInt8] = [14, 0x10, 0x54, 0x08] + (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
        header += Array(".FIT".utf8)
        let headerCRC = FITCRC.compute(header)
        header += [UInt8(headerCRC & 0xFF), UInt8(headerCRC >> 8)]
        let crc = FITCRC.compute(header + records)
        return header + records + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    func testWhatTheWriterWritesReadsBack() throws {
        var fit = FITEncoder()
        fit.define(local: 3, global: 20, fields: [.init(253, .uint32), .init(7, .uint16), .init(3, .uint8)])
        fit.write(local: 3, [.number(1_000_000_000), .number(250), .number(nil)])
        fit.define(local: 0, global: 23, fields: [.init(27, .string, size: 12)])
        fit.write(local: 0, [.text("Polar H10")])
        let messages = try FITDecoder.messages(fit.file())
        XCTAssertEqual(messages.map(\.global), [20, 23])
        XCTAssertEqual(messages[0].integers, [253: 1_000_000_000, 7: 250], "the invalid heart rate is absent")
        XCTAssertEqual(messages[0].offset, 14 + 15, "after the header and the 15-byte definition")
        XCTAssertEqual(messages[1].texts, [27: "Polar H10"])
    }

    func testCompressedTimestampHeadersAddTheirOffsetAndRollOverEvery32Seconds() throws {
        let records: [UInt8] = [
            0x40, 0, 0, 20, 0, 2, 253, 4, 0x86, 7, 2, 0x84,  // local 0: record with timestamp and power
            0x00, 0xE8, 0x03, 0, 0, 100, 0,  // timestamp 1000 (low 5 bits 8), 100 W
            0x41, 0, 0, 20, 0, 1, 7, 2, 0x84,  // local 1: record with power only
            0x80 | 0x20 | 10, 110, 0,  // compressed, local 1, offset 10: 1000 − 8 + 10 = 1002
            0x80 | 0x20 | 3, 120, 0,  // offset 3 < 10: the 5-bit counter wrapped, 992 + 32 + 3 = 1027
        ]
        let messages = try FITDecoder.messages(file(records))
        XCTAssertEqual(messages.map(\.timestamp), [1000, 1002, 1027])
        XCTAssertEqual(messages.map { $0.integers[7] }, [100, 110, 120])
    }

    func testBigEndianDefinitionsSignedValuesAndDeveloperFields() throws {
        let records: [UInt8] = [
            // local 2, developer data flag, big-endian, global 20, fields power (uint16) and a sint16, then one
            // developer field of 3 bytes.
            0x40 | 0x20 | 2, 0, 1, 0, 20, 2, 7, 2, 0x84, 99, 2, 0x83, 1, 0, 3, 0,
            0x02, 0x01, 0x2C, 0xFF, 0x38, 0xAA, 0xBB, 0xCC,  // 300 W, −200, three developer bytes
            0x02, 0xFF, 0xFF, 0x7F, 0xFF, 1, 2, 3,  // both invalid
        ]
        let messages = try FITDecoder.messages(file(records))
        XCTAssertEqual(messages.count, 2)
        XCTAssertEqual(messages[0].integers, [7: 300, 99: -200])
        XCTAssertEqual(messages[1].integers, [:])
    }

    func testChainedFilesAreReadOneAfterTheOther() throws {
        let one = file([0x40, 0, 0, 0, 0, 1, 0, 1, 0x00, 0x00, 4])
        let two = file([0x40, 0, 0, 20, 0, 1, 7, 2, 0x84, 0x00, 42, 0])
        XCTAssertEqual(try FITDecoder.messages(one + two).map(\.global), [0, 20])
    }

    func testFaultsNameTheirByte() {
        func fault(_ bytes: [UInt8]) -> FITError? {
            do {
                _ = try FITDecoder.messages(bytes)
                return nil
            } catch {
                return error
            }
        }
        let good = file([0x40, 0, 0, 20, 0, 1, 7, 2, 0x84, 0x00, 42, 0])
        XCTAssertNil(fault(good))
        XCTAssertEqual(fault(Array("not a fit file at all".utf8))?.offset, 0)
        XCTAssertTrue(fault(Array("not a fit file at all".utf8))?.reason.contains("header size") ?? false)
        var noSignature = good
        noSignature[9] = UInt8(ascii: "X")
        XCTAssertEqual(fault(noSignature)?.offset, 8)
        var badHeaderCRC = good
        badHeaderCRC[12] ^= 1
        XCTAssertEqual(fault(badHeaderCRC)?.offset, 12)
        // Cut short: the fault is where the file ends.
        XCTAssertEqual(fault(Array(good.prefix(20)))?.offset, 20)
        // A data message of a local type never defined: the fault is that record's header.
        XCTAssertEqual(fault(file([0x40, 0, 0, 20, 0, 1, 7, 2, 0x84, 0x05, 42, 0]))?.offset, 14 + 9)
        // A definition that runs past the end of the data.
        XCTAssertEqual(fault(file([0x40, 0, 0, 20, 0, 4, 7, 2, 0x84]))?.offset, 14)
        // One changed byte of a message: the file CRC catches it, at the CRC's place.
        var changed = good
        changed[24] ^= 0x10
        XCTAssertEqual(fault(changed)?.offset, good.count - 2)
        XCTAssertTrue(fault(changed)?.reason.contains("CRC") ?? false)
    }

    func testEveryCutAndEveryChangedByteOfARealRideIsRefused() throws {
        let bytes = try [UInt8](Data(contentsOf: RideRecords.fitFile("sweatpy_2020-06-01-16-52-40")))
        XCTAssertNoThrow(try FITDecoder.messages(bytes))
        for length in stride(from: 0, to: bytes.count, by: 13) {
            XCTAssertThrowsError(try FITDecoder.messages(Array(bytes.prefix(length))), "cut to \(length) bytes") {
                XCTAssertLessThanOrEqual(($0 as? FITError)?.offset ?? .max, length)
            }
        }
        for position in stride(from: 0, to: bytes.count, by: 29) {
            var changed = bytes
            changed[position] ^= 0x5A
            XCTAssertThrowsError(try FITDecoder.messages(changed), "byte \(position) changed")
        }
    }
}
