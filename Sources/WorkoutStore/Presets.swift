import Foundation
import GRDB
import Workouts

/// A suggested workout as stored: the preset, whether the rider pinned it, when it last started a ride.
public struct StoredPreset: Equatable, Sendable {
    public var preset: WorkoutPreset
    public var pinned: Bool
    public var lastUsedMicroseconds: Int64?
    /// One of `WorkoutPreset.builtIn` (editable, not removable).
    public var builtIn: Bool
    /// The local day (YYYY-MM-DD) the coach planned it for, when it came from a plan (`cyclelog-sync plans`).
    public var plannedDay: String? = nil
    /// The coach's description of a planned workout.
    public var note: String? = nil
}

extension WorkoutStore {
    /// The suggested workouts: the built-in ones (as the rider edited them) and the rider's own; the coach's
    /// plan for `today` (a local day, YYYY-MM-DD) first, then the pinned ones, then the most recently used, then
    /// the rest (built-in ones in their order, then by id).
    public func presets(today: String = LocalDay.today()) throws(StoreError) -> [StoredPreset] {
        try read { db in
            var stored: [String: WorkoutPreset] = [:]
            var planned: [String: (day: String?, note: String?)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM preset") {
                let preset = try Self.preset(row)
                stored[preset.id] = preset
                planned[preset.id] = (try row.decode(forColumn: "plannedDay"), try row.decode(forColumn: "note"))
            }
            var uses: [String: (pinned: Bool, lastUsed: Int64?)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM presetUse") {
                uses[try row.decode(forColumn: "id")] = (
                    try row.decode(forColumn: "pinned"), try row.decode(forColumn: "lastUsedMicroseconds")
                )
            }
            let builtIn = WorkoutPreset.builtIn.map { stored[$0.id] ?? $0 }
            let own = stored.values.filter { preset in !WorkoutPreset.builtIn.contains { $0.id == preset.id } }
                .sorted { $0.id < $1.id }
            let all = (builtIn + own).enumerated().map { index, preset in
                (
                    index,
                    StoredPreset(
                        preset: preset, pinned: uses[preset.id]?.pinned ?? false,
                        lastUsedMicroseconds: uses[preset.id]?.lastUsed,
                        builtIn: index < WorkoutPreset.builtIn.count, plannedDay: planned[preset.id]?.day ?? nil,
                        note: planned[preset.id]?.note ?? nil)
                )
            }
            return all.sorted { a, b in
                let aToday = a.1.plannedDay == today
                if aToday != (b.1.plannedDay == today) { return aToday }
                if a.1.pinned != b.1.pinned { return a.1.pinned }
                if a.1.lastUsedMicroseconds != b.1.lastUsedMicroseconds {
                    return (a.1.lastUsedMicroseconds ?? .min) > (b.1.lastUsedMicroseconds ?? .min)
                }
                return a.0 < b.0
            }.map(\.1)
        }
    }

    /// Adds a preset, or replaces the one with its id (a built-in one is edited this way).
    public func savePreset(_ preset: WorkoutPreset) throws(StoreError) {
        try savePreset(preset, plannedDay: nil, note: nil)
    }

    /// Adds or replaces a preset made from the coach's plan: the day it is planned for and the coach's words.
    public func savePlannedPreset(_ preset: WorkoutPreset, day: String, note: String?) throws(StoreError) {
        try savePreset(preset, plannedDay: day, note: note)
    }

    private func savePreset(_ preset: WorkoutPreset, plannedDay: String?, note: String?) throws(StoreError) {
        let plan = preset.request.plan
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO preset (id, title, name, goal, location, fitnessTest, startWhenPedalling,
                    endAtGoal, workout, plannedDay, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    preset.id, preset.title, plan.name, plan.goal?.description, plan.location?.rawValue,
                    plan.fitnessTest?.rawValue, preset.request.when == .pedalling, preset.request.endAtGoal,
                    preset.request.workout, plannedDay, note,
                ])
        }
    }

    /// The presets made from a plan (`plannedDay` set), by id with their day.
    public func plannedPresets() throws(StoreError) -> [(id: String, day: String)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT id, plannedDay FROM preset WHERE plannedDay IS NOT NULL ORDER BY id")
                .map { (id: $0["id"], day: $0["plannedDay"]) }
        }
    }

    /// Removes one of the rider's presets; false when there is none with that id. A built-in one cannot be
    /// removed (`StoreError.conflict`); an edited one goes back to how it was built in.
    public func removePreset(_ id: String) throws(StoreError) -> Bool {
        if WorkoutPreset.builtIn.contains(where: { $0.id == id }) {
            throw StoreError(
                .conflict,
                "\(id) is built in and cannot be removed; change it with `cyclelog presets add \(id) --title …`, or "
                    + "put it back as it was with `cyclelog presets reset \(id)`")
        }
        return try forgetPreset(id)
    }

    /// Forgets what is stored of a preset (its definition and its use); for a built-in one, its edits.
    @discardableResult
    public func forgetPreset(_ id: String) throws(StoreError) -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM preset WHERE id = ?", arguments: [id])
            let removed = db.changesCount > 0
            if !WorkoutPreset.builtIn.contains(where: { $0.id == id }) {
                try db.execute(sql: "DELETE FROM presetUse WHERE id = ?", arguments: [id])
            }
            return removed
        }
    }

    /// Pins or unpins a preset; false when there is none with that id.
    public func pinPreset(_ id: String, _ pinned: Bool) throws(StoreError) -> Bool {
        guard try presets().contains(where: { $0.preset.id == id }) else { return false }
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO presetUse (id, pinned) VALUES (?, ?)
                    ON CONFLICT(id) DO UPDATE SET pinned = excluded.pinned
                    """, arguments: [id, pinned])
        }
        return true
    }

    /// A ride was started from the preset at `microseconds`.
    public func presetUsed(_ id: String, at microseconds: Int64) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO presetUse (id, lastUsedMicroseconds) VALUES (?, ?)
                    ON CONFLICT(id) DO UPDATE SET lastUsedMicroseconds = excluded.lastUsedMicroseconds
                    """, arguments: [id, microseconds])
        }
    }

    private static func preset(_ row: Row) throws -> WorkoutPreset {
        let id: String = try row.decode(forColumn: "id")
        var plan = try Self.plan(row)
        plan.preset = id
        return WorkoutPreset(
            id: id, title: try row.decode(forColumn: "title"),
            request: StartRequest(
                plan: plan, when: try row.decode(forColumn: "startWhenPedalling") ? .pedalling : .now,
                endAtGoal: try row.decode(forColumn: "endAtGoal"), workout: try row.decode(forColumn: "workout")))
    }
}

/// A local day as the rider's calendar names it (YYYY-MM-DD, in this machine's time zone): what a coach plans for.
public enum LocalDay {
    public static func today(_ date: Date = Date()) -> String { day(of: date) }

    /// The day of `date`, `offset` days later, in `timeZone` (this machine's unless another is named).
    public static func day(of date: Date, offset: Int = 0, in timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let shifted = calendar.date(byAdding: .day, value: offset, to: date) ?? date
        let parts = calendar.dateComponents([.year, .month, .day], from: shifted)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
