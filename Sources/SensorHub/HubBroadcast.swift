import CyclingSensors
import Workouts

/// What the box by the trainer re-broadcasts to the apps riders ride in, as one clean set of sensors: a power meter
/// (Cycling Power Measurement), a speed and cadence sensor (CSC Measurement), a heart-rate strap (Heart Rate
/// Measurement) and a smart trainer's Indoor Bike Data, each made from the ride's fused channels: the value of each
/// channel's chosen source (`LiveSources`: a power meter before a trainer, a crank before a trainer's estimate), so
/// that an app sees the meter's power and the crank's cadence whichever sensor sent them.
///
/// The revolution counts an app works cadence and speed out from are the hub's own, integrated from the fused
/// cadence and speed: a change of source (the meter dropping out, the trainer taking over) never makes them jump,
/// which an app would read as a burst of revolutions. Each reading of a chosen source is re-broadcast at once, on
/// the services that carry its channels. Pure, clocked by the readings' own times.
public struct HubBroadcast: Sendable {
    /// A value to notify on one characteristic of the hub.
    public struct Notification: Equatable, Sendable {
        public var characteristic: Characteristic
        public var value: [UInt8]
    }

    /// The wheel circumference speed is turned into wheel revolutions with. An app turns them back into speed with
    /// its own setting, 2 096 mm (700×23c) in most apps and head units unless the rider changed it.
    public let wheelCircumferenceMeters: Double
    /// How long a channel's latest value holds (as the ride's 1 Hz series holds it): after that the channel is
    /// silent (no heart rate is sent) or, for the crank and the wheel, standing still.
    public let holdMicroseconds: Int64

    private var latest: [Channel: (value: Double, atMicroseconds: Int64)] = [:]
    private var crank = RevolutionCounter()
    private var wheel = RevolutionCounter()
    /// The time the event clocks count from: the first reading's.
    private var originMicroseconds: Int64?
    private var lastMicroseconds: Int64?

    public init(
        wheelCircumferenceMeters: Double = 2.096,
        holdMicroseconds: Int64 = WorkoutBuilder.Configuration().holdMicroseconds
    ) {
        self.wheelCircumferenceMeters = wheelCircumferenceMeters
        self.holdMicroseconds = holdMicroseconds
    }

    /// Takes a notification's readings at `timeMicroseconds`, of which `shown` are the channels whose chosen source
    /// sent them (`LiveSources.take`); returns what to notify: the services that carry those channels, made from
    /// every channel's value as it is now. Readings of a source that is not chosen send nothing and change no value.
    public mutating func take(
        _ readings: [ChannelReading], shown: Set<Channel>, at timeMicroseconds: Int64
    ) -> [Notification] {
        let origin = originMicroseconds ?? timeMicroseconds
        originMicroseconds = origin
        // The revolutions up to now turn at the rates that held at the last reading, before the new values take
        // over.
        let before = lastMicroseconds ?? timeMicroseconds
        lastMicroseconds = max(before, timeMicroseconds)
        crank.advance(to: timeMicroseconds - origin, perSecond: rate(.cadenceRPM, at: before) / 60)
        wheel.advance(
            to: timeMicroseconds - origin,
            perSecond: rate(.speedMetersPerSecond, at: before) / wheelCircumferenceMeters)
        for reading in readings where shown.contains(reading.channel) {
            latest[reading.channel] = (reading.value, timeMicroseconds)
        }
        var notifications: [Notification] = []
        let carried = Set(readings.map(\.channel)).intersection(shown)
        if carried.contains(.powerWatts) {
            let measurement = CyclingPowerMeasurement(
                instantaneousPower: Self.clamped(value(.powerWatts, at: timeMicroseconds) ?? 0, Int16.self),
                crankRevolutionData: crank.crankData)
            notifications.append(.init(characteristic: .cyclingPowerMeasurement, value: measurement.encoded()))
        }
        if !carried.isDisjoint(with: [.cadenceRPM, .speedMetersPerSecond]) {
            let measurement = CSCMeasurement(wheelRevolutionData: wheel.wheelData, crankRevolutionData: crank.crankData)
            notifications.append(.init(characteristic: .cscMeasurement, value: measurement.encoded()))
        }
        if carried.contains(.heartRateBPM), let bpm = value(.heartRateBPM, at: timeMicroseconds) {
            let measurement = HeartRateMeasurement(heartRate: Self.clamped(bpm, UInt16.self))
            notifications.append(.init(characteristic: .heartRateMeasurement, value: measurement.encoded()))
        }
        if !carried.isEmpty {
            notifications.append(.init(characteristic: .indoorBikeData, value: indoorBikeData(at: timeMicroseconds)))
        }
        return notifications
    }

    /// The answer to an app's write to the hub's SC Control Point (0x2A55), as CSCS 1.0 §3.4 lays it out: Response
    /// Code 0x10, the request's op code, and the result; and, for Set Cumulative Value (0x01, a uint32), the wheel
    /// revolutions the next measurements count on from (an app resets its odometer so). The hub declares neither
    /// calibration nor several sensor locations, so their op codes are not supported. Apart from carrying it out
    /// (`setWheelRevolutions`), which the recorder does where its journal says it did, whichever hub the app wrote to.
    public static func speedAndCadenceAnswer(_ written: [UInt8]) -> (answer: [UInt8], wheelRevolutions: UInt64?) {
        let opCode = written.first ?? 0
        switch opCode {
        case 0x01 where written.count == 5:
            let count = written[1...].reversed().reduce(0) { $0 << 8 | UInt64($1) }
            return ([0x10, opCode, ControlPointResult.success.rawValue], count)
        case 0x01: return ([0x10, opCode, ControlPointResult.invalidParameter.rawValue], nil)
        default: return ([0x10, opCode, ControlPointResult.opCodeNotSupported.rawValue], nil)
        }
    }

    /// The wheel revolutions the next measurements count on from: an app's Set Cumulative Value carried out.
    public mutating func setWheelRevolutions(_ count: UInt64) { wheel.setCount(count) }

    /// A sensor that went away: the channels it was the source of are no longer held by its values.
    public mutating func forget(_ channels: Set<Channel>) {
        for channel in channels { latest[channel] = nil }
    }

    /// The trainer's Indoor Bike Data: speed, cadence and power as they are now (the fused ones, not the trainer's
    /// own), and the heart rate while a strap is heard. A cadence or a power no longer held (or not yet heard) is
    /// left out, never sent as 0; the speed is in every notification (FTMS 4.9.1: present while More Data is clear),
    /// 0 when none holds.
    private func indoorBikeData(at time: Int64) -> [UInt8] {
        let speedKilometresPerHour = (value(.speedMetersPerSecond, at: time) ?? 0) * 3.6
        var data = IndoorBikeData()
        data.instantaneousSpeed = Self.clamped(speedKilometresPerHour * 100, UInt16.self)
        data.instantaneousCadence = value(.cadenceRPM, at: time).map { Self.clamped($0 * 2, UInt16.self) }
        data.instantaneousPower = value(.powerWatts, at: time).map { Self.clamped($0, Int16.self) }
        data.heartRate = value(.heartRateBPM, at: time).map { Self.clamped($0, UInt8.self) }
        return data.encoded()
    }

    /// A channel's latest value while it holds.
    private func value(_ channel: Channel, at time: Int64) -> Double? {
        guard let latest = latest[channel], time - latest.atMicroseconds <= holdMicroseconds else { return nil }
        return latest.value
    }

    /// A rate for the revolutions: the channel's value while it holds, else standing still.
    private func rate(_ channel: Channel, at time: Int64) -> Double {
        max(0, value(channel, at: time) ?? 0)
    }

    /// The nearest wire integer, held within the field's range (a sensor's value past it is sent as its end).
    static func clamped<Wire: FixedWidthInteger>(_ value: Double, _: Wire.Type) -> Wire {
        guard value.isFinite else { return 0 }
        let rounded = value.rounded()
        if rounded <= Double(Wire.min) { return Wire.min }
        if rounded >= Double(Wire.max) { return Wire.max }
        return Wire(rounded)
    }
}

/// Revolutions of a crank or a wheel turned at a rate that changes from reading to reading: the count of whole
/// revolutions and the time of the last one, as a sensor's event clock reports them (1/1024 s).
struct RevolutionCounter: Sendable {
    private var revolutions = 0.0
    private var lastEventMicroseconds: Int64 = 0
    private var nowMicroseconds: Int64?

    /// Turns at `perSecond` revolutions a second from the last time to `time` (microseconds since the origin).
    mutating func advance(to time: Int64, perSecond: Double) {
        defer { nowMicroseconds = max(time, nowMicroseconds ?? time) }
        guard let now = nowMicroseconds, time > now, perSecond > 0 else { return }
        let before = revolutions
        revolutions += perSecond * Double(time - now) / 1e6
        let whole = revolutions.rounded(.down)
        if whole > before.rounded(.down) {
            // The moment the last whole revolution was reached, within this stretch at its constant rate.
            lastEventMicroseconds = now + Int64(((whole - before) / perSecond * 1e6).rounded())
        }
    }

    /// Counts on from `count` whole revolutions (the last event's time stays: no revolution happened).
    mutating func setCount(_ count: UInt64) { revolutions = Double(count) }

    /// The count of whole revolutions.
    var count: UInt64 { UInt64(revolutions) }

    /// The last event's time on a sensor's 1/1024 s clock, which wraps every 64 s.
    var eventTime: UInt16 {
        UInt16(truncatingIfNeeded: lastEventMicroseconds * Int64(CrankRevolutionData.ticksPerSecond) / 1_000_000)
    }

    var crankData: CrankRevolutionData {
        CrankRevolutionData(
            cumulativeCrankRevolutions: UInt16(truncatingIfNeeded: count), lastCrankEventTime: eventTime)
    }

    var wheelData: WheelRevolutionData {
        WheelRevolutionData(
            cumulativeWheelRevolutions: UInt32(truncatingIfNeeded: count), lastWheelEventTime: eventTime)
    }
}
