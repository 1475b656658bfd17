import Capture
import Foundation
import GRDB
import Workouts

extension WorkoutStore {
    /// One line of `cyclelog list`.
    public struct ListEntry: Equatable, Sendable {
        public var id: Int64
        public var syncIdentifier: String
        public var name: String?
        /// 'complete', or 'recording' for a ride whose last transaction never landed (crash, kill, power cut).
        public var status: String
        public var source: String
        public var startMicroseconds: Int64
        public var elapsedSeconds: Double?
        public var distanceMeters: Double?
        public var averagePowerWatts: Double?
    }

    /// Every workout, newest first.
    public func list() throws(StoreError) -> [ListEntry] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, syncIdentifier, name, status, source, startMicroseconds, elapsedSeconds, distanceMeters,
                    averagePowerWatts FROM workout ORDER BY startMicroseconds DESC, id DESC
                    """
            ).map {
                ListEntry(
                    id: $0["id"], syncIdentifier: $0["syncIdentifier"], name: $0["name"], status: $0["status"],
                    source: $0["source"], startMicroseconds: $0["startMicroseconds"],
                    elapsedSeconds: $0["elapsedSeconds"], distanceMeters: $0["distanceMeters"],
                    averagePowerWatts: $0["averagePowerWatts"])
            }
        }
    }

    /// `last` → the newest workout's id; a number → itself if it exists.
    public func resolve(_ reference: String) throws(StoreError) -> Int64? {
        try read { db in
            if reference == "last" {
                return try Int64.fetchOne(
                    db, sql: "SELECT id FROM workout ORDER BY startMicroseconds DESC, id DESC LIMIT 1")
            }
            guard let id = Int64(reference) else { return nil }
            return try Int64.fetchOne(db, sql: "SELECT id FROM workout WHERE id = ?", arguments: [id])
        }
    }

    /// The stored summary of a complete workout; nil for an unknown id or a workout still 'recording'.
    public func summary(_ id: Int64) throws(StoreError) -> WorkoutSummary? {
        guard var summary = try storedSummary(id) else { return nil }
        let history = try ftpHistory()
        summary.analysis = RideAnalysis(
            samples: try samples(id), statistics: summary.statistics,
            ftp: history.inForce(at: summary.startMicroseconds),
            criticalPower: history.criticalPower(at: summary.startMicroseconds))
        return summary
    }

    private func storedSummary(_ id: Int64) throws(StoreError) -> WorkoutSummary? {
        try read { db -> WorkoutSummary? in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM workout WHERE id = ? AND status = 'complete'", arguments: [id]),
                let statisticsBlob = row["statistics"] as Data?
            else { return nil }
            let statistics = try StoredPacking.unpackStatistics([UInt8](statisticsBlob))
            let plan = WorkoutPlan(
                name: row["name"], goal: (row["goal"] as String?).flatMap(WorkoutGoal.init),
                location: (row["location"] as String?).flatMap(WorkoutLocation.init(rawValue:)),
                syncIdentifier: row["syncIdentifier"],
                fitnessTest: (row["fitnessTest"] as String?).flatMap(FitnessTest.init(rawValue:)))
            let laps = try Row.fetchAll(
                db, sql: "SELECT * FROM lap WHERE workoutId = ? ORDER BY number", arguments: [id]
            )
            .map { lap in
                LapSummary(
                    number: lap["number"], startMicroseconds: lap["startMicroseconds"],
                    endMicroseconds: lap["endMicroseconds"],
                    statistics: try StoredPacking.unpackStatistics([UInt8](lap["statistics"] as Data)))
            }
            let events = try Row.fetchAll(
                db, sql: "SELECT journalLine FROM workoutEvent WHERE workoutId = ? ORDER BY sequence", arguments: [id]
            ).compactMap { row -> WorkoutEvent? in
                guard let event = try? Journal.event(Substring(row["journalLine"] as String)),
                    case .control(let control) = event.kind
                else { return nil }
                return WorkoutEvent(timeMicroseconds: event.timeMicroseconds, control: control)
            }
            let dropouts = try Row.fetchAll(
                db, sql: "SELECT * FROM dropout WHERE workoutId = ? ORDER BY sequence", arguments: [id]
            ).map {
                DropoutSummary(
                    sensor: $0["sensor"], reason: $0["reason"], startMicroseconds: $0["startMicroseconds"],
                    endMicroseconds: $0["endMicroseconds"])
            }
            let sensors = try Row.fetchAll(
                db, sql: "SELECT * FROM workoutSensor WHERE workoutId = ? ORDER BY position", arguments: [id]
            ).map { row in
                var sensor = WorkoutSensor(
                    address: row["address"], name: row["name"],
                    wheelCircumferenceMillimetres: row["wheelCircumferenceMillimetres"])
                if let battery = row["batteryPercent"] as Int? { sensor.reads[0x2A19] = [UInt8(clamping: battery)] }
                return sensor
            }
            return WorkoutSummary(
                id: id, syncIdentifier: row["syncIdentifier"], version: row["version"], plan: plan,
                state: Session.State(rawValue: row["sessionState"] ?? "") ?? .ended,
                startMicroseconds: row["startMicroseconds"], endMicroseconds: row["endMicroseconds"] ?? 0,
                statistics: statistics, laps: laps, events: events, dropouts: dropouts, sensors: sensors)
        }
    }

    /// The raw journal kept with a workout, every chunk that was written (also for a workout cut short).
    public func journal(_ id: Int64) throws(StoreError) -> [RideEvent] {
        try journalEvents(id) { blob throws(CompactJournal.DecodeError) in try CompactJournal.decode(blob) }
    }

    /// The journal's notifications of one characteristic whose value `keep` accepts, without decoding the rest.
    public func journalNotifications(
        _ id: Int64, of characteristic: UInt16, where keep: ([UInt8]) -> Bool
    ) throws(StoreError) -> [RideEvent] {
        try journalEvents(id) { blob throws(CompactJournal.DecodeError) in
            try CompactJournal.notifications(blob, of: characteristic, where: keep)
        }
    }

    private func journalEvents(
        _ id: Int64, _ decode: ([UInt8]) throws(CompactJournal.DecodeError) -> [RideEvent]
    ) throws(StoreError) -> [RideEvent] {
        let blobs = try read { db in
            try Data.fetchAll(
                db, sql: "SELECT events FROM journalChunk WHERE workoutId = ? ORDER BY sequence", arguments: [id])
        }
        var events: [RideEvent] = []
        for blob in blobs {
            do {
                events += try decode([UInt8](blob))
            } catch {
                throw StoreError("workout \(id): \(error)")
            }
        }
        return events
    }

    /// The stored 1 Hz series.
    public func samples(_ id: Int64) throws(StoreError) -> [SecondSample] {
        let rows = try read { db in
            try Row.fetchAll(
                db, sql: "SELECT firstSecond, samples FROM sampleChunk WHERE workoutId = ? ORDER BY firstSecond",
                arguments: [id]
            ).map { ($0["firstSecond"] as Int, $0["samples"] as Data) }
        }
        var samples: [SecondSample] = []
        for (firstSecond, blob) in rows {
            do {
                samples += try StoredPacking.unpackSamples([UInt8](blob), firstSecond: firstSecond)
            } catch {
                throw StoreError("workout \(id): \(error)")
            }
        }
        return samples
    }

    /// Database size in bytes (pages in use), for the storage benchmark.
    public func sizeInBytes() throws(StoreError) -> Int {
        try read { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return (pages - free) * size
        }
    }
}
