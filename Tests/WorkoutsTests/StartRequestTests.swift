import XCTest

@testable import Workouts

/// A start's style as D-Bus `Start` and `cyclelog start` give it: the preset's values, explicit keys over them,
/// and every refusal naming its key.
final class StartRequestTests: XCTestCase {
    let presets = WorkoutPreset.builtIn

    func testAnEmptyStyleIsAnOpenEndedRideStartedNow() throws {
        let request = try StartRequest(style: [:], presets: presets)
        XCTAssertEqual(request, StartRequest())
        XCTAssertNil(request.plan.goal)
    }

    func testExplicitKeysOverrideThePresets() throws {
        let request = try StartRequest(
            style: ["preset": .text("endurance-1h"), "goal": .text("1h30m"), "location": .text("outdoor")],
            presets: presets)
        XCTAssertEqual(request.plan.preset, "endurance-1h")
        XCTAssertEqual(request.plan.goal, .timeSeconds(5400))
        XCTAssertEqual(request.plan.location, .outdoor)
        let ramp = try StartRequest(style: ["preset": .text("ramp"), "when": .text("pedalling")], presets: presets)
        XCTAssertEqual(ramp.plan.fitnessTest, .ramp)
        XCTAssertEqual(ramp.when, .pedalling)
        let named = try StartRequest(
            style: ["name": .text("  Club run "), "goal": .text("800kcal"), "endAtGoal": .flag(true)], presets: presets)
        XCTAssertEqual(named.plan.name, "Club run")
        XCTAssertEqual(named.plan.goal, .energyJoules(800 * 4184))
        XCTAssertTrue(named.endAtGoal)
        XCTAssertFalse(named.hub, "the hub is off unless a start asks for it")
        let bridged = try StartRequest(style: ["hub": .flag(true)], presets: presets)
        XCTAssertTrue(bridged.hub)
        XCTAssertEqual(bridged.style.map(\.key), ["hub"], "the style that asks for it says so")
    }

    func testEveryRefusalNamesItsKey() {
        let refused: [(style: [String: StartRequest.Value], key: String, words: String)] = [
            (["goal": .text("45x")], "goal", "a time (45m, 1h30m), a distance (30km, 20mi) or an energy"),
            (["goal": .flag(true)], "goal", "goal takes a string"),
            (["location": .text("moon")], "location", "is not indoor or outdoor"),
            (["test": .text("5min")], "test", "is not 20min or ramp"),
            (["when": .text("later")], "when", "is not now or pedalling"),
            (["endAtGoal": .text("yes")], "endAtGoal", "takes a boolean"),
            (["endAtGoal": .flag(true)], "endAtGoal", "needs a goal"),
            (["hub": .text("on")], "hub", "hub takes a boolean (b)"),
            (["preset": .text("hill")], "preset", "the presets are open, 20min, ramp, endurance-1h"),
            (["name": .text("   ")], "name", "1 to 200 characters"),
            (["name": .other(signature: "i")], "name", "not i"),
            (["workout": .text("Sweet Spot")], "workout", "is not a workout's id"),
            (["control": .text("turbo")], "control", "is not erg, sim, resistance, none"),
            (["powerFrom": .text("hub")], "powerFrom", "is not meter or trainer"),
            (["colour": .text("red")], "colour", "unknown key colour"),
        ]
        for (style, key, words) in refused {
            XCTAssertThrowsError(try StartRequest(style: style, presets: presets)) { error in
                let problem = error as? StartRequest.Problem
                XCTAssertEqual(problem?.key, key, "\(style)")
                XCTAssertTrue(problem?.description.contains(words) == true, "\(problem?.description ?? "")")
            }
        }
    }

    /// A workout by its id; the built-in guided tests are scored as their test, unless the style says otherwise.
    func testAWorkoutIsTakenAndAGuidedTestIsScoredAsItsTest() throws {
        let presets = WorkoutPreset.builtIn
        let sweet = try StartRequest(style: ["workout": .text("sweet-spot-2x20")], presets: presets)
        XCTAssertEqual(sweet.workout, "sweet-spot-2x20")
        XCTAssertNil(sweet.plan.fitnessTest)
        XCTAssertEqual(sweet.style.map(\.key), ["workout"])
        let ramp = try StartRequest(style: ["workout": .text("ramp-test")], presets: presets)
        XCTAssertEqual(ramp.plan.fitnessTest, .ramp)
        let twenty = try StartRequest(style: ["preset": .text("20min")], presets: presets)
        XCTAssertEqual(twenty.workout, "ftp-test-20")
        XCTAssertEqual(twenty.plan.fitnessTest, .twentyMinute)
    }

    func testTheTrainersKeysAreTaken() throws {
        let request = try StartRequest(
            style: ["control": .text("erg"), "powerFrom": .text("meter")], presets: presets)
        XCTAssertEqual(request.trainerControl, .erg)
        XCTAssertEqual(request.powerFrom, .meter)
        let style = Dictionary(uniqueKeysWithValues: request.style.map { ($0.key, $0.value) })
        XCTAssertEqual(try StartRequest(style: style, presets: presets), request)
    }

    func testAPresetsStyleGivesItsRequestBack() throws {
        for preset in presets {
            let style = Dictionary(uniqueKeysWithValues: preset.request.style.map { ($0.key, $0.value) })
            XCTAssertEqual(try StartRequest(style: style, presets: presets), preset.request, preset.id)
        }
        XCTAssertFalse(WorkoutPreset.isValidID("Hill_Repeats"))
        XCTAssertFalse(WorkoutPreset.isValidID(""))
        XCTAssertTrue(WorkoutPreset.isValidID("sweet-spot-2x20"))
    }

    func testDrinksInEveryUnitAreKeptInMillilitres() throws {
        XCTAssertEqual(Intake(.water, "250ml")?.amount, 250)
        XCTAssertEqual(Intake(.water, "0.5l")?.amount, 500)
        // A US fluid ounce is 29.5735 ml (NIST Handbook 44): 12 oz = 354.882 ml, kept to 0.1 ml.
        XCTAssertEqual(Intake(.water, "12oz")?.amount, 354.9)
        XCTAssertEqual(Intake(.carbs, "30g")?.amount, 30)
        for (kind, text) in [
            (Intake.Kind.water, "0ml"), (.water, "-250ml"), (.water, "6l"), (.water, "250"), (.water, "250g"),
            (.carbs, "2000g"), (.carbs, "nang"), (.water, "infml"),
        ] {
            XCTAssertNil(Intake(kind, text), text)
        }
    }
}
