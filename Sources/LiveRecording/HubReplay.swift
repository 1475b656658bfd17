import CyclingSensors
import SensorHub
import Workouts

/// What went between the sensor hub and its apps during a ride, made again from the ride's journal: each
/// notification read as the recorder read it live (`LiveReadings`, its sources chosen by the same rule) and made into
/// what the hub sends by the same `HubOutput` the recorder makes it with, both clocked by the journal's times,
/// beside the apps' writes, the answers and who held the trainer, which the journal has as they were. Since the
/// recorder makes the hub's values from the ride's first reading for every transport, they are byte for byte what
/// the apps were sent, whenever they connected (but for a ride opened by pedalling and a hub that runs across
/// rides, whose counts began before the journal), so that a glitch an app reports replays exactly
/// (`cyclelog show --hub`).
public enum HubReplay {
    /// The journal's exchanges with the hub's apps and, at each notification's time, the values the hub sent for it
    /// (`hub-send` lines), in the journal's order. An app's write to the SC Control Point, which the hub answers
    /// itself, is followed by the answer; a Set Cumulative Value counts from the first notification after its time
    /// in the journal, where the live hub carried it out.
    public static func exchanges(_ journal: [RideEvent]) -> [RideEvent] {
        var readings = LiveReadings(
            defaultWheelCircumferenceMillimetres: WorkoutBuilder.Configuration().defaultWheelCircumferenceMillimetres)
        var output = HubOutput()
        var exchanges: [RideEvent] = []
        for event in journal {
            if case .hub(let exchange) = event.kind {
                exchanges.append(event)
                if case .written(_, let characteristic, let value) = exchange,
                    characteristic == Characteristic.scControlPoint.rawValue
                {
                    let answer = output.speedAndCadenceWritten(value, at: event.timeMicroseconds)
                    let sent = HubExchange.sent(characteristic: characteristic, value: answer)
                    exchanges.append(RideEvent(timeMicroseconds: event.timeMicroseconds, .hub(sent)))
                }
            }
            guard case .notification(let sensor, _, _) = event.kind else {
                readings.note(event)
                continue
            }
            guard let reading = readings.reading(of: event, from: sensor, arrivalMicroseconds: event.timeMicroseconds)
            else { continue }
            for sent in output.take(reading) {
                let exchange = HubExchange.sent(characteristic: sent.characteristic.rawValue, value: sent.value)
                exchanges.append(RideEvent(timeMicroseconds: event.timeMicroseconds, .hub(exchange)))
            }
        }
        return exchanges
    }
}
