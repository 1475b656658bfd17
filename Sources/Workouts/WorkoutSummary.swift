import Formats

/// Everything `cyclelog replay` and `cyclelog show` print about one workout; the JSON keys are the contract of
/// Docs/reference/json.md (units in the names, null where a value does not apply).
public struct WorkoutSummary: Sendable {
    public var id: Int64
    public var syncIdentifier: String
    public var version: Int
    /// SHA-256 (lowercase hex) of this version's journal as `cyclelog show ID --journal` prints it, or of the
    /// imported file; nil until the summary is stored (Docs/reference/identity.md, "A ride's identity").
    public var contentDigest: String?
    public var plan: WorkoutPlan
    public var state: Session.State
    public var startMicroseconds: Int64
    public var endMicroseconds: Int64
    public var statistics: WorkoutStatistics
    public var laps: [LapSummary]
    public var events: [WorkoutEvent]
    public var dropouts: [DropoutSummary]
    public var sensors: [WorkoutSensor]
    /// The ride measured against the FTP and critical power on its date (nil until computed).
    public var analysis: RideAnalysis?
    /// Stored parts of the ride that could not be read back (a damaged database), each naming its table; the rest
    /// of the ride is shown without them.
    public var damagedParts: [String] = []
    /// Problems found in the ride's events while it was built (`Workout.problemCount`).
    public var problemCount = 0

    public init(
        id: Int64, syncIdentifier: String, version: Int, plan: WorkoutPlan, state: Session.State,
        startMicroseconds: Int64, endMicroseconds: Int64, statistics: WorkoutStatistics, laps: [LapSummary],
        events: [WorkoutEvent], dropouts: [DropoutSummary], sensors: [WorkoutSensor], analysis: RideAnalysis? = nil
    ) {
        self.id = id
        self.syncIdentifier = syncIdentifier
        self.version = version
        self.plan = plan
        self.state = state
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
        self.statistics = statistics
        self.laps = laps
        self.events = events
        self.dropouts = dropouts
        self.sensors = sensors
        self.analysis = analysis
    }

    /// The summary of a freshly built workout.
    public init(_ workout: Workout, id: Int64, syncIdentifier: String, version: Int) {
        let curve = workout.powerCurve
        self.init(
            id: id, syncIdentifier: syncIdentifier, version: version, plan: workout.plan, state: workout.state,
            startMicroseconds: workout.startMicroseconds, endMicroseconds: workout.endMicroseconds,
            statistics: workout.statistics(powerCurve: curve), laps: workout.laps(wholeRidePowerCurve: curve),
            events: workout.events,
            dropouts: workout.dropouts.map {
                DropoutSummary(
                    sensor: workout.sensors[$0.sensorIndex].address, reason: $0.reason.rawValue,
                    startMicroseconds: $0.start, endMicroseconds: $0.end)
            }, sensors: workout.sensors)
        problemCount = workout.problemCount
    }

    /// The water the rider logged during the ride; nil when none was.
    public var waterMillilitres: Double? { events.waterMillilitres }

    /// The FTP in force on the workout's date, when one is known: it gives IF, TSS and zones.
    public var ftpWatts: Double? { analysis?.ftp?.watts }

    public var intensityFactor: Double? {
        guard let ftpWatts, let np = statistics.normalizedPowerWatts else { return nil }
        return PowerMetrics.intensityFactor(normalizedPowerWatts: np, ftpWatts: ftpWatts)
    }

    public var trainingStressScore: Double? {
        guard let ftpWatts, let np = statistics.normalizedPowerWatts else { return nil }
        return PowerMetrics.trainingStressScore(
            normalizedPowerWatts: np, movingSeconds: statistics.movingSeconds, ftpWatts: ftpWatts)
    }

    public var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .integer(id)),
            ("syncIdentifier", .string(syncIdentifier)),
            ("version", .integer(Int64(version))),
            ("contentDigest", .optionalString(contentDigest)),
            ("name", .optionalString(plan.name)),
            ("preset", .optionalString(plan.preset)),
            ("state", .string(state.rawValue)),
            ("location", .optionalString(plan.location?.rawValue)),
            ("start", .string(UTCTime.formatSeconds(microseconds: startMicroseconds))),
            ("end", .string(UTCTime.formatSeconds(microseconds: endMicroseconds))),
        ]
        members += Self.statisticsMembers(statistics)
        members += [
            ("intensityFactor", .rounded(intensityFactor, 3)),
            ("trainingStressScore", .rounded(trainingStressScore, 1)),
        ]
        members += analysisMembers
        members.append(("fitnessTest", analysis?.test?.json ?? .null))
        members += [
            ("goal", goalJSON),
            ("laps", .array(laps.map(lapJSON))),
            ("events", .array(events.map(eventJSON))),
            ("intake", .array(events.filter { $0.intake != nil }.map(eventJSON))),
            ("waterMillilitres", .rounded(waterMillilitres, 1)),
            ("dropouts", .array(dropouts.map(dropoutJSON))),
            ("sensors", .array(sensors.map(sensorJSON))),
        ]
        members.append(
            (
                "rejectedSeconds",
                .object(
                    Channel.allCases.compactMap { channel in
                        statistics.rejectedSeconds[channel].map { (channel.jsonKey, JSONValue.integer(Int64($0))) }
                    })
            ))
        members.append(("corrections", .array(statistics.corrections.map(JSONValue.string))))
        members.append(("trainer", trainerJSON))
        members.append(("plan", planJSON))
        members.append(("problemCount", .integer(Int64(problemCount))))
        if !damagedParts.isEmpty { members.append(("damagedParts", .array(damagedParts.map(JSONValue.string)))) }
        return .object(members)
    }

    /// `{"secondsByMode": {"erg", "sim", "resistance", "free"}, "ergMeanAbsoluteDifferenceWatts", "appSeconds",
    /// "apps"}`; null for a ride that asked nothing of a trainer.
    private var trainerJSON: JSONValue {
        guard let trainer = statistics.trainer else { return .null }
        return .object([
            (
                "secondsByMode",
                .object(TrainerTarget.modes.map { ($0, JSONValue.integer(Int64(trainer.secondsByMode[$0] ?? 0))) })
            ),
            ("ergMeanAbsoluteDifferenceWatts", .rounded(trainer.ergMeanAbsoluteDifferenceWatts, 1)),
            ("appSeconds", .integer(Int64(trainer.appSeconds))),
            ("apps", .array(trainer.apps.map(JSONValue.string))),
        ])
    }

    /// The structured workout the ride followed and its compliance, step by step; null for a ride without one.
    private var planJSON: JSONValue {
        guard let plan = statistics.plan else { return .null }
        func int(_ value: Int?) -> JSONValue { value.map { .integer(Int64($0)) } ?? .null }
        let steps: [JSONValue] = plan.steps.map { step in
            let cadence: JSONValue =
                step.cadenceTarget.map { .array([int($0.lowerBound), int($0.upperBound)]) } ?? .null
            let members: [(String, JSONValue)] = [
                ("step", int(step.index + 1)), ("startSecond", int(step.startSecond)),
                ("runningSeconds", int(step.runningSeconds)), ("meanTargetWatts", .rounded(step.meanTargetWatts, 1)),
                ("meanPowerWatts", .rounded(step.meanPowerWatts, 1)),
                ("compliancePercent", .rounded(step.compliancePercent, 1)),
                ("cadenceTargetRPM", cadence), ("meanCadenceRPM", .rounded(step.meanCadenceRPM, 1)),
                (
                    "cadenceCompliancePercent",
                    .rounded(
                        step.cadenceSeconds > 0
                            ? 100 * Double(step.cadenceSecondsWithin) / Double(step.cadenceSeconds) : nil, 1)
                ),
            ]
            return .object(members)
        }
        let members: [(String, JSONValue)] = [
            ("workout", .string(plan.workoutName)), ("ftpWatts", int(plan.ftpWatts)),
            ("stepCount", int(plan.stepCount)), ("completed", .bool(plan.completed)),
            ("compliancePercent", .rounded(plan.compliancePercent, 1)), ("steps", .array(steps)),
        ]
        return .object(members)
    }

    /// A lap's or a whole ride's statistics as `show --json` writes them.
    public static func statisticsMembers(_ statistics: WorkoutStatistics) -> [(String, JSONValue)] {
        let curve = statistics.powerCurveWatts.keys.sorted().map {
            (String($0), JSONValue.rounded(statistics.powerCurveWatts[$0], 1))
        }
        return [
            ("elapsedSeconds", .rounded(statistics.elapsedSeconds, 3)),
            ("movingSeconds", .rounded(statistics.movingSeconds, 3)),
            ("distanceMeters", .rounded(statistics.distanceMeters, 2)),
            ("averagePowerWatts", .rounded(statistics.averagePowerWatts, 1)),
            ("maximumPowerWatts", .rounded(statistics.maximumPowerWatts, 1)),
            ("normalizedPowerWatts", .rounded(statistics.normalizedPowerWatts, 1)),
            ("workJoules", .rounded(statistics.workJoules, 0)),
            ("averageCadenceRPM", .rounded(statistics.averageCadenceRPM, 1)),
            ("maximumCadenceRPM", .rounded(statistics.maximumCadenceRPM, 1)),
            ("averageSpeedMetersPerSecond", .rounded(statistics.averageSpeedMetersPerSecond, 3)),
            ("maximumSpeedMetersPerSecond", .rounded(statistics.maximumSpeedMetersPerSecond, 3)),
            ("averageHeartRateBPM", .rounded(statistics.averageHeartRateBPM, 1)),
            ("maximumHeartRateBPM", .rounded(statistics.maximumHeartRateBPM, 1)),
            ("powerCurveWatts", .object(curve)),
        ]
    }

    /// The metrics that depend on the FTP and CP of the ride's date, and the ones computed beside them.
    private var analysisMembers: [(String, JSONValue)] {
        let analysis = analysis
        let ftp = analysis?.ftp
        let zones: JSONValue =
            analysis?.zoneSeconds.map { seconds in
                .array(
                    seconds.indices.map { zone in
                        let bounds = PowerMetrics.zoneLowerBounds
                        let high =
                            zone + 1 < bounds.count ? JSONValue.rounded(bounds[zone + 1] * (ftp?.watts ?? 0), 1) : .null
                        return .object([
                            ("zone", .integer(Int64(zone + 1))), ("name", .string(Self.zoneNames[zone])),
                            ("lowWatts", .rounded(bounds[zone] * (ftp?.watts ?? 0), 1)), ("highWatts", high),
                            ("seconds", .rounded(seconds[zone], 0)),
                        ])
                    })
            } ?? .null
        return [
            ("ftpWatts", .rounded(ftp?.watts, 1)),
            ("ftpMethod", .optionalString(ftp?.method.rawValue)),
            ("variabilityIndex", .rounded(analysis?.variabilityIndex, 3)),
            ("efficiencyFactor", .rounded(analysis?.efficiencyFactor, 3)),
            ("aerobicDecouplingPercent", .rounded(analysis?.aerobicDecouplingPercent, 2)),
            ("xPowerWatts", .rounded(analysis?.xPowerWatts, 1)),
            ("energyKilocalories", .rounded(analysis?.energyKilocalories, 0)),
            ("powerZones", zones),
            ("criticalPowerWatts", .rounded(analysis?.criticalPower?.criticalPowerWatts, 1)),
            ("wPrimeJoules", .rounded(analysis?.criticalPower?.wPrimeJoules, 0)),
            ("wPrimeBalanceMinimumJoules", .rounded(analysis?.wPrimeBalanceMinimumIntegralJoules, 0)),
            ("wPrimeBalanceMinimumDifferentialJoules", .rounded(analysis?.wPrimeBalanceMinimumDifferentialJoules, 0)),
            ("spikeSeconds", analysis.map { .integer(Int64($0.spikeSeconds)) } ?? .null),
        ]
    }

    /// Coggan's names for the seven power zones.
    public static let zoneNames = [
        "active recovery", "endurance", "tempo", "threshold", "VO2max", "anaerobic capacity", "neuromuscular",
    ]

    private func offset(_ time: Int64) -> JSONValue {
        .rounded(Double(time - startMicroseconds) / 1_000_000, 3)
    }

    private var goalJSON: JSONValue {
        guard let goal = plan.goal else { return .null }
        let achieved: Double
        switch goal {
        case .timeSeconds: achieved = statistics.movingSeconds
        case .distanceMeters: achieved = statistics.distanceMeters
        case .energyJoules: achieved = statistics.workJoules ?? 0
        }
        return .object([
            ("kind", .string(goal.kind)), ("target", .rounded(goal.target, 1)), ("achieved", .rounded(achieved, 1)),
            ("completed", .bool(achieved >= goal.target)),
        ])
    }

    private func lapJSON(_ lap: LapSummary) -> JSONValue {
        .object(
            [
                ("number", .integer(Int64(lap.number))),
                ("start", .string(UTCTime.formatSeconds(microseconds: lap.startMicroseconds))),
                ("startOffsetSeconds", offset(lap.startMicroseconds)),
            ] + Self.statisticsMembers(lap.statistics))
    }

    private func eventJSON(_ event: WorkoutEvent) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("type", .string(event.control.name)),
            ("time", .string(UTCTime.format(microseconds: event.timeMicroseconds))),
            ("offsetSeconds", offset(event.timeMicroseconds)),
        ]
        if case .marker(let text) = event.control { members.append(("text", .string(text))) }
        if let intake = event.intake {
            members += [
                ("kind", .string(intake.kind.rawValue)), ("amount", .rounded(intake.amount, 1)),
                ("unit", .string(intake.kind.unit)),
            ]
        }
        return .object(members)
    }

    private func dropoutJSON(_ dropout: DropoutSummary) -> JSONValue {
        .object([
            ("sensor", .string(dropout.sensor)),
            ("reason", .string(dropout.reason)),
            ("start", .string(UTCTime.format(microseconds: dropout.startMicroseconds))),
            ("startOffsetSeconds", offset(dropout.startMicroseconds)),
            ("seconds", .rounded(Double(dropout.endMicroseconds - dropout.startMicroseconds) / 1_000_000, 3)),
        ])
    }

    private func sensorJSON(_ sensor: WorkoutSensor) -> JSONValue {
        .object([
            ("address", .string(sensor.address)),
            ("name", .optionalString(sensor.name)),
            ("wheelCircumferenceMillimetres", .integer(Int64(sensor.wheelCircumferenceMillimetres))),
            ("batteryPercent", sensor.batteryPercent.map { .integer(Int64($0)) } ?? .null),
        ])
    }
}

/// A dropout named by its sensor's address, as stored.
public struct DropoutSummary: Equatable, Sendable {
    public var sensor: String
    public var reason: String
    public var startMicroseconds: Int64
    public var endMicroseconds: Int64

    public init(sensor: String, reason: String, startMicroseconds: Int64, endMicroseconds: Int64) {
        self.sensor = sensor
        self.reason = reason
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
    }
}

extension WorkoutSummary {
    /// Brings stored lap, event and dropout times that lie outside the ride (a damaged database) back inside it,
    /// naming each table so corrected in `damagedParts`: every duration shown is then a difference of two times
    /// within the ride, which cannot overflow.
    public mutating func keepTimesInsideTheRide() {
        let ride = startMicroseconds...max(startMicroseconds, endMicroseconds)
        func inside(_ time: inout Int64, _ table: String) {
            guard !ride.contains(time) else { return }
            time = min(max(time, ride.lowerBound), ride.upperBound)
            let note = "\(table): a time outside the ride, shown at its edge"
            if !damagedParts.contains(note) { damagedParts.append(note) }
        }
        for index in laps.indices {
            inside(&laps[index].startMicroseconds, "lap")
            inside(&laps[index].endMicroseconds, "lap")
        }
        for index in events.indices { inside(&events[index].timeMicroseconds, "workoutEvent") }
        for index in dropouts.indices {
            inside(&dropouts[index].startMicroseconds, "dropout")
            inside(&dropouts[index].endMicroseconds, "dropout")
        }
    }
}
