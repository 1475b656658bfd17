import ArgumentParser
import DBus
import ExitStatus
import Foundation
import LiveRecording
import ProgramMain
import RecorderInterface
import StructuredWorkouts
import TrainerControl
import WorkoutStore

/// `record`'s options for a smart trainer: how it is steered from the start, and the numbers of ERG's safety
/// and power match (Docs/guide/trainer.md).
struct TrainerOptions: ParsableArguments {
    @Option(help: "Steer a smart trainer from the start: erg, sim, resistance or none.")
    var control: TrainerStart = .none

    @Option(help: "ERG's target at the start, in watts.")
    var targetWatts = 150

    @Option(help: "What ERG steers by: meter (a crank or pedal power meter, when one sends) or trainer.")
    var powerFrom: PowerSource = .trainer

    @Option(help: "ERG eases to its recovery level when the cadence stays under this (rpm) for 3 s.")
    var ergLowCadence = 40.0

    @Option(help: "…and comes back, over 5 s, once the cadence is above this (rpm).")
    var ergResumeCadence = 60.0

    @Option(help: "Power match: the seconds its average of meter − trainer spans (an exponential average).")
    var powerMatchSeconds = 30.0

    enum TrainerStart: String, ExpressibleByArgument, CaseIterable {
        case erg, sim, resistance, none
    }

    enum PowerSource: String, ExpressibleByArgument, CaseIterable {
        case meter, trainer
    }

    func validate() throws {
        guard (0...3000).contains(targetWatts) else { throw ValidationError("--target-watts takes 0 to 3000") }
        guard (0...200).contains(ergLowCadence), (0...200).contains(ergResumeCadence),
            ergResumeCadence >= ergLowCadence
        else {
            throw ValidationError("--erg-resume-cadence must be at least --erg-low-cadence (both 0–200 rpm)")
        }
        guard (1...600).contains(powerMatchSeconds) else {
            throw ValidationError("--power-match-seconds takes 1 to 600")
        }
    }

    func apply(to options: inout LiveRecorder.Options) {
        options.trainerMode = TrainerMode(rawValue: control.rawValue) ?? .free
        options.trainerTargetWatts = targetWatts
        options.trainerRules.powerFromMeter = powerFrom == .meter
        options.trainerRules.lowCadenceRPM = ergLowCadence
        options.trainerRules.recoveredCadenceRPM = ergResumeCadence
        options.trainerRules.matchTimeConstant = .milliseconds(Int(powerMatchSeconds * 1000))
    }
}

/// `record`'s options for a structured workout (Docs/guide/workouts.md).
struct WorkoutOptions: ParsableArguments {
    @Option(help: "Ride a structured workout, by its id (cyclelog workouts list): it drives a trainer in ERG.")
    var workout: String?

    @Option(help: "The FTP the workout's shares of FTP are taken of (default: the FTP in force).")
    var ftp: Int?

    @Option(help: "Every target scaled, in % (50–150).")
    var intensity = 100

    @Option(help: "The ramp test's first minute, in watts.")
    var rampStart = 100

    @Option(help: "The ramp test's step each minute, in watts.")
    var rampStep = 20

    func validate() throws {
        if let ftp, !(50...1000).contains(ftp) { throw ValidationError("--ftp takes 50 to 1000 W") }
        guard PlayerControl.intensityPercent.contains(intensity) else {
            throw ValidationError("--intensity takes 50 to 150 (%)")
        }
        guard (20...600).contains(rampStart), (5...100).contains(rampStep) else {
            throw ValidationError("--ramp-start takes 20 to 600 W and --ramp-step 5 to 100 W")
        }
    }

    /// The workout chosen, read from the library with its FTP; nil without --workout.
    func choice(_ store: WorkoutStore, at time: Int64) throws -> LiveRecorder.WorkoutChoice? {
        guard let workout else { return nil }
        do {
            let planned = try store.plannedWorkout(
                workout, ftpWatts: ftp, at: time, rampStartWatts: rampStart, rampStepWatts: rampStep)
            return LiveRecorder.WorkoutChoice(id: workout, planned: planned, intensityPercent: intensity)
        } catch let error as UnknownWorkout {
            throw CommandFailure(error.description, .failed)
        }
    }
}

extension ControlCommand {
    /// One `Control` command to the running recorder, with a fresh request id; the client, to read what it did.
    static func send(_ command: RecorderCommand, bus: BusAddress) async throws -> RecorderClient {
        let client = RecorderClient(try await ControlCommand.connect(bus))
        do {
            try await client.send(command, requestId: UUID().uuidString.lowercased())
        } catch {
            throw CommandFailure(
                ControlCommand.explain(error, bus), RecorderControl.isMissing(error) ? .cannotUse : .failed)
        }
        return client
    }
}

/// What the trainer verbs share: one `Control` command to the running recorder, then the trainer as it stands.
enum TrainerCommand {
    static func send(_ steer: RecorderCommand.Steer, bus: BusAddress) async throws {
        let client = try await ControlCommand.send(.steer(steer), bus: bus)
        // The trainer answers within a second; what it said is in the status.
        var status = try? await client.status(timeout: .seconds(2))
        for _ in 0..<10 where status?.trainerState == .asking {
            try? await Task.sleep(for: .milliseconds(150))
            status = try? await client.status(timeout: .seconds(2))
        }
        guard let status else { return }
        sayOnStandardOutput(describe(status))
        if status.trainerState == .refused { throw CommandFailure(status.trainerMessage, .failed) }
    }

    /// "ERG at 250 W (controlled)", "simulation at 4.5 % (controlled)", "free (not steered)".
    static func describe(_ status: RecorderStatus) -> String {
        let state = status.trainerState?.rawValue ?? ""
        switch status.trainerMode {
        case .erg:
            return "Trainer: ERG at \(Int(status.targetPowerWatts ?? 0)) W (\(state))."
        case .simulation:
            return "Trainer: simulation at \(SummaryText.amount(status.gradePercent ?? 0)) % grade (\(state))."
        case .resistance:
            return
                "Trainer: resistance at \(SummaryText.amount(status.resistanceLevel ?? 0)) % of its range (\(state))."
        case .free, nil:
            return "Trainer: free, not steered (\(state))."
        }
    }

    /// A number argument that may be negative (`-10`, which a parser would take for an option): the word as
    /// given and its value.
    static func number(_ words: [String], _ what: String) throws -> (word: String, value: Double) {
        guard words.count == 1, let word = words.first else { throw ValidationError("give one \(what)") }
        guard let value = Double(word), value.isFinite else { throw ValidationError("'\(word)' is not a number") }
        return (word, value)
    }
}

/// `cyclelog target 250|+10|-10`.
struct Target: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "target",
        abstract: "Puts the smart trainer in ERG at a power: 250, or +10 / -10 from the current target.")

    @Argument(parsing: .allUnrecognized, help: "Watts (0–3000), or +W / -W from the current target.")
    var watts: [String] = []

    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        let (word, value) = try TrainerCommand.number(watts, "power in watts")
        let relative = word.hasPrefix("+") || word.hasPrefix("-")
        try await TrainerCommand.send(
            relative ? .targetChange(watts: value) : .target(watts: value), bus: control.address)
    }
}

/// `cyclelog grade 4.5`.
struct Grade: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grade", abstract: "Puts the smart trainer in simulation at a road grade in % (−40 to 40).")

    @Argument(parsing: .allUnrecognized, help: "The grade in %: 4.5, or -2 downhill.")
    var percent: [String] = []

    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        let (_, value) = try TrainerCommand.number(percent, "grade in %")
        try await TrainerCommand.send(.grade(percent: value), bus: control.address)
    }
}

/// `cyclelog resistance 30`.
struct Resistance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resistance",
        abstract: "Puts the smart trainer at a resistance: a share of its range in % (0–100).")

    @Argument(help: "Resistance in % of the trainer's range.")
    var percent: Double

    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        try await TrainerCommand.send(.resistance(percent: percent), bus: control.address)
    }
}

/// `cyclelog trainer erg|sim|resistance|free`.
struct TrainerModeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trainer",
        abstract: "Switches the smart trainer's mode: erg, sim, resistance, or free (let it go).")

    @Argument(help: "erg, sim, resistance or free.")
    var mode: String

    @OptionGroup var control: ControlBusOptions

    func validate() throws {
        guard TrainerMode(rawValue: mode) != nil else {
            throw ValidationError("'\(mode)' is not erg, sim, resistance or free")
        }
    }

    func run() async throws {
        try await TrainerCommand.send(.mode(mode), bus: control.address)
    }
}
