import Foundation
import GRDB
import PostgresNIO
import Recording
import RideJournal
import RideTestSupport
import Testing
import Workouts

@testable import RideSync
@testable import WorkoutStore

/// What a pull takes from a shared store it cannot trust (anyone who may write table `ride`: a club member with the
/// shared role, the server's operator, a compromised server), and what a second collector may change: a forged or
/// mismatched row is refused by name and stores nothing, a ride recorded here is never replaced by another
/// recording, a deleted ride comes back only when the rider says so, a pulled ride is changed only where it was
/// recorded, and whatever the server sends is bounded. Each test ends with both machines and the server agreeing
/// ride for ride.
@Suite("A pull trusts nothing it cannot check")
struct SyncTrustTests {
    /// The canonical journal text of `fixture` (what `show --journal` prints once it is stored), with a `start`
    /// line naming `syncIdentifier` when one is given.
    static func journalText(_ fixture: String, naming syncIdentifier: String? = nil) throws -> String {
        var text = try String(contentsOfFile: Fixtures.folder + "/" + fixture, encoding: .utf8)
        if let syncIdentifier {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let first = try #require(lines.firstIndex { !$0.hasPrefix("#") })
            let time = try #require(lines[first].split(separator: " ").first)
            lines.insert("\(time) start sync=\(syncIdentifier)", at: first)
            text = lines.joined(separator: "\n")
        }
        let scratch = try WorkoutStore()
        let outcome = try Replayer(store: scratch).replay(CaptureFile.journal(text: text, label: fixture))
        return Journal.text(try scratch.journal(outcome.summary.id))
    }

    /// Every ride's identity, version and content digest in a database, and on the server (rows not deleted).
    static func rides(_ store: WorkoutStore) throws -> [String: String] {
        var rides: [String: String] = [:]
        for (key, copy) in try store.localCopies() where !copy.deleted {
            rides[key] = "v\(copy.version) \(copy.contentDigest ?? "-")"
        }
        return rides
    }

    static func serverRides(_ address: ServerAddress) async throws -> [String: String] {
        var rides: [String: String] = [:]
        for (key, version, digest) in try await serverRows(
            address, "SELECT sync_identifier::text, version, content_digest FROM ride WHERE NOT deleted",
            as: (String, Int, String).self)
        {
            rides[key] = "v\(version) \(digest)"
        }
        return rides
    }

    /// Both machines' rides, and the server's, are the same.
    static func expectAgreement(
        _ machines: [Collector], _ address: ServerAddress, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let server = try await serverRides(address)
        for machine in machines {
            #expect(try rides(machine.store) == server, sourceLocation: sourceLocation)
        }
    }

    @Test("a forged, mismatched or foreign row is refused by name and stores nothing; a ride recorded here stays")
    func forgedRows() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let (box, laptop, boxSync, laptopSync, id) = try await SyncAcrossMachinesTests().twoMachines(
                connections, address, ride: Fixtures.journals[1])
            let own = try #require(try box.store.summary(id))
            let server = try await connections.server(address)
            let (rider, collector) = try #require(
                try await server.rows(
                    "SELECT rider_id, collector_id FROM ride WHERE sync_identifier = \(UUID(uuidString: own.syncIdentifier)!)",
                    as: (UUID, UUID).self
                ).first)
            func insert(_ sync: UUID, version: Int, journal: String, digest: String?) async throws {
                let summary = #"{"name": "FORGED"}"#
                try await server.execute(
                    """
                    INSERT INTO ride (sync_identifier, rider_id, version, content_digest, collector_id, journal, summary)
                    VALUES (\(sync), \(rider), \(version), coalesce(\(digest)::text,
                        encode(sha256(convert_to(\(journal)::text, 'UTF8')), 'hex')), \(collector), \(journal)::text,
                        \(summary)::jsonb)
                    ON CONFLICT (sync_identifier) DO UPDATE SET version = EXCLUDED.version,
                        content_digest = EXCLUDED.content_digest, journal = EXCLUDED.journal, summary = EXCLUDED.summary
                    """)
            }

            // 1. An edited journal under its old digest: it rebuilds to other content than the row claims.
            let edited = UUID()
            let honest = try Self.journalText(Fixtures.journals[3], naming: edited.uuidString.lowercased())
            let wrongDigest = String(repeating: "a", count: 64)
            try await insert(edited, version: 1, journal: honest, digest: wrongDigest)
            // 2. A row whose journal is another ride's (its identity is not the row's).
            let foreign = UUID()
            try await insert(foreign, version: 1, journal: try Self.journalText(Fixtures.journals[4]), digest: nil)
            // 3. A row naming the ride recorded on the box, at a higher version, with another recording in it.
            try await insert(
                try #require(UUID(uuidString: own.syncIdentifier)), version: 7,
                journal: try Self.journalText(Fixtures.journals[3], naming: own.syncIdentifier), digest: nil)

            let countBefore = try laptop.store.list().count
            // Every workout row, unfinished ones too: a refused ride is checked before anything of it is written.
            func workoutRows(_ store: WorkoutStore) throws -> Int {
                try store.queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM workout") ?? -1 }
            }
            let (laptopRows, boxRows) = (try workoutRows(laptop.store), try workoutRows(box.store))
            let pulled = try await laptopSync.pull()
            let skipped = pulled.filter { $0.result == .skipped }
            #expect(Set(skipped.map(\.syncIdentifier)) == [edited.lowercased, foreign.lowercased], "\(pulled)")
            #expect(skipped.allSatisfy { $0.problem?.contains("was not taken") == true }, "\(skipped)")
            #expect(skipped.contains { $0.problem?.contains("not the \(wrongDigest)") == true })
            #expect(skipped.contains { $0.problem?.contains("another ride's") == true })
            // The row naming the box's ride is self-consistent and the laptop holds that ride as the box's: it
            // cannot tell it from a new version made on the box, and takes it in place of the old one.
            #expect(try laptop.store.list().count == countBefore)
            #expect(try laptop.store.workout(syncIdentifier: edited.lowercased) == nil)
            #expect(try laptop.store.workout(syncIdentifier: foreign.lowercased) == nil)
            #expect(try workoutRows(laptop.store) == laptopRows)

            // The box's own ride is not replaced by the row that names it: refused, its numbers as recorded.
            let boxPulled = try await boxSync.pull()
            let refusal = try #require(boxPulled.first { $0.syncIdentifier == own.syncIdentifier }, "\(boxPulled)")
            #expect(refusal.result == .skipped)
            #expect(refusal.problem?.contains("recorded here") == true, "\(refusal)")
            let after = try #require(try box.store.summary(id))
            #expect(after.version == own.version && after.contentDigest == own.contentDigest)
            #expect(after.statistics.averagePowerWatts == own.statistics.averagePowerWatts && after.plan.name == nil)
            #expect(try box.store.pendingRides().isEmpty, "nothing forged waits to be pushed as the box's own")
            #expect(try workoutRows(box.store) == boxRows)

            // Put right on the server (the operator removes the forgeries and puts the box's recording back as the
            // next version): both machines take it, and they and the server agree.
            try await server.execute("DELETE FROM ride WHERE sync_identifier IN (\(edited), \(foreign))")
            let original = try Self.journalText(Fixtures.journals[1])
            try await server.execute(
                """
                UPDATE ride SET version = 8, journal = \(original)::text, content_digest = \(own.contentDigest ?? "")::text,
                    summary = '{}'::jsonb
                WHERE sync_identifier = \(try #require(UUID(uuidString: own.syncIdentifier)))
                """)
            #expect(try await boxSync.pull().map(\.result) == [.stored])
            #expect(try await laptopSync.pull().map(\.result) == [.stored])
            try await Self.expectAgreement([box, laptop], address)
        }
    }

    @Test("a deleted ride is not stored again by a replay; --undelete brings it back on every machine")
    func deleteThenReplay() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let (box, laptop, boxSync, laptopSync, id) = try await SyncAcrossMachinesTests().twoMachines(
                connections, address, ride: Fixtures.journals[2])
            let syncIdentifier = try #require(try box.store.summary(id)).syncIdentifier
            #expect(try box.store.delete(id))
            #expect(try await boxSync.push().map(\.result) == [.replaced])
            #expect(try await laptopSync.pull().map(\.result) == [.deleted])
            // The rider re-imports an old folder on the laptop: the deletion wins, and the replay says so.
            let error = #expect(throws: ReplayError.self) { try laptop.replay(Fixtures.journals[2]) }
            #expect(error?.description.contains("was deleted") == true, "\(String(describing: error))")
            #expect(error?.description.contains("--undelete") == true)
            #expect(try laptop.store.workout(syncIdentifier: syncIdentifier) == nil)
            #expect(try laptop.store.pendingRides().isEmpty && laptop.store.tombstones(pendingOnly: true).isEmpty)
            #expect(try await laptopSync.sync().pushed.isEmpty)
            try await Self.expectAgreement([box, laptop], address)

            // Stored again on purpose: the version after the deletion, which the server and the box take.
            var options = Replayer.Options()
            options.rules.undelete = true
            let back = try laptop.replay(Fixtures.journals[2], options: options)
            #expect(try laptop.store.summary(back)?.version == 3)
            #expect(try await laptopSync.push().map(\.result) == [.replaced])
            #expect(try await boxSync.pull().map(\.result) == [.stored])
            #expect(try box.store.workout(syncIdentifier: syncIdentifier)?.version == 3)
            #expect(try await laptopSync.sync().pushed.isEmpty)
            try await Self.expectAgreement([box, laptop], address)
        }
    }

    @Test("a pulled ride is changed only where it was recorded; that change reaches the other machine")
    func changeAPulledRide() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let (box, laptop, boxSync, laptopSync, _) = try await SyncAcrossMachinesTests().twoMachines(
                connections, address, ride: Fixtures.journals[0])
            // On the laptop, another wheel size would make a version of its own that is never pushed.
            var laptopWheel = Replayer.Options()
            laptopWheel.wheelCircumferenceMillimetres = 2105
            let error = #expect(throws: ReplayError.self) {
                try laptop.replay(Fixtures.journals[0], options: laptopWheel)
            }
            #expect(error?.description.contains("was recorded by") == true, "\(String(describing: error))")
            // On the box, where it was recorded, the change is its next version, and the laptop pulls it.
            var boxWheel = Replayer.Options()
            boxWheel.wheelCircumferenceMillimetres = 2000
            try box.replay(Fixtures.journals[0], options: boxWheel)
            #expect(try await boxSync.push().map(\.result) == [.replaced])
            #expect(try await laptopSync.pull().map(\.result) == [.stored])
            try await Self.expectAgreement([box, laptop], address)
        }
    }

    @Test("what the server sends is bounded: a name as rename takes it, a refusal's reason and an error cut short")
    func oversized() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let (box, laptop, _, laptopSync, id) = try await SyncAcrossMachinesTests().twoMachines(
                connections, address, ride: Fixtures.journals[3])
            let syncIdentifier = try #require(try box.store.summary(id)).syncIdentifier
            let server = try await connections.server(address)
            let long = String(repeating: "ride ", count: 20_000)
            try await server.execute(
                """
                UPDATE ride SET version = version + 1, summary = jsonb_set(summary, '{name}', to_jsonb(\(long)::text))
                WHERE sync_identifier = \(UUID(uuidString: syncIdentifier)!)
                """)
            #expect(try await laptopSync.pull().map(\.result) == [.stored])
            let name = try #require(
                try laptop.store.summary(laptop.store.workout(syncIdentifier: syncIdentifier)!.id)?.plan.name)
            #expect(name.count <= 200 && name.hasPrefix("ride ride"))

            // A server whose push answers with 64 MB: the reason is cut, and so is what is kept of a failure.
            try await server.execute(
                """
                CREATE OR REPLACE FUNCTION cyclelog_push(p_sync uuid, p_rider uuid, p_collector uuid,
                    p_version integer, p_digest text, p_journal text, p_fit bytea, p_fit_name text,
                    p_fit_session integer, p_fitness_test text, p_summary jsonb, p_start timestamptz,
                    p_end timestamptz) RETURNS text LANGUAGE sql AS $$ SELECT 'refused: ' || repeat('x', 64000000) $$
                """)
            try laptop.replay(Fixtures.journals[4])
            let pushed = try await laptopSync.push()
            #expect(pushed.count == 1)
            #expect((pushed.first?.reason?.count ?? .max) < SyncError.longestDescription + 100)
            let huge = SyncError(.server, String(repeating: "y", count: 1_000_000))
            #expect(huge.description.count < SyncError.longestDescription + 100)
        }
    }
}
