import Capture
import GRDB
import Workouts
import XCTest

@testable import WorkoutStore

/// The store on an in-memory database: what is written reads back exactly.
final class WorkoutStoreTests: XCTestCase {
    /// A 90-s ride: 200 W with a 10-s pause, a lap and a marker, written the way a replay writes it; with `extra`
    /// events among them.
    func ride(_ extra: [RideEvent] = []) throws -> (Workout, [RideEvent]) {
        var events = [
            RideEvent(
                timeMicroseconds: 0,
                .control(.start(WorkoutPlan(name: "Test \"ride\"", goal: .timeSeconds(60), location: .indoor))))
        ]
        for second in 0..<90 {
            let value: [UInt8] = [0x00, 0x00, UInt8(150 + second % 100), 0x00]
            events.append(
                RideEvent(
                    timeMicroseconds: Int64(second) * 1_000_000 + 250_000,
                    .notification(sensor: "C0:11:22:33:44:55", characteristic: 0x2A63, value: value)))
        }
        events +=
            [
                RideEvent(timeMicroseconds: 40_000_000, .control(.pause)),
                RideEvent(timeMicroseconds: 50_000_000, .control(.resume)),
                RideEvent(timeMicroseconds: 60_000_000, .control(.lap)),
                RideEvent(timeMicroseconds: 61_000_000, .control(.marker("sprint"))),
                RideEvent(timeMicroseconds: 90_000_000, .control(.end)),
            ] + extra
        events.sort { $0.timeMicroseconds < $1.timeMicroseconds }
        var builder = WorkoutBuilder()
        for event in events { builder.add(event) }
        return (try XCTUnwrap(builder.finish()), events)
    }

    /// `ride()` stored as a replay stores it, under `syncIdentifier`: its workout, its events, its summary.
    func stored(
        _ store: WorkoutStore, _ syncIdentifier: String, _ extra: [RideEvent] = []
    ) throws -> (workout: Workout, events: [RideEvent], summary: WorkoutSummary) {
        let (workout, events) = try ride(extra)
        let claim = try store.beginWorkout(syncIdentifier: syncIdentifier, source: "test", startMicroseconds: 0)
        try store.append(to: claim, journalSequence: 0, events: events, samples: workout.samples[0..<60])
        let summary = try store.finish(claim, workout: workout, digests: .init(source: nil, content: "digest"))
        return (workout, events, summary)
    }

    func testAFinishedWorkoutReadsBackAsItWasBuilt() throws {
        let store = try WorkoutStore()
        let (workout, events, stored) = try stored(store, "sync-1")
        let id = stored.id
        var built = WorkoutSummary(workout, id: id, syncIdentifier: "sync-1", version: 1)
        built.contentDigest = "digest"
        // The analysis is made when a ride is shown, from the stored samples (no FTP is known here).
        built.analysis = RideAnalysis(
            samples: try store.samples(id), statistics: built.statistics, ftp: nil, criticalPower: nil)
        XCTAssertEqual(stored.json.rendered(), built.json.rendered())
        XCTAssertEqual(try store.journal(id), events)
        XCTAssertEqual(try store.workout(syncIdentifier: "sync-1")?.complete, true)
        XCTAssertEqual(try store.integrityCheck(), "ok")
        // Samples are stored to 0.1 W, 0.1 rpm, 1 mm/s and 1 ‰ of a second.
        let samples = try store.samples(id)
        XCTAssertEqual(samples.count, workout.samples.count)
        for (read, written) in zip(samples, workout.samples) {
            XCTAssertEqual(read.powerWatts ?? -1, written.powerWatts ?? -1, accuracy: 0.05 + 1e-9)  // half a step
            XCTAssertEqual(read.runningFraction, written.runningFraction, accuracy: 0.0005 + 1e-12)
            XCTAssertEqual(read.sources, written.sources)
        }
    }

    /// An app on the sensor hub held the trainer from 10 s to 45 s, the 10-s pause from 40 s inside that: 30
    /// running seconds, read back from the store with the app's name as the ride's summary had them.
    func testTheTimeAnAppHeldTheTrainerReadsBack() throws {
        let store = try WorkoutStore()
        let app = "00:AA:02:00:00:06"
        let (_, _, stored) = try stored(
            store, "sync-1",
            [
                RideEvent(timeMicroseconds: 10_000_000, .hub(.holder(app: app, name: "iPad"))),
                RideEvent(timeMicroseconds: 10_000_000, .setting(.trainerTarget(.erg(watts: 230)))),
                RideEvent(timeMicroseconds: 45_000_000, .hub(.holder(app: nil, name: nil))),
                RideEvent(timeMicroseconds: 45_000_000, .setting(.trainerTarget(.free))),
            ])
        let trainer = try XCTUnwrap(try store.summary(stored.id)?.statistics.trainer)
        XCTAssertEqual(trainer.appSeconds, 30)
        XCTAssertEqual(trainer.apps, ["iPad (\(app))"])
        XCTAssertEqual(trainer, stored.statistics.trainer)
    }

    /// The series a save takes as stored, without reading it back, is what reading it back gives: the same values
    /// at the stored precision, and seconds counted from each chunk's first. Odd values included: missing, not
    /// finite, negative, halfway between two steps, a second missing from a minute, a minute out of order.
    func testTheSeriesTakenAsStoredIsTheSeriesReadBack() throws {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 40) / Double(1 << 24)
        }
        let odd: [Double?] = [nil, .nan, .infinity, -.infinity, -12.25, 0.05, 0.15, 0.0005, 1e-300, -0.0]
        var samples: [SecondSample] = []
        for second in (0..<300).reversed() where second != 61 {
            var sample = SecondSample(second: second)
            sample.powerWatts = second % 7 == 0 ? odd[second / 7 % odd.count] : next() * 1500
            sample.cadenceRPM = second % 11 == 0 ? nil : next() * 130
            sample.speedMetersPerSecond = second % 13 == 0 ? odd[second % odd.count] : next() * 20
            sample.heartRateBPM = second % 5 == 0 ? nil : 60 + next() * 140
            sample.distanceMeters = second % 17 == 0 ? -0.0005 : next() * 20
            sample.runningFraction = second % 19 == 0 ? 0.0005 : (second % 3 == 0 ? next() : 1)
            sample.sources = [Int8(second % 3) - 1, 0, 1, -1]
            samples.append(sample)
        }
        let groups = WorkoutStore.chunkGroups(samples)
        // A workout's samples come in order of time (grouped in one pass), these in reverse: grouped alike.
        let inOrder = WorkoutStore.chunkGroups(samples.sorted { $0.second < $1.second })
        XCTAssertEqual(inOrder.map(\.firstSecond), groups.map(\.firstSecond))
        XCTAssertEqual(inOrder.map { $0.samples.map(\.second) }, groups.map { $0.samples.map(\.second) })
        XCTAssertEqual(groups.first?.firstSecond, 0)
        XCTAssertEqual(groups.map(\.samples.count), [60, 59, 60, 60, 60])
        let readBack = try groups.flatMap {
            try StoredPacking.unpackSamples(StoredPacking.packSamples($0.samples), firstSecond: $0.firstSecond)
        }
        let taken = StoredPacking.asStored(groups)
        XCTAssertEqual(taken.count, readBack.count)
        for (taken, read) in zip(taken, readBack) {
            // Compared by bits: NaN is never equal to itself, and -0 equals 0.
            for channel in Channel.allCases {
                XCTAssertEqual(
                    taken[channel]?.bitPattern, read[channel]?.bitPattern, "second \(read.second) \(channel)")
            }
            XCTAssertEqual(taken.second, read.second)
            XCTAssertEqual(taken.distanceMeters.bitPattern, read.distanceMeters.bitPattern, "second \(read.second)")
            XCTAssertEqual(taken.runningFraction.bitPattern, read.runningFraction.bitPattern, "second \(read.second)")
            XCTAssertEqual(taken.sources, read.sources)
        }
    }

    func testAnUnfinishedWorkoutIsListedButHasNoSummaryAndCanBeDeleted() throws {
        let store = try WorkoutStore()
        let id = try store.beginWorkout(syncIdentifier: "sync-2", source: "live", startMicroseconds: 5).workoutId
        XCTAssertEqual(try store.list().map(\.status), [.recording])
        XCTAssertNil(try store.summary(id))
        XCTAssertEqual(try store.resolve("last"), id)
        XCTAssertEqual(try store.delete(id), true)
        XCTAssertEqual(try store.list(), [])
        XCTAssertNil(try store.resolve("last"))
    }

    func testARenameIsTheNextVersionAndOutlivesARebuild() throws {
        let store = try WorkoutStore()
        let (workout, _, summary) = try stored(store, "sync-3")
        let id = summary.id
        XCTAssertEqual(try store.summary(id)?.plan.name, "Test \"ride\"")
        XCTAssertEqual(try store.rename(id, to: "Col du Test"), true)
        XCTAssertEqual(try store.summary(id)?.plan.name, "Col du Test")
        XCTAssertEqual(try store.summary(id)?.version, 2)
        // The same name again changes nothing, not even the version.
        XCTAssertEqual(try store.rename(id, to: "Col du Test"), false)
        XCTAssertEqual(try store.summary(id)?.version, 2)
        // A rebuild from the journal (whose start names the ride "Test "ride"") keeps the rider's name.
        let rebuild = try store.beginRebuild(id)
        let rebuilt = try store.finish(rebuild, workout: workout, digests: .init(source: nil, content: "digest"))
        XCTAssertEqual(rebuilt.plan.name, "Col du Test")
        XCTAssertEqual(rebuilt.version, 3)
        // A ride being recorded, one pulled from another collector, and one that is not there are refused.
        let recording = try store.beginWorkout(syncIdentifier: "sync-4", source: "live", startMicroseconds: 5)
        XCTAssertThrowsError(try store.rename(recording.workoutId, to: "x")) {
            XCTAssertEqual(($0 as? StoreError)?.code, .conflict)
        }
        try store.write { db in
            try db.execute(sql: "UPDATE workout SET collector = 'laptop' WHERE id = ?", arguments: [id])
        }
        XCTAssertThrowsError(try store.rename(id, to: "y")) {
            XCTAssertEqual(($0 as? StoreError)?.code, .conflict)
            XCTAssertTrue("\($0)".contains("recorded by laptop"))
        }
        XCTAssertThrowsError(try store.rename(99, to: "z")) { XCTAssertEqual(($0 as? StoreError)?.code, .notFound) }
        XCTAssertEqual(try store.summary(id)?.version, 3)
    }

    /// The history's ETags rest on this: any write to any table sets a new mark, a read never does, and two
    /// databases made alike do not share one.
    func testEveryChangeToEveryTableIsMarked() throws {
        let store = try WorkoutStore()
        let tables = try store.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                    AND name NOT IN ('grdb_migrations', 'changeMark') ORDER BY name
                    """)
        }
        XCTAssertGreaterThan(tables.count, 15)
        for table in tables {
            let events = try store.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT upper(substr(sql, instr(sql, ' AFTER ') + 7, 6)) FROM sqlite_master
                        WHERE type = 'trigger' AND tbl_name = ? AND sql LIKE '%changeMark%' ORDER BY 1
                        """, arguments: [table])
            }
            XCTAssertEqual(events, ["DELETE", "INSERT", "UPDATE"], "\(table): a change to it would not be marked")
        }
        var marks = [try XCTUnwrap(try store.changeMark())]
        let (workout, events) = try ride()
        let claim = try store.beginWorkout(syncIdentifier: "sync-3", source: "test", startMicroseconds: 0)
        marks.append(try XCTUnwrap(try store.changeMark()))
        try store.append(to: claim, journalSequence: 0, events: events, samples: workout.samples[0..<60])
        marks.append(try XCTUnwrap(try store.changeMark()))
        _ = try store.finish(claim, workout: workout, digests: .init(source: nil, content: "digest"))
        marks.append(try XCTUnwrap(try store.changeMark()))
        _ = try store.ride(claim.workoutId)
        _ = try store.list()
        XCTAssertEqual(try store.changeMark(), marks.last, "a read changed the mark")
        try store.setManualFTP(watts: 250, fromMicroseconds: 0, nowMicroseconds: 1)
        marks.append(try XCTUnwrap(try store.changeMark()))
        XCTAssertEqual(try store.delete(claim.workoutId), true)
        marks.append(try XCTUnwrap(try store.changeMark()))
        XCTAssertEqual(Set(marks).count, marks.count, "a write left the mark as it was: \(marks)")
        XCTAssertNotEqual(try WorkoutStore().changeMark(), try WorkoutStore().changeMark(), "two new databases")
    }

    /// A reader given up part-way: once `abandonWhen` answers true, the next reading stops with a message
    /// instead of running to its end (the mirror's client went away); until then it reads as any reader does.
    func testAReadingStopsWhenItsRequesterIsGone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("rides.sqlite").path
        let writer = try WorkoutStore(path: path)
        for number in 0..<100 { _ = try stored(writer, "ride-\(number)") }
        let gone = Gone()
        let reader = try WorkoutStore(path: path, access: .read, abandonWhen: { gone.value })
        XCTAssertEqual(try reader.list().count, 100)
        gone.value = true
        XCTAssertThrowsError(try reader.list()) { error in
            XCTAssertTrue("\(error)".contains("whoever asked for it went away"), "\(error)")
        }
    }

    final class Gone: @unchecked Sendable {
        private let lock = NSLock()
        private var gone = false
        var value: Bool {
            get { lock.withLock { gone } }
            set { lock.withLock { gone = newValue } }
        }
    }

    func testTheDefaultPathFollowsTheEnvironment() {
        XCTAssertEqual(WorkoutStore.defaultPath(environment: ["CYCLELOG_DB": "/tmp/x.sqlite"]), "/tmp/x.sqlite")
        XCTAssertEqual(
            WorkoutStore.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/r"]),
            "/data/cyclelog/cyclelog.sqlite")
        XCTAssertEqual(
            WorkoutStore.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/r"]),
            "/home/r/.local/share/cyclelog/cyclelog.sqlite")
    }
}
