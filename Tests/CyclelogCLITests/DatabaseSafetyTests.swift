import Foundation
import GRDB
import TestSupport
import XCTest

/// What commands do to a database (Docs/reference/storage.md): reading commands never write, a database that is not cyclelog's is
/// left untouched, concurrent writers never mix or lose rides, damaged values are reported, never trapped on.
final class DatabaseSafetyTests: XCTestCase {
    let ride = fixturesFolder.appendingPathComponent("rides/sweatpy_6449921903_ACTIVITY.journal")

    func folder() throws -> URL {
        URL(fileURLWithPath: try temporaryDatabase()).deletingLastPathComponent()
    }

    func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// The same ride on another day: a different capture with its own identity.
    func ride(on day: Int, in dir: URL) throws -> String {
        let text = try String(contentsOf: ride, encoding: .utf8).replacingOccurrences(
            of: "2021-03-18T", with: String(format: "2021-04-%02dT", day))
        let path = dir.appendingPathComponent("ride-\(day).journal").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func listed(_ db: String) throws -> [[String: Any]] {
        let run = try cyclelog(["list", "--json", "--db", db])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]])
    }

    // MARK: Not ours (item 9)

    func testAnotherApplicationsDatabaseIsRefusedUntouchedByEveryCommand() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("contacts.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "CREATE TABLE contact (name TEXT); INSERT INTO contact VALUES ('Anna')") }
        try queue.close()
        let before = try XCTUnwrap(fileBytes(path))
        for arguments in [["list"], ["show", "last"], ["doctor"], ["replay", ride.path], ["ftp"]] {
            let run = try cyclelog(arguments + ["--db", path])
            XCTAssertNotEqual(run.status, 0, arguments.joined(separator: " "))
            XCTAssertTrue(
                (run.output + run.errorOutput).contains("is not a cyclelog database"),
                arguments.joined(separator: " ") + ": " + run.output + run.errorOutput)
        }
        XCTAssertEqual(fileBytes(path), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    func testADatabaseOfANewerCyclelogIsRefusedUntouched() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "INSERT INTO grdb_migrations VALUES ('v99 laps on the moon')") }
        try queue.close()
        let before = try XCTUnwrap(fileBytes(path))
        for arguments in [["list"], ["replay", try self.ride(on: 2, in: dir)]] {
            let run = try cyclelog(arguments + ["--db", path])
            XCTAssertEqual(run.status, 2, run.errorOutput)
            XCTAssertTrue(run.errorOutput.contains("written by a newer cyclelog"), run.errorOutput)
            XCTAssertTrue(run.errorOutput.contains("v99 laps on the moon"), run.errorOutput)
        }
        XCTAssertEqual(fileBytes(path), before)
    }

    // MARK: Readers (item 11)

    /// Another program holding SQLite's write lock on `path` for `seconds`, from now (the lock is taken when this
    /// returns); wait for the thread, then close the queue.
    func holdWriteLock(_ path: String, seconds: UInt32) throws -> (DatabaseQueue, Thread) {
        let queue = try DatabaseQueue(path: path)
        let locked = expectation(description: "lock taken")
        let writer = Thread {
            try? queue.write { db in
                try db.execute(sql: "UPDATE workout SET name = name")
                locked.fulfill()
                sleep(seconds)
            }
        }
        writer.start()
        wait(for: [locked], timeout: 5)
        return (queue, writer)
    }

    func testReadingCommandsNeitherWriteNorWaitForAWriter() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
        // A writer holds SQLite's write lock for 6 s (longer than a writer's 5-s patience).
        let (queue, writer) = try holdWriteLock(path, seconds: 6)
        let started = Date()
        XCTAssertEqual(try listed(path).count, 1)
        let show = try cyclelog(["show", "last", "--db", path])
        XCTAssertEqual(show.status, 0, show.errorOutput)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "a reader waited for the writer")
        while !writer.isFinished { usleep(100_000) }
        try queue.close()
    }

    /// A database error reaching the command line is said in words with status 2 (Docs/reference/exit-status.md, "Exit status"),
    /// whichever command met it: here `delete` while another program holds the write lock longer than cyclelog
    /// waits.
    func testAWriterThatCannotGetTheLockSaysSoWithStatusTwoAndChangesNothing() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
        let (queue, writer) = try holdWriteLock(path, seconds: 13)
        let delete = try cyclelog(["delete", "1", "--db", path])
        XCTAssertEqual(delete.status, 2, delete.errorOutput)
        XCTAssertTrue(delete.errorOutput.hasPrefix("cyclelog: the workout database"), delete.errorOutput)
        XCTAssertTrue(delete.errorOutput.contains("is locked by another program"), delete.errorOutput)
        XCTAssertFalse(delete.errorOutput.contains("underneath"), delete.errorOutput)
        // Asked for debugging, the message says what SQLite said under it (its result code 5, SQLITE_BUSY, whose message is sqlite3_errstr's).
        let debug = try cyclelog(["delete", "1", "--db", path], environment: ["CYCLELOG_LOG_LEVEL": "debug"])
        XCTAssertEqual(debug.status, 2, debug.errorOutput)
        let lines = debug.errorOutput.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, debug.errorOutput)
        XCTAssertEqual(lines.first.map(String.init), delete.errorOutput.split(separator: "\n").first.map(String.init))
        XCTAssertEqual(lines.last, "  (underneath: SQLite result code 5: database is locked)")
        while !writer.isFinished { usleep(100_000) }
        try queue.close()
        XCTAssertEqual(try listed(path).count, 1, "the workout is still there")
    }

    func testARiderWhoMayOnlyReadTheDatabaseCanListIt() throws {
        guard getuid() == 0 else {
            print("skipped: only root can run cyclelog as another user here (setpriv)")
            return
        }
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
        // The folder and the file readable, not writable, by `nobody`, as the service's rides are for its group.
        chmod(dir.path, 0o755)
        chmod(path, 0o644)
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let run = try cyclelog(["list", "--db", path], prefix: nobody)
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.output.contains("Wattbike"), run.output)
        let other = try self.ride(on: 3, in: URL(fileURLWithPath: NSTemporaryDirectory()))
        let replay = try cyclelog(["replay", "--db", path, other], prefix: nobody)
        XCTAssertNotEqual(replay.status, 0)
        XCTAssertTrue(replay.errorOutput.contains("read-only for this user"), replay.errorOutput)
    }

    /// A backup copied without its -wal and -shm files into a folder this user may not write (read-only media,
    /// another user's home): SQLite cannot make the shared memory a WAL database needs, yet every reading command
    /// works, and the database is left as it was.
    func testAWALDatabaseWithoutItsLogOnReadOnlyMediaCanBeRead() throws {
        guard getuid() == 0 else {
            print("skipped: only root can run cyclelog as another user here (setpriv)")
            return
        }
        let dir = try folder()
        let path = dir.appendingPathComponent("backup.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
        for ending in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: path + ending) }
        chmod(dir.path, 0o755)
        chmod(path, 0o644)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let list = try cyclelog(["list", "--db", path], prefix: nobody)
        XCTAssertEqual(list.status, 0, list.errorOutput)
        XCTAssertTrue(list.output.contains("Wattbike"), list.output)
        for command in [["show", "last"], ["ftp"], ["show", "1", "--json"]] {
            let run = try cyclelog(command + ["--db", path], prefix: nobody)
            XCTAssertEqual(run.status, 0, "\(command): \(run.errorOutput)")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        // A name with the characters a URI reserves reads the same.
        let odd = dir.appendingPathComponent("rides #2 100%?.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: odd)
        chmod(odd, 0o644)
        let oddList = try cyclelog(["list", "--db", odd], prefix: nobody)
        XCTAssertEqual(oddList.status, 0, oddList.errorOutput)
        XCTAssertTrue(oddList.output.contains("Wattbike"), oddList.output)
    }

    func testBadDatabasePathsEachGetTheirOwnMessage() throws {
        let dir = try folder()
        let cases: [(String, String)] = [
            (dir.path, "is a folder"),
            (dir.appendingPathComponent("missing/rides.sqlite").path, "does not exist"),
            (dir.appendingPathComponent(String(repeating: "x", count: 300)).path, "longer than the file system allows"),
            ("", "no database was named"),
            ("file:rides.sqlite?mode=ro", "is a URI"),
        ]
        for (path, message) in cases {
            let run = try cyclelog(["replay", "--db", path, ride.path])
            XCTAssertEqual(run.status, 2, path)
            XCTAssertTrue(run.errorOutput.contains(message), path + ": " + run.errorOutput)
            XCTAssertFalse(run.errorOutput.contains("Usage:"), run.errorOutput)
        }
    }

    // MARK: Writers at once (items 3, 4, 5, 6)

    func testTenReplaysIntoANewDatabaseAtOnceStoreEveryRide() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("new.sqlite").path
        let files = try (1...10).map { try ride(on: $0, in: dir) }
        let processes = try files.map { try startCyclelog(["replay", "--db", path, $0]) }
        for (process, _, _, errors) in processes {
            process.waitUntilExit()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(process.terminationStatus, 0, text)
        }
        XCTAssertEqual(try listed(path).count, 10)
    }

    func testANewDatabaseThatAnotherProgramHoldsIsSwitchedToWALOnceItMay() throws {
        // SQLite answers "busy" at once, without waiting its busy timeout, when a connection that reads asks for
        // the lock another one has reserved (waiting could deadlock): switching a new database to WAL while
        // another cyclelog creating it holds that lock. Four identical replays into a new database met this.
        let dir = try folder()
        let path = dir.appendingPathComponent("new.sqlite").path
        let other = try DatabaseQueue(path: path)
        let reading = expectation(description: "write lock reserved")
        let reader = Thread {
            try? other.inDatabase { db in
                try db.beginTransaction(.immediate)
                reading.fulfill()
                usleep(700_000)
                try db.commit()
            }
        }
        reader.start()
        wait(for: [reading], timeout: 5)
        let replay = try cyclelog(["replay", "--db", path, ride.path])
        XCTAssertEqual(replay.status, 0, replay.errorOutput)
        while !reader.isFinished { usleep(50_000) }
        try other.close()
        XCTAssertEqual(try listed(path).count, 1)
    }

    func testIdenticalReplaysAtOnceStoreOneRideOnce() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        let processes = try (0..<4).map { _ in try startCyclelog(["replay", "--json", "--db", path, ride.path]) }
        for (process, _, _, errors) in processes {
            process.waitUntilExit()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(process.terminationStatus, 0, text)
            XCTAssertFalse(text.contains("UNIQUE"), text)
        }
        let entries = try listed(path)
        XCTAssertEqual(entries.count, 1)
        let show = try cyclelog(["show", "last", "--json", "--db", path])
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.output.utf8)) as? [String: Any])
        XCTAssertEqual(summary["version"] as? Int, 1)
    }

    func testASecondReplayKilledWhileTheFirstWritesLeavesTheFirstWhole() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        let big = fixturesFolder.appendingPathComponent("rides/sweatpy_4078723797.journal").path
        // Its journal's four pieces a second apart: the first replay still writes when the second starts and dies.
        let slow = ["CYCLELOG_TEST_PAUSE_PER_CHUNK_MS": "1000"]
        let (first, _, firstOut, _) = try startCyclelog(["replay", "--json", "--db", path, big], environment: slow)
        // Wait until the first has claimed the ride and written some of it.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try !FileManager.default.fileExists(atPath: path) || listed(path).isEmpty {
            usleep(100_000)
        }
        usleep(700_000)
        let (second, _, _, _) = try startCyclelog(["replay", "--db", path, big], environment: slow)
        usleep(1_000_000)
        kill(second.processIdentifier, SIGKILL)
        second.waitUntilExit()
        let output = firstOut.fileHandleForReading.readDataToEndOfFile()
        first.waitUntilExit()
        XCTAssertEqual(first.terminationStatus, 0)
        let stored = try XCTUnwrap(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        // The whole journal is there: a rebuild gives the ride again, and a new replay finds it stored.
        let rebuilt = try cyclelog(["rebuild", "last", "--json", "--db", path])
        let again = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(rebuilt.output.utf8)) as? [String: Any])
        XCTAssertEqual(again["elapsedSeconds"] as? Double, stored["elapsedSeconds"] as? Double)
        XCTAssertEqual(again["workJoules"] as? Double, stored["workJoules"] as? Double)
        let replayed = try cyclelog(["replay", "--db", path, big])
        XCTAssertTrue(replayed.errorOutput.contains("already stored"), replayed.output + replayed.errorOutput)
    }

    func testARideCutShortBeforeItsFirstJournalChunkIsDiscardedByRecover() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
        // What a kill right after the row was made leaves: a 'recording' row, no journal, a lapsed hold.
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO workout (syncIdentifier, source, startMicroseconds, claimToken, claimedMicroseconds)
                    VALUES ('cut-short', 'live', 1700000000000000, 'gone', 1700000000000000)
                    """)
        }
        try queue.close()
        let run = try cyclelog(["recover", "--db", path])
        XCTAssertEqual(run.status, 0, run.errorOutput)
        XCTAssertTrue(run.output.contains("cut short before any of its data was stored"), run.output)
        XCTAssertEqual(try listed(path).count, 1)
    }

    func testAStaleFTPHistoryIsRepairedByTheNextCommandThatWrites() throws {
        let dir = try folder()
        let path = dir.appendingPathComponent("rides.sqlite").path
        let rides = ["sweatpy_4078723797.journal", "sweatpy_2020-06-01-16-52-40.journal"].map {
            fixturesFolder.appendingPathComponent("rides/" + $0).path
        }
        for file in rides { XCTAssertEqual(try cyclelog(["replay", "--db", path, file]).status, 0) }
        func derived() throws -> (estimates: Int, basis: String?) {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            return try queue.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM ftpEstimate") ?? -1,
                    try String.fetchOne(db, sql: "SELECT basis FROM derivedState WHERE name = 'ftpHistory'")
                )
            }
        }
        let full = try derived()
        XCTAssertNotNil(full.basis)
        // What a kill between a ride and its FTP refresh left before: the rides stored, the history without them.
        let queue = try DatabaseQueue(path: path)
        try queue.write {
            try $0.execute(sql: "DELETE FROM ftpEstimate; DELETE FROM ftpEffort; DELETE FROM derivedState")
        }
        try queue.close()
        XCTAssertEqual(try cyclelog(["ftp", "--db", path]).status, 0)
        XCTAssertEqual(try derived().estimates, 0, "reading commands do not write")
        let again = try cyclelog(["replay", "--db", path, rides[0]])
        XCTAssertTrue(again.errorOutput.contains("already stored"), again.errorOutput)
        let repaired = try derived()
        XCTAssertEqual(repaired.estimates, full.estimates)
        XCTAssertEqual(repaired.basis, full.basis)
    }

    /// A program's exit status (-1 when it cannot start).
    static func run(_ program: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// A mistyped --db is said as one, not as a rider without rides; a database on a read-only mount is said as on
    /// one (not as a file this user may not read), and reading it still works.
    func testAMistypedPathAndAReadOnlyMountAreSaidAsWhatTheyAre() throws {
        let mistyped = try folder().appendingPathComponent("rdies.sqlite").path
        let list = try cyclelog(["list", "--db", mistyped])
        XCTAssertEqual(list.status, 2)
        XCTAssertTrue(list.errorOutput.contains("no database at \(mistyped) (a mistyped --db?)"), list.errorOutput)
        XCTAssertFalse(list.output.contains("No workouts yet"), list.output)
        guard getuid() == 0 else {
            print("skipped: a read-only mount is a tmpfs here, and only root can mount one")
            return
        }
        let mounted = try folder().appendingPathComponent("mounted")
        try FileManager.default.createDirectory(at: mounted, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mounted.path]) == 0 else {
            print("skipped: mount -t tmpfs failed (a container without CAP_SYS_ADMIN)")
            return
        }
        defer { _ = Self.run("/bin/umount", [mounted.path]) }
        let db = mounted.appendingPathComponent("rides.sqlite").path
        let dir = try folder()
        XCTAssertEqual(try cyclelog(["replay", "--db", db, try self.ride(on: 1, in: dir)]).status, 0)
        XCTAssertEqual(Self.run("/bin/mount", ["-o", "remount,ro", mounted.path]), 0)
        let stored = try cyclelog(["replay", "--db", db, try self.ride(on: 2, in: dir)])
        XCTAssertEqual(stored.status, 2)
        XCTAssertTrue(stored.errorOutput.contains("is on a read-only file system"), stored.errorOutput)
        XCTAssertFalse(stored.errorOutput.contains("may read it"), stored.errorOutput)
        XCTAssertEqual(try listed(db).count, 1, "reading still works")
        // An output file there is a local file it cannot use: 2, as every such file.
        let export = try cyclelog(["export", "1", "-o", mounted.appendingPathComponent("ride.fit").path, "--db", db])
        XCTAssertEqual(export.status, 2, export.errorOutput)
        XCTAssertTrue(export.errorOutput.contains("Read-only file system"), export.errorOutput)
    }

    /// A replay that fills the disk says what was kept, leaves an unfinished ride, and stores it whole once there
    /// is room (item 6).
    func testAFullDiskSaysWhatWasKeptAndTheRideIsStoredOnceThereIsRoom() throws {
        guard getuid() == 0 else {
            print("skipped: a full disk is a small tmpfs here, and only root can mount one")
            return
        }
        let small = try folder().appendingPathComponent("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        func mount(_ options: String) -> Int32 {
            Self.run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", small.path])
        }
        // Room for a new database (its migrations pass through the WAL: about 0.6 MB before the first checkpoint),
        // not for this 2 h 19 min ride (which takes the WAL past 1 MB; it fits in 2 MB).
        guard mount("size=1m") == 0 else {
            print("skipped: mount -t tmpfs failed (a container without CAP_SYS_ADMIN)")
            return
        }
        defer { _ = Self.run("/bin/umount", [small.path]) }
        let long = fixturesFolder.appendingPathComponent("rides/sweatpy_4078723797.journal").path
        let db = small.appendingPathComponent("rides.sqlite").path
        let full = try cyclelog(["replay", "--db", db, long])
        XCTAssertEqual(full.status, 1)
        XCTAssertTrue(full.errorOutput.contains("is full"), full.errorOutput)
        XCTAssertTrue(full.errorOutput.contains("the ride was not stored whole"), full.errorOutput)
        XCTAssertEqual(try listed(db).map { $0["status"] as? String }, ["recording"], "left unfinished")
        // Room made (the same mount, larger): the same replay stores the whole ride.
        XCTAssertEqual(mount("remount,size=64m"), 0)
        let again = try cyclelog(["replay", "--json", "--db", db, long])
        XCTAssertEqual(again.status, 0, again.errorOutput)
        let reference = try cyclelog(["replay", "--json", "--db", try temporaryDatabase(), long])
        let stored = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])
        let expected = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(reference.output.utf8)) as? [String: Any])
        for key in ["elapsedSeconds", "movingSeconds", "workJoules", "normalizedPowerWatts"] {
            XCTAssertEqual(stored[key] as? Double, expected[key] as? Double, key)
        }
        XCTAssertEqual(try listed(db).count, 1)
    }

    // MARK: Damaged values (item 8)

    func testDamagedStoredValuesAreReportedNeverTrappedOn() throws {
        let dir = try folder()
        let damages: [(String, String, String)] = [
            (
                "statistics", "UPDATE workout SET statistics = x'01ffffffffffffffffff7f'",
                "stored statistics are damaged"
            ),
            (
                "sample size", "UPDATE sampleChunk SET samples = x'ffffff7f789c0300' WHERE firstSecond = 60",
                "sampleChunk"
            ),
            ("journal length", "UPDATE journalChunk SET events = x'0a000000789c63606060000000' ", "journalChunk"),
            (
                "start time", "UPDATE workout SET startMicroseconds = 9223372036854775807",
                "start or end time is damaged"
            ),
            ("lap time", "UPDATE lap SET startMicroseconds = -9223372036854775808", ""),
            ("wheel", "UPDATE workoutSensor SET wheelCircumferenceMillimetres = 'big'", ""),
            ("event", "UPDATE workoutEvent SET journalLine = 'garbage'", ""),
            ("curve", "UPDATE powerCurve SET watts = x'010203'", ""),
        ]
        for (name, sql, message) in damages {
            let path = dir.appendingPathComponent("\(name).sqlite").path
            XCTAssertEqual(try cyclelog(["replay", "--db", path, ride.path]).status, 0)
            let queue = try DatabaseQueue(path: path)
            try queue.write { try $0.execute(sql: sql) }
            try queue.close()
            var said = ""
            for arguments in [
                ["show", "last"], ["show", "last", "--json"], ["show", "last", "--journal"], ["list"], ["ftp"],
                ["export", "last", "-o", dir.appendingPathComponent("\(name).fit").path],
                ["chart", "last", "-o", dir.appendingPathComponent("\(name).svg").path], ["rebuild", "last"],
            ] {
                let run = try cyclelog(arguments + ["--db", path])
                // 0, 1 or 2: a message, never a trap (132 SIGILL, 133 SIGTRAP, 134 SIGABRT) or a kill for memory.
                XCTAssertTrue([0, 1, 2].contains(run.status), "\(name): \(arguments) ended with \(run.status)")
                said += run.output + run.errorOutput
            }
            if !message.isEmpty { XCTAssertTrue(said.contains(message), "\(name): \(said)") }
        }
        // doctor finds what integrity_check cannot see.
        let doctor = try cyclelog(
            ["doctor", "--db", dir.appendingPathComponent("journal length.sqlite").path],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent"])
        XCTAssertTrue(doctor.output.contains("damaged value"), doctor.output)
    }
}
