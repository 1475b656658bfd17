import DBus
import RecorderInterface
import StructuredWorkouts
import Testing
import TrainerControl
import Workouts

/// The typed command against `Control`'s `command` and `args` as Docs/reference/dbus.md writes them: each command
/// read from its documented form, written back to the same form, and each wrong one refused by name.
@Suite struct RecorderCommandTests {
    /// Every documented command with documented arguments, and the command it is.
    static let documented: [(name: String, arguments: [String: DBusValue], command: RecorderCommand)] = [
        (
            "start", ["preset": .string("ramp"), "endAtGoal": .boolean(true)],
            .start(style: ["preset": .text("ramp"), "endAtGoal": .flag(true)])
        ),
        ("pause", [:], .control(.pause)),
        ("resume", [:], .control(.resume)),
        ("lap", [:], .control(.lap)),
        ("end", [:], .control(.end)),
        ("cancel", [:], .control(.cancel)),
        ("marker", ["text": .string("flat tyre")], .marker("flat tyre")),
        (
            "intake", ["kind": .string("water"), "amount": .double(250), "unit": .string("ml")],
            .intake(Intake(.water, amount: 250, unit: "ml")!)
        ),
        ("target", ["watts": .double(250)], .steer(.target(watts: 250))),
        ("target", ["change": .double(-10)], .steer(.targetChange(watts: -10))),
        ("grade", ["percent": .double(4.5)], .steer(.grade(percent: 4.5))),
        ("resistance", ["percent": .double(30)], .steer(.resistance(percent: 30))),
        ("trainer", ["mode": .string("sim")], .steer(.mode("sim"))),
        ("skip", [:], .player(.skip)),
        ("back", [:], .player(.back)),
        ("extend", ["seconds": .double(60)], .player(.extend(seconds: 60))),
        ("intensity", ["percent": .double(95)], .player(.intensity(percent: 95))),
        ("intensity", ["change": .double(5)], .player(.intensityChange(percent: 5))),
        ("undo", [:], .undo(action: nil)),
        ("undo", ["action": .int64(4)], .undo(action: 4)),
        ("end", ["now": .boolean(true)], .endNow),
    ]

    @Test func eachDocumentedCommandIsReadAndWrittenBackTheSame() throws {
        for (name, arguments, command) in Self.documented {
            #expect(try RecorderCommand(name: name, arguments: arguments) == command, "\(name) \(arguments)")
            #expect(command.name == name)
            #expect(command.arguments == arguments, "\(name)")
        }
        // The reference's list, in its order (Docs/reference/dbus.md, `Control`).
        #expect(
            RecorderCommand.names == [
                "start", "pause", "resume", "lap", "end", "cancel", "marker", "intake", "target", "grade",
                "resistance", "trainer", "skip", "back", "extend", "intensity", "undo",
            ])
    }

    /// A number may come as any D-Bus integer as well as a double (`busctl … watts i 250`).
    @Test func aNumberMayBeAnInteger() throws {
        #expect(try RecorderCommand(name: "target", arguments: ["watts": .int32(250)]) == .steer(.target(watts: 250)))
        #expect(
            try RecorderCommand(name: "extend", arguments: ["seconds": .uint32(90)]) == .player(.extend(seconds: 90)))
    }

    /// The commands that are methods of their own too are sent as those methods, with their arguments in the
    /// methods' order (Docs/reference/dbus.md's introspection).
    @Test func theMethodsOfTheirOwnTakeTheirArgumentsInOrder() {
        #expect(RecorderCommand.control(.lap).method?.name == "Lap")
        #expect(RecorderCommand.control(.cancel).method?.name == "Cancel")
        #expect(RecorderCommand.marker("gel").method?.arguments == [.string("gel")])
        let water = RecorderCommand.intake(Intake(.water, amount: 0.5, unit: "l")!)
        #expect(water.method?.name == "Intake")
        #expect(water.method?.arguments == [.string("water"), .double(500), .string("ml")])
        let start = RecorderCommand.start(style: ["name": .text("Tempo"), "goal": .text("1h")])
        #expect(start.method?.name == "Start")
        #expect(start.method?.arguments == [.properties([("goal", .string("1h")), ("name", .string("Tempo"))])])
        #expect(RecorderCommand.steer(.target(watts: 200)).method == nil)
        #expect(RecorderCommand.player(.skip).method == nil)
    }

    /// Each wrong command is refused with InvalidArgs naming what is wrong, in the reference's words.
    @Test func aWrongCommandIsRefusedByName() {
        for (name, arguments, words) in [
            (
                "jump", [:],
                "command 'jump' is not one of start, pause, resume, lap, end, cancel, marker, intake, target, grade, resistance, trainer, skip, back, extend, intensity, undo"
            ),
            ("target", [:], "target takes watts (0–3000) or change (±500)"),
            ("grade", ["watts": .double(3)], "grade takes percent (±40)"),
            ("resistance", [:], "resistance takes percent (0–100)"),
            ("extend", [:], "extend takes seconds (1–3600)"),
            ("intensity", [:], "intensity takes percent (50–150) or change (±100)"),
            ("marker", ["text": .string("")], "text takes 1 to 200 characters"),
            ("undo", ["action": .int64(0)], "action takes the number of an action (UndoId)"),
            ("undo", ["action": .string("lap")], "action takes the number of an action (UndoId)"),
            (
                "intake", ["kind": .string("beer"), "amount": .double(500), "unit": .string("ml")],
                "kind 'beer' is not water or carbs"
            ),
        ] as [(String, [String: DBusValue], String)] {
            #expect(throws: DBusError(name: DBusError.invalidArgumentsName, message: words)) {
                try RecorderCommand(name: name, arguments: arguments)
            }
        }
    }

    /// Numbers are carried as asked and held to their bounds where they are carried out: the journal's for the
    /// trainer (`TrainerTarget`), the player's for the workout.
    @Test func numbersAreHeldToTheirBoundsWhenCarriedOut() throws {
        func refusal(_ body: () throws -> Void) -> String? {
            do {
                try body()
                return nil
            } catch let error as DBusError where error.name == DBusError.invalidArgumentsName {
                return error.message
            } catch {
                return "not InvalidArgs: \(error)"
            }
        }
        #expect(try RecorderCommand.Steer.target(watts: 249.6).ask() == .power(watts: 250))
        #expect(
            refusal { _ = try RecorderCommand.Steer.target(watts: 5000).ask() }
                == "watts takes a number from 0 to 3000 W")
        #expect(
            refusal { _ = try RecorderCommand.Steer.target(watts: .nan).ask() }
                == "watts takes a number from 0 to 3000 W")
        #expect(
            refusal { _ = try RecorderCommand.Steer.targetChange(watts: 600).ask() }
                == "change takes a number from -500 to 500 W")
        #expect(
            refusal { _ = try RecorderCommand.Steer.grade(percent: -41).ask() }
                == "percent takes a number from -40 to 40 %")
        #expect(
            refusal { _ = try RecorderCommand.Steer.mode("ergo").ask() }
                == "trainer takes mode erg, sim, resistance or free (not 'ergo')")
        #expect(try RecorderCommand.Steer.mode("free").ask() == .mode(.free))
        // A change of intensity is taken from where it stands and held within 50–150.
        #expect(
            try RecorderCommand.Player.intensityChange(percent: 10).control(intensityPercent: 145)
                == .intensity(percent: 150))
        #expect(
            try RecorderCommand.Player.intensity(percent: 95).control(intensityPercent: 100) == .intensity(percent: 95))
        #expect(
            refusal { _ = try RecorderCommand.Player.intensity(percent: 150.4).control(intensityPercent: 100) }
                == "percent takes a number from 50 to 150 %")
        #expect(
            refusal { _ = try RecorderCommand.Player.extend(seconds: 0).control(intensityPercent: 100) }
                == "seconds takes a number from 1 to 3600 s")
        // A number that is not one (a string where watts go) is refused with its bounds too.
        let text = try RecorderCommand(name: "target", arguments: ["watts": .string("lots")])
        guard case .steer(let steer) = text else {
            Issue.record("\(text)")
            return
        }
        #expect(refusal { _ = try steer.ask() } == "watts takes a number from 0 to 3000 W")
    }
}
