import Foundation
import GRDB
import RideJournal
import Testing
import Workouts

@testable import WorkoutStore

/// Power curves as they are stored (migration v28): each duration's Float32 read back to the bit, from the whole
/// blob or from the part a window reads, a damaged one refused, and a database of Float32 curves migrated to the
/// same bytes a new one stores.
@Suite struct CurvePackingTests {
    static let rides = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/rides")

    /// A real ride's workout: the Edge 810 and Vector pedals' 78 minutes, or the 2 h 19 min one.
    static func ride(_ name: String, shiftedBy microseconds: Int64 = 0) throws -> Workout {
        let text = try String(contentsOf: rides.appendingPathComponent(name), encoding: .utf8)
        var builder = WorkoutBuilder()
        for var event in Journal.read(text).events {
            event.timeMicroseconds += microseconds
            builder.add(event)
        }
        let workout = builder.finish()
        return try #require(workout)
    }

    static let names = ["fitparse_Edge810-Vector-2013-08-16-15-35-10.journal", "sweatpy_4078723797.journal"]

    /// What the curves were stored as before v28, written here by hand: a little-endian Float32 per duration.
    static func float32s(_ curve: PowerCurve) -> Data {
        var bytes = Data()
        for watts in curve.watts { withUnsafeBytes(of: Float(watts).bitPattern.littleEndian) { bytes += $0 } }
        return bytes
    }

    @Test func aRidesCurveIsReadBackToTheBitInHalfItsFloat32s() throws {
        for name in Self.names {
            let curve = try Self.ride(name).powerCurve
            #expect(curve.watts.count > 3000, "\(name)")
            let packed = StoredPacking.packCurve(curve)
            let asStored = curve.watts.map { Double(Float($0)) }
            #expect(StoredPacking.unpackCurve(Data(packed))?.watts == asStored, "\(name)")
            #expect(StoredPacking.curveCount(Data(packed)) == curve.watts.count)
            // About half of a Float32 per duration: three fifths at most.
            #expect(packed.count * 5 <= curve.watts.count * 4 * 3, "\(name): \(packed.count) bytes")
            // The part a window of `durations` reads holds its first `durations` durations, whatever their bytes.
            for durations in [1, 5, 60, 1200, curve.watts.count - 1, curve.watts.count, curve.watts.count + 600] {
                let part = Data(packed.prefix(StoredPacking.curveBytes(durations: durations)))
                #expect(
                    StoredPacking.unpackCurve(part, durations: durations)?.watts == Array(asStored.prefix(durations)),
                    "\(name): \(durations) s")
            }
        }
        #expect(StoredPacking.packCurve(PowerCurve(watts: [])).isEmpty)
        #expect(StoredPacking.unpackCurve(Data())?.watts == [])
    }

    @Test func aDamagedCurveIsRefusedNotRead() throws {
        let packed = StoredPacking.packCurve(try Self.ride(Self.names[0]).powerCurve)
        let damaged: [(String, [UInt8])] = [
            ("cut short", Array(packed.dropLast(3))),
            ("with bytes after its end", packed + [1, 2]),
            ("a count its bytes cannot hold", [0xFF, 0xFF, 0xFF, 0x7F, 1, 2]),
            ("an overlong number", [2] + Array(repeating: 0xFF, count: 11) + [1]),
            ("a pattern beyond 32 bits", [1, 0xFE, 0xFF, 0xFF, 0xFF, 0x7F]),
            ("three bytes of nothing", [0x01, 0x02, 0x03]),
        ]
        for (what, bytes) in damaged {
            #expect(StoredPacking.unpackCurve(Data(bytes)) == nil, "\(what)")
        }
        // A damaged one in the database is made again from the ride's samples, and stored again.
        let store = try WorkoutStore()
        let workout = try Self.ride(Self.names[0])
        let claim = try store.beginWorkout(
            syncIdentifier: "ride", source: "ride", startMicroseconds: workout.startMicroseconds)
        try store.finish(claim, workout: workout, digests: .init(source: nil, content: "ride"))
        try store.queue.write { try $0.execute(sql: "UPDATE powerCurve SET watts = x'010203'") }
        // The curve of the samples as stored (to 0.1 W), which the ride's own were rounded to.
        let again = WorkoutStatistics.powerCurve(try store.samples(claim.workoutId))
        #expect(again.watts.count == workout.powerCurve.watts.count)
        #expect(try store.rideCurves().first?.curve == again)
        #expect(
            try store.queue.read { try Data.fetchOne($0, sql: "SELECT watts FROM powerCurve") }
                == Data(StoredPacking.packCurve(again)))
    }

    /// A store of three real rides in one week (so that a week's envelope is kept), its curves then rewritten as
    /// Float32s and migration v28 forgotten, as a database of the previous version is: opening it migrates it to
    /// the bytes the new store wrote, and every curve and window reads the same.
    @Test func aDatabaseOfFloat32CurvesIsMigratedToTheSameBytes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("rides.sqlite").path
        let day: Int64 = 86_400 * 1_000_000
        let (curves, weeks): ([Row], [Row])
        let windowBefore: CurveEnvelope?
        do {
            let store = try WorkoutStore(path: path)
            // Monday to Wednesday of one week of 2017.
            let weekStart: Int64 = 2_500 * 7 * day
            for (number, name) in (Self.names + Self.names.prefix(1)).enumerated() {
                let original = try Self.ride(name)
                let ride = try Self.ride(
                    name, shiftedBy: weekStart + Int64(number) * day - original.startMicroseconds)
                let claim = try store.beginWorkout(
                    syncIdentifier: "ride \(number)", source: name, startMicroseconds: ride.startMicroseconds)
                try store.finish(claim, workout: ride, digests: .init(source: nil, content: "ride \(number)"))
            }
            try store.refreshFTPEstimates()
            curves = try store.queue.read { try Row.fetchAll($0, sql: "SELECT * FROM powerCurve ORDER BY workoutId") }
            weeks = try store.queue.read { try Row.fetchAll($0, sql: "SELECT * FROM powerCurveWeek ORDER BY week") }
            #expect(curves.count == 3)
            #expect(weeks.count == 1)
            windowBefore = try store.queue.read { db in
                try WorkoutStore.CurveWeeks.envelope(
                    db, after: 0, upTo: .max / 4, maximumSeconds: 1200, saving: false)
            }
            #expect(windowBefore?.curve.watts.count == 1200)
            // As the previous version stored them.
            try store.queue.write { db in
                for (table, key) in [("powerCurve", "workoutId"), ("powerCurveWeek", "week")] {
                    for row in try Row.fetchAll(db, sql: "SELECT \(key), watts FROM \(table)") {
                        let watts: Data = row["watts"]
                        let curve = try #require(StoredPacking.unpackCurve(watts))
                        try db.execute(
                            sql: "UPDATE \(table) SET watts = ? WHERE \(key) = ?",
                            arguments: [Self.float32s(curve), row[key] as Int64])
                    }
                }
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v28 %'")
            }
            let asFloat32s = try store.queue.read {
                try Int.fetchOne($0, sql: "SELECT sum(length(watts)) FROM powerCurve") ?? 0
            }
            var durations = 0
            for row in curves { durations += try #require(StoredPacking.curveCount(row["watts"])) }
            #expect(asFloat32s == durations * 4)
        }
        let migrated = try WorkoutStore(path: path)
        #expect(
            try migrated.queue.read { try Row.fetchAll($0, sql: "SELECT * FROM powerCurve ORDER BY workoutId") }
                == curves)
        #expect(
            try migrated.queue.read { try Row.fetchAll($0, sql: "SELECT * FROM powerCurveWeek ORDER BY week") }
                == weeks)
        let windowAfter = try migrated.queue.read { db in
            try WorkoutStore.CurveWeeks.envelope(db, after: 0, upTo: .max / 4, maximumSeconds: 1200, saving: false)
        }
        #expect(windowAfter?.curve == windowBefore?.curve)
    }
}
