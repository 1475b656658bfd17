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
        XCTAssertTrue(run.errorOutput.contains("jumped.journal: line 1003: out of time order"), run.errorOutput)
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
        XCTAssertTrue(run.errorOutput.contains("line 1003: the clock leapt 12 days forward"), run.errorOutput)
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
            XCTAssertTrue(
                run.errorOutput.contains("bit\(bit).btsnoop: record 27741: "), "bit \(bit): " + run.errorOutput)
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
        let stored = try cyclelog([
            "replay", "--db", db, rides.appendingPathComponent("sweatpy_2020-06-01-16-52-40.journal").path,
        ])
        XCTAssertEqual(stored.status, 0, stored.errorOutput)
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

    // MARK: Text from outside (item 13), resources (item 14), small ones (item 15)

    func testControlCharactersFromNamesAndMarkersAreShownEscapedAndKeptExactly() throws {
        let dir = try folder()
        let journal = dir.appendingPathComponent("evil.journal")
        // A name that retitles the terminal, a marker that clears the screen and holds a NUL, a sensor whose
        // advertised name (over the air) carries an escape sequence.
        let lines = [
            "# cyclelog journal 1",
            "2024-05-01T08:00:00.000000Z start name=\u{1B}]0;pwned\u{07}Evil",
            "2024-05-01T08:00:00.100000Z connect C0:11:22:33:44:55 Meter\u{1B}[2J",
            "2024-05-01T08:00:00.500000Z notify C0:11:22:33:44:55 2a63 0000c800",
            "2024-05-01T08:00:01.000000Z marker a\u{00}b\u{1B}[2J",
            "2024-05-01T08:00:02.000000Z notify C0:11:22:33:44:55 2a63 0000c800",
            "2024-05-01T08:00:03.000000Z end",
        ]
        try Data(lines.joined(separator: "\n").utf8).write(to: journal)
        let db = dir.appendingPathComponent("r.sqlite").path
        let replay = try cyclelog(["replay", "--db", db, journal.path])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        let shown = [
            replay, try cyclelog(["show", "last", "--db", db]), try cyclelog(["list", "--db", db]),
            try cyclelog(["show", "last", "--journal", "--db", db]),
        ]
        for run in shown {
            XCTAssertFalse(
                (run.output + run.errorOutput).unicodeScalars.contains {
                    $0.value == 0x1B || $0.value == 0 || $0.value == 7
                },
                run.output)
        }
        XCTAssertTrue(shown[1].output.contains(#""\x1B]0;pwned\x07Evil""#), shown[1].output)
        XCTAssertTrue(shown[1].output.contains(#"Meter\x1B[2J"#), shown[1].output)
        let stored = shown[3].output
        XCTAssertTrue(stored.contains(#"marker a\x00b\x1B[2J"#), stored)
        // The journal reads back to exactly the same text (the NUL and what follows it are kept).
        let again = dir.appendingPathComponent("again.journal")
        try Data(stored.utf8).write(to: again)
        let other = dir.appendingPathComponent("o.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", other, again.path]).status, 0)
        XCTAssertEqual(try cyclelog(["show", "last", "--journal", "--db", other]).output, stored)
    }

    func testWhatTheRiderTypedIsQuotedEscapedInEveryRefusal() throws {
        // Usage mistakes that quote the word typed: refused before any bus is reached, the escape sequences shown,
        // never sent to the terminal (a clear screen, a bell, red text).
        let typed: [[String]] = [
            ["target", "250\u{1B}[2J\u{07}"], ["trainer", "ERG\u{1B}[31m"], ["extend", "1m\u{1B}[2J"],
            ["grade", "4\u{1B}[2J"],
        ]
        for arguments in typed {
            let run = try cyclelog(arguments + ["--control-bus", "unix:path=/nonexistent"])
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.errorOutput)")
            XCTAssertFalse(
                run.errorOutput.unicodeScalars.contains { $0.value == 0x1B || $0.value == 7 }, run.errorOutput)
            XCTAssertTrue(run.errorOutput.contains(#"\x1B["#), run.errorOutput)
        }
        // A negative number where none is taken is answered for what the command does.
        let resistance = try cyclelog(["resistance", "-5"])
        XCTAssertEqual(resistance.status, 64)
        XCTAssertTrue(
            resistance.errorOutput.contains(
                "'-5' is not a value cyclelog takes: a resistance is a share of the trainer's range"),
            resistance.errorOutput)
        let extend = try cyclelog(["extend", "-60"])
        XCTAssertTrue(extend.errorOutput.contains("extend adds time to the step"), extend.errorOutput)
        XCTAssertFalse(extend.errorOutput.contains("workouts are numbered"), extend.errorOutput)
    }

    func testAHugeFileThatIsNotACaptureIsRefusedAtOnceAndABadLineIsNotEchoedWhole() throws {
        let dir = try folder()
        let huge = dir.appendingPathComponent("huge.bin")
        // 512 MB of zeros without writing them: a sparse file.
        XCTAssertTrue(FileManager.default.createFile(atPath: huge.path, contents: nil))
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 512 << 20)
        try handle.close()
        let started = Date()
        let run = try cyclelog(["replay", "--db", dir.appendingPathComponent("r.sqlite").path, huge.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errorOutput.contains("is neither a btsnoop capture"), run.errorOutput)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "the whole file was read before refusing it")
        // One bad line of 1 MB among good ones: named, cut, the rest of the ride kept.
        let journal = dir.appendingPathComponent("long.journal")
        let good = try String(
            contentsOf: rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal"), encoding: .utf8)
        let bad = "2021-03-18T13:02:40.000000Z notify C0:11:22:33:44:55 2a63 " + String(repeating: "zz", count: 500_000)
        var lines = good.split(separator: "\n").map(String.init)
        lines.insert(bad, at: 40)
        try lines.joined(separator: "\n").write(to: journal, atomically: true, encoding: .utf8)
        let long = try cyclelog(["replay", "--db", dir.appendingPathComponent("l.sqlite").path, journal.path])
        XCTAssertEqual(long.status, 0, String(long.errorOutput.prefix(500)))
        XCTAssertTrue(long.errorOutput.contains("line 41"), String(long.errorOutput.prefix(500)))
        XCTAssertLessThan(long.errorOutput.utf8.count, 5000)
    }

    func testACaptureFromAPipeOrStandardInputIsReplayed() throws {
        let dir = try folder()
        let file = rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal").path
        let reference = try reference("sweatpy_6449921903_ACTIVITY.journal")
        let piped = try cyclelog(
            ["replay", "--json", "--db", dir.appendingPathComponent("p.sqlite").path, "-"],
            stdin: try String(contentsOfFile: file, encoding: .utf8))
        XCTAssertEqual(piped.status, 0, piped.errorOutput)
        assertSameRide(try summary(piped), reference)
    }

    func testSmallOnesGoalsDatesAndAutoPause() throws {
        let dir = try folder()
        let db = dir.appendingPathComponent("r.sqlite").path
        // A goal that cannot be one keeps the start (and the ride's name) and says so.
        let journal = dir.appendingPathComponent("goal.journal")
        try """
        # cyclelog journal 1
        2024-05-01T08:00:00.000000Z start goal=infh name=Hill repeats
        2024-05-01T08:00:00.500000Z notify C0:11:22:33:44:55 2a63 0000c800
        2024-05-01T08:00:02.000000Z notify C0:11:22:33:44:55 2a63 0000c800
        2024-05-01T08:00:03.000000Z end
        """.write(to: journal, atomically: true, encoding: .utf8)
        let run = try cyclelog(["replay", "--json", "--db", db, journal.path])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("'goal=infh' is not a goal"), run.errorOutput)
        XCTAssertEqual(try summary(run)["name"] as? String, "Hill repeats")
        // 30 February is no date.
        let ftp = try cyclelog(["ftp", "set", "250", "--from", "2024-02-30", "--db", db])
        XCTAssertNotEqual(ftp.status, 0)
        XCTAssertTrue(ftp.errorOutput.contains("2024-02-30"), ftp.errorOutput)
        XCTAssertEqual(try cyclelog(["ftp", "set", "250", "--from", "2024-02-29", "--db", db]).status, 0)
        // --auto-pause on a capture already stored without it stores it again, as a new version.
        let file = rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal").path
        XCTAssertEqual(try cyclelog(["replay", "--db", db, file]).status, 0)
        let paused = try cyclelog(["replay", "--json", "--auto-pause", "--db", db, file])
        XCTAssertEqual(paused.status, 0, paused.errorOutput)
        XCTAssertFalse(paused.errorOutput.contains("already stored"), paused.errorOutput)
        XCTAssertEqual(try summary(paused)["version"] as? Int, 2)
        // A negative number is named, not reported as a missing argument.
        let negative = try cyclelog(["show", "-1", "--db", db])
        XCTAssertEqual(negative.status, 64)
        XCTAssertTrue(negative.errorOutput.contains("'-1' is not a value cyclelog takes"), negative.errorOutput)
        XCTAssertFalse(negative.errorOutput.contains("Missing expected argument"), negative.errorOutput)
        // A folder with no ride in it is an error, not a silent success; runtime errors carry no usage text.
        let empty = dir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let nothing = try cyclelog(["import", "--db", db, empty.path])
        XCTAssertEqual(nothing.status, 1)
        XCTAssertTrue(nothing.errorOutput.contains("holds no .fit file"), nothing.errorOutput)
        for arguments in [
            ["import", "--db", db, empty.path], ["show", "99", "--db", db], ["export", "99", "--db", db],
        ] {
            let failed = try cyclelog(arguments)
            XCTAssertEqual(failed.status, 1, arguments.joined(separator: " "))
            XCTAssertFalse(failed.errorOutput.contains("Usage:"), failed.errorOutput)
        }
    }

    // MARK: Output files (item 10)

    func testExportAndChartWriteThroughPipesAndLinksAndIntoStandardOutput() throws {
        let dir = try folder()
        let db = dir.appendingPathComponent("r.sqlite").path
        let file = rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal").path
        XCTAssertEqual(try cyclelog(["replay", "--db", db, file]).status, 0)
        // A link to a file not yet made: written through, the link kept.
        let link = dir.appendingPathComponent("latest.fit").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "ride-1.fit")
        XCTAssertEqual(try cyclelog(["export", "last", "-o", link, "--db", db]).status, 0)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: link), "ride-1.fit")
        XCTAssertGreaterThan(try Data(contentsOf: dir.appendingPathComponent("ride-1.fit")).count, 1000)
        // A named pipe: read by another process, still a pipe afterwards.
        let fifo = dir.appendingPathComponent("ride.pipe").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/bin/sh")
        reader.arguments = ["-c", "wc -c < '\(fifo)'"]
        let count = Pipe()
        reader.standardOutput = count
        try reader.run()
        XCTAssertEqual(try cyclelog(["export", "last", "--format", "csv", "-o", fifo, "--db", db]).status, 0)
        reader.waitUntilExit()
        let bytes =
            Int(
                String(decoding: count.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        XCTAssertGreaterThan(bytes, 1000)
        var status = stat()
        XCTAssertEqual(stat(fifo, &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFIFO)
        // Standard output, and the format from the file's ending.
        let csv = try cyclelog(["export", "last", "-o", "-", "--format", "csv", "--db", db])
        XCTAssertTrue(csv.output.hasPrefix("time_utc,"), String(csv.output.prefix(80)))
        let svg = try cyclelog(["chart", "last", "-o", "-", "--db", db])
        XCTAssertTrue(svg.output.hasPrefix("<?xml"), String(svg.output.prefix(80)))
        let byEnding = dir.appendingPathComponent("ride.csv").path
        XCTAssertEqual(try cyclelog(["export", "last", "-o", byEnding, "--db", db]).status, 0)
        XCTAssertTrue(try String(contentsOfFile: byEnding, encoding: .utf8).hasPrefix("time_utc,"))
        // A folder is not a file to replace.
        let folderRun = try cyclelog(["export", "last", "-o", dir.path + "/", "--format", "csv", "--db", db])
        XCTAssertEqual(folderRun.status, 0, folderRun.errorOutput)
        try FileManager.default.createDirectory(
            atPath: dir.appendingPathComponent("x.fit").path, withIntermediateDirectories: true)
        let onFolder = try cyclelog(["export", "last", "-o", dir.appendingPathComponent("x.fit").path, "--db", db])
        // A local file it was given and cannot use (Docs/reference/exit-status.md): 2, as a read-only one is.
        XCTAssertEqual(onFolder.status, 2)
        XCTAssertTrue(onFolder.errorOutput.contains("is a folder"), onFolder.errorOutput)
        XCTAssertFalse(onFolder.errorOutput.contains("NSCocoaErrorDomain"), onFolder.errorOutput)
    }
}
