import ArgumentParser
import DBus
import ExitStatus
import Foundation
import ProgramMain
import RecorderInterface
import Workouts

/// What the workout verbs share: one `Control` command to the running recorder, then where the workout stands.
enum PlayerCommand {
    static func send(_ player: RecorderCommand.Player, bus: BusAddress) async throws {
        let client = try await ControlCommand.send(.player(player), bus: bus)
        if let status = try? await client.status(timeout: .seconds(2)) { sayOnStandardOutput(describe(status)) }
    }

    /// "Workout Sweet spot 2×20: step 2 of 5, 182 W (176–188 W), 19:40 left, intensity 100 %."
    static func describe(_ status: RecorderStatus) -> String {
        guard status.stepIndex >= 0 else { return "No structured workout is being ridden." }
        guard status.stepIndex < status.stepCount else { return "Workout \(status.workoutPlanName): complete." }
        var words = ["step \(status.stepIndex + 1) of \(status.stepCount)"]
        if let target = status.targetPowerWatts {
            var power = "\(Int(target)) W"
            if let low = status.targetRangeLowWatts, let high = status.targetRangeHighWatts {
                power += " (\(Int(low))–\(Int(high)) W)"
            }
            words.append(power)
        } else {
            words.append("no target")
        }
        if let left = status.stepSecondsLeft {
            // As the dashboard shows it.
            words.append("\(SummaryText.duration(left.rounded(.up))) left")
        }
        words.append("intensity \(status.intensityPercent) %")
        return "Workout \(status.workoutPlanName): " + words.joined(separator: ", ") + "."
    }
}

/// `cyclelog skip`.
struct Skip: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "skip", abstract: "Moves the structured workout on to its next step.")
    @OptionGroup var control: ControlBusOptions

    func run() async throws { try await PlayerCommand.send(.skip, bus: control.address) }
}

/// `cyclelog back`.
struct Back: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "back",
        abstract: "Starts the workout's step again (within its first 10 s: the step before).")
    @OptionGroup var control: ControlBusOptions

    func run() async throws { try await PlayerCommand.send(.back, bus: control.address) }
}

/// `cyclelog extend 1m`.
struct Extend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend", abstract: "Makes the workout's current step longer: 30s, 1m, 2m30s (up to 1 h).")
    @Argument(help: "How much longer: 30s, 1m, 2m30s.")
    var duration: String
    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        guard let seconds = Self.seconds(duration), (1...3600).contains(seconds) else {
            throw ValidationError("'\(duration)' is not a duration of 1 s to 1 h (30s, 1m, 2m30s)")
        }
        try await PlayerCommand.send(.extend(seconds: Double(seconds)), bus: control.address)
    }

    /// `90`, `90s`, `1m`, `2m30s`, `1h`: seconds, or a time as a goal is written.
    static func seconds(_ text: String) -> Int? {
        if let plain = Int(text) { return plain }
        guard case .timeSeconds(let seconds)? = WorkoutGoal(text) else { return nil }
        return Int(seconds.rounded())
    }
}

/// `cyclelog intensity 95`, `+5`, `-5`.
struct Intensity: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "intensity",
        abstract: "Scales every target of the structured workout: 95 (%), or +5 / -5 from where it is (50–150).")
    @Argument(parsing: .allUnrecognized, help: "Percent (50–150), or +N / -N.")
    var percent: [String] = []
    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        let (word, value) = try TrainerCommand.number(percent, "intensity in %")
        let relative = word.hasPrefix("+") || word.hasPrefix("-")
        try await PlayerCommand.send(
            relative ? .intensityChange(percent: value) : .intensity(percent: value), bus: control.address)
    }
}
