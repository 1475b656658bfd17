import SensorHub
import Workouts

/// What went between the sensor hub and its apps during a ride, made again from the ride's journal: each
/// notification read as the recorder read it live (`LiveReadings`, its sources chosen by the same rule) and
/// re-broadcast by the hub's own `HubBroadcast`, both clocked by the journal's times as the live hub is, beside the
/// apps' writes, the answers and who held the trainer, which the journal has as they were. For a hub that heard the
/// ride from its first event (`record --bridge`), the values are byte for byte what the apps were sent, so that a
/// glitch an app reports replays exactly (`cyclelog show --hub`).
public enum HubReplay {
    /// The journal's exchanges with the hub's apps and, at each notification's time, the values the hub sent for it
    /// (`hub-send` lines), in the journal's order.
    public static func exchanges(_ journal: [RideEvent]) -> [RideEvent] {
        var readings = LiveReadings(
            defaultWheelCircumferenceMillimetres: WorkoutBuilder.Configuration().defaultWheelCircumferenceMillimetres)
        var broadcast = HubBroadcast()
        var exchanges: [RideEvent] = []
        for event in journal {
            if case .hub = event.kind { exchanges.append(event) }
            guard case .notification(let sensor, _, _) = event.kind else {
                readings.note(event)
                continue
            }
            guard let reading = readings.reading(of: event, from: sensor, arrivalMicroseconds: event.timeMicroseconds)
            else { continue }
            for sent in broadcast.take(reading.readings, shown: reading.shown, at: reading.journalMicroseconds) {
                let exchange = HubExchange.sent(characteristic: sent.characteristic.rawValue, value: sent.value)
                exchanges.append(RideEvent(timeMicroseconds: event.timeMicroseconds, .hub(exchange)))
            }
        }
        return exchanges
    }
}
