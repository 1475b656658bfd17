import Foundation
import TestSupport
import WorkoutStore
import XCTest

/// `cyclelog replay`, `list`, `show`, `rebuild` and `delete` on the real-ride fixtures, checked against values
/// from the independent oracle and the devices' own FIT sessions (Fixtures/rides/references.json).
final class ReplayCommandTests: XCTestCase {
    let rides = fixturesFolder.appendingPathComponent("rides")

    struct Reference: Decodable {
        var normalizedPowerWatts: Double
        var workJoules: Double
        var powerCurveWatts: [String: Double?]
        var distanceMeters: Double
        var timerSeconds: Double
    }

    func references() throws -> [String: Reference] {
        try JSONDecoder().decode(
            [String: Reference].self, from: Data(contentsOf: rides.appendingPathComponent("references.json")))
    }

    func replayJSON(_ file: String, db: String, extra: [String] = []) throws -> [String: Any] {
        let run = try cyclelog(["replay", "--json", "--db", db, rides.appendingPathComponent(file).path] + extra)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        let object = try JSONSerialization.jsonObject(with: Data(run.output.utf8))
        return try XCTUnwrap(object as? [String: Any], run.output)
    }

    /// `CYCLELOG_STAGES=1` marks each stage of a replay on standard error, in the order they must come (the two
    /// cores' marks only after what each waits for); without it, nothing is added to the output.
    func testAReplayMarksItsStagesOnlyWhenAsked() throws {
        let file = rides.appendingPathComponent("sweatpy_2020-06-01-16-52-40.journal").path
        let marked = try cyclelog(
            ["replay", "--db", try temporaryDatabase(), file], environment: ["CYCLELOG_STAGES": "1"])
        XCTAssertEqual(marked.status, 0, marked.errorOutput)
        let stages = marked.errorOutput.split(separator: "\n").filter { $0.hasPrefix("stage ") }.map {
            $0.split(separator: " ")
        }
        let names = stages.map { String($0[1]) }
        for (before, after) in [
            ("parsed", "capture-read"), ("capture-read", "times-checked"), ("database-open", "times-checked"),
            ("times-checked", "digests"), ("times-checked", "workout-built"), ("digests", "journal-written"),
            ("workout-built", "stored"), ("journal-written", "stored"), ("stored", "printed"),
        ] {
            let first = try XCTUnwrap(names.firstIndex(of: before), names.joined(separator: " "))
            let second = try XCTUnwrap(names.firstIndex(of: after), names.joined(separator: " "))
            XCTAssertLessThan(first, second, "\(before) before \(after)")
        }
        XCTAssertEqual(stages.filter { Double($0[2]) ?? 0 > 0 }.count, stages.count, marked.errorOutput)
        let plain = try cyclelog(["replay", "--db", try temporaryDatabase(), file])
        XCTAssertEqual(plain.status, 0, plain.errorOutput)
        XCTAssertFalse(plain.errorOutput.contains("stage "), plain.errorOutput)
        XCTAssertEqual(plain.output, marked.output)
    }

    func testListIsNarrowedByDateAndText() throws {
        let db = try temporaryDatabase()
        let journals = try FileManager.default.contentsOfDirectory(atPath: rides.path).filter {
            $0.hasSuffix(".journal")
        }
        XCTAssertEqual(
            try cyclelog(["replay", "--db", db] + journals.map { rides.appendingPathComponent($0).path }).status, 0)
        func listed(_ options: [String]) throws -> [[String: Any]] {
            let run = try cyclelog(["list", "--json", "--db", db] + options)
            XCTAssertEqual(run.status, 0, run.errorOutput)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]])
        }
        func starts(_ entries: [[String: Any]]) -> [String] { entries.compactMap { $0["start"] as? String } }
        let all = try listed([])
        XCTAssertEqual(all.count, journals.count)
        // Start times are ISO 8601 in UTC: as strings they sort as times do.
        XCTAssertEqual(starts(try listed(["--since", "2019-09-20"])), starts(all).filter { $0 >= "2019-09-20" })
        XCTAssertEqual(starts(try listed(["--until", "2019-09-20"])), starts(all).filter { $0 < "2019-09-21" })
        XCTAssertEqual(
            starts(try listed(["--since", "2019-09-20T14:10:04Z", "--until", "2021-03-18T13:02:33Z"])),
            starts(all).filter { $0 >= "2019-09-20T14:10:04Z" && $0 <= "2021-03-18T13:02:33Z" })
        let edge = try listed(["--search", "EDGE810"])
        XCTAssertEqual(edge.count, 1)
        XCTAssertTrue((edge.first?["source"] as? String)?.contains("Edge810") ?? false)
        let none = try cyclelog(["list", "--db", db, "--search", "no such ride"])
        XCTAssertTrue(none.output.contains("No workouts match"), none.output)
        let bad = try cyclelog(["list", "--db", db, "--since", "yesterday"])
        XCTAssertEqual(bad.status, 64, bad.errorOutput)
        XCTAssertTrue(bad.errorOutput.contains("--since takes a date"), bad.errorOutput)
    }

    /// 21 one-minute rides, one a day from 1 January 2024: `list` shows the newest 20 and says how many there are,
    /// `--all` and a date range every one they take; `--json` says it on standard error, the array being a page.
    func testListShowsAPageAndSaysHowToSeeEveryRide() throws {
        let db = try temporaryDatabase()
        let folder = URL(fileURLWithPath: db).deletingLastPathComponent()
        let files = try (1...21).map { day in
            let file = folder.appendingPathComponent("day\(day).journal")
            let date = String(format: "2024-01-%02d", day)
            try Journals.power(Array(repeating: 150, count: 60), date: date).write(
                to: file, atomically: true, encoding: .utf8)
            return file.path
        }
        XCTAssertEqual(try cyclelog(["replay", "--db", db] + files).status, 0)
        func rows(_ output: String) -> [String] {
            output.split(separator: "\n").map(String.init).filter { $0.hasPrefix(" ") && !$0.contains("start (") }
        }
        let page = try cyclelog(["list", "--db", db])
        XCTAssertEqual(page.status, 0, page.errorOutput)
        XCTAssertEqual(
            rows(page.output).map { String($0.split(separator: " ")[0]) }, (2...21).reversed().map { "\($0)" })
        XCTAssertTrue(
            page.output.hasSuffix(
                "\nThe newest 20 of 21 workouts: `cyclelog list --all` shows every one, `--since 2024-05-01` those "
                    + "from a date on.\n"), page.output)
        for options in [["--all"], ["--since", "2024-01-01"]] {
            let every = try cyclelog(["list", "--db", db] + options)
            XCTAssertEqual(rows(every.output).count, 21, every.output)
            XCTAssertFalse(every.output.contains("The newest"), every.output)
        }
        let json = try cyclelog(["list", "--json", "--db", db])
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        XCTAssertEqual(entries.compactMap { $0["id"] as? Int }, Array((2...21).reversed()))
        XCTAssertTrue(json.errorOutput.contains("The newest 20 of 21 workouts"), json.errorOutput)
    }

    func testARenamedRideIsShownListedAndRebuiltByItsNewName() throws {
        let db = try temporaryDatabase()
        let first = try replayJSON("sweatpy_4078723797.journal", db: db)
        let run = try cyclelog(["rename", "last", "  Sunday loop ", "--db", db])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertEqual(run.output, "Workout 1 is now named Sunday loop.\n")
        func shown() throws -> [String: Any] {
            let show = try cyclelog(["show", "last", "--json", "--db", db])
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any])
        }
        XCTAssertEqual(try shown()["name"] as? String, "Sunday loop")
        XCTAssertEqual(try shown()["version"] as? Int, (first["version"] as? Int).map { $0 + 1 })
        XCTAssertTrue(try cyclelog(["list", "--db", db, "--search", "sunday"]).output.contains("Sunday loop"))
        XCTAssertEqual(try cyclelog(["rebuild", "last", "--db", db]).status, 0)
        XCTAssertEqual(try shown()["name"] as? String, "Sunday loop")
        // The content is the recording's: a rename changes the name and the version, not the digest.
        XCTAssertEqual(try shown()["contentDigest"] as? String, first["contentDigest"] as? String)
        let empty = try cyclelog(["rename", "last", " ", "--db", db])
        XCTAssertEqual(empty.status, 64)
        XCTAssertTrue(empty.errorOutput.contains("a name takes 1 to 200 characters"), empty.errorOutput)
        XCTAssertEqual(try cyclelog(["rename", "7", "x", "--db", db]).status, 1)
        XCTAssertEqual(try shown()["name"] as? String, "Sunday loop")
    }

    func testPausedRidesKeepTheTimerTimeOfTheDevice() throws {
        let references = try references()
        for ride in ["sweatpy_2020-06-01-16-52-40", "sweatpy_6449921903_ACTIVITY"] {
            let summary = try replayJSON("\(ride).journal", db: try temporaryDatabase())
            let moving = try XCTUnwrap(summary["movingSeconds"] as? Double)
            // Whole seconds of pause in the journal against the device's fractional timer.
            XCTAssertEqual(moving, try XCTUnwrap(references[ride]).timerSeconds, accuracy: 1, ride)
            let events = try XCTUnwrap(summary["events"] as? [[String: Any]]).compactMap { $0["type"] as? String }
            XCTAssertEqual(events.filter { $0 == "pause" }.count, events.filter { $0 == "resume" }.count, ride)
            XCTAssertGreaterThan(events.filter { $0 == "pause" }.count, 0, ride)
        }
    }

    func testReplayingTwiceGivesOneWorkoutAndTheSameBytes() throws {
        let db = try temporaryDatabase()
        let file = rides.appendingPathComponent("sweatpy_6449921903_ACTIVITY.journal").path
        let first = try cyclelog(["replay", "--json", "--db", db, file])
        let second = try cyclelog(["replay", "--json", "--db", db, file])
        XCTAssertEqual(first.status, 0, first.errorOutput)
        XCTAssertEqual(first.output, second.output)
        let list = try cyclelog(["list", "--json", "--db", db])
        let entries = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]])
        XCTAssertEqual(entries.count, 1)
        // A fresh database gives the same summary too, byte for byte.
        let fresh = try cyclelog(["replay", "--json", "--db", try temporaryDatabase(), file])
        XCTAssertEqual(fresh.output, first.output)
        // `show` prints what `replay` printed.
        XCTAssertEqual(try cyclelog(["show", "last", "--json", "--db", db]).output, first.output)
    }

    func testJournalReplayJournalIsTheIdentity() throws {
        let db = try temporaryDatabase()
        let file = rides.appendingPathComponent("sweatpy_2020-06-01-16-52-40.journal")
        XCTAssertEqual(try cyclelog(["replay", "--db", db, file.path]).status, 0)
        let stored = try cyclelog(["show", "last", "--journal", "--db", db])
        let original = try String(contentsOf: file, encoding: .utf8)
        let events = { (text: String) in text.split(separator: "\n").filter { !$0.hasPrefix("#") } }
        XCTAssertEqual(events(stored.output), events(original))
        XCTAssertGreaterThan(events(original).count, 800)
    }

    func testTheBtsnoopAndTheJournalOfARideGiveTheSameWorkout() throws {
        let ride = "fitparse_Edge810-Vector-2013-08-16-15-35-10"
        let fromCapture = try replayJSON("\(ride).btsnoop", db: try temporaryDatabase())
        let fromJournal = try replayJSON("\(ride).journal", db: try temporaryDatabase())
        // The capture has no start button, so its seconds are counted from the first notification: the 1-s bins
        // fall differently and only whole-ride figures agree.
        for key in ["normalizedPowerWatts", "workJoules", "distanceMeters", "averageHeartRateBPM"] {
            XCTAssertEqual(fromCapture[key] as? Double ?? -1, fromJournal[key] as? Double ?? -2, accuracy: 0.5, key)
        }
    }

    /// A file with events but no measurement stores no ride, and leaves no deletion for cyclelog-sync to push:
    /// there never was a ride.
    func testAReplayWithoutAMeasurementLeavesNoDeletion() throws {
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let db = folder.appendingPathComponent("rides.sqlite").path
        let empty = folder.appendingPathComponent("connected-only.journal")
        try """
        # cyclelog journal 1
        2024-05-01T06:30:00.000000Z connect C0:11:22:33:44:55 Power meter
        2024-05-01T06:30:05.000000Z disconnect C0:11:22:33:44:55

        """.write(to: empty, atomically: true, encoding: .utf8)
        let run = try cyclelog(["replay", "--db", db, empty.path])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errorOutput.contains("no measurement"), run.errorOutput)
        let store = try WorkoutStore(path: db, access: .read)
        XCTAssertEqual(try store.list().count, 0)
        XCTAssertEqual(try store.tombstones(pendingOnly: false).map(\.syncIdentifier), [])
    }

    func testBadFilesAreNamedWithTheRecordAndGoodRecordsAreStillUsed() throws {
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let db = folder.appendingPathComponent("rides.sqlite").path
        // A capture cut in the middle of a record: the records before the cut still make a workout.
        let full = try Data(contentsOf: rides.appendingPathComponent("sweatpy_4078723797.btsnoop"))
        let cut = folder.appendingPathComponent("cut.btsnoop")
        try full.prefix(200_000).write(to: cut)
        let run = try cyclelog(["replay", "--json", "--db", db, cut.path])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("cut.btsnoop: record "), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("the file ends inside"), run.errorOutput)
        // Not a capture at all, and an unknown datalink: refused, named, exit status 1, nothing stored.
        let text = folder.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: text)
        let refused = try cyclelog(["replay", "--db", db, text.path])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.errorOutput.contains("notes.txt: is neither a btsnoop capture"), refused.errorOutput)
        let simulator = folder.appendingPathComponent("simulator.btsnoop")
        try Data([0x62, 0x74, 0x73, 0x6E, 0x6F, 0x6F, 0x70, 0, 0, 0, 0, 1, 0, 0, 0x07, 0xD2]).write(to: simulator)
        let unknown = try cyclelog(["replay", "--db", db, simulator.path])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.errorOutput.contains("datalink 2002 is not supported"), unknown.errorOutput)
        let list = try cyclelog(["list", "--json", "--db", db])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [Any])?.count, 1)
    }

    func testAMalformedNotificationInAJournalIsNamedAndSkipped() throws {
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let journal = folder.appendingPathComponent("ride.journal")
        try """
        # cyclelog journal 1
        2024-05-01T08:00:00.000000Z notify C0:11:22:33:44:55 2a63 2000c8000000000
        2024-05-01T08:00:00.500000Z notify C0:11:22:33:44:55 2a63 0000c800
        2024-05-01T08:00:01.000000Z notify C0:11:22:33:44:55 2a63 0000
        2024-05-01T08:00:02.000000Z notify C0:11:22:33:44:55 2a63 0000c800
        """.write(to: journal, atomically: true, encoding: .utf8)
        let run = try cyclelog([
            "replay", "--json", "--db", folder.appendingPathComponent("r.sqlite").path, journal.path,
        ])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("ride.journal: line 2: notify: the value"), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("ride.journal: line 4: "), run.errorOutput)
        XCTAssertTrue(run.errorOutput.contains("instantaneousPower"), run.errorOutput)
        XCTAssertTrue(run.output.contains(#""averagePowerWatts": 200"#), run.output)
        // One notification too short for a Cycling Power Measurement (line 4) is the ride's one problem; the line
        // that is not hex never became an event.
        XCTAssertTrue(run.output.contains(#""problemCount": 1"#), run.output)
    }

    func testAKilledReplayLeavesAHealthyDatabaseAndARecoverableWorkout() throws {
        let db = try temporaryDatabase()
        let file = rides.appendingPathComponent("sweatpy_4078723797.journal").path
        // Each transaction is followed by a 1-s pause (the ride's journal is four pieces), so the kill lands after the
        // first piece and seconds before the last transaction.
        let (process, _, _, _) = try startCyclelog(
            ["replay", "--db", db, file], environment: ["CYCLELOG_TEST_PAUSE_PER_CHUNK_MS": "1000"])
        let deadline = Date().addingTimeInterval(60)
        var unfinished: [String: Any]?
        while Date() < deadline, unfinished == nil {
            usleep(200_000)
            let list = try cyclelog(["list", "--json", "--db", db])
            let entries = (try? JSONSerialization.jsonObject(with: Data(list.output.utf8))) as? [[String: Any]] ?? []
            if let entry = entries.first, entry["status"] as? String == "recording", entry["elapsedSeconds"] is NSNull {
                // Wait for the first piece to land before killing.
                usleep(500_000)
                unfinished = entry
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)
        let entry = try XCTUnwrap(unfinished, "the replay never showed up as unfinished")
        let id = try XCTUnwrap(entry["id"] as? Int)

        XCTAssertEqual(try WorkoutStore(path: db).integrityCheck(), "ok")
        let listed = try cyclelog(["list", "--db", db])
        XCTAssertTrue(listed.output.contains("[unfinished]"), listed.output)
        let show = try cyclelog(["show", String(id), "--db", db])
        XCTAssertEqual(show.status, 1)
        XCTAssertTrue(show.errorOutput.contains("rebuild \(id)"), show.errorOutput)

        // Recover: the stored part of the journal becomes a complete, shorter workout.
        let rebuilt = try cyclelog(["rebuild", String(id), "--json", "--db", db])
        XCTAssertEqual(rebuilt.status, 0, rebuilt.errorOutput)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(rebuilt.output.utf8)) as? [String: Any])
        let elapsed = try XCTUnwrap(summary["elapsedSeconds"] as? Double)
        XCTAssertGreaterThan(elapsed, 60)
        XCTAssertLessThan(elapsed, 8356)
        XCTAssertEqual(summary["version"] as? Int, 2)
        XCTAssertEqual(try WorkoutStore(path: db).integrityCheck(), "ok")

        // Or discard it.
        XCTAssertEqual(try cyclelog(["delete", String(id), "--db", db]).status, 0)
        XCTAssertEqual(
            try cyclelog(["list", "--json", "--db", db]).output.trimmingCharacters(in: .whitespacesAndNewlines), "[]")
    }

    func testUnmappedHandlesAreNamedAndAMapFixesThem() throws {
        // The capture's notification without discovery: handle 0x000E is unknown until --handle names it.
        let folder = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
        let capture = folder.appendingPathComponent("no-discovery.btsnoop")
        let hex =
            "6274736e6f6f700000000001000003ea" + "00000014000000140000000100000000" + "00e2f512eec1e830"
            + "02" + "40200f00" + "0b000400" + "1b0e0020" + "00fa002a000040"
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        try Data(bytes).write(to: capture)
        let db = folder.appendingPathComponent("r.sqlite").path
        let unmapped = try cyclelog(["replay", "--db", db, capture.path])
        XCTAssertEqual(unmapped.status, 1)
        XCTAssertTrue(
            unmapped.errorOutput.contains("handle 0x000E of hci0-handle-0x40 carried 1 notifications"),
            unmapped.errorOutput)
        XCTAssertTrue(unmapped.errorOutput.contains("--handle 0x000E=UUID"), unmapped.errorOutput)
        let mapped = try cyclelog(["replay", "--json", "--db", db, "--handle", "0x000E=2a63", capture.path])
        XCTAssertEqual(mapped.status, 0, mapped.errorOutput)
        // One notification of 250 W makes a workout of no length: it is stored, with its sensor.
        XCTAssertTrue(mapped.output.contains(#""address": "hci0-handle-0x40""#), mapped.output)
    }
}

/// The real devices' notification sequences (Fixtures/journals, made from Fixtures/captures): each replays; the
/// non-conformant devices are reported with their exact error and the rest of their data is used.
final class DeviceJournalTests: XCTestCase {
    func testEveryDeviceJournalReplaysAndOnlyTheNonConformantOnesWarn() throws {
        let folder = fixturesFolder.appendingPathComponent("journals")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".journal") }
        XCTAssertGreaterThanOrEqual(files.count, 15)
        let nonConformant = [
            "life-fitness-indoor-bike.journal": "indoor-bike-data: trailingBytes at byte 24: 2 unexpected bytes",
            "matrix-indoor-bike.journal": "indoor-bike-data: totalEnergy at byte 19: truncated: needs 2 bytes, 1 left",
        ]
        for file in files.sorted() {
            // Each in a database of its own: the devices are different riders' timed on one day (2000-01-01,
            // Fixtures/README.md), which in one database would be rides overlapping in time.
            let db = try temporaryDatabase()
            let run = try cyclelog(["replay", "--json", "--db", db, folder.appendingPathComponent(file).path])
            XCTAssertEqual(run.status, 0, "\(file): \(run.errorOutput)")
            if let expected = nonConformant[file] {
                XCTAssertTrue(run.errorOutput.contains(expected), "\(file): \(run.errorOutput)")
            } else {
                XCTAssertEqual(run.errorOutput, "", file)
            }
        }
    }
}
