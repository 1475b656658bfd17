import Foundation
import GRDB
import TestSupport
import XCTest

/// A ride's identity and content digest (Docs/reference/identity.md, "A ride's identity"): the digest is the SHA-256 of what
/// `show --journal` prints, recomputed here by coreutils' sha256sum; options are settings in the journal and make
/// versions, not new rides; a database written before the rule finds its rides again.
final class RideIdentityTests: XCTestCase {
    /// One minute of a wheel sensor turning 3 times a second: the distance is the revolutions counted times the
    /// wheel's circumference, so it scales with the circumference. `seconds` makes it longer; `settingAt` puts a
    /// `wheel *` setting line after that many notifications.
    func wheelRide(seconds: Int = 60, settingAt: Int? = nil) throws -> String {
        var lines = ["# cyclelog journal 1"]
        for second in 0...seconds {
            if second == settingAt {
                lines.append(
                    String(
                        format: "2024-05-01T%02d:%02d:%02d.000000Z", 8 + second / 3600, second / 60 % 60, second % 60)
                        + " wheel * 2000")
            }
            let revolutions = UInt32(second * 3)
            let eventTime = UInt16(truncatingIfNeeded: second * 1024)
            let value =
                [0x01] + withUnsafeBytes(of: revolutions.littleEndian, Array.init)
                + withUnsafeBytes(of: eventTime.littleEndian, Array.init)
            let hex = value.map { String(format: "%02x", $0) }.joined()
            lines.append(
                String(format: "2024-05-01T%02d:%02d:%02d.000000Z", 8 + second / 3600, second / 60 % 60, second % 60)
                    + " notify C0:11:22:33:44:66 2a5b \(hex)")
        }
        let path = URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
            .appendingPathComponent("wheel.journal").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func json(_ arguments: [String]) throws -> [String: Any] {
        let run = try cyclelog(arguments + ["--json"])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], run.output)
    }

    /// `cyclelog show ID --journal`, and its SHA-256 by sha256sum.
    func printedJournal(_ id: Int, _ db: String) throws -> (text: String, sha256: String) {
        let journal = try cyclelog(["show", String(id), "--journal", "--db", db])
        XCTAssertEqual(journal.status, 0, journal.errorOutput)
        let file = db + ".printed.journal"
        try journal.output.write(toFile: file, atomically: true, encoding: .utf8)
        let output = db + ".sha256"
        let process = try ChildProcess(["/usr/bin/sha256sum", file], outputPath: output)
        XCTAssertEqual(process.wait(seconds: 30), 0)
        let sum = try String(contentsOfFile: output, encoding: .utf8).prefix { $0 != " " }
        return (journal.output, String(sum))
    }

    func testTheContentDigestIsTheSHA256OfThePrintedJournal() throws {
        let db = try temporaryDatabase()
        let ride = try json(["replay", "--db", db, try wheelRide()])
        let id = try XCTUnwrap(ride["id"] as? Int)
        let (_, sum) = try printedJournal(id, db)
        XCTAssertEqual(sum.count, 64)
        XCTAssertEqual(ride["contentDigest"] as? String, sum)
        XCTAssertEqual(try json(["show", String(id), "--db", db])["contentDigest"] as? String, sum)
        let list = try cyclelog(["list", "--json", "--db", db])
        let entries = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [[String: Any]])
        XCTAssertEqual(entries.first?["contentDigest"] as? String, sum)
        // A sync identifier made from a digest is a UUID of version 8 with the RFC 9562 variant.
        let sync = try XCTUnwrap(ride["syncIdentifier"] as? String)
        XCTAssertNotNil(UUID(uuidString: sync), sync)
        XCTAssertEqual(Array(sync)[14], "8")
        XCTAssertTrue("89ab".contains(Array(sync)[19]), sync)
    }

    /// A journal of many thousand lines is formatted for its digests in pieces on several cores: its digest is
    /// still sha256sum's of the whole printed journal, with a setting at its head (an option) or in its middle.
    func testTheDigestOfALongJournalIsTheSHA256OfThePrintedJournal() throws {
        let db = try temporaryDatabase()
        // 6 hours at one line a second: 21 601 lines, three pieces of 8192; the setting falls in the second.
        let file = try wheelRide(seconds: 6 * 3600, settingAt: 10_000)
        let ride = try json(["replay", "--auto-pause", "--db", db, file])
        let id = try XCTUnwrap(ride["id"] as? Int)
        let (text, sum) = try printedJournal(id, db)
        XCTAssertTrue(
            text.hasPrefix("# cyclelog journal 1\n2024-05-01T08:00:00.000000Z auto-pause "), String(text.prefix(200)))
        XCTAssertTrue(text.contains("2024-05-01T10:46:40.000000Z wheel * 2000\n"))
        XCTAssertEqual(text.split(separator: "\n").count, 1 + 1 + 21_601 + 1)
        XCTAssertEqual(ride["contentDigest"] as? String, sum)
    }

    func testAChangedOptionIsTheNextVersionOfTheSameRideAndItsJournalReproducesIt() throws {
        let db = try temporaryDatabase()
        let file = try wheelRide()
        let first = try json(["replay", "--db", db, file])
        let distance = try XCTUnwrap(first["distanceMeters"] as? Double)
        XCTAssertGreaterThan(distance, 100)

        let second = try json(["replay", "--wheel-circumference", "2000", "--db", db, file])
        XCTAssertEqual(second["id"] as? Int, first["id"] as? Int)
        XCTAssertEqual(second["syncIdentifier"] as? String, first["syncIdentifier"] as? String)
        XCTAssertEqual(second["version"] as? Int, 2)
        XCTAssertEqual(try XCTUnwrap(second["distanceMeters"] as? Double), distance * 2000 / 2105, accuracy: 0.01)
        let list = try cyclelog(["list", "--json", "--db", db]).output
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [Any])?.count, 1, list)
        let id = try XCTUnwrap(second["id"] as? Int)
        let (text, sum) = try printedJournal(id, db)
        XCTAssertTrue(text.contains("2024-05-01T08:00:00.000000Z wheel * 2000\n"), text)
        XCTAssertEqual(second["contentDigest"] as? String, sum)
        XCTAssertNotEqual(second["contentDigest"] as? String, first["contentDigest"] as? String)

        // The same option again: already stored.
        let again = try cyclelog(["replay", "--wheel-circumference", "2000", "--db", db, file])
        XCTAssertTrue(again.errorOutput.contains("already stored as workout \(id)"), again.errorOutput)

        // The printed journal, replayed into another database with no option, is the same ride with the same
        // content: what another machine does with it.
        let other = try temporaryDatabase()
        let copy = other + ".journal"
        try text.write(toFile: copy, atomically: true, encoding: .utf8)
        let elsewhere = try json(["replay", "--db", other, copy])
        XCTAssertEqual(elsewhere["syncIdentifier"] as? String, first["syncIdentifier"] as? String)
        XCTAssertEqual(elsewhere["contentDigest"] as? String, sum)
        XCTAssertEqual(try XCTUnwrap(elsewhere["distanceMeters"] as? Double), distance * 2000 / 2105, accuracy: 0.01)

        // Auto-pause is a setting too; and back to no option is the next version again.
        let paused = try json(["replay", "--auto-pause", "--db", db, file])
        XCTAssertEqual(paused["version"] as? Int, 3)
        XCTAssertTrue(try printedJournal(id, db).text.contains(" auto-pause below=1.0 after=5\n"))
        let plain = try json(["replay", "--db", db, file])
        XCTAssertEqual(plain["version"] as? Int, 4)
        XCTAssertEqual(plain["contentDigest"] as? String, first["contentDigest"] as? String)
    }

    /// A database written before digests were SHA-256 (its layout without sourceDigest and digestVersion, its
    /// digests of the earlier rule, its identifiers as they were): read through an updated copy in memory (the file
    /// untouched), updated by the next writing command, and a replay of the same file finds its ride under the
    /// identifier it had.
    func testADatabaseFromBeforeKeepsItsIdentifiersAndFindsItsRidesAgain() throws {
        let db = try temporaryDatabase()
        let file = try wheelRide()
        let stored = try json(["replay", "--db", db, file])
        let id = try XCTUnwrap(stored["id"] as? Int)
        let earlier = "5f0e6c1a-2b3d-8e4f-9a0b-1c2d3e4f5a6b"
        let queue = try DatabaseQueue(path: db)
        try queue.write { db in
            try db.execute(
                sql: """
                    DROP INDEX workoutBySourceDigest;
                    ALTER TABLE workout DROP COLUMN sourceDigest;
                    ALTER TABLE workout DROP COLUMN digestVersion;
                    ALTER TABLE workout DROP COLUMN problemCount;
                    ALTER TABLE workout DROP COLUMN preset;
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v9 %';
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v8 %';
                    UPDATE workout SET journalDigest = '8c1f03b2d6a4e5f70123456789abcdef', syncIdentifier = ?;
                    DELETE FROM grdb_migrations WHERE identifier LIKE 'v7 %';
                    """, arguments: [earlier])
        }
        try queue.close()
        // A reader: the ride as the updated layout has it, and the file as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: db))
        let shown = try json(["show", String(id), "--db", db])
        XCTAssertEqual(shown["syncIdentifier"] as? String, earlier)
        XCTAssertEqual(shown["contentDigest"] as? String, try printedJournal(id, db).sha256)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: db)), before, "a reader changed the file")

        let replayed = try cyclelog(["replay", "--db", db, file])
        XCTAssertTrue(
            replayed.errorOutput.contains("already stored as workout \(id)"), replayed.errorOutput + replayed.output)
        let after = try json(["show", String(id), "--db", db])
        XCTAssertEqual(after["syncIdentifier"] as? String, earlier)
        XCTAssertEqual(after["version"] as? Int, 1)
        XCTAssertEqual(after["contentDigest"] as? String, try printedJournal(id, db).sha256)
        // And an option still makes the next version of that ride.
        let wider = try json(["replay", "--wheel-circumference", "2300", "--db", db, file])
        XCTAssertEqual(wider["syncIdentifier"] as? String, earlier)
        XCTAssertEqual(wider["version"] as? Int, 2)
    }
}
