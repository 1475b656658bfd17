import DBus
import RecorderInterface
import Workouts

/// What the recorder publishes, in the contract's types (RecorderInterface): its status as `RecorderStatus`, each
/// reading and each applied control as the D-Bus signals carry them.
extension LiveStatus {
    /// The status as the recorder publishes it (its D-Bus properties, `status --json`, the mirror's snapshot).
    public var published: RecorderStatus {
        var status = RecorderStatus()
        status.state = self.state
        status.workoutId = self.workoutId
        status.elapsedSeconds = self.elapsedSeconds.rounded()
        status.movingSeconds = self.movingSeconds.rounded()
        status.powerWatts = self.powerWatts
        status.cadenceRPM = self.cadenceRPM
        status.speedMetersPerSecond = self.speedMetersPerSecond
        status.heartRateBPM = self.heartRateBPM
        status.distanceMeters = self.distanceMeters
        status.lap = UInt32(clamping: self.lap)
        status.name = self.plan.name ?? ""
        status.location = self.plan.location?.rawValue ?? ""
        status.goal = self.plan.goal?.description ?? ""
        status.goalProgress = self.goalProgress
        status.lapElapsedSeconds = self.lapElapsedSeconds.rounded()
        status.workJoules = self.workJoules.rounded()
        status.waterMillilitres = self.waterMillilitres
        status.can.start = self.can.start
        status.can.pause = self.can.pause
        status.can.resume = self.can.resume
        status.can.lap = self.can.lap
        status.can.end = self.can.end
        status.can.cancel = self.can.cancel
        status.controlSequence = self.controlSequence
        status.sensors = self.sensors.map {
            .init(name: $0.name, address: $0.address ?? "", state: $0.state, batteryPercent: $0.batteryPercent)
        }
        status.suggestedWorkouts = self.suggestedWorkouts.map(RecorderStatus.SuggestedWorkout.init)
        if let trainer = self.trainer {
            status.trainerMode = trainer.mode
            status.trainerState = trainer.state
            status.targetPowerWatts = trainer.targetPowerWatts.map(Double.init)
            status.gradePercent = trainer.gradePercent
            status.resistanceLevel = trainer.resistanceLevel
            status.powerMatchOffsetWatts = trainer.powerMatchOffsetWatts.map { ($0 * 10).rounded() / 10 }
            status.trainerMessage = trainer.message ?? ""
        }
        if let workout = self.workout {
            status.workoutPlanId = workout.id
            status.workoutPlanName = workout.name
            status.stepIndex = Int64(workout.stepIndex)
            status.stepCount = Int64(workout.stepCount)
            status.stepSecondsLeft = workout.stepSecondsLeft?.rounded()
            status.stepName = workout.stepName ?? ""
            // The step's target is the ride's target, whether a trainer is steered to it or the rider follows it.
            status.targetPowerWatts = workout.targetPowerWatts.map(Double.init)
            if let grade = workout.targetGradePercent { status.gradePercent = grade }
            status.targetRangeLowWatts = workout.targetRangeWatts.map { Double($0.lowerBound) }
            status.targetRangeHighWatts = workout.targetRangeWatts.map { Double($0.upperBound) }
            status.nextTargetPowerWatts = workout.nextTargetPowerWatts.map(Double.init)
            status.intensityPercent = Int64(workout.intensityPercent)
            status.workoutProfile = workout.profileText
        }
        return status
    }
}

extension LiveRecorder.LiveReading {
    /// Its `Live` signal's dictionary.
    public var signalValue: DBusValue {
        var pairs: [(String, DBusValue)] = [
            ("seq", .uint64(sequence)), ("arrivalMicros", .int64(arrivalMicroseconds)), ("sensor", .string(sensor)),
        ]
        for reading in readings { pairs.append((reading.channel.jsonKey, .double(reading.value))) }
        let shownKeys = readings.filter { shown.contains($0.channel) }.map { DBusValue.string($0.channel.jsonKey) }
        pairs.append(("shown", .array(elementSignature: "s", shownKeys)))
        return .properties(pairs)
    }
}

extension LiveRecorder.AppliedControl {
    /// Its `Event` signal's dictionary: the control, when, its ride and sequence, and its own fields.
    public var signalValue: DBusValue {
        var pairs: [(String, DBusValue)] = [
            ("kind", .string(control.name)), ("workoutId", .int64(workoutId)),
            ("timeMicros", .int64(timeMicroseconds)), ("controlSequence", .uint64(controlSequence)),
        ]
        switch control {
        case .start(let plan):
            let style: [(String, String?)] = [
                ("name", plan.name), ("goal", plan.goal?.description), ("location", plan.location?.rawValue),
                ("preset", plan.preset), ("test", plan.fitnessTest?.rawValue),
            ]
            for case let (key, value?) in style { pairs.append((key, .string(value))) }
        case .marker(let text): pairs.append(("text", .string(text)))
        case .intake(let intake):
            pairs += [
                ("intake", .string(intake.kind.rawValue)), ("amount", .double(intake.amount)),
                ("unit", .string(intake.kind.unit)),
            ]
        default: break
        }
        return .properties(pairs)
    }
}
