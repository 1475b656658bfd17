/// The workouts every library has, written for this project: two FTP tests and a few classics. Their ids are
/// reserved; a rider's own workouts are imported beside them.
public enum BuiltInWorkouts {
    public static let all: [(id: String, workout: StructuredWorkout)] = [
        ("ramp-test", ramp()),
        ("ftp-test-20", twentyMinuteTest),
        ("sweet-spot-2x20", sweetSpot),
        ("vo2max-5x5", vo2max),
        ("threshold-3x10", threshold),
        ("endurance-1h", endurance),
        ("hill-repeats", hillRepeats),
        ("recovery", recovery),
    ]

    public static func workout(id: String) -> StructuredWorkout? { all.first { $0.id == id }?.workout }

    static let author = "cyclelog"

    private static func pct(_ percent: Double) -> PowerLevel { .percent(percent) }

    private static func warmUp(_ minutes: Int) -> WorkoutStep {
        WorkoutStep(.warmup, .seconds(minutes * 60), .ramp(from: pct(45), to: pct(75)), name: "Warm-up")
    }

    private static func coolDown(_ minutes: Int) -> WorkoutStep {
        WorkoutStep(.cooldown, .seconds(minutes * 60), .ramp(from: pct(65), to: pct(40)), name: "Cool-down")
    }

    /// The ramp test in ERG: a minute at each level from `startWatts`, `stepWatts` more each minute, until the
    /// rider stops (the last step is far beyond anyone's reach). FTP is 75 % of the best minute.
    public static func ramp(startWatts: Int = 100, stepWatts: Int = 20) -> StructuredWorkout {
        var steps = [
            WorkoutStep(.warmup, .seconds(300), .steady(.watts(Double(startWatts))), name: "Warm-up")
        ]
        var watts = startWatts
        var minute = 1
        while watts <= 1000 {
            steps.append(
                WorkoutStep(
                    .active, .seconds(60), .steady(.watts(Double(watts))), name: "Minute \(minute)", scored: true))
            watts += stepWatts
            minute += 1
        }
        return StructuredWorkout(
            name: "Ramp test", author: author,
            description:
                "A minute at \(startWatts) W, then \(stepWatts) W more every minute until you cannot turn the pedals "
                + "over: the test ends when you stop, or when your cadence stays under 50 rpm for 5 seconds. Your "
                + "FTP is 75 % of your best minute.",
            steps: steps)
    }

    static let twentyMinuteTest = StructuredWorkout(
        name: "20-minute FTP test", author: author,
        description:
            "A warm-up, a 5-minute hard effort to empty the legs of their sprint, easy recovery, then 20 minutes as "
            + "hard as you can hold evenly. Your FTP is 95 % of the 20 minutes.",
        steps: [
            WorkoutStep(.warmup, .seconds(600), .ramp(from: pct(45), to: pct(70)), name: "Warm-up"),
            WorkoutStep(.active, .seconds(300), .maxEffort, name: "5-minute effort"),
            WorkoutStep(.rest, .seconds(600), .steady(pct(50)), name: "Recovery"),
            WorkoutStep(
                .active, .seconds(1200), .free, name: "20 minutes all out",
                texts: [StepText(offsetSeconds: 0, "Even pacing: start at what you think you can hold")],
                scored: true),
            coolDown(10),
        ])

    static let sweetSpot = StructuredWorkout(
        name: "Sweet spot 2×20", author: author,
        description: "Two 20-minute efforts at 88–94 % of FTP with 5 minutes easy between them.",
        steps: [
            warmUp(10),
            WorkoutStep(.active, .seconds(1200), .range(low: pct(88), high: pct(94)), cadence: 85...95),
            WorkoutStep(.rest, .seconds(300), .steady(pct(55))),
            WorkoutStep(.active, .seconds(1200), .range(low: pct(88), high: pct(94)), cadence: 85...95),
            coolDown(10),
        ])

    static let vo2max = StructuredWorkout(
        name: "VO2max 5×5", author: author,
        description: "Five 5-minute efforts at 115 % of FTP, with 5 minutes easy after each.",
        steps: [warmUp(15)]
            + (0..<5).flatMap { _ in
                [
                    WorkoutStep(.active, .seconds(300), .steady(pct(115)), cadence: 95...105),
                    WorkoutStep(.rest, .seconds(300), .steady(pct(50))),
                ]
            } + [coolDown(10)])

    static let threshold = StructuredWorkout(
        name: "Threshold 3×10", author: author,
        description: "Three 10-minute efforts at FTP, with 5 minutes easy after each.",
        steps: [warmUp(15)]
            + (0..<3).flatMap { _ in
                [
                    WorkoutStep(.active, .seconds(600), .steady(pct(100)), cadence: 90...100),
                    WorkoutStep(.rest, .seconds(300), .steady(pct(55))),
                ]
            } + [coolDown(10)])

    static let endurance = StructuredWorkout(
        name: "Endurance 1 h with cadence drills", author: author,
        description: "An hour at 68 % of FTP, with two minutes of fast pedalling in every ten.",
        steps: [warmUp(5)]
            + (0..<5).flatMap { _ in
                [
                    WorkoutStep(.active, .seconds(480), .steady(pct(68)), cadence: 85...95),
                    WorkoutStep(.active, .seconds(120), .steady(pct(68)), cadence: 105...115, name: "Spin up"),
                ]
            } + [coolDown(5)])

    /// Ridden in simulation: the trainer is given a road's grade, and the rider chooses the gear and the power.
    static let hillRepeats = StructuredWorkout(
        name: "Hill repeats 5×3 min", author: author,
        description:
            "Five 3-minute climbs at a 6 % grade in simulation, each followed by 3 minutes on the flat: a trainer "
            + "that takes simulation feels like the road; choose your gear.",
        steps: [warmUp(10)]
            + (0..<5).flatMap { _ in
                [
                    WorkoutStep(.active, .seconds(180), .free, cadence: 70...85, gradeHundredths: 600, name: "Climb"),
                    WorkoutStep(.rest, .seconds(180), .free, gradeHundredths: 0, name: "Flat"),
                ]
            } + [coolDown(10)])

    static let recovery = StructuredWorkout(
        name: "Recovery", author: author,
        description: "Half an hour easy: legs turning, nothing more.",
        steps: [
            WorkoutStep(.active, .seconds(1800), .range(low: pct(45), high: pct(55)), cadence: 85...95)
        ])
}
