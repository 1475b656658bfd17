import CyclingSensors

/// What each notification says on its own, the moment it arrives: for a second screen that shows the rider's
/// power as it comes (D-Bus `Live`), where the builder's 1 Hz seconds are complete only a second or more later.
/// Each sensor's values go through the same decoding and revolution math as the ride's (`SensorDecoder`), and
/// its connections and wheel sizes reset and set it as they do the builder's.
public struct InstantReadings {
    private var decoders: [String: SensorDecoder] = [:]
    private var ownWheel: Set<String> = []
    private var defaultWheelMillimetres: Int

    public init(defaultWheelCircumferenceMillimetres: Int = 2105) {
        defaultWheelMillimetres = defaultWheelCircumferenceMillimetres
    }

    /// The readings of a notification (none for a malformed value or a characteristic without measurements);
    /// other events set or reset the sensor's decoding.
    public mutating func add(_ event: RideEvent) -> [ChannelReading] {
        switch event.kind {
        case .notification(let sensor, let characteristic, let value):
            let wheel = Double(defaultWheelMillimetres) / 1000
            var decoder = decoders.removeValue(forKey: sensor) ?? SensorDecoder(wheelCircumferenceMeters: wheel)
            defer { decoders[sensor] = decoder }
            guard
                let output = try? decoder.decode(
                    characteristic: characteristic, value: value, at: event.timeMicroseconds)
            else { return [] }
            var readings = Array(output.readings)
            // The power the meter sent (negative is 0 W), not the ride's reading of it: a meter repeating its
            // last value while the cranks stand still counts 0 W in the ride, but a screen shows what came.
            if characteristic == Characteristic.cyclingPowerMeasurement.rawValue,
                let sent = try? CyclingPowerMeasurement(decoding: value),
                let index = readings.firstIndex(where: { $0.channel == .powerWatts })
            {
                readings[index].value = Double(max(0, sent.instantaneousPower))
            }
            return readings
        case .connected(let sensor, _), .disconnected(let sensor):
            decoders[sensor]?.connectionChanged()
        case .wheelCircumference(let sensor, let millimetres):
            ownWheel.insert(sensor)
            setWheel(sensor, millimetres)
        case .setting(.defaultWheelCircumference(let millimetres)):
            defaultWheelMillimetres = millimetres
            for sensor in decoders.keys where !ownWheel.contains(sensor) { setWheel(sensor, millimetres) }
        case .read, .write, .control, .setting, .hub:
            break
        }
        return []
    }

    private mutating func setWheel(_ sensor: String, _ millimetres: Int) {
        let meters = Double(millimetres) / 1000
        if decoders[sensor] == nil {
            decoders[sensor] = SensorDecoder(wheelCircumferenceMeters: meters)
        } else {
            decoders[sensor]?.wheelCircumferenceMeters = meters
        }
    }
}
