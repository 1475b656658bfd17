import CyclingSensors
import TestSupport
import XCTest

/// What `cyclelog decode --json` relies on: every key a decoder writes is a lowerCamelCase identifier (so it is
/// written as it is, with no check for what JSON escapes), and a value's fields are the same whether made fresh
/// or appended to a list that is reused.
final class DecodedFieldTests: XCTestCase {
    func testEveryKeyIsAnIdentifierAndAReusedListHoldsTheSameFields() throws {
        var generator = SplitMix64(seed: 0xDEC0DE)
        var real: [Characteristic: [[UInt8]]] = [:]
        for file in FixtureTests.files {
            for row in try FixtureRow.load(file) { real[row.characteristic, default: []].append(row.payload) }
        }
        var keys: Set<String> = []
        var decodedCount = 0
        var reused: [DecodedField] = []
        for characteristic in Characteristic.allCases {
            // Real payloads, then random ones of every length up to 40 bytes: every flag combination of the
            // 16-bit flags is drawn many times over.
            var payloads = real[characteristic] ?? []
            for _ in 0..<5_000 {
                payloads.append((0..<Int.random(in: 0...40, using: &generator)).map { _ in generator.nextByte() })
            }
            for payload in payloads {
                reused.removeAll(keepingCapacity: true)
                let fresh: [DecodedField]
                do {
                    fresh = try characteristic.decodeFields(payload)
                } catch {
                    XCTAssertThrowsError(try characteristic.decodeFields(payload, into: &reused))
                    continue
                }
                try characteristic.decodeFields(payload, into: &reused)
                XCTAssertEqual(fresh, reused, "\(characteristic) \(payload)")
                decodedCount += 1
                keys.formUnion(fresh.map(\.key))
            }
        }
        XCTAssertGreaterThan(decodedCount, 20_000)
        // Keys from every kind of characteristic: measurements, features, ranges, control points, strings.
        for key in [
            "instantaneousPower", "lastCrankEventTime", "rrIntervals", "totalEnergy", "features", "minimumPower",
            "requestOpCode", "manufacturerNameString", "sensorLocation",
        ] {
            XCTAssertTrue(keys.contains(key), "\(key) never decoded: \(keys.sorted())")
        }
        for key in keys {
            let utf8 = Array(key.utf8)
            XCTAssertTrue(
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(utf8[0])
                    && utf8.allSatisfy { byte in
                        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    }, key)
        }
    }
}

extension SplitMix64 {
    fileprivate mutating func nextByte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}
