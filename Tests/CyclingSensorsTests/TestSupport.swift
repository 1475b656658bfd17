import CyclingSensors
import TestSupport
import XCTest

/// Bytes from "2C 00 8B 00" or "2c008b00".
func bytes(_ hex: String) -> [UInt8] {
    let digits = hex.filter(\.isHexDigit)
    precondition(digits.count % 2 == 0, "odd hex in test vector")
    var result: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        result.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return result
}

/// Asserts that decoding fails with exactly this field, offset and reason.
func assertMalformed<T: CharacteristicValue>(
    _ type: T.Type, _ payload: [UInt8], field: String, offset: Int, _ reason: MalformedPayload.Reason,
    file: StaticString = #filePath, line: UInt = #line
) {
    do {
        let value = try T(decoding: payload)
        XCTFail("expected an error, decoded \(value)", file: file, line: line)
    } catch {
        XCTAssertEqual(error, MalformedPayload(field: field, offset: offset, reason: reason), file: file, line: line)
    }
}

/// A field layout written from the spec's table: (field name, size in bytes), in wire order.
typealias Layout = [(field: String, size: Int)]

/// Every strict prefix of a full value must fail on the field the cut falls in, at that field's start
/// offset, saying how many bytes it needed and had. The layout comes from the spec, not the decoder.
func assertEveryPrefixFails<T: CharacteristicValue>(
    _ type: T.Type, _ full: [UInt8], layout: Layout, file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(layout.map(\.size).reduce(0, +), full.count, "layout must cover the value", file: file, line: line)
    var start = 0
    for item in layout {
        for cut in start..<(start + item.size) {
            assertMalformed(
                T.self, Array(full.prefix(cut)), field: item.field, offset: start,
                .truncated(needed: item.size, available: cut - start), file: file, line: line)
        }
        start += item.size
    }
}

extension WheelRevolutionData {
    static func random(using random: inout SplitMix64) -> WheelRevolutionData {
        .init(
            cumulativeWheelRevolutions: .random(in: 0 ... .max, using: &random),
            lastWheelEventTime: .random(in: 0 ... .max, using: &random))
    }
}

extension CrankRevolutionData {
    static func random(using random: inout SplitMix64) -> CrankRevolutionData {
        .init(
            cumulativeCrankRevolutions: .random(in: 0 ... .max, using: &random),
            lastCrankEventTime: .random(in: 0 ... .max, using: &random))
    }
}
