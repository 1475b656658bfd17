import Foundation
import TestSupport
import XCTest

/// Damaged files and hostile surroundings: each test reproduces what once crashed, hung, lost a ride or harmed
/// something that is not cyclelog's, and checks the rider gets a clear word and keeps what can be kept.
final class BadInputTests: XCTestCase {
    let rides = fixturesFolder.appendingPathComponent("rides")

    func folder() throws -> URL {
        URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
    }

    func summary(_ run: Run) throws -> [String: Any] {
        try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any],
            run.output + run.errorOutput)
    }

    /// The ride's own figures, replayed from the unmodified file: what a damaged copy must still give.
    func reference(_ file: String) throws -> [String: Any] {
        let run = try cyclelog([
            "replay", "--json", "--db", try temporaryDatabase(), rides.appendingPathComponent(file).path,
        ])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        return try summary(run)
    }

    func assertSameRide(
        _ damaged: [String: Any], _ reference: [String: Any], file: StaticString = #filePath, line: UInt = #line
    ) {
        for key in ["elapsedSeconds", "movingSeconds", "workJoules", "normalizedPowerWatts", "averagePowerWatts"] {
            XCTAssertEqual(
                damaged[key] as? Double ?? -1, reference[key] as? Double ?? -2, accuracy: 0.001, key, file: file,
                line: line)
        }
    }

    // MARK: Clocks that jump (items 1, 2)

    func testAJournalLineDatedAYearLaterIsNamedAndLeftOut() throws {
        let dir = try folder()
        let original = try String(
            contentsOf: rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal"), encoding: .utf8)
        var lines = original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.insert("2022-03-18T13:05:00.000000Z notify C0:11:22:33:44:55 2a63 0000c800", at: 1002)
        let jumped = dir.appendingPathComponent("jumped.journal")
        try lines.joined(separator: "\n").write(to: jumped, atomically: true, encoding: .utf8)
        let run = try cyclelog(["replay", "--json", "--db", dir.appendingPathComponent("a.sqlite").path, jumped.path])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("jumped.journal: #1003: out of time order"), run.errorOutput)
        assertSameRide(try summary(run), try reference("sweatpy_6449921903_ACTIVITY.journal"))

        // A final line dated 9999: the ride ends where its events end.
        let late = dir.appendingPathComponent("late.journal")
        try (original + "9999-12-31T23:59:59.999999Z end\n").write(to: late, atomically: true, encoding: .utf8)
        let lateRun = try cyclelog(["replay", "--json", "--db", dir.appendingPathComponent("b.sqlite").path, late.path])
        XCTAssertEqual(lateRun.status, 0, lateRun.errorOutput)
        XCTAssertTrue(lateRun.errorOutput.contains("a clock fault"), lateRun.errorOutput)
        assertSameRide(try summary(lateRun), try reference("sweatpy_6449921903_ACTIVITY.journal"))
    }

    func testTwelveDaysOfClockStepAreJoinedNotStoredAsATwelveDayRide() throws {
        let dir = try folder()
        let original = try String(
            contentsOf: rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal"), encoding: .utf8)
        // Every event line from line 1003 on dated 12 days later, as a wall clock stepped mid-ride would give.
        var lines = original.split(separator: "\n").map(String.init)
        for index in 1002..<lines.count where lines[index].hasPrefix("2021-03-18") {
            lines[index] = "2021-03-30" + lines[index].dropFirst(10)
        }
        let stepped = dir.appendingPathComponent("stepped.journal")
        try lines.joined(separator: "\n").write(to: stepped, atomically: true, encoding: .utf8)
        let run = try cyclelog(["replay", "--json", "--db", dir.appendingPathComponent("a.sqlite").path, stepped.path])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("#1003: the clock leapt 12 days forward"), run.errorOutput)
        let reference = try reference("sweatpy_6449921903_ACTIVITY.journal")
        // Joined at the jump: the ride is as long as the original, less the one step between lines 1002 and 1003.
        let elapsed = try XCTUnwrap(try summary(run)["elapsedSeconds"] as? Double)
        XCTAssertEqual(elapsed, reference["elapsedSeconds"] as? Double ?? 0, accuracy: 1.0)
    }

    func testAFlippedTimestampBitInACaptureLosesOneRecordNotTheRestOfTheRide() throws {
        let dir = try folder()
        let file = "sweatpy_4078723797.btsnoop"
        let reference = try reference(file)
        let bytes = try [UInt8](Data(contentsOf: rides.appendingPathComponent(file)))
        for bit in [32, 48, 63] {
            // Record 27741's timestamp (the record header's last 8 octets, big-endian).
            var damaged = bytes
            var offset = 16
            for _ in 1..<27741 {
                let included =
                    Int(damaged[offset + 4]) << 24 | Int(damaged[offset + 5]) << 16
                    | Int(damaged[offset + 6]) << 8 | Int(damaged[offset + 7])
                offset += 24 + included
            }
            damaged[offset + 16 + (63 - bit) / 8] ^= UInt8(1 << (bit % 8))
            let path = dir.appendingPathComponent("bit\(bit).btsnoop")
            try Data(damaged).write(to: path)
            let run = try cyclelog([
                "replay", "--json", "--db", dir.appendingPathComponent("\(bit).sqlite").path, path.path,
            ])
            XCTAssertEqual(run.status, 0, "bit \(bit): " + run.errorOutput)
            XCTAssertTrue(run.errorOutput.contains("bit\(bit).btsnoop: #27741: "), "bit \(bit): " + run.errorOutput)
            assertSameRide(try summary(run), reference)
        }
    }

    func testReversedAndShuffledJournalsAreRefusedByName() throws {
        let dir = try folder()
        let original = try String(
            contentsOf: rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal"), encoding: .utf8)
        let lines = original.split(separator: "\n").map(String.init)
        let header = lines.filter { $0.hasPrefix("#") }
        let body = lines.filter { !$0.hasPrefix("#") }
        var generator = SystemRandomNumberGenerator()
        for (name, order) in [("reversed", Array(body.reversed())), ("shuffled", body.shuffled(using: &generator))] {
            let path = dir.appendingPathComponent("\(name).journal")
            try (header + order).joined(separator: "\n").write(to: path, atomically: true, encoding: .utf8)
            let db = dir.appendingPathComponent("\(name).sqlite").path
            let run = try cyclelog(["replay", "--db", db, path.path])
            XCTAssertEqual(run.status, 1, name + ": " + run.output)
            XCTAssertTrue(run.errorOutput.contains("\(name).journal: its times are not in order"), run.errorOutput)
            XCTAssertTrue(run.errorOutput.contains("nothing was stored"), run.errorOutput)
            let list = try cyclelog(["list", "--json", "--db", db])
            XCTAssertEqual(list.output.trimmingCharacters(in: .whitespacesAndNewlines), "[]")
        }
    }

    // MARK: Output that cannot be written (item 7)

    func testAStandardErrorThatCannotBeWrittenNeverCrashes() throws {
        let binary = try cyclelogBinary().path
        let db = try temporaryDatabase()
        for redirection in ["2>&-", "2>/dev/full", "2>&1 >/dev/null | true"] {
            // SIGPIPE ignored, as systemd starts services; the reader of the last one is gone before cyclelog writes.
            let script =
                "trap '' PIPE; (sleep 0.3; exec '\(binary)' show 99 --db '\(db)') \(redirection); "
                + "echo \"status ${PIPESTATUS[0]}\""
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", script]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            // 1: the workout does not exist. A trap would be 132 (SIGILL) or 133 (SIGTRAP).
            XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), "status 1", redirection)
        }
    }
}
