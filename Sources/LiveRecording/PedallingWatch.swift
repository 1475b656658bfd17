import Workouts

/// `record --auto` while it waits for a ride: a workout builder that only watches the sensors' events for
/// pedalling, and the notifications of the last few seconds, which open the ride once pedalling shows (so its
/// first revolutions count: a cadence needs two crank events). Restarted now and then, as a box waits for days.
/// Pure: its clock is the events' own times.
struct PedallingWatch {
    private var builder: WorkoutBuilder
    private var recentNotifications: [RideEvent] = []
    private let lookbackMicroseconds: Int64
    private let startedMicroseconds: Int64
    private var latestMicroseconds: Int64

    /// Told about the connected sensors (`descriptions`: their connection, wheel and read events) at `time`.
    init(
        configuration: WorkoutBuilder.Configuration, descriptions: [RideEvent], at time: Int64, lookbackSeconds: Double
    ) {
        builder = WorkoutBuilder(configuration: configuration)
        builder.add(RideEvent(timeMicroseconds: time, .control(.start(WorkoutPlan()))))
        for event in descriptions { builder.add(RideEvent(timeMicroseconds: time, event.kind)) }
        lookbackMicroseconds = Int64(lookbackSeconds * 1e6)
        startedMicroseconds = time
        latestMicroseconds = time
    }

    /// Ten minutes of events seen: time to start afresh (its builder keeps every second it has seen).
    var isDueForRestart: Bool { latestMicroseconds - startedMicroseconds > 600_000_000 }

    /// Adds one event; once a completed second shows pedalling, returns the notifications the ride opens with.
    mutating func add(_ event: RideEvent) -> [RideEvent]? {
        latestMicroseconds = max(latestMicroseconds, event.timeMicroseconds)
        if case .notification = event.kind { recentNotifications.append(event) }
        let oldest = event.timeMicroseconds - lookbackMicroseconds
        recentNotifications.removeAll { $0.timeMicroseconds < oldest }
        builder.add(event)
        return builder.takeCompletedSamples().contains(where: Self.isPedalling) ? recentNotifications : nil
    }

    /// Power or cadence above zero.
    static func isPedalling(_ sample: SecondSample) -> Bool {
        (sample.powerWatts ?? 0) > 0 || (sample.cadenceRPM ?? 0) > 0
    }
}

/// `record --auto` during a ride: it ends after `endAfterSeconds` without pedalling, whether the sensors are there
/// or not. Pure: told the completed seconds and the ride's clock.
struct IdleEnding {
    let endAfterMicroseconds: Int64
    /// The end of the last second with power or cadence above zero (journal time).
    private(set) var lastPedallingMicroseconds: Int64

    init(endAfterSeconds: Double, rideStartMicroseconds: Int64) {
        endAfterMicroseconds = Int64(endAfterSeconds * 1e6)
        lastPedallingMicroseconds = rideStartMicroseconds
    }

    /// Seconds completed since the last call, of a ride whose first second starts at `originMicroseconds`.
    /// Samples complete a few seconds late (a value holds until the next one): their own time counts.
    mutating func saw(_ samples: [SecondSample], originMicroseconds: Int64) {
        guard let last = samples.last(where: PedallingWatch.isPedalling) else { return }
        lastPedallingMicroseconds = max(
            lastPedallingMicroseconds, originMicroseconds + Int64(last.second + 1) * 1_000_000)
    }

    func isDue(at nowMicroseconds: Int64) -> Bool {
        nowMicroseconds - lastPedallingMicroseconds > endAfterMicroseconds
    }
}
