import Foundation
import XCTest

/// Runs the built `cyclelog` binary, as a user or a script would.
final class DecodeCommandTests: XCTestCase {
    func testJSONHasTheRawKeysOfTheContract() throws {
        // A constructed Cycling Power Measurement: power 150 W, torque 800, crank 27 @ 62912, energy 57 kJ; flags 0x082C = 2092.
        let run = try cyclelog(["decode", "2a63", "--json", "2C 08 96 00 20 03 1B 00 C0 F5 39 00"])
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(
            run.lines,
            [
                #"{"flags": 2092, "instantaneousPower": 150, "accumulatedTorque": 800, "cumulativeCrankRevolutions": 27, "lastCrankEventTime": 62912, "accumulatedEnergy": 57}"#
            ])
    }

    func testAShortCyclingPowerFeatureIsReadAndFlagged() throws {
        // A real Wahoo KICKR's 2-octet Cycling Power Feature: torque, wheel and crank data; bits 16 to 31 unsent.
        let run = try cyclelog(["decode", "2a65", "--json", "0e 00"])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertEqual(run.lines, [#"{"features": 14, "featureOctets": 2}"#])
        let table = try cyclelog(["decode", "2a65", "0e 00"])
        XCTAssertTrue(table.output.contains("short: 2 of 4 octets sent, bits 16 to 31 unknown"), table.output)
    }

    func testEveryCharacteristicSpellingDecodesTheSameValue() throws {
        for spelling in ["2a63", "0x2A63", "00002a63-0000-1000-8000-00805f9b34fb", "cycling-power-measurement"] {
            let run = try cyclelog(["decode", spelling, "--json", "0000FBFF"])
            XCTAssertEqual(run.lines, [#"{"flags": 0, "instantaneousPower": -5}"#], spelling)
        }
    }

    func testABadPayloadGivesAnErrorLineTheOthersStillDecodeAndTheStatusIsOne() throws {
        let run = try cyclelog([
            "decode", "csc-measurement", "--json", "02 2A 00 00 40", "03 2A 00", "zz", "02 2A 00 00 40",
        ])
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.lines,
            [
                #"{"flags": 2, "cumulativeCrankRevolutions": 42, "lastCrankEventTime": 16384}"#,
                #"{"error": {"field": "cumulativeWheelRevolutions", "offset": 1, "reason": "truncated: needs 4 bytes, 2 left"}}"#,
                #"{"error": {"field": "input", "offset": 0, "reason": "invalid value: 'zz' is not hexadecimal"}}"#,
                #"{"flags": 2, "cumulativeCrankRevolutions": 42, "lastCrankEventTime": 16384}"#,
            ])
    }

    func testStandardInputOneValuePerLineSkippingBlanksAndComments() throws {
        let run = try cyclelog(
            ["decode", "heart-rate-measurement", "--json"], stdin: "# Polar H7\n16 73 10 02 0d 02\n\n0400\n")
        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(
            run.lines,
            [#"{"flags": 22, "heartRate": 115, "rrIntervals": [528, 525]}"#, #"{"flags": 4, "heartRate": 0}"#])
    }

    func testTheTableScalesEachFieldAndIsTheSameFromStandardInput() throws {
        // The same constructed value: flags 0x082C (bits 2, 3, 5, 11), 150 W, torque 800 × 1/32 N·m = 25 N·m, 27 crank
        // revolutions at 62912 × 1/1024 s = 61.4375 s, 57 kJ; keys padded to the longest one.
        let payload = "2C 08 96 00 20 03 1B 00 C0 F5 39 00"
        let expected = [
            "2C 08 96 00 20 03 1B 00 C0 F5 39 00  cycling-power-measurement (0x2A63)",
            "  flags                       0x82C  (accumulated torque, torque source crank, crank revolution data, "
                + "accumulated energy)",
            "  instantaneousPower          150 W",
            "  accumulatedTorque           25 N·m [raw 800]  (crank-based)",
            "  cumulativeCrankRevolutions  27 rev",
            "  lastCrankEventTime          61.4375 s [raw 62912]",
            "  accumulatedEnergy           57 kJ",
        ]
        XCTAssertEqual(try cyclelog(["decode", "2a63", payload]).lines, expected)
        XCTAssertEqual(try cyclelog(["decode", "2a63"], stdin: payload + "\n").lines, expected)
    }

    func testStandardInputIsAnsweredLineByLineAsItArrives() throws {
        // A pipe that pauses, as `btmon | … | cyclelog decode` does: each answer must come before the next line
        // is written (reading all input first would leave this waiting until the deadline).
        let (process, input, output, _) = try startCyclelog(["decode", "2a63", "--json"])
        defer { process.terminate() }
        // The GATT Specification Supplement's layout: flags 0, then the instantaneous power as sint16 (139 W, then -5 W).
        for (payload, expected) in [
            ("00008b00", #"{"flags": 0, "instantaneousPower": 139}"#),
            ("0000fbff", #"{"flags": 0, "instantaneousPower": -5}"#),
        ] {
            input.fileHandleForWriting.write(Data((payload + "\n").utf8))
            XCTAssertEqual(try readLine(from: output.fileHandleForReading, within: .seconds(10)), expected)
        }
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
    }

    func testStandardInputLinesEndInAnyWayAndControlCharactersAreShownEscaped() throws {
        // CRLF, a no-break space around a value, a last line without a newline; an escape sequence in a bad
        // line is shown as text, never sent to the terminal.
        let run = try cyclelog(
            ["decode", "2a63", "--json"], stdin: "00008b00\r\n\u{A0}0000fbff\u{A0}\n\u{1B}[2J\n00008b00")
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(
            run.lines,
            [
                #"{"flags": 0, "instantaneousPower": 139}"#, #"{"flags": 0, "instantaneousPower": -5}"#,
                #"{"error": {"field": "input", "offset": 0, "reason": "invalid value: '\u001b[' is not hexadecimal"}}"#,
                #"{"flags": 0, "instantaneousPower": 139}"#,
            ])
    }

    /// Input of many reads (each over a thousand lines, decoded in two halves on two cores): every line answered in
    /// its order, a value cut by the end of a read whole, escapes shown, and a bad line only in a read's second
    /// half still sets the status.
    func testManyLinesAreAnsweredInTheirOrderAndABadOneLateStillCounts() throws {
        let lines = "00008b00\r\n\u{A0}0000fbff\u{A0}\n\u{1B}[2J\n00008b00\n"
        let answers = [
            #"{"flags": 0, "instantaneousPower": 139}"#, #"{"flags": 0, "instantaneousPower": -5}"#,
            #"{"error": {"field": "input", "offset": 0, "reason": "invalid value: '\u001b[' is not hexadecimal"}}"#,
            #"{"flags": 0, "instantaneousPower": 139}"#,
        ]
        let run = try cyclelog(["decode", "2a63", "--json"], stdin: String(repeating: lines, count: 20_000))
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.lines, Array(Array(repeating: answers, count: 20_000).joined()))
        let late = try cyclelog(
            ["decode", "2a63", "--json"], stdin: String(repeating: "00008b00\n", count: 3_000) + "0z\n")
        XCTAssertEqual(late.status, 1)
        XCTAssertEqual(late.lines.count, 3_001)
        XCTAssertEqual(late.lines.last?.hasPrefix(#"{"error": {"field": "input""#), true)
    }

    struct NoAnswer: Error, CustomStringConvertible {
        let limit: Duration
        var description: String { "no answer within \(limit): decode waited for more input before writing" }
    }

    /// One line of `handle`'s output, waiting at most `limit` for it.
    private func readLine(from handle: FileHandle, within limit: Duration) throws -> String {
        let deadline = ContinuousClock.now + limit
        var line: [UInt8] = []
        while true {
            var ready = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let left = deadline - ContinuousClock.now
            guard left > .zero, poll(&ready, 1, Int32(left.components.seconds * 1000 + 1)) > 0 else {
                throw NoAnswer(limit: limit)
            }
            var byte: UInt8 = 0
            guard read(handle.fileDescriptor, &byte, 1) == 1 else { return String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    func testLogStyleBytesWithoutLeadingZeros() throws {
        // PowerTap P1 as SmartSpin2k printed it (%x): "20 0 b 0 a 6e d7 fc".
        let run = try cyclelog(["decode", "2a63", "--json", "20 0 b 0 a 6e d7 fc"])
        XCTAssertEqual(
            run.lines,
            [
                #"{"flags": 32, "instantaneousPower": 11, "cumulativeCrankRevolutions": 28170, "lastCrankEventTime": 64727}"#
            ])
    }

    func testTableAppliesUnits() throws {
        let run = try cyclelog(["decode", "2a63", "03 00 2C 01 62", "30 00 D2 04 FF FF FF FF 03 3F FF 07 E7 0F"])
        XCTAssertEqual(run.status, 0)
        XCTAssertTrue(run.output.contains("instantaneousPower  300 W"), run.output)
        XCTAssertTrue(run.output.contains("49% [raw 98]  (left pedal)"), run.output)
        // Wheel time 16131 at 1/2048 s = 7.876465 s; crank time 4071 at 1/1024 s = 3.975586 s.
        XCTAssertTrue(run.output.contains("7.876465 s [raw 16131]"), run.output)
        XCTAssertTrue(run.output.contains("3.975586 s [raw 4071]"), run.output)
    }

    func testTheTableWritesFractionsSignsListsAndEmptyFlagsAsNumbersAreWritten() throws {
        // Torque magnitudes are sint16 in 1/32 N·m (the GATT Specification Supplement): 1 → 0.03125, −1 → −0.03125. A CSC wheel event time of
        // 1/1024 s is 0.0009765625 s, shown to six decimals with its leading zeros. RR intervals of 1024 and 512
        // (1/1024 s) are 1 s and 0.5 s. Flags with no bit set read "none".
        let run = try cyclelog(["decode", "2a63", "80 00 00 00 01 00 FF FF", "00 00 96 00"])
        XCTAssertEqual(
            run.lines,
            [
                "80 00 00 00 01 00 FF FF  cycling-power-measurement (0x2A63)",
                "  flags                   0x80  (extreme torque magnitudes)",
                "  instantaneousPower      0 W",
                "  maximumTorqueMagnitude  0.03125 N·m [raw 1]",
                "  minimumTorqueMagnitude  -0.03125 N·m [raw -1]",
                "00 00 96 00  cycling-power-measurement (0x2A63)",
                "  flags               0x0  (none)",
                "  instantaneousPower  150 W",
            ])
        let wheel = try cyclelog(["decode", "2a5b"], stdin: "01 01 00 00 00 01 00\n")
        XCTAssertTrue(wheel.output.contains("  lastWheelEventTime          0.000977 s [raw 1]\n"), wheel.output)
        let heart = try cyclelog(["decode", "2a37", "10 3C 00 04 00 02"])
        XCTAssertTrue(heart.output.contains("  rrIntervals  [1, 0.5] s"), heart.output)
    }

    func testUnknownCharacteristicIsAUsageError() throws {
        let run = try cyclelog(["decode", "2a99", "00"])
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.errorOutput.contains("unknown characteristic '2a99'"), run.errorOutput)
    }
}
