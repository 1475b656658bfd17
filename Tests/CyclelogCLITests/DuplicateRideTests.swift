import Foundation
import RideHistory
import TestSupport
import WorkoutStore
import XCTest

/// One ride stored twice (the demo's capture and the bike computer's FIT file of the same ride) counts once: said
/// when it is stored, marked in the list, left out of the FTP and the weekly load, and the rider picks which.
final class DuplicateRideTests: XCTestCase {
    let rides = fixturesFolder.appendingPathComponent("rides")
    /// The ride's best 20 minutes by the independent oracle (Fixtures/rides/references.json).
    let best20MinuteWatts = 306.815

    func testTheSameRideTwiceCountsOnceAndTheRiderChoosesWhich() throws {
        let db = try temporaryDatabase()
        let replay = try cyclelog([
            "replay", "--db", db, rides.appendingPathComponent("sweatpy_4078723797.btsnoop").path,
        ])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        XCTAssertFalse(replay.errorOutput.contains("same ride"), replay.errorOutput)

        // The bike computer's file of the same ride: stored (it is the rider's), and said to be the same ride.
        let imported = try cyclelog([
            "import", "--db", db, rides.appendingPathComponent("fit/sweatpy_4078723797.fit").path,
        ])
        XCTAssertEqual(imported.status, 0, imported.errorOutput)
        XCTAssertTrue(imported.output.contains("imported as workout 2"), imported.output)
        XCTAssertTrue(
            imported.errorOutput.contains("workout 2 overlaps workout 1 in time: the same ride recorded twice"),
            imported.errorOutput)
        XCTAssertTrue(imported.errorOutput.contains("count workout 1"), imported.errorOutput)
        XCTAssertTrue(imported.errorOutput.contains("cyclelog duplicates keep 2"), imported.errorOutput)

        let list = try cyclelog(["list", "--db", db])
        let second = try XCTUnwrap(list.lines.first { $0.hasPrefix("    2 ") }, list.output)
        XCTAssertTrue(second.hasSuffix("[same ride as 1]"), second)
        let first = try XCTUnwrap(list.lines.first { $0.hasPrefix("    1 ") }, list.output)
        XCTAssertFalse(first.contains("same ride"), first)
        let entries = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try cyclelog(["list", "--json", "--db", db]).output.utf8))
                as? [[String: Any]])
        XCTAssertEqual(entries.first { $0["id"] as? Int == 2 }?["sameRideAs"] as? Int, 1)
        XCTAssertTrue(entries.first { $0["id"] as? Int == 1 }?["sameRideAs"] is NSNull)

        // One ride is not the two rides a critical-power fit needs: no FTP, and the window counts one ride.
        let ftp = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(try cyclelog(["ftp", "--json", "--db", db]).output.utf8))
                as? [String: Any])
        XCTAssertTrue(ftp["ftpWatts"] is NSNull, "\(ftp)")
        XCTAssertEqual(ftp["windowRides"] as? Int, 1)
        XCTAssertEqual(try XCTUnwrap(ftp["best20MinuteWatts"] as? Double), best20MinuteWatts, accuracy: 0.5)
        let text = try cyclelog(["ftp", "--db", db])
        XCTAssertFalse(text.output.contains("critical power from your rides"), text.output)
        XCTAssertTrue(text.output.contains("1 ride\n"), text.output)

        // The weekly load has the ride once.
        let store = try WorkoutStore(path: db, access: .read)
        let load = try RideList.weeklyLoad(in: store, weeks: 1)
        XCTAssertEqual(load.weeks.map(\.rides), [1])

        // The rider counts the FIT file instead: the capture is the one set aside now.
        let keep = try cyclelog(["duplicates", "keep", "2", "--db", db])
        XCTAssertEqual(keep.status, 0, keep.errorOutput)
        XCTAssertEqual(
            keep.output, "Workout 2 counts in the FTP and the weekly load; workout 1 is set aside (still stored).\n")
        let after = try cyclelog(["list", "--db", db])
        XCTAssertTrue(try XCTUnwrap(after.lines.first { $0.hasPrefix("    1 ") }).hasSuffix("[same ride as 2]"))
        let groups = try XCTUnwrap(
            try JSONSerialization.jsonObject(
                with: Data(try cyclelog(["duplicates", "--json", "--db", db]).output.utf8))
                as? [[String: Any]])
        XCTAssertEqual(groups.count, 1)
        XCTAssertEqual(groups.first?["workouts"] as? [Int], [1, 2])
        XCTAssertEqual(groups.first?["counted"] as? Int, 2)
        // The two files cover the same 2 h 19 min 16 s (the FIT session's elapsed time), give or take a second.
        XCTAssertEqual(try XCTUnwrap(groups.first?["commonSeconds"] as? Double), 8355.6, accuracy: 2)

        // A ride that overlaps nothing has nothing to choose.
        let lone = try cyclelog([
            "import", "--db", db, rides.appendingPathComponent("fit/sweatpy_2020-06-01-16-52-40.fit").path,
        ])
        XCTAssertFalse(lone.errorOutput.contains("overlaps"), lone.errorOutput)
        let refused = try cyclelog(["duplicates", "keep", "3", "--db", db])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.errorOutput.contains("workout 3 overlaps no other ride"), refused.errorOutput)

        // Deleting one of the two leaves the other counted, with no duplicate left.
        XCTAssertEqual(try cyclelog(["delete", "2", "--db", db]).status, 0)
        XCTAssertEqual(try cyclelog(["duplicates", "--db", db]).output, "No rides overlap: every ride counts once.\n")
    }

    /// The README's main command and what it prints agree: with the demo's one ride no FTP is in force, and 95 %
    /// of its best 20 minutes is offered.
    func testTheDemoPrintsWhatTheREADMEPromises() throws {
        let readme = try String(
            contentsOf: fixturesFolder.deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
        // The "Two commands" section, up to the next heading.
        let demo = readme.components(separatedBy: "\n").drop { !$0.hasPrefix("make demo") }
            .prefix { !$0.hasPrefix("#") }.joined(separator: " ")
        XCTAssertTrue(demo.contains("no FTP is in force yet: 95 % of its best 20 minutes is offered"), demo)
        XCTAssertTrue(demo.contains("made from a real ride's FIT records"), demo)
        let makefile = try String(
            contentsOf: fixturesFolder.deletingLastPathComponent().appendingPathComponent("Makefile"), encoding: .utf8)
        XCTAssertTrue(makefile.contains("cyclelog replay Fixtures/rides/sweatpy_4078723797.btsnoop\n"))
        XCTAssertTrue(makefile.contains("cyclelog ftp\n"))

        let db = try temporaryDatabase()
        XCTAssertEqual(
            try cyclelog(["replay", "--db", db, rides.appendingPathComponent("sweatpy_4078723797.btsnoop").path])
                .status,
            0)
        let ftp = try cyclelog(["ftp", "--db", db])
        let headline = try XCTUnwrap(ftp.lines.first)
        XCTAssertTrue(headline.hasPrefix("No FTP in force yet: 95 % of your best 20 minutes is "), headline)
        let offered = try XCTUnwrap(
            Double((headline.components(separatedBy: "is ").dropFirst().first ?? "").prefix { $0.isNumber }), headline)
        XCTAssertEqual(offered, 0.95 * best20MinuteWatts, accuracy: 1)
        XCTAssertTrue(headline.contains("`cyclelog ftp set \(Int(offered))` uses it"), headline)
    }
}

/// What a person reads is in the rider's time zone; JSON stays UTC.
final class LocalTimeTests: XCTestCase {
    func testListAndShowAreInTheLocalZoneAndJSONInUTC() throws {
        let db = try temporaryDatabase()
        let journal = fixturesFolder.appendingPathComponent("rides/sweatpy_2020-06-01-16-52-40.journal").path
        XCTAssertEqual(try cyclelog(["replay", "--db", db, journal]).status, 0)
        // The journal's start line: 2020-06-01T14:52:40Z; in Berlin (CEST in June) as Foundation converts it.
        let start = try XCTUnwrap(ISO8601DateFormatter().date(from: "2020-06-01T14:52:40Z"))
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "Europe/Berlin")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let berlin = formatter.string(from: start)
        XCTAssertEqual(berlin, "2020-06-01 16:52:40")

        let zone = ["TZ": "Europe/Berlin"]
        let list = try cyclelog(["list", "--db", db], environment: zone)
        XCTAssertEqual(list.lines.first?.hasPrefix("   id  start (local time)   duration"), true, list.output)
        XCTAssertTrue(list.lines[1].contains("  \(berlin)  "), list.output)
        let show = try cyclelog(["show", "1", "--db", db], environment: zone)
        XCTAssertTrue(show.output.contains("  start        \(berlin) CEST\n"), show.output)
        let json = try cyclelog(["list", "--json", "--db", db], environment: zone)
        XCTAssertTrue(json.output.contains("\"start\": \"2020-06-01T14:52:40Z\""), json.output)
        // A machine kept in UTC says so.
        let utc = try cyclelog(["list", "--db", db], environment: ["TZ": "UTC"])
        XCTAssertEqual(utc.lines.first?.hasPrefix("   id  start (UTC)          duration"), true, utc.output)
        XCTAssertTrue(utc.lines[1].contains("  2020-06-01 14:52:40  "), utc.output)
    }
}
