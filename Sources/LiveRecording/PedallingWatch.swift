import Foundation
import Workouts

/// `record --auto` while it waits for a ride: a workout builder that only watches the sensors' events for
/// pedalling, and the notifications of the last few seconds, which open the ride once pedalling shows (so its
/// first revolutions count: a cadence needs two crank events). Restarted now and then, as a box waits for days.
struct PedallingWatch {
    private var builder: WorkoutBuilder
    private var recentNotifications: [RideEvent] = []
    private let lookbackMicroseconds: Int64
    private let started = ContinuousClock.now

    /// Told about the connected sensors (`descriptions`: their connection, wheel and read events) at `time`.
    init(
        configuration: WorkoutBuilder.Configuration, descriptions: [RideEvent], at time: Int64, lookbackSeconds: Double
    ) {
        builder = WorkoutBuilder(configuration: configuration)
        builder.add(RideEvent(timeMicroseconds: time, .control(.start(WorkoutPlan()))))
        for event in descriptions { builder.add(RideEvent(timeMicroseconds: time, event.kind)) }
        lookbackMicroseconds = Int64(lookbackSeconds * 1e6)
    }

    /// Old enough to start afresh (its builder keeps every second it has seen).
    var isDueForRestart: Bool { ContinuousClock.now - started > .seconds(600) }

    /// Adds one event; once a completed second shows pedalling, returns the notifications the ride opens with.
    mutating func add(_ event: RideEvent) -> [RideEvent]? {
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
