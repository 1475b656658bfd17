import Foundation
import GRDB
import PostgresNIO
import Recording
import RideJournal
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore
import Workouts

@testable import RideSync

@Suite("Rides across machines: pull, join, deletions, conflicts, concurrency")
struct SyncAcrossMachinesTests {
    /// `show --json` of a workout without what depends on the database it is in (its local id).
    func shown(_ store: WorkoutStore, _ id: Int64) throws -> String {
        var summary = try #require(try store.summary(id))
        summary.id = 0
        return summary.json.rendered()
    }

    /// A box with one ride (`fixture`) pushed, and a laptop that joined the box's rider and pulled it.
    func twoMachines(
        _ connections: Connections, _ address: ServerAddress, ride fixture: String
    ) async throws -> (box: Collector, laptop: Collector, boxSync: Synchronizer, laptopSync: Synchronizer, id: Int64) {
        let box = try Collector("box")
        let id = try box.replay(fixture)
        let laptop = try Collector("laptop")
        let boxSync = try await connections.sync(box, address)
        _ = try await boxSync.push()
        let laptopSync = try await connections.sync(laptop, address)
        _ = try await laptopSync.join(try box.store.rider().name)
        _ = try await laptopSync.pull()
        return (box, laptop, boxSync, laptopSync, id)
    }

    @Test("a second machine joins the rider and pulls every ride: the same content, marked, never pushed back")
    func joinAndPull() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        let ids = try Fixtures.journals.map { try box.replay($0) }
        // An imported FIT file travels as its bytes.
        let imported = try FITImporter(store: box.store).importFile(
            RideRecords.fitFile("sweatpy_2020-06-01-16-52-40").path)
        let fitID = try #require(imported.first?.summary.id)
        // Its mark as a ramp test travels with it (its version 2) and gives the laptop the box's FTP.
        try box.store.setFitnessTest(fitID, .ramp)
        try box.store.renameRider("Anna")
        let laptop = try Collector("laptop")
        try await withConnections { connections in
            let boxSync = try await connections.sync(box, address)
            #expect(try await boxSync.push().count == ids.count + 1)
            let laptopSync = try await connections.sync(laptop, address)
            #expect(try await laptopSync.join("Anna") == 0)
            #expect(try laptop.store.rider().uuid == box.store.rider().uuid)
            let pulled = try await laptopSync.pull()
            #expect(pulled.count == ids.count + 1)
            #expect(pulled.allSatisfy { $0.result == .stored && $0.problem == nil })
            for id in ids + [fitID] {
                let original = try #require(try box.store.summary(id))
                let copy = try #require(try laptop.store.workout(syncIdentifier: original.syncIdentifier))
                #expect(copy.version == original.version && copy.contentDigest == original.contentDigest)
                #expect(try shown(laptop.store, copy.id) == (try shown(box.store, id)))
            }
            #expect(try laptop.store.workout(syncIdentifier: box.store.summary(fitID)!.syncIdentifier)?.version == 2)
            let fitSync = try #require(try box.store.summary(fitID)).syncIdentifier
            let mark = try await DatabaseQueue(path: laptop.path).read { db in
                try String.fetchOne(
                    db, sql: "SELECT fitnessTest FROM workout WHERE syncIdentifier = ?", arguments: [fitSync])
            }
            #expect(mark == "ramp")
            let estimates = { (store: WorkoutStore) in
                try store.ftpHistory().estimates.map { "\($0.method) \($0.watts) \($0.effectiveMicroseconds)" }
            }
            #expect(try estimates(laptop.store) == estimates(box.store))
            // Marked with the collector that recorded them; nothing to push back, nothing more to pull.
            let boxName = try box.store.rider().collectorName
            #expect(try laptop.store.localCopies().values.allSatisfy { $0.collector == boxName })
            #expect(try laptop.store.pendingRides().isEmpty)
            #expect(try await laptopSync.push().isEmpty)
            #expect(try await laptopSync.pull().isEmpty)
            // A joining machine's own rides become the rider's, each at its next version.
            let third = try Collector("third")
            let own = try third.replay("journals/polar-h7.journal")
            let thirdSync = try await connections.sync(third, address)
            #expect(try await thirdSync.join("Anna") == 1)
            #expect(try third.store.summary(own)?.version == 2)
            #expect(try await thirdSync.push().map(\.result) == [.inserted])
            #expect(try await boxSync.pull().map(\.result) == [.stored])
        }
    }

    @Test("a ride deleted on one machine is deleted on the others and never comes back from an old copy")
    func deletionTravels() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let (box, laptop, boxSync, laptopSync, id) = try await twoMachines(
                connections, address, ride: Fixtures.journals[1])
            let syncIdentifier = try #require(try box.store.summary(id)).syncIdentifier
            let backup = try box.copy("backup")
            #expect(try box.store.delete(id))
            #expect(try await boxSync.push().map(\.result) == [.replaced])
            #expect(try await laptopSync.pull().map(\.result) == [.deleted])
            #expect(try laptop.store.workout(syncIdentifier: syncIdentifier) == nil)
            // The backup, restored and replayed again: its version is older than the deletion.
            try backup.clearSyncMarks()
            let backupSync = try await connections.sync(backup, address)
            #expect(try await backupSync.push().map(\.result) == [.stale])
            #expect(try await backupSync.pull().map(\.result) == [.deleted])
            #expect(try backup.store.workout(syncIdentifier: syncIdentifier) == nil)
            let row = try await serverRows(
                address, "SELECT deleted FROM ride WHERE sync_identifier = '\(syncIdentifier)'", as: Bool.self)
            #expect(row == [true])
        }
    }

    @Test("a rename is the ride's next version: it replaces the server's row and reaches the other machines")
    func renameTravels() async throws {
        let address = try await initializedServer()
        try await withConnections { connections in
            let (box, laptop, boxSync, laptopSync, id) = try await twoMachines(
                connections, address, ride: Fixtures.journals[2])
            let original = try #require(try box.store.summary(id))
            #expect(try box.store.rename(id, to: "Hill repeats, Tuesday"))
            #expect(try await boxSync.push().map(\.result) == [.replaced])
            let row = try await serverRows(
                address,
                """
                SELECT r.version, r.content_digest, s.name FROM ride r JOIN ride_summary s USING (sync_identifier)
                WHERE sync_identifier = '\(original.syncIdentifier)'
                """,
                as: (Int, String, String).self)
            // The content is the same journal: only the version and the name changed.
            #expect(row.map(\.0) == [original.version + 1])
            #expect(row.map(\.1) == [try #require(original.contentDigest)])
            #expect(row.map(\.2) == ["Hill repeats, Tuesday"])
            #expect(try await laptopSync.pull().map(\.result) == [.stored])
            let copy = try #require(try laptop.store.workout(syncIdentifier: original.syncIdentifier))
            #expect(copy.version == original.version + 1)
            #expect(try laptop.store.summary(copy.id)?.plan.name == "Hill repeats, Tuesday")
            // A pulled ride is renamed on the machine that recorded it, not here.
            #expect(throws: StoreError.self) { try laptop.store.rename(copy.id, to: "Mine") }
            #expect(try await laptopSync.push().isEmpty)
        }
    }

    @Test("a conflict is listed and settled either way; the settled ride is the same everywhere")
    func conflictSettled() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        let id = try box.replay(Fixtures.journals[3])
        try await withConnections { connections in
            let boxSync = try await connections.sync(box, address)
            _ = try await boxSync.push()
            let copy = try box.copy("copy")
            var options = Replayer.Options()
            options.autoPause = AutoPause()
            try box.replay(Fixtures.journals[3], options: options)
            options.autoPause = nil
            options.wheelCircumferenceMillimetres = 2000
            try copy.replay(Fixtures.journals[3], options: options)
            #expect(try await boxSync.push().map(\.result) == [.replaced])
            let copySync = try await connections.sync(copy, address)
            #expect(try await copySync.push().map(\.result) == [.conflict])
            var conflicts = try await copySync.conflicts()
            #expect(conflicts.count == 1)
            let conflict = try #require(conflicts.first)
            // Only the machine holding the conflicting copy can settle it.
            await #expect(throws: SyncError.self) { try await boxSync.resolve(conflict.id, keep: .local) }
            _ = try await copySync.resolve(conflict.id, keep: .local)
            #expect(try copy.store.summary(id)?.version == 3)
            conflicts = try await copySync.conflicts()
            #expect(conflicts.isEmpty)
            let kept = try #require(try copy.store.summary(id)?.contentDigest)
            let server = try await serverRows(
                address, "SELECT version, content_digest FROM ride", as: (Int, String).self)
            #expect(server.first?.0 == 3 && server.first?.1 == kept)
            // The box now pulls the settled version.
            #expect(try await boxSync.pull().map(\.result) == [.stored])
            #expect(try box.store.summary(id)?.contentDigest == kept)
            #expect(try box.store.summary(id)?.version == 3)

            // Keeping the server's copy instead: the local one is replaced by it.
            let other = try box.copy("other")
            try other.clearSyncMarks()
            options.wheelCircumferenceMillimetres = 2300
            try box.replay(Fixtures.journals[3], options: options)
            options.wheelCircumferenceMillimetres = 2400
            try other.replay(Fixtures.journals[3], options: options)
            #expect(try await boxSync.push().map(\.result) == [.replaced])
            let otherSync = try await connections.sync(other, address)
            #expect(try await otherSync.push().map(\.result) == [.conflict])
            let second = try #require(try await otherSync.conflicts().first)
            _ = try await otherSync.resolve(second.id, keep: .server)
            #expect(try other.store.summary(id)?.contentDigest == box.store.summary(id)?.contentDigest)
            #expect(try other.store.summary(id)?.version == 4)
            #expect(try await otherSync.conflicts().isEmpty)
            #expect(try await otherSync.push().isEmpty)
        }
    }

    @Test("three collectors pushing overlapping rides at once: each ride once; two pushing one ride: one inserts")
    func concurrentCollectors() async throws {
        let address = try await initializedServer()
        let first = try Collector("first")
        for fixture in Fixtures.journals { try first.replay(fixture) }
        try first.store.renameRider("Club")
        // Copies of one database: the same rides, the same rider, three collectors (each its own UUID).
        let collectors = try [first, first.copy("second"), first.copy("third")]
        try collectors[1].replay("journals/polar-h7.journal")
        try collectors[2].replay("journals/polar-h7.journal")
        for collector in collectors.dropFirst() { try collector.clearSyncMarks() }
        try await withConnections { connections in
            var syncs: [Synchronizer] = []
            for collector in collectors { syncs.append(try await connections.sync(collector, address)) }
            let reports = try await withThrowingTaskGroup(of: [Synchronizer.Pushed].self) { group in
                for sync in syncs { group.addTask { try await sync.push() } }
                var all: [[Synchronizer.Pushed]] = []
                for try await report in group { all.append(report) }
                return all
            }
            let results = reports.flatMap { $0 }
            let distinct = Set(results.map(\.syncIdentifier))
            #expect(distinct.count == Fixtures.journals.count + 1)
            // Each ride inserted exactly once, every other push of it unchanged.
            for syncIdentifier in distinct {
                let outcomes = results.filter { $0.syncIdentifier == syncIdentifier }.map(\.result)
                #expect(outcomes.filter { $0 == .inserted }.count == 1)
                #expect(outcomes.allSatisfy { $0 == .inserted || $0 == .unchanged })
            }
            let count = try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self)
            #expect(count == [distinct.count])
            #expect(try await serverRows(address, "SELECT count(*) FROM ride_conflict", as: Int.self) == [0])
        }
    }

    @Test("the same ride heard by two collectors (two sync identifiers, overlapping times) is listed as a duplicate")
    func duplicatesListed() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        let laptop = try Collector("laptop")
        let ride = try box.replay(Fixtures.journals[2])
        // The laptop heard the same ride through a different capture: its journal with one notification less.
        let text = Journal.text(try box.store.journal(ride))
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let notification = try #require(lines.lastIndex { $0.contains(" notify ") })
        lines.remove(at: notification)
        let capture = CaptureFile.journal(text: lines.joined(separator: "\n"), label: "heard twice")
        let other = try Replayer(store: laptop.store).replay(capture).summary
        #expect(other.syncIdentifier != (try box.store.summary(ride)?.syncIdentifier))
        try await withConnections { connections in
            let boxSync = try await connections.sync(box, address)
            _ = try await boxSync.push()
            let laptopSync = try await connections.sync(laptop, address)
            _ = try await laptopSync.join(try box.store.rider().name)
            _ = try await laptopSync.push()
            let duplicates = try await laptopSync.duplicates()
            #expect(duplicates.count == 1)
            let summary = try #require(try box.store.summary(ride))
            #expect(
                Set([duplicates.first?.first, duplicates.first?.second])
                    == Set([summary.syncIdentifier, other.syncIdentifier]))
            #expect((duplicates.first?.overlapSeconds ?? 0) > 0)
            // Nothing was merged: both rides are on the server.
            #expect(try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self) == [2])
        }
    }

    @Test("a ride that cannot be stored here is skipped and reported; the others are pulled")
    func pullSkipsWhatCannotBeStored() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        try box.replay(Fixtures.journals[0])
        let laptop = try Collector("laptop")
        try await withConnections { connections in
            let boxSync = try await connections.sync(box, address)
            _ = try await boxSync.push()
            // Another collector's ride whose journal holds no event this cyclelog can read (its digest is right).
            let rider = try #require(UUID(uuidString: try box.store.rider().uuid))
            let collector = try #require(UUID(uuidString: try box.store.rider().collectorUUID))
            let text = "# cyclelog journal 1\nnot a journal line\n"
            let server = try await connections.server(address)
            let answer = try await server.rows(
                """
                SELECT cyclelog_push(\(UUID()), \(rider), \(collector), 1,
                    encode(sha256(convert_to(\(text)::text, 'UTF8')), 'hex'), \(text)::text, NULL, NULL, NULL, NULL,
                    '{}'::jsonb, now(), now())
                """, as: String.self)
            #expect(answer == ["inserted"])
            let laptopSync = try await connections.sync(laptop, address)
            _ = try await laptopSync.join(try box.store.rider().name)
            let pulled = try await laptopSync.pull()
            #expect(pulled.map(\.result).sorted { $0.rawValue < $1.rawValue } == [.skipped, .stored])
            #expect(pulled.first { $0.result == .skipped }?.problem?.contains("does not rebuild") == true)
            #expect(try laptop.store.list().count == 1)
            // The pull's horizon stays below the row not taken: the next pull reads it again and says so again.
            #expect(try await laptopSync.pull().map(\.result) == [.skipped])
        }
    }

    @Test("rides read one ahead are stored in the server's order, each as its own row; one refused between them")
    func pullReadsAhead() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        for fixture in Fixtures.journals { try box.replay(fixture) }
        let laptop = try Collector("laptop")
        try await withConnections { connections in
            let boxSync = try await connections.sync(box, address)
            _ = try await boxSync.push()
            // A row whose content is not the one its digest names, dated an hour before the last ride: the rides read
            // ahead of it and the one read while it is refused are each still the ride of their own row.
            let starts = try await serverRows(
                address, "SELECT start_time FROM ride ORDER BY start_time, sync_identifier", as: Date.self)
            try #require(starts.count == Fixtures.journals.count)
            let edited = UUID()
            let text = try SyncTrustTests.journalText(Fixtures.journals[3], naming: edited.uuidString.lowercased())
            let rider = try #require(UUID(uuidString: try box.store.rider().uuid))
            let collector = try #require(UUID(uuidString: try box.store.rider().collectorUUID))
            let between = starts[starts.count - 1].addingTimeInterval(-3600)
            try #require(starts[starts.count - 2] < between)
            // Written as anyone who can write the table could (the server's own function checks the digest).
            try await connections.server(address).execute(
                """
                INSERT INTO ride (sync_identifier, rider_id, version, content_digest, collector_id, journal, summary,
                    start_time, end_time)
                VALUES (\(edited), \(rider), 1, \(String(repeating: "b", count: 64)), \(collector), \(text)::text,
                    '{}'::jsonb, \(between), \(between))
                """)

            let laptopSync = try await connections.sync(laptop, address)
            _ = try await laptopSync.join(try box.store.rider().name)
            let pulled = try await laptopSync.pull()
            let order = try await serverRows(
                address, "SELECT sync_identifier FROM ride ORDER BY start_time NULLS FIRST, sync_identifier",
                as: UUID.self)
            #expect(pulled.map(\.syncIdentifier) == order.map(\.lowercased))
            #expect(order.firstIndex(of: edited) == starts.count - 1)
            #expect(pulled.map(\.result) == order.map { $0 == edited ? .skipped : .stored })
            #expect(pulled[starts.count - 1].problem?.contains("not the \(String(repeating: "b", count: 64))") == true)
            for ride in pulled where ride.result == .stored {
                let copy = try #require(try laptop.store.workout(syncIdentifier: ride.syncIdentifier))
                let original = try #require(try box.store.workout(syncIdentifier: ride.syncIdentifier))
                #expect(copy.id == ride.id)
                #expect(copy.contentDigest == original.contentDigest && copy.sourceDigest == original.sourceDigest)
            }
            #expect(try laptop.store.workout(syncIdentifier: edited.lowercased) == nil)
        }
    }

    @Test("a ride larger than a pulled ride may be is refused by its size, the others pulled; taken once it may be")
    func pullRefusesTooLargeRides() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        for fixture in Fixtures.journals { try box.replay(fixture) }
        // A real 5-minute ride: its journal, 155 kB, is the only one over the limit set below.
        let large = try #require(try box.store.summary(try box.replay("rides/sweatpy_6449921903_ACTIVITY.journal")))
        let laptop = try Collector("laptop")
        try await withConnections { connections in
            _ = try await connections.sync(box, address).push()
            let sizes = try await serverRows(
                address, "SELECT sync_identifier::text, octet_length(journal) FROM ride ORDER BY 2",
                as: (String, Int).self)
            try #require(sizes.last?.0 == large.syncIdentifier && sizes.dropLast().allSatisfy { $0.1 < 100_000 })
            let bytes = try #require(sizes.last?.1)

            var laptopSync = try await connections.sync(laptop, address)
            laptopSync.largestPulledRideBytes = 100_000
            _ = try await laptopSync.join(try box.store.rider().name)
            let pulled = try await laptopSync.pull()
            #expect(pulled.count == sizes.count)
            for ride in pulled {
                #expect(ride.result == (ride.syncIdentifier == large.syncIdentifier ? .skipped : .stored))
            }
            let refused = try #require(pulled.first { $0.syncIdentifier == large.syncIdentifier })
            // The size in kilobytes with one decimal, rounded down, as the server counts the journal's bytes.
            let shown = "\(bytes / 1_000).\(bytes % 1_000 / 100) KB"
            #expect(
                refused.problem?.contains(
                    "its journal is \(shown), more than the 100.0 KB a ride from the shared store")
                    == true, "\(refused.problem ?? "no problem")")
            #expect(try laptop.store.workout(syncIdentifier: large.syncIdentifier) == nil)

            // The limit allowing it, the next pull takes it (the horizon stayed below the ride refused).
            laptopSync.largestPulledRideBytes = Synchronizer.defaultLargestPulledRideBytes
            let again = try await laptopSync.pull()
            #expect(again.map(\.syncIdentifier) == [large.syncIdentifier] && again.first?.result == .stored)
            let copy = try #require(try laptop.store.workout(syncIdentifier: large.syncIdentifier))
            #expect(copy.contentDigest == large.contentDigest)
        }
    }

    @Test("a pulled journal's ride takes its row's marks as it is stored: the same row and FTP as marked after it")
    func pulledMarksInTheRidesTransaction() throws {
        let fixture = "rides/sweatpy_4078723797.journal"
        let marks = WorkoutStore.PulledMarks(
            version: 3, digest: String(repeating: "c", count: 64), collector: "box", fitnessTest: "ramp",
            name: "Tuesday ramp")
        // As a pull stores a journal's ride now: the marks in the replay's last transaction.
        let together = try Collector("together")
        var options = Replayer.Options()
        options.pulled = marks
        let id = try together.replay(fixture, options: options)
        // As it did before, and still does for a file's ride or one stored already: replayed, then marked.
        let after = try Collector("after")
        let otherID = try after.replay(fixture)
        try after.store.adoptPulled(otherID, marks)

        func row(_ collector: Collector, _ id: Int64) throws -> [String] {
            try DatabaseQueue(path: collector.path).read { db in
                let row = try #require(
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT version, collector, fitnessTest, name, renamed, syncedVersion, syncedDigest,
                                journalDigest FROM workout WHERE id = ?
                            """, arguments: [id]))
                return row.databaseValues.map(\.description)
            }
        }
        let marked = try row(together, id)
        #expect(marked == (try row(after, otherID)))
        #expect(Array(marked.prefix(4)) == ["3", "\"box\"", "\"ramp\"", "\"Tuesday ramp\""], "\(marked)")
        #expect(marked[5] == "3" && marked[6] == "\"\(marks.digest)\"", "\(marked)")
        let estimates = { (store: WorkoutStore) in
            try store.ftpHistory().estimates.map { "\($0.method) \($0.watts) \($0.effectiveMicroseconds)" }
        }
        #expect(try estimates(together.store) == estimates(after.store))
        #expect(try estimates(together.store).contains { $0.hasPrefix("ramp") }, "the ramp test's mark gives an FTP")
        // Replayed again (stored already), the ride is not marked by the replay: its marks stay as they are.
        options.pulled?.version = 9
        #expect(try together.replay(fixture, options: options) == id)
        #expect(try row(together, id) == marked)
    }

    @Test("a pull reads the rows written since its horizon: a write committed late is pulled, an old row is not read")
    func pullReadsWhatChanged() async throws {
        let address = try await initializedServer()
        let box = try Collector("box")
        let ids = try [Fixtures.journals[0], Fixtures.journals[1]].map { try box.replay($0) }
        let (early, late) = (
            try #require(try box.store.summary(ids[0])).syncIdentifier,
            try #require(try box.store.summary(ids[1])).syncIdentifier
        )
        let laptop = try Collector("laptop")
        func named(_ sync: String) throws -> String? {
            try laptop.store.summary(try #require(try laptop.store.workout(syncIdentifier: sync)).id)?.plan.name
        }
        try await withConnections { connections in
            _ = try await connections.sync(box, address).push()
            let laptopSync = try await connections.sync(laptop, address)
            _ = try await laptopSync.join(try box.store.rider().name)
            #expect(try await laptopSync.pull().map(\.result) == [.stored, .stored])
            #expect(try await laptopSync.pull().isEmpty)
            func rename(_ sync: String, _ name: String) -> PostgresQuery {
                """
                UPDATE ride SET version = version + 1, summary = jsonb_set(summary, '{name}', to_jsonb(\(name)::text))
                WHERE sync_identifier = \(UUID(uuidString: sync)!)
                """
            }
            // A write begun before the laptop's pull and committed after it, and a later write committed before it:
            // an ID counted as writes begin would put the first below what the pull has read, and lose it.
            let slow = try await connections.server(address)
            try await slow.execute("BEGIN")
            try await slow.execute(rename(early, "Committed late"))
            try await connections.server(address).execute(rename(late, "Committed early"))
            #expect(try await laptopSync.pull().map(\.syncIdentifier) == [late])
            try await slow.execute("COMMIT")
            #expect(try await laptopSync.pull().map(\.syncIdentifier) == [early])
            #expect(try named(early) == "Committed late" && named(late) == "Committed early")
            #expect(try await laptopSync.pull().isEmpty)
            // A row changed under an old mark (its trigger off, which only the table's owner can do) is not read:
            // the pull reads what was written since its horizon, not every row.
            let owner = try await connections.server(address)
            try await owner.execute("ALTER TABLE ride DISABLE TRIGGER ride_changed")
            try await owner.execute(rename(early, "Under an old mark"))
            try await owner.execute(
                "UPDATE ride SET changed_by = '1'::xid8 WHERE sync_identifier = \(UUID(uuidString: early)!)")
            try await owner.execute("ALTER TABLE ride ENABLE TRIGGER ride_changed")
            #expect(try await laptopSync.pull().isEmpty)
            #expect(try named(early) == "Committed late")
            // A database copied from before its syncs reads every row again, and finds it.
            try laptop.clearSyncMarks()
            #expect(try await laptopSync.pull().filter { $0.result == .stored }.map(\.syncIdentifier) == [early])
            #expect(try named(early) == "Under an old mark")
        }
    }

    @Test("the horizon is kept per store: another store on the same PostgreSQL, written to before, is read whole")
    func horizonPerStore() async throws {
        let older = try await initializedServer()
        let newer = try await initializedServer()
        let box = try Collector("box")
        let first = try box.replay(Fixtures.journals[0])
        let laptop = try Collector("laptop")
        try await withConnections { connections in
            // The first ride reaches the older store only, by transactions before any on the newer one.
            _ = try await connections.sync(box, older).push()
            try box.replay(Fixtures.journals[1])
            #expect(try await connections.sync(box, newer).push().count == 1)
            let toNewer = try await connections.sync(laptop, newer)
            _ = try await toNewer.join(try box.store.rider().name)
            #expect(try await toNewer.pull().map(\.result) == [.stored])
            // The same rider on the older store: its rows were written below the newer store's horizon.
            let pulled = try await connections.sync(laptop, older).pull()
            #expect(pulled.map(\.syncIdentifier) == [try #require(try box.store.summary(first)).syncIdentifier])
            #expect(try laptop.store.list().count == 2)
        }
    }
}
