import Foundation
import PostgresNIO
import Recording
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
    func manyRides(_ collector: Collector, days: Int) throws -> Int {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.folder + "/journals").filter {
            $0.hasSuffix(".journal")
        }.sorted()
        var count = 0
        for day in 0..<days {
            for name in names {
                let text = try String(contentsOfFile: Fixtures.folder + "/journals/" + name, encoding: .utf8)
                let moved = text.replacingOccurrences(
                    of: "2000-01-01T", with: "2000-01-\(String(format: "%02d", day + 2))T")
                _ = try Replayer(store: collector.store).replay(
                    CaptureFile.journal(text: moved, label: "\(name) day \(day)"))
                count += 1
            }
        }
        return count
    }

    @Test("50 seeded faults: the server stopped or cyclelog-sync killed mid-push; after recovery each ride once")
    func seededFaults() async throws {
        let server = try PostgresServer()
        let collector = try Collector("faults")
        let rides = try manyRides(collector, days: 3)
        #expect(rides >= 50)
        let local = Dictionary(
            uniqueKeysWithValues: try collector.store.pendingRides().map { ($0.syncIdentifier, $0) })
        let binary = try builtBinary("cyclelog-sync").path
        // How long a whole push takes here: the faults land at moments drawn inside it.
        let timing = try await server.newDatabase()
        _ = try await SharedStore.with(timing) { store throws(SyncError) in try await Synchronizer.initialize(store) }
        let started = ContinuousClock.now
        #expect(
            try runProgram(binary, ["push", "--db", collector.path], environment: server.environment(timing.database))
                .status == 0)
        let pushMicroseconds = UInt64(((ContinuousClock.now - started) / .microseconds(1)).rounded())
        var generator = SplitMix64(seed: 0x5EED_2026)
        var interrupted = 0
        // Faults after which the server held some of the rides but not all: cut in the middle of the transfer.
        var midTransfer = 0
        for fault in 0..<Self.faults {
            let address = try await server.newDatabase()
            _ = try await SharedStore.with(address) { store throws(SyncError) in
                try await Synchronizer.initialize(store)
            }
            try collector.clearSyncMarks()
            let environment = server.environment(address.database)
            let killing = fault % 2 == 1
            // Within the middle of a push's time: its first tenth is mostly the process starting and connecting,
            // and a push often runs faster than the first one measured.
            let delayMicroseconds = UInt32(pushMicroseconds / 10 + generator.next() % max(1, pushMicroseconds * 6 / 10))
            let pid = try spawnProgram(binary, ["push", "--db", collector.path], environment: environment)
            usleep(delayMicroseconds)
            if killing {
                kill(pid, SIGKILL)
            } else {
                try server.stopImmediately()
            }
            let ended = waitProgram(pid)
            if !killing { try server.start() }
            #expect(ended != nil, "fault \(fault): cyclelog-sync hung for a minute after the fault")
            let status = ended ?? -1
            // Killed: 137 (128 + 9), unless it had finished; the server gone: 75 (try again), unless it had finished.
            let expected: Set<Int32> = killing ? [0, 137] : [0, 75]
            #expect(expected.contains(status), "fault \(fault): exit \(status)")
            if status != 0 { interrupted += 1 }
            let before = try await serverRows(address, "SELECT count(*) FROM ride", as: Int.self).first ?? 0
            if before > 0 && before < rides { midTransfer += 1 }
            let again = try runProgram(binary, ["push", "--db", collector.path], environment: environment)
            #expect(again.status == 0, "fault \(fault): the push after recovery: \(again.output)")
            let held = try await serverRows(
                address,
                """
                SELECT sync_identifier::text, version, content_digest,
                    encode(sha256(convert_to(journal, 'UTF8')), 'hex') FROM ride
                """, as: (String, Int, String, String).self)
            #expect(held.count == rides, "fault \(fault)")
            #expect(Set(held.map(\.0)) == Set(local.keys), "fault \(fault)")
            for (syncIdentifier, version, digest, computed) in held {
                #expect(version == local[syncIdentifier]?.version && digest == local[syncIdentifier]?.contentDigest)
                #expect(computed == digest, "fault \(fault): a half-written ride \(syncIdentifier)")
            }
            #expect(try await serverRows(address, "SELECT count(*) FROM ride_conflict", as: Int.self) == [0])
            #expect(try collector.store.pendingRides().isEmpty, "fault \(fault)")
        }
        print(
            "sync faults: \(interrupted) of \(Self.faults) interrupted a push of \(rides) rides (\(pushMicroseconds) µs), "
                + "\(midTransfer) with some of the rides on the server")
        // The faults must have landed mid-push most of the time, or they test nothing.
        #expect(interrupted >= Self.faults / 2, "only \(interrupted) of \(Self.faults) faults interrupted a push")
        #expect(midTransfer >= Self.faults / 4, "only \(midTransfer) of \(Self.faults) faults landed mid-transfer")
        try server.stopImmediately()
    }
}
