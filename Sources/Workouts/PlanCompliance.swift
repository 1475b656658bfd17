import StructuredWorkouts

/// How closely a ride followed its structured workout, step by step: the workout's player moved by the ride's own
/// running seconds (after any pause, manual or automatic) and the rider's controls, the target of each second set
/// against the power and cadence ridden in it. The same journal gives the same table on any machine.
///
/// A second is within its target when its power is within ±5 % of it (±10 W below 200 W); a range target is met
/// anywhere from its low end to its high end, with the same tolerances. Seconds without power (a gap) and steps
/// without a power target (a free ride, a maximal effort) count for nothing.
public struct PlanCompliance: Equatable, Sendable {
    public struct Step: Equatable, Sendable {
        /// The step's index in the workout (a step gone back to appears again).
        public var index: Int
        /// The ride's seconds it covered: [startSecond, endSecond).
        public var startSecond: Int
        public var endSecond: Int
        public var runningSeconds: Int
        /// The target at the step's first and last running seconds (what a chart draws), in watts.
        public var firstTargetWatts: Int?
        public var lastTargetWatts: Int?
        /// Seconds with both a target and a power, and how many of them were within it.
        public var secondsWithTarget: Int
        public var secondsWithin: Int
        public var meanTargetWatts: Double?
        /// The mean power over the seconds with a target (or over every second with power, without a target).
        public var meanPowerWatts: Double?
        public var cadenceTarget: ClosedRange<Int>?
        public var meanCadenceRPM: Double?
        /// Seconds with a cadence, when the step has a cadence target, and those within it.
        public var cadenceSeconds: Int
        public var cadenceSecondsWithin: Int

        public var compliancePercent: Double? {
            secondsWithTarget > 0 ? 100 * Double(secondsWithin) / Double(secondsWithTarget) : nil
        }

        public init(
            index: Int, startSecond: Int, endSecond: Int, runningSeconds: Int, firstTargetWatts: Int?,
            lastTargetWatts: Int?, secondsWithTarget: Int, secondsWithin: Int, meanTargetWatts: Double?,
            meanPowerWatts: Double?, cadenceTarget: ClosedRange<Int>?, meanCadenceRPM: Double?, cadenceSeconds: Int,
            cadenceSecondsWithin: Int
        ) {
            self.index = index
            self.startSecond = startSecond
            self.endSecond = endSecond
            self.runningSeconds = runningSeconds
            self.firstTargetWatts = firstTargetWatts
            self.lastTargetWatts = lastTargetWatts
            self.secondsWithTarget = secondsWithTarget
            self.secondsWithin = secondsWithin
            self.meanTargetWatts = meanTargetWatts
            self.meanPowerWatts = meanPowerWatts
            self.cadenceTarget = cadenceTarget
            self.meanCadenceRPM = meanCadenceRPM
            self.cadenceSeconds = cadenceSeconds
            self.cadenceSecondsWithin = cadenceSecondsWithin
        }
    }

    public var workoutName: String
    public var ftpWatts: Int?
    public var stepCount: Int
    public var steps: [Step]
    /// Whether the ride reached the end of the workout's last step.
    public var completed: Bool
    /// What the ride did of the workout's scored steps (a fitness test's scored part); nil when it has none.
    public var scoredPart: ScoredPart?

    public struct ScoredPart: Equatable, Sendable {
        /// The workout's scored steps, and those the ride rode to their end (a skipped one is not).
        public var steps: Int
        public var stepsRiddenToTheEnd: Int
        /// The running seconds in scored steps, and those of them with power.
        public var seconds: Int
        public var secondsWithPower: Int

        public init(steps: Int, stepsRiddenToTheEnd: Int, seconds: Int, secondsWithPower: Int) {
            self.steps = steps
            self.stepsRiddenToTheEnd = stepsRiddenToTheEnd
            self.seconds = seconds
            self.secondsWithPower = secondsWithPower
        }
    }

    public var secondsWithTarget: Int { steps.reduce(0) { $0 + $1.secondsWithTarget } }
    public var secondsWithin: Int { steps.reduce(0) { $0 + $1.secondsWithin } }
    public var compliancePercent: Double? {
        secondsWithTarget > 0 ? 100 * Double(secondsWithin) / Double(secondsWithTarget) : nil
    }

    public init(
        workoutName: String, ftpWatts: Int?, stepCount: Int, steps: [Step], completed: Bool,
        scoredPart: ScoredPart? = nil
    ) {
        self.workoutName = workoutName
        self.ftpWatts = ftpWatts
        self.stepCount = stepCount
        self.steps = steps
        self.completed = completed
        self.scoredPart = scoredPart
    }

    /// Whether `powerWatts` meets a target of `targetWatts` (or the range, when the step's target is one).
    public static func isWithin(_ powerWatts: Double, target targetWatts: Int, range: ClosedRange<Int>?) -> Bool {
        func tolerance(_ watts: Int) -> Double { watts < 200 ? 10 : 0.05 * Double(watts) }
        let low = range?.lowerBound ?? targetWatts, high = range?.upperBound ?? targetWatts
        return powerWatts >= Double(low) - tolerance(low) && powerWatts <= Double(high) + tolerance(high)
    }

    /// The ride's compliance, from its samples and what happened to its workout: the workout and the time it
    /// was set, the player's controls and the lap presses (a lap ends an open step), in time order.
    public init(
        _ samples: ArraySlice<SecondSample>, planned: PlannedWorkout,
        controls: [(timeMicroseconds: Int64, control: PlayerControl)],
        laps: [Int64], startMicroseconds: Int64
    ) {
        var player = WorkoutPlayer(planned)
        var steps: [Step] = []
        var nextControl = 0, nextLap = 0
        var sums = (target: 0.0, power: 0.0, powerSeconds: 0, powerAll: 0.0, cadence: 0.0, cadenceCount: 0)
        var scored = (seconds: 0, withPower: 0)
        func close() {
            guard var step = steps.last else { return }
            step.meanTargetWatts = step.secondsWithTarget > 0 ? sums.target / Double(step.secondsWithTarget) : nil
            step.meanPowerWatts =
                step.secondsWithTarget > 0
                ? sums.power / Double(step.secondsWithTarget)
                : (sums.powerSeconds > 0 ? sums.powerAll / Double(sums.powerSeconds) : nil)
            step.meanCadenceRPM = sums.cadenceCount > 0 ? sums.cadence / Double(sums.cadenceCount) : nil
            steps[steps.count - 1] = step
            sums = (0, 0, 0, 0, 0, 0)
        }
        for sample in samples {
            let end = startMicroseconds + Int64(sample.second + 1) * 1_000_000
            // Controls and laps of this second, in time order, before it is ridden.
            while true {
                let control =
                    nextControl < controls.count && controls[nextControl].timeMicroseconds < end
                    ? controls[nextControl].timeMicroseconds : nil
                let lap = nextLap < laps.count && laps[nextLap] < end ? laps[nextLap] : nil
                if let control, lap.map({ control <= $0 }) ?? true {
                    player.apply(controls[nextControl].control)
                    nextControl += 1
                } else if lap != nil {
                    player.lapPressed()
                    nextLap += 1
                } else {
                    break
                }
            }
            guard sample.isRunning, let step = player.step else { continue }
            // A step's first running second starts its entry (a step gone back to, or restarted, gets another).
            if steps.last?.index != player.stepIndex || player.secondsInStep == 0 {
                close()
                steps.append(
                    Step(
                        index: player.stepIndex, startSecond: sample.second, endSecond: sample.second,
                        runningSeconds: 0,
                        firstTargetWatts: player.targetWatts, lastTargetWatts: nil, secondsWithTarget: 0,
                        secondsWithin: 0, meanTargetWatts: nil, meanPowerWatts: nil, cadenceTarget: step.cadence,
                        meanCadenceRPM: nil, cadenceSeconds: 0, cadenceSecondsWithin: 0))
            }
            if step.scored {
                scored.seconds += 1
                if sample.powerWatts != nil { scored.withPower += 1 }
            }
            var current = steps[steps.count - 1]
            current.endSecond = sample.second + 1
            current.runningSeconds += 1
            current.lastTargetWatts = player.targetWatts
            if let power = sample.powerWatts {
                sums.powerAll += power
                sums.powerSeconds += 1
                if let target = player.targetWatts {
                    current.secondsWithTarget += 1
                    sums.target += Double(target)
                    sums.power += power
                    if Self.isWithin(power, target: target, range: player.targetRangeWatts) {
                        current.secondsWithin += 1
                    }
                }
            }
            if let cadence = sample.cadenceRPM {
                sums.cadence += cadence
                sums.cadenceCount += 1
                if let range = step.cadence {
                    current.cadenceSeconds += 1
                    if Double(range.lowerBound) - 3 <= cadence && cadence <= Double(range.upperBound) + 3 {
                        current.cadenceSecondsWithin += 1
                    }
                }
            }
            steps[steps.count - 1] = current
            player.advance(seconds: 1, meters: sample.distanceMeters)
        }
        close()
        let workoutSteps = planned.workout.steps
        var scoredPart: ScoredPart?
        if workoutSteps.contains(where: \.scored) {
            // A scored step is ridden to its end when one of its entries ran its whole length.
            let riddenToTheEnd = Set(
                steps.filter { entry in
                    guard workoutSteps.indices.contains(entry.index), workoutSteps[entry.index].scored else {
                        return false
                    }
                    if case .seconds(let length) = workoutSteps[entry.index].length {
                        return entry.runningSeconds >= length
                    }
                    return entry.endSecond < (steps.last?.endSecond ?? 0) || player.isFinished
                }.map(\.index))
            scoredPart = ScoredPart(
                steps: workoutSteps.filter(\.scored).count, stepsRiddenToTheEnd: riddenToTheEnd.count,
                seconds: scored.seconds, secondsWithPower: scored.withPower)
        }
        self.init(
            workoutName: planned.workout.name, ftpWatts: planned.ftpWatts, stepCount: workoutSteps.count,
            steps: steps, completed: player.isFinished, scoredPart: scoredPart)
    }

    /// The ride's seconds at which a step began, after the first: where the ride's laps split.
    public var stepStartSeconds: [Int] { steps.dropFirst().map(\.startSecond) }
}
