import ArgumentParser
import DBus
import Formats
import LiveRecording
import ProgramMain
import RecorderInterface
import RecorderService
import Workouts

/// `cyclelog start`: asks the waiting recorder (`record --wait`, `record --auto`) to start a ride with a style.
struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Starts a ride on the waiting recorder (`cyclelog record --wait`), from a preset or a style.",
        discussion: """
            PRESET is a suggested workout: open, 20min (FTP test), ramp (ramp test), endurance-1h (goal 1 h), or \
            one the rider added (`cyclelog presets`). Options override the preset's. With --when pedalling the recorder is armed: the ride starts at the \
            first pedal stroke, with the last 3 s of notifications. Prints the new workout's id.
            """)

    @Argument(help: "A preset: open, 20min, ramp, endurance-1h or one of yours (`cyclelog presets list`).")
    var preset: String?

    @OptionGroup var style: StyleOptions

    @Flag(
        help: ArgumentHelp(
            "Turn the sensor hub on for this ride: its sensors re-broadcast to the apps a rider rides in.",
            discussion: "Needs a recorder with a second Bluetooth adapter (`cyclelog record --wait`)."))
    var hub = false

    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        // The recorder checks the style (one place for the rules and their messages).
        let values =
            (preset.map { [("preset", StartRequest.Value.text($0))] } ?? []) + style.values
            + (hub ? [("hub", .flag(true))] : [])
        let reply = try await ControlCommand.call(
            .start(style: Dictionary(values) { $1 }), bus: control.address, noRecorder: .cannotUse)
        let id = reply.first?.integer ?? 0
        sayOnStandardOutput(id == 0 ? "Armed: the ride starts at the first pedal stroke." : "Recording workout \(id).")
    }
}

/// A start's style on the command line (`cyclelog start`, `cyclelog presets add`): only what was given.
struct StyleOptions: ParsableArguments {
    @Option(help: "The workout's name.")
    var name: String?

    @Option(help: "A goal: time (45m, 1h30m), distance (30km, 20mi) or energy (600kJ, 800kcal).")
    var goal: String?

    @Flag(exclusivity: .exclusive, help: "Where the ride is.")
    var location: WorkoutLocationFlag?

    @Option(help: "A fitness test that sets the FTP: 20min or ramp.")
    var test: String?

    @Option(help: "now, or pedalling (start at the first pedal stroke).")
    var when: String?

    @Flag(help: "End and save the ride when its goal is reached.")
    var endAtGoal = false

    @Option(name: .customLong("control"), help: "Steer the smart trainer from the start: erg, sim, resistance or none.")
    var trainerControl: String?

    @Option(help: "What ERG steers by: meter (a crank or pedal power meter) or trainer.")
    var powerFrom: String?
    @Option(help: "A structured workout to ride, by its id (cyclelog workouts list): it drives a trainer in ERG.")
    var workout: String?

    /// The style's keys and values (`StartRequest.keys`), the recorder's or the store's to check.
    var values: [(String, StartRequest.Value)] {
        var values: [(String, StartRequest.Value)] = []
        if let name { values.append(("name", .text(name))) }
        if let goal { values.append(("goal", .text(goal))) }
        if let location { values.append(("location", .text(location.rawValue))) }
        if let test { values.append(("test", .text(test))) }
        if let when { values.append(("when", .text(when))) }
        if endAtGoal { values.append(("endAtGoal", .flag(true))) }
        if let trainerControl { values.append(("control", .text(trainerControl))) }
        if let powerFrom { values.append(("powerFrom", .text(powerFrom))) }
        if let workout { values.append(("workout", .text(workout))) }
        return values
    }
}

/// `cyclelog marker TEXT`.
struct Marker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marker", abstract: "Marks a point in the ride being recorded with a text (1–200 characters).")

    @Argument(help: "The marker's text.")
    var text: String

    @OptionGroup var control: ControlBusOptions

    func run() async throws {
        try await ControlCommand.callAndSay(.marker(text), bus: control.address, noRecorder: .cannotUse) {
            before, _ in "\(ControlCommand.workout(before)) has the marker \"\(ShownText.visible(text))\"."
        }
    }
}

/// `cyclelog water 250ml`.
struct Water: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "water", abstract: "Logs water drunk during the ride being recorded: 250ml, 0.5l or 12oz.")

    @Argument(help: "How much: 250ml, 0.5l or 12oz (US fluid ounces).")
    var amount: String

    @OptionGroup var control: ControlBusOptions

    func validate() throws {
        guard Intake(.water, amount) != nil else {
            throw ValidationError("'\(amount)' is not \(Intake.forms(.water))")
        }
    }

    func run() async throws {
        guard let water = Intake(.water, amount) else { return }
        try await ControlCommand.callAndSay(.intake(water), bus: control.address, noRecorder: .cannotUse) {
            before, after in
            "\(amount) of water logged in \(ControlCommand.workout(before))"
                + (after.flatMap { $0.waterMillilitres.isFinite ? $0.waterMillilitres : nil }.map {
                    " (\(Int($0.rounded())) ml in all)"
                } ?? "") + "."
        }
    }
}
