import Formats
import Foundation
import StructuredWorkouts
import WorkoutFiles
import WorkoutStore
import Workouts

/// The coach's plan from intervals.icu: the calendar's planned workouts of the coming days, each read from its
/// `.zwo` file into the workout library, and a suggested workout (a preset `plan-EVENT`) for each, today's first
/// among every screen's suggestions, with the coach's description.
public struct CoachPlans: Sendable {
    public let store: WorkoutStore
    public let folder: AccountFolder
    public var reach = ServiceReach()

    public init(store: WorkoutStore, folder: AccountFolder) {
        self.store = store
        self.folder = folder
    }

    public struct Planned: Equatable, Sendable {
        public var day: String
        public var name: String
        public var workoutId: String
        public var presetId: String
        public var newToTheLibrary: Bool
    }

    public struct Result: Sendable {
        public var planned: [Planned] = []
        /// Events that could not be taken, with why.
        public var skipped: [String] = []
        /// Suggestions of days gone by, or of workouts the coach took off the calendar.
        public var removed: [String] = []
    }

    /// Fetches the `days` days from today (the machine's local day) and makes their suggestions.
    public func fetch(days: Int, now: Date = Date()) async throws -> Result {
        guard let account = try folder.intervals() else {
            throw UploadError(
                "no intervals.icu account here: `cyclelog-sync account add intervals --athlete ID --api-key-file FILE`",
                .failed)
        }
        let today = LocalDay.day(of: now)
        let last = LocalDay.day(of: now, offset: max(days, 1) - 1)
        let calendar = try await reach.intervals(account).plannedWorkouts(
            oldest: today, newest: last)
        var result = Result(skipped: calendar.skipped)
        let nowMicroseconds = Int64(now.timeIntervalSince1970 * 1_000_000)
        for event in calendar.events.sorted(by: { ($0.day, $0.id) < ($1.day, $1.id) }) {
            var workout: StructuredWorkout
            do {
                workout = try ZWOFile.read(event.file)
            } catch {
                result.skipped.append("\(event.name) (\(event.day)): its workout file cannot be read: \(error)")
                continue
            }
            workout.name = event.name
            if let description = event.description { workout.description = description }
            // The event's own name and description are held to a workout's bounds too, before anything is stored.
            if let violation = workout.limitViolation() {
                result.skipped.append("\(ShownText.cut(event.name, to: 60)) (\(event.day)): \(violation)")
                continue
            }
            let imported = try await store.call { [workout] in
                try $0.importWorkout(
                    workout, format: "zwo", fileName: event.fileName, sourceBytes: event.file, at: nowMicroseconds)
            }
            let workoutId: String
            let new: Bool
            switch imported {
            case .added(let id): (workoutId, new) = (id, true)
            case .alreadyThere(let id): (workoutId, new) = (id, false)
            }
            let presetId = Self.presetID(event.id)
            let preset = WorkoutPreset(
                id: presetId, title: event.name,
                request: StartRequest(plan: WorkoutPlan(name: WorkoutPlan.name(event.name)), workout: workoutId))
            try await store.call { try $0.savePlannedPreset(preset, day: event.day, note: event.description) }
            result.planned.append(
                Planned(
                    day: event.day, name: event.name, workoutId: workoutId, presetId: presetId, newToTheLibrary: new))
        }
        let kept = Set(result.planned.map(\.presetId))
        for planned in try await store.call({ try $0.plannedPresets() })
        where planned.day < today || (planned.day <= last && !kept.contains(planned.id)) {
            try await store.call { try $0.forgetPreset(planned.id) }
            result.removed.append(planned.id)
        }
        return result
    }

    /// `plan-` and the event's id as a preset id takes it (letters, digits and `-`, at most 40).
    static func presetID(_ eventId: String) -> String {
        let cleaned = eventId.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" }
        return "plan-" + String(cleaned.prefix(35))
    }
}
