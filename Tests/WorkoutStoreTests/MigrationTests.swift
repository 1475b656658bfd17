import Foundation
import GRDB
import XCTest

@testable import WorkoutStore

/// A database between two migrations: what a cyclelog killed while it created the database leaves (each migration
/// is its own transaction), what a reader meets while another cyclelog creates it, and what an older cyclelog left.
final class MigrationTests: XCTestCase {
    func newPath() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder.appendingPathComponent("rides.sqlite").path
    }

    /// Every prefix of the migrations, as a process killed after it leaves them: a reader answers every question
    /// without touching the file, and the next writer finishes the layout.
    func testADatabaseLeftBetweenTwoMigrationsIsReadAndThenFinished() throws {
        let identifiers = WorkoutStore.migrator.migrations
        XCTAssertGreaterThan(identifiers.count, 1)
        for last in identifiers.dropLast() {
            let path = try newPath()
            let partial = try DatabaseQueue(path: path)
            try WorkoutStore.migrator.migrate(partial, upTo: last)
            try partial.close()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))

            let reader = try WorkoutStore(path: path, access: .read)
            XCTAssertEqual(try reader.list().count, 0, "after \(last)")
            XCTAssertNoThrow(try reader.ftpHistory(), "after \(last)")
            XCTAssertNoThrow(try reader.rideOverlaps(), "after \(last)")
            XCTAssertNoThrow(try reader.rideCurves(), "after \(last)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "the reader changed the file")

            let writer = try WorkoutStore(path: path)
            XCTAssertTrue(try writer.queue.read(WorkoutStore.migrator.hasCompletedMigrations), "after \(last)")
            XCTAssertEqual(try writer.list().count, 0)
        }
    }

    /// Writers and readers opening one new database at the same moment, again and again: every writer finds the
    /// layout whole, every reader answers, none fails on the others' half-made tables.
    func testWritersAndReadersOpeningANewDatabaseTogetherAllSucceed() throws {
        for round in 0..<12 {
            let path = try newPath()
            let failures = Failures()
            DispatchQueue.concurrentPerform(iterations: 6) { index in
                do {
                    if index % 2 == 0 {
                        let store = try WorkoutStore(path: path)
                        if try !store.queue.read(WorkoutStore.migrator.hasCompletedMigrations) {
                            failures.add("writer \(index): the layout is not whole")
                        }
                    } else {
                        for _ in 0..<5 {
                            let reader = try WorkoutStore(path: path, access: .read)
                            _ = try reader.list()
                            _ = try reader.ftpHistory()
                        }
                    }
                } catch {
                    failures.add("round \(round), \(index % 2 == 0 ? "writer" : "reader") \(index): \(error)")
                }
            }
            XCTAssertEqual(failures.all, [])
        }
    }

    /// A migration that fails on its own (nobody else applied anything meanwhile) says so at once instead of being
    /// taken for another process's work.
    func testAMigrationsOwnFailureIsNotTakenForAnotherProcess() throws {
        let path = try newPath()
        let queue = try DatabaseQueue(path: path)
        let first = try XCTUnwrap(WorkoutStore.migrator.migrations.first)
        try WorkoutStore.migrator.migrate(queue, upTo: first)
        // A table the second migration makes, already there without the migration recorded: a foreign change.
        try queue.write { try $0.execute(sql: "CREATE TABLE ftpEstimate (x)") }
        XCTAssertThrowsError(try WorkoutStore.migrate(queue)) { error in
            XCTAssertTrue("\(error)".contains("already exists"), "\(error)")
        }
    }

    /// The migrations table appearing while another process reads which migrations are applied (a new database
    /// being created this moment): the reading is never reported as "no such table". Another connection makes and
    /// drops the table as fast as it can while this one reads.
    func testTheMigrationsTableAppearingWhileItIsReadIsNeverAnError() throws {
        let path = try newPath()
        // As the store opens its file: waits while another holds the lock, write-ahead log.
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let reader = try DatabaseQueue(path: path, configuration: configuration)
        let maker = try DatabaseQueue(path: path, configuration: configuration)
        try WorkoutStore.useWAL(maker)
        let failures = Failures()
        let readings = 3000
        let done = Failures()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            if index == 0 {
                while done.all.isEmpty {
                    try? maker.writeWithoutTransaction { db in
                        try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT PRIMARY KEY)")
                        try db.execute(sql: "DROP TABLE grdb_migrations")
                    }
                }
            } else {
                for _ in 0..<readings {
                    do { _ = try WorkoutStore.appliedIdentifiers(reader) } catch { failures.add("\(error)") }
                }
                done.add("done")
            }
        }
        XCTAssertEqual(failures.all, [])
    }

    final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ failure: String) { lock.withLock { list.append(failure) } }
        var all: [String] { lock.withLock { list } }
    }
}
