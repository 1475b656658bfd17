import RideWriting
import Workouts

/// What each notification said on its own, the moment it arrived, for `LiveRecorder.live`: numbered from 1 and
/// stamped with the wall clock (CLOCK_REALTIME), in every state of the recorder.
struct LiveReadings {
    private var instant: InstantReadings
    private var sources = LiveSources()
    private var sequence: UInt64 = 0

    init(defaultWheelCircumferenceMillimetres: Int) {
        instant = InstantReadings(defaultWheelCircumferenceMillimetres: defaultWheelCircumferenceMillimetres)
    }

    /// An event that is not a notification (a connection, a wheel size, a value read): it shapes what the
    /// notifications after it mean.
    mutating func note(_ event: RideEvent) {
        if case .notification = event.kind { return }
        switch event.kind {
        case .connected(let sensor, _): sources.connected(sensor)
        case .disconnected(let sensor): sources.forget(sensor)
        default: break
        }
        _ = instant.add(event)
    }

    /// The readings of the notification `event` from `sensor`, arrived at `arrivalMicroseconds` (the wall clock);
    /// nil when it says nothing alone (a crank revolution count needs the one before).
    mutating func reading(of event: RideEvent, from sensor: String, arrivalMicroseconds: Int64)
        -> LiveRecorder.LiveReading?
    {
        let readings = instant.add(event)
        guard !readings.isEmpty else { return nil }
        sequence += 1
        return LiveRecorder.LiveReading(
            sequence: sequence, arrivalMicroseconds: arrivalMicroseconds, journalMicroseconds: event.timeMicroseconds,
            sensor: sensor, readings: readings,
            shown: sources.take(readings, from: sensor, at: event.timeMicroseconds))
    }
}
