import ArgumentParser
import DBus
import LiveRecording
import Workouts

/// `cyclelog start`: asks the waiting recorder (`record --wait`, `record --auto`) to start a ride with a style.
struct Start: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Starts a ride on the waiting recorder (`cyclelog record --wait`), from a preset or a style.",
        discussion: """
            PRESET is a suggested workout: open, 20min (FTP test), ramp (ramp test), endurance-1h (goal 1 h).
            Options override the preset's. With --when pedalling the recorder is armed: the ride starts at the
            first pedal stroke, with the last 3 s of notifications. Prints the new workout's id.
            """)

    @Argument(help: "A preset: open, 20min, ramp or endurance-1h.")
    var preset: String?

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

    @OptionGroup var control: ControlBusOptions

    /// The style dictionary of D-Bus `Start`: only what was given, so that the preset's values stay otherwise.
    var style: [(String, DBusValue)] {
        var style: [(String, DBusValue)] = []
        if let preset { style.append(("preset", .string(preset))) }
        if let name { style.append(("name", .string(name))) }
        if let goal { style.append(("goal", .string(goal))) }
        if let location { style.append(("location", .string(location.rawValue))) }
        if let test { style.append(("test", .string(test))) }
        if let when { style.append(("when", .string(when))) }
        if endAtGoal { style.append(("endAtGoal", .boolean(true))) }
        return style
    }

    func run() async throws {
        // The recorder checks the style (one place for the rules and their messages).
        let reply = try await ControlCommand.call(
            "Start", [.properties(style)], bus: control.address, noRecorder: 2)
        let id = reply.first?.integer ?? 0
        print(id == 0 ? "Armed: the ride starts at the first pedal stroke." : "Recording workout \(id).")
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
        try await ControlCommand.call("Marker", [.string(text)], bus: control.address, noRecorder: 2)
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
        guard let (number, unit) = Intake.split(amount) else { return }
        try await ControlCommand.call(
            "Intake", [.string("water"), .double(number), .string(unit)], bus: control.address, noRecorder: 2)
    }
}
