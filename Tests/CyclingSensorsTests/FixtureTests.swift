import CyclingSensors
import Foundation
import XCTest

/// One row of Fixtures/captures/*.tsv.
struct FixtureRow {
    let sourceLine: String
    let device: String
    let characteristic: Characteristic
    let direction: String
    let payload: [UInt8]
    let conformance: String
    let thirdPartyDecode: String

    static func load(_ file: String) throws -> [FixtureRow] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fixtures/captures/\(file)").standardized
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").dropFirst()
        return try lines.map { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let characteristic = try XCTUnwrap(Characteristic(identifier: columns[2]), "characteristic in \(line)")
            return FixtureRow(
                sourceLine: columns[0], device: columns[1], characteristic: characteristic, direction: columns[3],
                payload: bytes(columns[5]), conformance: columns[6], thirdPartyDecode: columns[7])
        }
    }

    /// Integers that follow `label` in the third party's decode, e.g. "Crank rev: 64" → 64.
    func number(after label: String) -> Double? {
        guard let range = thirdPartyDecode.range(of: label) else { return nil }
        let rest = thirdPartyDecode[range.upperBound...].drop { $0 == " " || $0 == ":" || $0 == "(" }
        return Double(rest.prefix { $0.isNumber || $0 == "." || $0 == "-" })
    }
}

/// Every real payload in Fixtures/captures: conformant ones decode, non-conformant ones fail with a clear
/// error, and where the source came with a third party's decode, ours agrees with it.
final class FixtureTests: XCTestCase {
    static let files = [
        "cycling-power-measurement.tsv", "csc-measurement.tsv", "heart-rate-measurement.tsv", "fitness-machine.tsv",
    ]

    func testEveryConformantPayloadDecodesAndEveryOtherFailsClearly() throws {
        var counts = (decoded: 0, rejected: 0)
        for file in Self.files {
            for row in try FixtureRow.load(file) {
                do {
                    _ = try row.characteristic.decodeFields(row.payload)
                    XCTAssertEqual(
                        row.conformance, "conformant", "\(row.sourceLine) decoded but is marked \(row.conformance)")
                    counts.decoded += 1
                } catch {
                    XCTAssertNotEqual(row.conformance, "conformant", "\(row.sourceLine) \(row.device): \(error)")
                    counts.rejected += 1
                }
            }
        }
        XCTAssertEqual(counts.decoded + counts.rejected, 206, "all fixture rows were read")
        XCTAssertEqual(counts.rejected, 11, "3 Matrix + 5 Life Fitness + 3 simcline padded writes")
    }

    func testNonConformantDevicesGetTheExactError() throws {
        let rows = try FixtureRow.load("fitness-machine.tsv")
        for row in rows where row.device.hasPrefix("Matrix") {
            // 0x15FE / 0x1DFE both put total energy at offset 19 of a 20-byte notification.
            XCTAssertThrowsError(try IndoorBikeData(decoding: row.payload)) { error in
                XCTAssertEqual(
                    error as? MalformedPayload,
                    MalformedPayload(field: "totalEnergy", offset: 19, reason: .truncated(needed: 2, available: 1)),
                    row.sourceLine)
            }
        }
        for row in rows where row.device.hasPrefix("Life Fitness") {
            // Flags 0x09FA/0x0BFA/0x19FA announce 24/25/26 bytes; each notification carries 2 more.
            let announced = row.payload.count - 2
            XCTAssertThrowsError(try IndoorBikeData(decoding: row.payload)) { error in
                XCTAssertEqual(
                    error as? MalformedPayload,
                    MalformedPayload(
                        field: "trailingBytes", offset: announced, reason: .unexpectedTrailingBytes(count: 2)),
                    row.sourceLine)
            }
        }
        XCTAssertEqual(rows.filter { $0.device.hasPrefix("Matrix") || $0.device.hasPrefix("Life Fitness") }.count, 8)
    }

    func testHandWorkedValuesPerDevice() throws {
        // Stages SC3, first row: 2c 00 | 8b 00 | dd 66 | 06 0c | b2 4a.
        let stages = try CyclingPowerMeasurement(decoding: bytes("2c008b00dd66060cb24a"))
        XCTAssertEqual(stages.instantaneousPower, 0x8B)  // 139 W
        XCTAssertEqual(stages.accumulatedTorque, 0x66DD)  // 26333 × 1/32 N·m
        XCTAssertEqual(
            stages.crankRevolutionData, .init(cumulativeCrankRevolutions: 0x0C06, lastCrankEventTime: 0x4AB2))
        // SRM PM9: 2f 00 | 21 00 | 0e | b4 04 | 0e 00 | d9 1d — balance 14 half-percent = 7 % left.
        let srm = try CyclingPowerMeasurement(decoding: bytes("2f0021000eb4040e00d91d"))
        XCTAssertEqual(srm.instantaneousPower, 33)
        XCTAssertEqual(srm.pedalPowerBalance, 14)
        XCTAssertTrue(srm.flags.contains(.pedalPowerBalanceReferenceLeft))
        XCTAssertEqual(srm.accumulatedTorque, 0x04B4)
        XCTAssertEqual(srm.crankRevolutionData, .init(cumulativeCrankRevolutions: 14, lastCrankEventTime: 0x1DD9))
        // PowerTap P1: the crank event time wraps from 0xFCD7 to 0x0175 between two notifications.
        let before = try CyclingPowerMeasurement(decoding: bytes("20000b000a6ed7fc"))
        let after = try CyclingPowerMeasurement(decoding: bytes("20000b000b6e7501"))
        XCTAssertEqual(
            before.crankRevolutionData, .init(cumulativeCrankRevolutions: 0x6E0A, lastCrankEventTime: 0xFCD7))
        XCTAssertEqual(after.crankRevolutionData, .init(cumulativeCrankRevolutions: 0x6E0B, lastCrankEventTime: 0x0175))
        // Polar H7: 16 | 73 | 10 02 | 0d 02 → 115 bpm, RR 528 and 525 (1/1024 s).
        let polar = try HeartRateMeasurement(decoding: bytes("167310020d02"))
        XCTAssertEqual(polar.heartRate, 115)
        XCTAssertEqual(polar.rrIntervals, [528, 525])
        XCTAssertEqual(polar.sensorContact, .detected)
        XCTAssertEqual(try HeartRateMeasurement(decoding: bytes("0400")).sensorContact, .notDetected)
        // Schwinn IC4: 44 02 | 5e 0b | f0 00 | 7a 00 | 54 → 29.10 km/h, 120 rpm, 122 W, 84 bpm.
        let schwinn = try IndoorBikeData(decoding: bytes("44025e0bf0007a0054"))
        XCTAssertEqual([schwinn.instantaneousSpeed, schwinn.instantaneousCadence], [2910, 240])
        XCTAssertEqual(schwinn.instantaneousPower, 122)
        XCTAssertEqual(schwinn.heartRate, 84)
        // Yesoul S3: f5 01 (no speed) | 88 00 | f6 00 00 | 35 00 | 6b 00 | 47 00 | 04 00 ff ff ff.
        let yesoul = try IndoorBikeData(decoding: bytes("f5018800f6000035006b0047000400ffffff"))
        XCTAssertNil(yesoul.instantaneousSpeed)
        XCTAssertEqual(yesoul.instantaneousCadence, 136)
        XCTAssertEqual(yesoul.totalDistance, 246)
        XCTAssertEqual(yesoul.resistanceLevel, 53)
        XCTAssertEqual(yesoul.instantaneousPower, 107)
        XCTAssertEqual(yesoul.averagePower, 71)
        XCTAssertEqual(yesoul.expendedEnergy, .init(totalEnergy: 4, energyPerHour: 0xFFFF, energyPerMinute: 0xFF))
    }

    /// nRF Connect prints the raw CSC counters (labelled "ms", but they are 1/1024 s counts).
    func testCSCAgreesWithNRFConnect() throws {
        var compared = 0
        for row in try FixtureRow.load("csc-measurement.tsv") where row.thirdPartyDecode.hasPrefix("nRF Connect") {
            let value = try CSCMeasurement(decoding: row.payload)
            XCTAssertEqual(
                value.wheelRevolutionData.map { Double($0.cumulativeWheelRevolutions) }, row.number(after: "Wheel rev"),
                row.sourceLine)
            XCTAssertEqual(
                value.wheelRevolutionData.map { Double($0.lastWheelEventTime) },
                row.number(after: "Last wheel event time"), row.sourceLine)
            XCTAssertEqual(
                value.crankRevolutionData.map { Double($0.cumulativeCrankRevolutions) }, row.number(after: "Crank rev"),
                row.sourceLine)
            XCTAssertEqual(
                value.crankRevolutionData.map { Double($0.lastCrankEventTime) },
                row.number(after: "Last crank event time"), row.sourceLine)
            compared += 1
        }
        XCTAssertEqual(compared, 11)
    }

    func testPowerMetersAgreeWithTheirPostersAndSmartSpin2k() throws {
        var compared = 0
        for row in try FixtureRow.load("cycling-power-measurement.tsv") {
            let value = try CyclingPowerMeasurement(decoding: row.payload)
            if let revolutions = row.number(after: "Crank revolutions") {  // 4iiii, from the poster
                XCTAssertEqual(value.crankRevolutionData.map { Double($0.cumulativeCrankRevolutions) }, revolutions)
                XCTAssertEqual(
                    value.crankRevolutionData.map { Double($0.lastCrankEventTime) },
                    row.number(after: "Crank event time"))
                compared += 1
            }
            if let power = row.number(after: "PW") {  // Assioma, SmartSpin2k's decode
                XCTAssertEqual(Double(value.instantaneousPower), power, row.sourceLine)
                compared += 1
            }
        }
        XCTAssertEqual(compared, 6)
    }

    /// TrackMyIndoorWorkout's expected values are scaled (km/h, rpm, kcal); simcline's are truncated to
    /// integers. Ours are raw, so each comparison applies the spec's resolution.
    func testIndoorBikeDataAgreesWithTrackMyIndoorWorkoutAndSimcline() throws {
        var compared = 0
        for row in try FixtureRow.load("fitness-machine.tsv")
        where row.characteristic == .indoorBikeData && row.conformance == "conformant" {
            let value = try IndoorBikeData(decoding: row.payload)
            let speed = value.instantaneousSpeed.map { Double($0) * 0.01 }
            let cadence = value.instantaneousCadence.map { Double($0) * 0.5 }
            if row.thirdPartyDecode.hasPrefix("TrackMyIndoorWorkout") {
                if let expected = row.number(after: "speed") {
                    XCTAssertEqual(speed ?? -1, expected, accuracy: 0.005, row.sourceLine)
                }
                if let expected = row.number(after: "; cadence") ?? row.number(after: " cadence") {
                    XCTAssertEqual(cadence ?? -1, expected, accuracy: 0.5, row.sourceLine)
                }
                if let expected = row.number(after: "power") {
                    XCTAssertEqual(Double(value.instantaneousPower ?? -1), expected, row.sourceLine)
                }
                if let expected = row.number(after: "distance") {
                    XCTAssertEqual(Double(value.totalDistance ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "calories:") {
                    XCTAssertEqual(Double(value.expendedEnergy?.totalEnergy ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "caloriesPerHour") {
                    XCTAssertEqual(Double(value.expendedEnergy?.energyPerHour ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "elapsed") {
                    XCTAssertEqual(Double(value.elapsedTime ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "heartRate") {
                    XCTAssertEqual(Double(value.heartRate ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "resistance") {
                    XCTAssertEqual(Double(value.resistanceLevel ?? 0), expected, row.sourceLine)
                }
                compared += 1
            } else if row.thirdPartyDecode.hasPrefix("simcline") {
                XCTAssertEqual((speed ?? 0).rounded(.down), row.number(after: "Speed"), row.sourceLine)
                XCTAssertEqual(
                    (cadence ?? 0).rounded(.down), row.number(after: "Instantaneous Cadence"), row.sourceLine)
                // The excerpt's last Jetblack line is cut after the cadence, so power may be missing.
                if let expected = row.number(after: "Instantaneous Power") {
                    XCTAssertEqual(Double(value.instantaneousPower ?? -1), expected, row.sourceLine)
                }
                if let expected = row.number(after: "Total Distance") {
                    XCTAssertEqual(Double(value.totalDistance ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "Elapsed time") {
                    XCTAssertEqual(Double(value.elapsedTime ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "Resistance Level") {
                    XCTAssertEqual(Double(value.resistanceLevel ?? 0), expected, row.sourceLine)
                }
                if let expected = row.number(after: "Heart Rate") {
                    XCTAssertEqual(Double(value.heartRate ?? 0), expected, row.sourceLine)
                }
                compared += 1
            }
        }
        XCTAssertGreaterThanOrEqual(compared, 25)
    }
}
