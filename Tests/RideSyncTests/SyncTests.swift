import Foundation
import GRDB
import PostgresNIO
import Recording
import RideJournal
import RideTestSupport
import Testing
import WorkoutStore
import Workouts

@testable import RideSync

/// The connections a test opens, all closed when it ends however it ends (PostgresNIO insists on it).
final class Connections: @unchecked Sendable {
    private var stores: [SharedStore] = []
    private let lock = NSLock()

    /// A synchronizer of `collector`'s database against the server at `address`.
    func sync(_ collector: Collector, _ address: ServerAddress) async throws -> Synchronizer {
        Synchronizer(local: collector.store, server: try await server(address))
    }

    func server(_ address: ServerAddress) async throws -> SharedStore {
        let server = try await SharedStore.connect(address)
        lock.withLock { stores.append(server) }
        return server
    }

    func closeAll() async {
        for store in lock.withLock({ stores }) { await store.close() }
    }
}

/// Runs a test's body with its connections closed at the end.
func withConnections(_ body: (Connections) async throws -> Void) async throws {
    let connections = Connections()
    do {
        try await body(connections)
    } catch {
        await connections.closeAll()
        throw error
    }
    await connections.closeAll()
}

/// A server database with the schema made, on the shared server or on `server`.
func initializedServer(on server: PostgresServer? = nil) async throws -> ServerAddress {
    let server = if let server { server } else { await PostgresServer.shared }
    let address = try await server.newDatabase()
    _ = try await SharedStore.with(address) { server throws(SyncError) in try await Synchronizer.initialize(server) }
    return address
}

/// Rows of a query on the server, for checking what it holds.
func serverRows<each Column: PostgresDecodable & Sendable>(
    _ address: ServerAddress, _ sql: String, as columns: (repeat each Column).Type
) async throws -> [(repeat each Column)] {
    try await SharedStore.with(address) { server throws(SyncError) in
        try await server.rows(PostgresQuery(unsafeSQL: sql), as: columns)
    }
}

@Suite("cyclelog-sync against a real PostgreSQL")
struct SyncTests {
    @Test("init makes the schema once; a second init applies nothing; a newer schema is refused")
    func initTwice() async throws {
        let address = try await PostgresServer.shared.newDatabase()
        try await withConnections { connections in
            let server = try await connections.server(address)
            #expect(try await Synchronizer.initialize(server) == ServerSchema.migrations.map(\.name))
            #expect(try await Synchronizer.initialize(server).isEmpty)
            try await server.execute("INSERT INTO cyclelog_migration (name) VALUES ('v99 from the future')")
            await #expect(throws: SyncError.self) { try await Synchronizer.initialize(server) }
            let collector = try Collector()
            let sync = Synchronizer(local: collector.store, server: server)
            let error = await #expect(throws: SyncError.self) { try await sync.push() }
            #expect(error?.kind == .schema)
            #expect(error?.description.contains("newer cyclelog-sync") == true)
        }
    }

    @Test("a server without the schema: push says to run init")
    func noSchema() async throws {
        let address = try await PostgresServer.shared.newDatabase()
        let collector = try Collector()
        try collector.replay(Fixtures.journals[0])
        try await withConnections { connections in
            let sync = try await connections.sync(collector, address)
            let error = await #expect(throws: SyncError.self) { try await sync.push() }
            #expect(error?.description.contains("cyclelog-sync init") == true)
        }
    }

    @Test("push sends each ride once; the server's own sha256() of the journal is the ride's contentDigest")
    func pushIdempotent() async throws {
        let address = try await initializedServer()
        let collector = try Collector()
        let ids = try Fixtures.journals.map { try collector.replay($0) }
        try await withConnections { connections in
            let sync = try await connections.sync(collector, address)
            let first = try await sync.push()
            #expect(first.map(\.result) == Array(repeating: .inserted, count: ids.count))
            let before = try await serverRows(
                address, "SELECT sync_identifier::text, xmin::text::bigint FROM ride ORDER BY 1",
                as: (String, Int64).self)
            #expect(try await sync.push().isEmpty)
            let after = try await serverRows(
                address, "SELECT sync_identifier::text, xmin::text::bigint FROM ride ORDER BY 1",
                as: (String, Int64).self)
            #expect(before.map(\.0) == after.map(\.0) && before.map(\.1) == after.map(\.1))
            // The digest as PostgreSQL computes it from the text it holds, against the local one and against the text
            // `show --journal` prints.
            for id in ids {
                let summary = try #require(try collector.store.summary(id))
                let rows = try await serverRows(
                    address,
                    """
                    SELECT encode(sha256(convert_to(journal, 'UTF8')), 'hex'), content_digest, version, journal
                    FROM ride WHERE sync_identifier = '\(summary.syncIdentifier)'
                    """, as: (String, String, Int, String).self)
                let row = try #require(rows.first)
                #expect(row.0 == summary.contentDigest && row.1 == summary.contentDigest && row.2 == summary.version)
                #expect(row.3 == Journal.text(try collector.store.journal(id)))
            }
            // A copy of the database pushing the same rides: unchanged, nothing written.
            let copy = try collector.copy("copy")
            try copy.clearSyncMarks()
            let copied = try await connections.sync(copy, address).push()
            #expect(copied.map(\.result) == Array(repeating: .unchanged, count: ids.count))
            let afterCopy = try await serverRows(
                address, "SELECT sync_identifier::text, xmin::text::bigint FROM ride ORDER BY 1",
                as: (String, Int64).self)
            #expect(afterCopy.map(\.1) == before.map(\.1))
        }
    }

    @Test("a pushed journal is stored compressed with LZ4, the server's cheaper compression, and reads back whole")
    func pushCompressesWithLZ4() async throws {
        let address = try await initializedServer()
        // Debian's PostgreSQL, which the tests start, is built with LZ4 (a server without it keeps its default).
        let methods = try await serverRows(
            address, "SELECT array_to_string(enumvals, ' ') FROM pg_settings WHERE name = 'default_toast_compression'",
            as: String.self)
        try #require(methods.first?.split(separator: " ").contains("lz4") == true, "the test server has no LZ4")
        // A real 5-minute ride (155 kB of journal) and a short one (387 bytes: its row is too small to compress).
        let collector = try Collector()
        let ride = try collector.replay("rides/sweatpy_6449921903_ACTIVITY.journal")
        let short = try collector.replay(Fixtures.journals[0])
        try await withConnections { connections in
            _ = try await connections.sync(collector, address).push()
        }
        // Another session, with the server's default compression, reads the same text.
        for id in [ride, short] {
            let summary = try #require(try collector.store.summary(id))
            let rows = try await serverRows(
                address,
                """
                SELECT coalesce(pg_column_compression(journal), 'none'), octet_length(journal), pg_column_size(journal),
                    journal
                FROM ride WHERE sync_identifier = '\(summary.syncIdentifier)'
                """, as: (String, Int, Int, String).self)
            let row = try #require(rows.first)
            #expect(row.3 == Journal.text(try collector.store.journal(id)))
            if id == ride {
                #expect(row.0 == "lz4" && row.2 < row.1 / 2, "\(row.1) bytes stored in \(row.2), \(row.0)")
            } else {
                #expect(row.0 != "pglz")
            }
        }
    }

    @Test("a ride saved while a sync runs goes in the same run; a refused ride is tried once per run")
    func savedDuringSync() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        let first = try box.replay(Fixtures.journals[0])
        // A ride whose stored digest is not its content's: the server refuses it at every push.
        let damaged = try box.replay(Fixtures.journals[1])
        try await DatabaseQueue(path: box.path).write { db in
            try db.execute(
                sql: "UPDATE workout SET journalDigest = ? WHERE id = ?",
                arguments: [String(repeating: "0", count: 64), damaged])
        }
        try await withConnections { connections in
            // The ride table locked: the sync's first push waits on it, after it listed what it sends.
            let locker = try await connections.server(address)
            try await locker.execute("BEGIN")
            try await locker.execute("LOCK TABLE ride IN ACCESS EXCLUSIVE MODE")
            let boxSync = try await connections.sync(box, address)
            let run = Task { try await boxSync.sync() }
            var waited = 0
            while try await serverRows(address, "SELECT count(*) FROM pg_locks WHERE NOT granted", as: Int.self)
                .first == 0
            {
                waited += 1
                #expect(waited < 1000, "the sync never waited on the locked table")
                if waited >= 1000 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let saved = try box.replay(Fixtures.journals[2])
            try await locker.execute("COMMIT")
            let (pushed, _) = try await run.value
            let results = Dictionary(grouping: pushed, by: { $0.id ?? 0 }).mapValues { $0.map(\.result) }
            #expect(results[first] == [.inserted])
            #expect(results[damaged] == [.refused])
            #expect(results[saved] == [.inserted])
            let stored = try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self)
            #expect(stored == [2])
        }
    }

    @Test("the server refuses content whose digest does not match, and the other rides go on")
    func digestMismatch() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let server = try await connections.server(address)
            let rider = UUID()
            let collector = UUID()
            try await server.execute("INSERT INTO rider (id, name) VALUES (\(rider), 'Anna')")
            try await server.execute(
                "INSERT INTO collector (id, name, rider_id) VALUES (\(collector), 'box', \(rider))")
            let journal = "# cyclelog journal 1\n"
            let wrong = String(repeating: "0", count: 64)
            let answer = try await server.rows(
                """
                SELECT cyclelog_push(\(UUID()), \(rider), \(collector), 1, \(wrong), \(journal), NULL, NULL, NULL, NULL,
                    '{}'::jsonb, NULL, NULL)
                """, as: String.self)
            #expect(answer.first?.hasPrefix("refused: its content digest is \(wrong)") == true)
            #expect(try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self).first == 0)
        }
    }

    @Test("the rule: older → replaced, same → unchanged, other content → conflict, newer or tombstone → stale")
    func theRule() async throws {
        let address = try await initializedServer()
        let a = try Collector("a")
        let id = try a.replay(Fixtures.journals[2])
        try await withConnections { connections in
            let syncA = try await connections.sync(a, address)
            #expect(try await syncA.push().map(\.result) == [.inserted])
            let summary = try #require(try a.store.summary(id))

            // A copy of this database made now (version 1), then a rebuild with another option here: version 2.
            let old = try a.copy("old")
            var options = Replayer.Options()
            options.wheelCircumferenceMillimetres = 2000
            try a.replay(Fixtures.journals[2], options: options)
            #expect(try a.store.summary(id)?.version == 2)
            #expect(try await syncA.push().map(\.result) == [.replaced])
            let held = try await serverRows(
                address,
                "SELECT version, content_digest FROM ride WHERE sync_identifier = '\(summary.syncIdentifier)'",
                as: (Int, String).self)
            let newDigest = try a.store.summary(id)?.contentDigest
            #expect(held.first?.0 == 2 && held.first?.1 == newDigest)

            // The old copy, changed differently to its own version 2: the same version, another content.
            options.wheelCircumferenceMillimetres = 2300
            try old.replay(Fixtures.journals[2], options: options)
            let syncOld = try await connections.sync(old, address)
            #expect(try await syncOld.push().map(\.result) == [.conflict])
            let conflicts = try await syncOld.conflicts()
            #expect(conflicts.count == 1 && conflicts.first?.version == 2 && conflicts.first?.serverVersion == 2)
            #expect(conflicts.first?.syncIdentifier == summary.syncIdentifier)
            let oldDigest = try old.store.summary(id)?.contentDigest
            #expect(conflicts.first?.incomingDigest == oldDigest)
            // The server's row is kept.
            let kept = try await serverRows(
                address, "SELECT content_digest FROM ride WHERE sync_identifier = '\(summary.syncIdentifier)'",
                as: String.self)
            #expect(kept.first == newDigest)

            // A copy still at version 1 with changed content: stale, nothing written.
            let older = try Collector("older")
            options.wheelCircumferenceMillimetres = 2100
            let olderID = try older.replay(Fixtures.journals[2], options: options)
            #expect(try older.store.summary(olderID)?.version == 1)
            let syncOlder = try await connections.sync(older, address)
            _ = try await syncOlder.join(a.store.rider().name)
            // Joining raised its version to 2 (a rider change): make it 1 again, as an old machine would hold it.
            try older.store.setVersion(olderID, 1)
            #expect(try await syncOlder.push().map(\.result) == [.stale])

            // Deleted where it was recorded: the tombstone replaces it; the old copy's version 2 is then stale.
            #expect(try a.store.delete(id))
            #expect(try await syncA.push().map(\.result) == [.replaced])
            let tombstone = try await serverRows(
                address,
                "SELECT deleted, version, journal IS NULL FROM ride WHERE sync_identifier = '\(summary.syncIdentifier)'",
                as: (Bool, Int, Bool).self)
            #expect(tombstone.first?.0 == true && tombstone.first?.1 == 3 && tombstone.first?.2 == true)
            try old.clearSyncMarks()
            #expect(try await syncOld.push().map(\.result) == [.stale])
        }
    }
}

@Suite("sync identifiers in either case")
struct SyncIdentifierCaseTests {
    /// A live ride recorded by a cyclelog before 0.15 carries its identity in upper case in its journal and, until
    /// the migration, in the database; the server and every other ride have it in lower case.
    static func upperCaseJournal() throws -> (text: String, syncIdentifier: String) {
        let identity = UUID().uuidString.uppercased()
        let fixture = try String(contentsOfFile: Fixtures.folder + "/" + Fixtures.journals[2], encoding: .utf8)
        var lines = fixture.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let first = try #require(lines.firstIndex { !$0.hasPrefix("#") })
        let time = try #require(lines[first].split(separator: " ").first)
        lines.insert("\(time) start sync=\(identity)", at: first)
        return (lines.joined(separator: "\n"), identity)
    }

    @Test("a ride whose journal writes its identity in upper case: stored, listed and synced in lower case, once")
    func upperCaseIdentity() async throws {
        let address = try await initializedServer()
        let (text, identity) = try Self.upperCaseJournal()
        let box = try Collector("box")
        let outcome = try Replayer(store: box.store).replay(CaptureFile.journal(text: text, label: "live"))
        #expect(outcome.summary.syncIdentifier == identity.lowercased())
        #expect(try box.store.workout(syncIdentifier: identity)?.id == outcome.summary.id)
        // The journal keeps its own bytes, and so its digest.
        #expect(Journal.text(try box.store.journal(outcome.summary.id)).contains("sync=\(identity)"))
        // An older database holding the upper-case spelling is brought to lower case when opened.
        try await DatabaseQueue(path: box.path).write { db in
            try db.execute(sql: "UPDATE workout SET syncIdentifier = upper(syncIdentifier)")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v15 sync identifiers in lower case'")
        }
        let reopened = try WorkoutStore(path: box.path)
        #expect(try reopened.summary(outcome.summary.id)?.syncIdentifier == identity.lowercased())
        try await withConnections { connections in
            let sync = Synchronizer(local: reopened, server: try await connections.server(address))
            let first = try await sync.sync()
            #expect(first.pushed.map(\.result) == [.inserted])
            #expect(first.pulled.isEmpty)
            // Nothing new on either side: nothing is pushed, nothing stored again.
            let second = try await sync.sync()
            #expect(second.pushed.isEmpty && second.pulled.isEmpty, "\(second)")
            // A copy on another machine pulls nothing it holds, in whichever case.
            let copy = try box.copy("copy")
            let copied = try await connections.sync(copy, address).sync()
            #expect(copied.pulled.allSatisfy { $0.result != .stored }, "\(copied)")
        }
    }
}

extension Collector {
    /// Forgets what the shared store acknowledged and how far it was pulled, as a database copied from before a
    /// sync would.
    func clearSyncMarks() throws {
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE workout SET syncedVersion = NULL, syncedDigest = NULL")
            try db.execute(sql: "UPDATE tombstone SET synced = 0")
            try db.execute(sql: "DELETE FROM pullHorizon")
        }
    }
}
