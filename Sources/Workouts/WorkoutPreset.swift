import Formats

/// A suggested workout: a start style with a title, offered by launchers, the dashboard and a second screen
/// (Apple's suggested workouts for StartWorkoutIntent). Four are built in; riders add their own.
public struct WorkoutPreset: Equatable, Sendable {
    /// Lower-case letters, digits and `-` (it becomes a journal word, a desktop action and a URL part).
    public var id: String
    public var title: String
    /// What a Start with this preset and no other keys asks for.
    public var request: StartRequest

    public init(id: String, title: String, request: StartRequest) {
        self.id = id
        self.title = title
        self.request = request
        self.request.plan.preset = id
    }

    public static let builtIn: [WorkoutPreset] = [
        WorkoutPreset(id: "open", title: "Open ride", request: StartRequest()),
        WorkoutPreset(
            id: "20min", title: "20-minute FTP test",
            request: StartRequest(plan: WorkoutPlan(fitnessTest: .twentyMinute), workout: "ftp-test-20")),
        WorkoutPreset(
            id: "ramp", title: "Ramp test",
            request: StartRequest(plan: WorkoutPlan(fitnessTest: .ramp), workout: "ramp-test")),
        WorkoutPreset(
            id: "endurance-1h", title: "Endurance 1 h",
            request: StartRequest(plan: WorkoutPlan(goal: .timeSeconds(3600)))),
    ]

    /// Whether `id` can name a preset: 1–40 of `a`–`z`, `0`–`9` and `-`.
    public static func isValidID(_ id: String) -> Bool {
        (1...40).contains(id.utf8.count)
            && id.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || $0 == UInt8(ascii: "-")
            }
    }
}

/// A request to start a ride: the plan (name, goal, place, test, preset), when to start and whether to end at
/// the goal. Built from a style dictionary — D-Bus `Start`'s `a{sv}`, `cyclelog start`'s options — where
/// explicit keys override the preset's, and every refusal names the key that was wrong (as SiriKit's
/// resolution names the field).
public struct StartRequest: Equatable, Sendable {
    public enum When: String, Sendable, CaseIterable {
        case now
        /// Armed: the ride starts at the first pedal stroke, with the last seconds of notifications.
        case pedalling
    }

    public var plan: WorkoutPlan
    public var when: When
    /// End and save the ride when its goal is reached.
    public var endAtGoal: Bool
    /// How a smart trainer is steered from the start (`control=`): nil leaves it as it is.
    public var trainerControl: TrainerChoice?
    /// What ERG steers by (`powerFrom=`): nil leaves it as it is.
    public var powerFrom: PowerSource?
    /// The structured workout to ride (`workout=`, a library id): its targets drive a trainer in ERG.
    public var workout: String?
    /// The sensor hub for this ride (`hub=true`): the ride's sensors re-broadcast to the apps a rider rides in, on
    /// the recorder's second adapter, from the start (or from arming) until the ride ends.
    public var hub = false

    /// The fitness test a built-in guided test is (ramp-test, ftp-test-20): its ride is scored as that test.
    public static func fitnessTest(ofWorkout id: String) -> FitnessTest? {
        switch id {
        case "ramp-test": .ramp
        case "ftp-test-20": .twentyMinute
        default: nil
        }
    }

    /// A start's trainer mode: `none` lets the trainer go.
    public enum TrainerChoice: String, Sendable, CaseIterable {
        case erg, sim, resistance, none
    }

    /// ERG steered by a crank or pedal power meter, or by the trainer's own power.
    public enum PowerSource: String, Sendable, CaseIterable {
        case meter, trainer
    }

    public init(plan: WorkoutPlan = WorkoutPlan(), when: When = .now, endAtGoal: Bool = false, workout: String? = nil) {
        self.plan = plan
        self.when = when
        self.endAtGoal = endAtGoal
        self.workout = workout
    }

    /// A style value: a string or a boolean; anything else is named by its D-Bus signature.
    public enum Value: Equatable, Sendable {
        case text(String)
        case flag(Bool)
        case other(signature: String)

        /// As `presets list --json` and `status --json` show it.
        public var json: JSONValue {
            switch self {
            case .flag(let flag): .bool(flag)
            case .text(let text), .other(let text): .string(text)
            }
        }
    }

    /// A key that was wrong, and why, in words that name the accepted forms.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var key: String
        public var description: String
    }

    public static let keys = [
        "preset", "name", "goal", "location", "test", "when", "endAtGoal", "control", "powerFrom", "workout",
        "hub",
    ]

    /// The style that asks for this request, its keys in the order of `keys` (what a preset offers).
    public var style: [(key: String, value: Value)] {
        var style: [(String, Value)] = []
        if let preset = plan.preset { style.append(("preset", .text(preset))) }
        if let name = plan.name { style.append(("name", .text(name))) }
        if let goal = plan.goal { style.append(("goal", .text(goal.description))) }
        if let location = plan.location { style.append(("location", .text(location.rawValue))) }
        if let test = plan.fitnessTest { style.append(("test", .text(test.rawValue))) }
        if when != .now { style.append(("when", .text(when.rawValue))) }
        if endAtGoal { style.append(("endAtGoal", .flag(true))) }
        if let trainerControl { style.append(("control", .text(trainerControl.rawValue))) }
        if let powerFrom { style.append(("powerFrom", .text(powerFrom.rawValue))) }
        if let workout { style.append(("workout", .text(workout))) }
        if hub { style.append(("hub", .flag(true))) }
        return style
    }

    /// The request a style asks for, given the presets there are.
    public init(style: [String: Value], presets: [WorkoutPreset]) throws(Problem) {
        func text(_ key: String, _ forms: String) throws(Problem) -> String? {
            switch style[key] {
            case nil: return nil
            case .text(let value)?: return value
            case .flag?: throw Problem(key: key, description: "\(key) takes a string: \(forms)")
            case .other(let signature)?:
                throw Problem(key: key, description: "\(key) takes a string (s), not \(signature): \(forms)")
            }
        }
        for key in style.keys.sorted() where !Self.keys.contains(key) {
            throw Problem(
                key: key,
                description:
                    "unknown key \(ShownText.cut(key, to: 40)); a style has \(Self.keys.joined(separator: ", "))")
        }
        let presetList = presets.map(\.id).joined(separator: ", ")
        if let id = try text("preset", "one of \(presetList)") {
            guard let preset = presets.first(where: { $0.id == id }) else {
                throw Problem(
                    key: "preset",
                    description: "no preset '\(ShownText.cut(id, to: 40))'; the presets are \(presetList)")
            }
            self = preset.request
        } else {
            self.init()
        }
        if let name = try text("name", "the ride's name") {
            guard let valid = WorkoutPlan.name(name) else {
                throw Problem(key: "name", description: "name takes 1 to 200 characters")
            }
            plan.name = valid
        }
        let goalForms = "a time (45m, 1h30m), a distance (30km, 20mi) or an energy (600kJ, 800kcal)"
        if let goal = try text("goal", goalForms) {
            guard let parsed = WorkoutGoal(goal) else {
                throw Problem(key: "goal", description: "goal '\(ShownText.cut(goal, to: 40))' is not \(goalForms)")
            }
            plan.goal = parsed
        }
        if let location = try text("location", "indoor or outdoor") {
            guard let parsed = WorkoutLocation(rawValue: location) else {
                throw Problem(
                    key: "location",
                    description: "location '\(ShownText.cut(location, to: 40))' is not indoor or outdoor")
            }
            plan.location = parsed
        }
        let tests = FitnessTest.allCases.map(\.rawValue).joined(separator: " or ")
        if let test = try text("test", tests) {
            guard let parsed = FitnessTest(rawValue: test) else {
                throw Problem(key: "test", description: "test '\(ShownText.cut(test, to: 40))' is not \(tests)")
            }
            plan.fitnessTest = parsed
        }
        let whens = When.allCases.map(\.rawValue).joined(separator: " or ")
        if let when = try text("when", whens) {
            guard let parsed = When(rawValue: when) else {
                throw Problem(key: "when", description: "when '\(ShownText.cut(when, to: 40))' is not \(whens)")
            }
            self.when = parsed
        }
        func flag(_ key: String) throws(Problem) -> Bool? {
            switch style[key] {
            case nil: return nil
            case .flag(let value)?: return value
            case .text?, .other?: throw Problem(key: key, description: "\(key) takes a boolean (b)")
            }
        }
        if let value = try flag("endAtGoal") { endAtGoal = value }
        if let value = try flag("hub") { hub = value }
        let controls = TrainerChoice.allCases.map(\.rawValue).joined(separator: ", ")
        if let control = try text("control", controls) {
            guard let parsed = TrainerChoice(rawValue: control) else {
                throw Problem(
                    key: "control", description: "control '\(ShownText.cut(control, to: 40))' is not \(controls)")
            }
            trainerControl = parsed
        }
        if let source = try text("powerFrom", "meter or trainer") {
            guard let parsed = PowerSource(rawValue: source) else {
                throw Problem(
                    key: "powerFrom",
                    description: "powerFrom '\(ShownText.cut(source, to: 40))' is not meter or trainer")
            }
            powerFrom = parsed
        }
        if let workout = try text("workout", "a workout's id (cyclelog workouts list)") {
            guard WorkoutPreset.isValidID(workout) else {
                throw Problem(
                    key: "workout",
                    description:
                        "workout '\(ShownText.cut(workout, to: 40))' is not a workout's id: lower-case letters, "
                        + "digits and -")
            }
            self.workout = workout
            if style["test"] == nil, let test = Self.fitnessTest(ofWorkout: workout) { plan.fitnessTest = test }
        }
        if endAtGoal && plan.goal == nil {
            throw Problem(key: "endAtGoal", description: "endAtGoal needs a goal (goal=45m, 30km, 600kJ …)")
        }
    }
}
