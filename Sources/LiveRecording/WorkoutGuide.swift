import StructuredWorkouts
import TrainerControl
import Workouts

/// A live ride's structured workout: the player moved by the ride's moving time and distance (as the recorder's
/// status has them), what it asks of a smart trainer, what it tells the rider, and when a ramp test is over. Pure:
/// the recorder gives it the time and carries out its actions.
///
/// The same player, fed the stored ride's seconds and the journal's controls, gives the ride's compliance
/// (`PlanCompliance`); the targets shown live and those measured after agree to the second, except where an
/// automatic pause (decided when the ride is saved) held a step the live player went on with.
struct WorkoutGuide {
    enum Action: Equatable {
        /// A target for the trainer: ERG at a power, or free for a step without one.
        case steer(TrainerAsk)
        case tell(String)
        /// The ride is over (a ramp test's rider stopped pedalling).
        case end(String)
    }

    /// The library's id of the workout.
    let id: String
    private(set) var player: WorkoutPlayer
    /// Ends the ride when the cadence stays under `lowCadenceRPM` for `lowCadenceSeconds` in a scored step: a
    /// ramp test is over when the rider cannot turn the pedals over.
    let endsWhenPedallingStops: Bool
    static let lowCadenceRPM = 50.0
    static let lowCadenceSeconds = 5.0

    private var movedSeconds = 0.0
    private var movedMeters = 0.0
    private var lowCadenceSince: Double?
    /// What was last asked of the trainer (nil after a refusal, so that it is asked again).
    private var asked: TrainerAsk?
    /// The texts of the current step already told.
    private var toldTexts = 0
    private var toldStep = -1
    /// The steps begun after the first: each begins a lap, as the stored ride splits its laps where each step began
    /// (`Workout.followPlan`), but for one that a lap press began (that press is its lap already).
    private(set) var stepLaps = 0
    private var lapBeginsStep = false
    /// The whole workout's profile, made again only when the intensity changes (not at every status: a workout
    /// of 1000 steps would cost each flush 1000 targets).
    private var profile: (segments: [LiveStatus.ProfileSegment], text: String) = ([], "")

    init(id: String, planned: PlannedWorkout, intensityPercent: Int = 100, endsWhenPedallingStops: Bool = false) {
        self.id = id
        player = WorkoutPlayer(planned, intensityPercent: intensityPercent)
        self.endsWhenPedallingStops = endsWhenPedallingStops
        profile = Self.profile(player)
    }

    /// The ride's moving time and distance so far, and its cadence now (nil: none). `cadenceLost`: the sensor that
    /// gave the cadence is not connected now, so a missing cadence says nothing of the rider.
    mutating func advance(
        movingSeconds: Double, distanceMeters: Double, cadenceRPM: Double?, cadenceLost: Bool = false
    ) -> [Action] {
        let seconds = max(0, movingSeconds - movedSeconds), meters = max(0, distanceMeters - movedMeters)
        movedSeconds = max(movedSeconds, movingSeconds)
        movedMeters = max(movedMeters, distanceMeters)
        if seconds > 0 || meters > 0 { player.advance(seconds: seconds, meters: meters) }
        var actions = guidance()
        if endsWhenPedallingStops, player.step?.scored == true, seconds > 0 {
            if cadenceLost {
                // A dropout is not a rider who stopped: the count starts again once the sensor is back.
                lowCadenceSince = nil
            } else if (cadenceRPM ?? 0) < Self.lowCadenceRPM {
                let since = lowCadenceSince ?? movingSeconds
                lowCadenceSince = since
                if movingSeconds - since >= Self.lowCadenceSeconds {
                    actions.append(
                        .end(
                            "cadence under \(Int(Self.lowCadenceRPM)) rpm for \(Int(Self.lowCadenceSeconds)) s: "
                                + "the ramp test is over"))
                }
            } else {
                lowCadenceSince = nil
            }
        }
        return actions
    }

    mutating func apply(_ control: PlayerControl) -> [Action] {
        player.apply(control)
        if case .intensity = control { profile = Self.profile(player) }
        return guidance()
    }

    mutating func lapPressed() -> [Action] {
        guard player.lapPressed() else { return [] }
        lapBeginsStep = true
        return guidance()
    }

    /// The trainer refused what was asked: ask again at the next step or second.
    mutating func trainerRefused() { asked = nil }

    /// The trainer's target for now, and what to tell the rider: the step on entering it, its texts when due.
    private mutating func guidance() -> [Action] {
        var actions: [Action] = []
        if player.stepIndex != toldStep {
            if toldStep >= 0, player.step != nil, !lapBeginsStep { stepLaps += 1 }
            lapBeginsStep = false
            toldStep = player.stepIndex
            toldTexts = 0
            if let step = player.step {
                actions.append(.tell(Self.words(step, index: player.stepIndex, of: player.steps.count, player)))
            } else {
                actions.append(.tell("workout complete: ride on, or end the ride"))
            }
        }
        if let step = player.step {
            while toldTexts < step.texts.count, Double(step.texts[toldTexts].offsetSeconds) <= player.secondsInStep {
                actions.append(.tell(step.texts[toldTexts].text))
                toldTexts += 1
            }
        }
        // A power in ERG; else a road's grade in simulation; else the trainer is let go.
        let wanted: TrainerAsk =
            player.targetWatts.map { .power(watts: $0) } ?? player.targetGradePercent.map { .grade(percent: $0) }
            ?? .mode(.free)
        if wanted != asked {
            asked = wanted
            actions.append(.steer(wanted))
        }
        return actions
    }

    /// `step 3 of 12: 5:00 at 250 W`.
    static func words(_ step: WorkoutStep, index: Int, of count: Int, _ player: WorkoutPlayer) -> String {
        let length: String =
            switch step.length {
            case .seconds(let seconds): String(seconds / 60) + ":" + String(format2(seconds % 60))
            case .meters(let meters): meters >= 1000 ? "\(Double(meters) / 1000) km" : "\(meters) m"
            case .open: "until you move on"
            }
        let power: String
        switch step.power {
        case .free:
            power = step.gradeHundredths.map { "a \(PowerLevel.decimal($0)) % grade" } ?? "free ride"
        case .maxEffort: power = "all out"
        case .range:
            power = player.targetRangeWatts.map { "\($0.lowerBound)–\($0.upperBound) W" } ?? "a share of FTP"
        case .ramp(let from, let to):
            let start = player.watts(.steady(from), progress: 0), end = player.watts(.steady(to), progress: 0)
            power = start.flatMap { a in end.map { "\(a) → \($0) W" } } ?? "a ramp"
        case .steady: power = player.targetWatts.map { "\($0) W" } ?? "a share of FTP"
        }
        let cadence =
            step.cadence.map {
                $0.lowerBound == $0.upperBound ? ", \($0.lowerBound) rpm" : ", \($0.lowerBound)–\($0.upperBound) rpm"
            } ?? ""
        return "step \(index + 1) of \(count)\(step.name.map { " (\($0))" } ?? ""): \(length) at \(power)\(cadence)"
    }

    private static func format2(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// The workout's part of the status. The step's target is the ride's target, whether a trainer is steered
    /// to it or the rider follows it: it is published over the trainer's.
    func describe(_ status: inout LiveStatus) {
        status.published.workoutPlanId = id
        status.published.workoutPlanName = player.planned.workout.name
        status.published.stepIndex = Int64(player.stepIndex)
        status.published.stepCount = Int64(player.steps.count)
        status.published.stepSecondsLeft = player.secondsLeft?.rounded()
        status.published.stepName = player.step?.name ?? ""
        status.published.targetPowerWatts = player.targetWatts.map(Double.init)
        if let grade = player.targetGradePercent { status.published.gradePercent = grade }
        status.published.targetRangeLowWatts = player.targetRangeWatts.map { Double($0.lowerBound) }
        status.published.targetRangeHighWatts = player.targetRangeWatts.map { Double($0.upperBound) }
        status.published.nextTargetPowerWatts = player.nextTargetWatts.map(Double.init)
        status.published.intensityPercent = Int64(player.intensityPercent)
        status.published.workoutProfile = profile.text
        status.screen.stepGradePercent = player.targetGradePercent
        status.screen.stepSecondsLeft = player.secondsLeft
        status.screen.cadenceTarget = player.step?.cadence
        status.screen.profile = profile.segments
    }

    /// The whole workout's targets for a small chart: (seconds, watts at the start, watts at the end) per timed
    /// step; an open step counts 60 s and a distance 1 s per 10 m, so that each has a place. Also as the status's
    /// text, `SECONDS:START:END` by commas (`-` for no target).
    static func profile(_ player: WorkoutPlayer) -> (segments: [LiveStatus.ProfileSegment], text: String) {
        let segments = player.steps.map { step in
            let seconds: Int =
                switch step.length {
                case .seconds(let seconds): seconds
                case .meters(let meters): max(1, meters / 10)
                case .open: 60
                }
            return LiveStatus.ProfileSegment(
                seconds: seconds, startWatts: player.watts(step.power, progress: 0),
                endWatts: player.watts(step.power, progress: 1))
        }
        let text = segments.map { segment in
            "\(segment.seconds):\(segment.startWatts.map(String.init) ?? "-"):\(segment.endWatts.map(String.init) ?? "-")"
        }.joined(separator: ",")
        return (segments, text)
    }
}
