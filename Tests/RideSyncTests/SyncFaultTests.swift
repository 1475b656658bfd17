import Foundation
import PostgresNIO
import Recording
import RideTestSupport
import TestSupport
import Testing
import WorkoutStore

@testable import RideSync

/// Faults in the middle of a push, seeded so that a failure repeats: the server stopped as by a power cut
/// (`pg_ctl stop -m immediate`) or `cyclelog-sync` killed with SIGKILL, at a moment drawn from the seed. After
/// recovery (the server started again, the push run again) every ride must be on the server exactly once at its
/// local version, every row's content must hash to its digest, and nothing may be listed as a conflict.
@Suite("Faults in the middle of a push", .serialized)
struct SyncFaultTests {
    static let faults = 50

    /// Many small rides: every fixture journal, each ridden on several days (its times moved by whole days, so
    /// that each is a ride of its own).
    /// Replayed off the concurrency pool: 57 replays are seconds of work that would hold one of its two threads.
    func manyRides(_ collector: Collector, days: Int) async throws -> Int {
        let path = collector.path
        return try await offThePool { try Self.manyRides(WorkoutStore(path: path), days: days) }
    }

    static func manyRides(_ store: WorkoutStore, days: Int) throws -> Int {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.folder + "/journals").filter {
            $0.hasSuffix(".journal")
        }.sorted()
        var count = 0
        for day in 0..<days {
            for name in names {
                let text = try String(contentsOfFile: Fixtures.folder + "/journals/" + name, encoding: .utf8)
                let moved = text.replacingOccurrences(
                    of: "2000-01-01T", with: "2000-01-\(String(format: "%02d", day + 2))T")
                _ = try Replayer(store: store).replay(
                    CaptureFile.journal(text: moved, label: "\(name) day \(day)"))
                count += 1
            }
        }
        return count
    }

    /// Waits until the server holds `count` rides of the push under way, or `seconds` have passed. Each ride is its
    /// own transaction, so the count moves as the push goes: a fault's moment is drawn in the push's progress, which
    /// no load on the machine moves, rather than in a time measured beforehand (a push slowed or sped up by the
    /// tests running beside it put most faults after the end). 0: at once, before the push has even connected.
    func waitUntilServerHolds(_ count: Int, _ address: ServerAddress, seconds: Double = 30) async throws {
        guard count > 0 else { return }
        let deadline = ContinuousClock.now + .seconds(seconds)
        try await SharedStore.with(address) { server throws(SyncError) in
            while ContinuousClock.now < deadline {
                let held = try await server.rows(PostgresQuery(unsafeSQL: "SELECT count(*) FROM ride"), as: Int.self)
                if (held.first ?? 0) >= count { return }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    /// After recovery: every ride on the server once, at its local version and digest, its content hashing to that
    /// digest (nothing half-written), no conflict, nothing left to push.
    func expectEachRideOnce(
        _ address: ServerAddress, _ collector: Collector, _ local: [String: WorkoutStore.PendingRide], fault: Int
    ) async throws {
        let held = try await serverRows(
            address,
            """
            SELECT sync_identifier::text, version, content_digest,
                encode(sha256(convert_to(journal, 'UTF8')), 'hex') FROM ride
            """, as: (String, Int, String, String).self)
        #expect(held.count == local.count, "fault \(fault)")
        #expect(Set(held.map(\.0)) == Set(local.keys), "fault \(fault)")
        for (syncIdentifier, version, digest, computed) in held {
            #expect(version == local[syncIdentifier]?.version && digest == local[syncIdentifier]?.contentDigest)
            #expect(computed == digest, "fault \(fault): a half-written ride \(syncIdentifier)")
        }
        #expect(try await serverRows(address, "SELECT count(*) FROM ride_conflict", as: Int.self) == [0])
        #expect(try collector.store.pendingRides().isEmpty, "fault \(fault)")
    }

    @Test("50 seeded faults: the server stopped or cyclelog-sync killed mid-push; after recovery each ride once")
    func seededFaults() async throws {
        let server = try await PostgresServer.started()
        let collector = try Collector("faults")
        let rides = try await manyRides(collector, days: 3)
        #expect(rides >= 50)
        let local = Dictionary(
            uniqueKeysWithValues: try collector.store.pendingRides().map { ($0.syncIdentifier, $0) })
        let binary = try builtBinary("cyclelog-sync").path
        var generator = SplitMix64(seed: 0x5EED_2026)
        var interrupted = 0
        // Faults after which the server held some of the rides but not all: cut in the middle of the transfer.
        var midTransfer = 0
        for fault in 0..<Self.faults {
            let address = try await initializedServer(on: server)
            try collector.clearSyncMarks()
            let environment = server.environment(address.database)
            let killing = fault % 2 == 1
            let landsAfter = Int(generator.next() % UInt64(rides))
            // A query written as the server goes away can be left waiting by PostgresNIO, even once its connection
            // is closed (3 of 25 such faults in one run here): the reply deadline ends it, well within the minute
            // this test waits.
            let pid = try spawnProgram(
                binary, ["push", "--db", collector.path, "--reply-timeout", "5"], environment: environment)
            try await waitUntilServerHolds(landsAfter, address)
            if killing {
                kill(pid, SIGKILL)
            } else {
                try await server.stopImmediately()
            }
            let ended = await waitProgram(pid)
            if !killing { try await server.start() }
            #expect(ended != nil, "fault \(fault): cyclelog-sync hung for a minute after the fault")
            let status = ended ?? -1
            // Killed: 137 (128 + 9), unless it had finished; the server gone: 75 (try again), unless it had finished.
            let expected: Set<Int32> = killing ? [0, 137] : [0, 75]
            #expect(expected.contains(status), "fault \(fault): exit \(status)")
            if status != 0 { interrupted += 1 }
            let before = try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self).first ?? 0
            if before > 0 && before < rides { midTransfer += 1 }
            let again = try await runProgram(binary, ["push", "--db", collector.path], environment: environment)
            #expect(again.status == 0, "fault \(fault): the push after recovery: \(again.output)")
            try await expectEachRideOnce(address, collector, local, fault: fault)
        }
        print(
            "sync faults: \(interrupted) of \(Self.faults) interrupted a push of \(rides) rides, \(midTransfer) with some "
                + "of the rides on the server")
        // The faults must have landed mid-push most of the time, or they test nothing.
        #expect(interrupted >= Self.faults / 2, "only \(interrupted) of \(Self.faults) faults interrupted a push")
        #expect(midTransfer >= Self.faults / 4, "only \(midTransfer) of \(Self.faults) faults landed mid-transfer")
        try await server.stopImmediately()
    }

    @Test(
        "20 seeded network cuts mid-push (a veth pair taken down): exit 75 at the reply deadline, then each ride once",
        .enabled(if: NetworkCut.possible, "a network namespace needs root and iproute2"))
    func networkCuts() async throws {
        let network = try await NetworkCut.made()
        defer { network.remove() }
        let server = try await PostgresServer.started(plainTCPAddress: network.serverAddress, namespace: network.server)
        defer { server.stopLater() }
        let collector = try Collector("cuts")
        let rides = try await manyRides(collector, days: 3)
        let local = Dictionary(
            uniqueKeysWithValues: try collector.store.pendingRides().map { ($0.syncIdentifier, $0) })
        let binary = try builtBinary("cyclelog-sync").path
        let replySeconds = 2.0
        func push(_ address: ServerAddress) -> (String, [String]) {
            network.inside(binary, ["push", "--db", collector.path, "--reply-timeout", "\(replySeconds)"])
        }
        func environment(_ address: ServerAddress) -> [String: String] {
            // Over the veth pair to the server's address: TCP, without TLS (a test network of this machine).
            [
                "PGHOST": network.serverAddress, "PGPORT": "\(server.tcpPort ?? 0)", "PGUSER": PostgresServer.superuser,
                "PGDATABASE": address.database, "PGSSLMODE": "disable", "PGPASSFILE": "/dev/null",
            ]
        }
        var generator = SplitMix64(seed: 0xC07_2026)
        var interrupted = 0
        var midTransfer = 0
        let faults = 20
        for fault in 0..<faults {
            let address = try await initializedServer(on: server)
            try collector.clearSyncMarks()
            let landsAfter = Int(generator.next() % UInt64(rides))
            let (program, arguments) = push(address)
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID())").path
            defer { unlink(output) }
            let pid = try spawnProgram(program, arguments, environment: environment(address), output: output)
            try await waitUntilServerHolds(landsAfter, address)
            try await network.cut()
            let cutAt = ContinuousClock.now
            let ended = await waitProgram(pid, seconds: 60)
            let waited = ContinuousClock.now - cutAt
            try await network.restore()
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            #expect(ended != nil, "fault \(fault): cyclelog-sync hung for a minute after the cut")
            let status = ended ?? -1
            // Not finished before the cut: 75 (try again later), once the request in flight had no answer.
            #expect([0, 75].contains(status), "fault \(fault): exit \(status): \(said)")
            if status == 75 {
                interrupted += 1
                // Cut while the request waited for its answer, or (when the cut came first) while connecting.
                #expect(
                    said.contains("did not answer within 2 s") || said.contains("cannot reach the shared store"),
                    "fault \(fault): \(said)")
                #expect(waited < .seconds(replySeconds + 5), "fault \(fault): \(waited) after the cut")
            }
            let before = try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self).first ?? 0
            if before > 0 && before < rides { midTransfer += 1 }
            let again = try await runProgram(program, arguments, environment: environment(address))
            #expect(again.status == 0, "fault \(fault): the push after the network came back: \(again.output)")
            try await expectEachRideOnce(address, collector, local, fault: fault)
        }
        print(
            "sync network cuts: \(interrupted) of \(faults) interrupted a push of \(rides) rides, \(midTransfer) with "
                + "some of the rides on the server")
        #expect(interrupted >= faults / 2, "only \(interrupted) of \(faults) cuts interrupted a push")
        #expect(midTransfer >= faults / 4, "only \(midTransfer) of \(faults) cuts landed mid-transfer")
    }
}
