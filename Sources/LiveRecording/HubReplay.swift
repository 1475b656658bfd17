import CyclingSensors
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
    /// (`hub-send` lines), in the journal's order. An app's write to the SC Control Point, which the hub answers
    /// itself, is followed by the answer; a Set Cumulative Value counts from the first notification after its time
    /// in the journal, where the live hub carried it out.
    public static func exchanges(_ journal: [RideEvent]) -> [RideEvent] {
        var readings = LiveReadings(
            defaultWheelCircumferenceMillimetres: WorkoutBuilder.Configuration().defaultWheelCircumferenceMillimetres)
        var broadcast = HubBroadcast()
        var exchanges: [RideEvent] = []
        var wheelCounts = HubWheelCounts()
        for event in journal {
            if case .hub(let exchange) = event.kind {
                exchanges.append(event)
                if case .written(_, let characteristic, let value) = exchange,
                    characteristic == Characteristic.scControlPoint.rawValue
                {
                    let (answer, wheelRevolutions) = HubBroadcast.speedAndCadenceAnswer(value)
                    let sent = HubExchange.sent(characteristic: characteristic, value: answer)
                    exchanges.append(RideEvent(timeMicroseconds: event.timeMicroseconds, .hub(sent)))
                    if let wheelRevolutions { wheelCounts.add(wheelRevolutions, after: event.timeMicroseconds) }
                }
            }
            guard case .notification(let sensor, _, _) = event.kind else {
                readings.note(event)
                continue
            }
            guard let reading = readings.reading(of: event, from: sensor, arrivalMicroseconds: event.timeMicroseconds)
            else { continue }
            wheelCounts.carryOut(before: reading.journalMicroseconds, on: &broadcast)
            for sent in broadcast.take(reading.readings, shown: reading.shown, at: reading.journalMicroseconds) {
                let exchange = HubExchange.sent(characteristic: sent.characteristic.rawValue, value: sent.value)
                exchanges.append(RideEvent(timeMicroseconds: event.timeMicroseconds, .hub(exchange)))
            }
        }
        return exchanges
    }
}
