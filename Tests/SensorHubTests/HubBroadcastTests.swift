import CyclingSensors
import Testing
import Workouts

@testable import SensorHub

/// What the hub re-broadcasts, read back as an app reads it: the byte layouts of the Cycling Power, CSC, Heart Rate
/// and Indoor Bike Data specifications, and revolution counts that turn back into the cadence and speed ridden.
struct HubBroadcastTests {
    let meter = "C0:11:22:33:44:55", trainer = "C0:11:22:33:44:66", strap = "C0:11:22:33:44:77"

    /// A ride's readings, each sensor's every `step` seconds, fused as the recorder fuses them (`LiveSources`) and
    /// re-broadcast: every notification with its time.
    func broadcast(
        _ sensors: [(name: String, readings: (Double) -> [ChannelReading], from: Double, until: Double)],
        step: Double = 0.25, seconds: Double, hub: HubBroadcast = HubBroadcast()
    ) -> [(seconds: Double, notification: HubBroadcast.Notification)] {
        var sources = LiveSources()
        var hub = hub
        var sent: [(Double, HubBroadcast.Notification)] = []
        for tick in 0..<Int(seconds / step) {
            let time = Double(tick) * step
            let micros = Int64((time * 1e6).rounded())
            for sensor in sensors where time >= sensor.from && time < sensor.until {
                let readings = sensor.readings(time)
                let shown = sources.take(readings, from: sensor.name, at: micros)
                sent += hub.take(readings, shown: shown, at: micros).map { (time, $0) }
            }
        }
        return sent
    }

    func meterReadings(watts: Double, rpm: Double) -> (Double) -> [ChannelReading] {
        { _ in
            [
                ChannelReading(channel: .powerWatts, value: watts, rank: 0),
                ChannelReading(channel: .cadenceRPM, value: rpm, rank: 0),
            ]
        }
    }

    /// Cadence an app works out from each pair of crank events that differ (revolutions over the event clock's
    /// 1/1024 s, which wraps every 64 s).
    func cadences(_ crank: [CrankRevolutionData]) -> [Double] {
        zip(crank, crank.dropFirst()).compactMap { before, after in
            let revolutions = after.cumulativeCrankRevolutions &- before.cumulativeCrankRevolutions
            let ticks = after.lastCrankEventTime &- before.lastCrankEventTime
            guard revolutions > 0, ticks > 0 else { return nil }
            return Double(revolutions) / (Double(ticks) / 1024) * 60
        }
    }

    @Test func aSteadyCadenceIsSentAsTheRevolutionsItTurnsAndThePowerAsItIs() throws {
        let sent = broadcast(
            [(meter, meterReadings(watts: 250, rpm: 90), 0, 60)], seconds: 60)
        let power = try sent.filter { $0.notification.characteristic == .cyclingPowerMeasurement }
            .map { try CyclingPowerMeasurement(decoding: $0.notification.value) }
        #expect(power.count == 240, "one a reading")
        #expect(power.allSatisfy { $0.instantaneousPower == 250 })
        let crank = power.compactMap(\.crankRevolutionData)
        #expect(crank.count == 240)
        // 90 rpm for the 59.75 s from the first reading to the last: 89.6 revolutions, 89 of them whole.
        #expect(crank.last?.cumulativeCrankRevolutions == 89)
        let worked = cadences(crank)
        #expect(worked.count == 89, "one per revolution (the first from the clock's start, when the crank began)")
        // Each event on the 1/1024 s clock, 2/3 s apart: within 0.15 % of 90 rpm.
        #expect(worked.allSatisfy { abs($0 - 90) < 0.15 }, "\(worked.filter { abs($0 - 90) >= 0.15 })")
    }

    @Test func speedIsSentAsTheWheelRevolutionsOfTheCircumferenceAnAppAssumes() throws {
        let wheel: (Double) -> [ChannelReading] = { _ in
            [ChannelReading(channel: .speedMetersPerSecond, value: 10, rank: 0)]
        }
        let sent = broadcast([("C0:11:22:33:44:88", wheel, 0, 60)], seconds: 60)
        let csc = try sent.filter { $0.notification.characteristic == .cscMeasurement }
            .map { try CSCMeasurement(decoding: $0.notification.value) }
        let revolutions = csc.compactMap(\.wheelRevolutionData)
        // 10 m/s for 59.75 s over a 2.096 m wheel: 285.06 revolutions.
        #expect(revolutions.last?.cumulativeWheelRevolutions == 285)
        let first = try #require(revolutions.first { $0.cumulativeWheelRevolutions == 10 })
        let last = try #require(revolutions.last)
        let seconds = Double(last.lastWheelEventTime &- first.lastWheelEventTime) / 1024
        let speed = Double(last.cumulativeWheelRevolutions - first.cumulativeWheelRevolutions) * 2.096 / seconds
        #expect(abs(speed - 10) < 0.01, "\(speed) m/s")
    }

    /// The meter drops out at 30 s and the trainer's own cadence (a lower rank) takes over once the meter's last
    /// value no longer holds: the count goes on from where it was, never a burst an app would read as a sprint.
    @Test func aChangeOfSourceNeverMakesTheCountJump() throws {
        let trainerReadings: (Double) -> [ChannelReading] = { _ in
            [
                ChannelReading(channel: .powerWatts, value: 240, rank: 1),
                ChannelReading(channel: .cadenceRPM, value: 60, rank: 2),
            ]
        }
        let sent = broadcast(
            [(meter, meterReadings(watts: 250, rpm: 90), 0, 30), (trainer, trainerReadings, 0, 60)], seconds: 60)
        let power = try sent.filter { $0.notification.characteristic == .cyclingPowerMeasurement }
            .map { try CyclingPowerMeasurement(decoding: $0.notification.value) }
        #expect(power.prefix(120).allSatisfy { $0.instantaneousPower == 250 }, "the meter's power while it is heard")
        #expect(power.last?.instantaneousPower == 240, "then the trainer's")
        let worked = cadences(power.compactMap(\.crankRevolutionData))
        #expect(worked.allSatisfy { $0 < 90.2 && $0 > 59.8 }, "\(worked.filter { $0 >= 90.2 || $0 <= 59.8 })")
        #expect(worked.contains { abs($0 - 60) < 0.2 }, "the trainer's cadence once it is the source")
    }

    /// The layouts byte for byte (Cycling Power Measurement, Heart Rate Measurement, Indoor Bike Data: the flags
    /// say which fields follow, little-endian).
    @Test func eachServiceIsSentInItsSpecificationsLayout() throws {
        var hub = HubBroadcast()
        _ = hub.take(
            [ChannelReading(channel: .speedMetersPerSecond, value: 10, rank: 0)], shown: [.speedMetersPerSecond], at: 0)
        let fromMeter = hub.take(
            [
                ChannelReading(channel: .powerWatts, value: 250, rank: 0),
                ChannelReading(channel: .cadenceRPM, value: 90, rank: 0),
            ], shown: [.powerWatts, .cadenceRPM], at: 0)
        #expect(fromMeter.map(\.characteristic) == [.cyclingPowerMeasurement, .cscMeasurement, .indoorBikeData])
        // Flags 0x0020 (crank revolution data), 250 W, no revolution yet at event time 0.
        #expect(fromMeter.first?.value == [0x20, 0x00, 0xFA, 0x00, 0x00, 0x00, 0x00, 0x00])
        let fromStrap = hub.take(
            [ChannelReading(channel: .heartRateBPM, value: 150, rank: 0)], shown: [.heartRateBPM], at: 1_000_000)
        #expect(fromStrap.map(\.characteristic) == [.heartRateMeasurement, .indoorBikeData])
        // Flags 0 (a uint8 heart rate), 150 bpm.
        #expect(fromStrap.first?.value == [0x00, 0x96])
        // Flags 0x0244 (cadence, power, heart rate; speed, as More Data is clear): 36.00 km/h as 3600, 90 rpm as
        // 180 half-revolutions, 250 W, 150 bpm.
        #expect(fromStrap.last?.value == [0x44, 0x02, 0x10, 0x0E, 0xB4, 0x00, 0xFA, 0x00, 0x96])
        // Four seconds on, the strap's value and the cadence no longer hold: neither is in the trainer's data (an
        // app would read a 0 as the rider stopping), and the speed, which every notification carries, is 0.
        let later = hub.take(
            [ChannelReading(channel: .powerWatts, value: 250, rank: 0)], shown: [.powerWatts], at: 5_000_000)
        let bike = try IndoorBikeData(decoding: try #require(later.last?.value))
        #expect(bike.heartRate == nil)
        #expect(bike.instantaneousCadence == nil)
        #expect(bike.instantaneousSpeed == 0)
        #expect(bike.instantaneousPower == 250)
        // Flags 0x0040 (power only), 0 km/h, 250 W.
        #expect(later.last?.value == [0x40, 0x00, 0x00, 0x00, 0xFA, 0x00])
    }

    /// A value past a field's range is sent as the range's end, never wrapped: 40 000 W as 32 767, a negative speed
    /// as 0, 300 bpm as 255 in the trainer's one octet.
    @Test func valuesPastAFieldAreHeldAtItsEnds() throws {
        var hub = HubBroadcast()
        let sent = hub.take(
            [
                ChannelReading(channel: .powerWatts, value: 40_000, rank: 0),
                ChannelReading(channel: .speedMetersPerSecond, value: -3, rank: 0),
                ChannelReading(channel: .heartRateBPM, value: 300, rank: 0),
            ], shown: [.powerWatts, .speedMetersPerSecond, .heartRateBPM], at: 0)
        let power = try CyclingPowerMeasurement(decoding: try #require(sent.first?.value))
        #expect(power.instantaneousPower == 32_767)
        let bike = try IndoorBikeData(decoding: try #require(sent.last?.value))
        #expect(bike.instantaneousSpeed == 0)
        #expect(bike.heartRate == 255)
        #expect(bike.instantaneousPower == 32_767)
        #expect(HubBroadcast.clamped(.nan, Int16.self) == 0)
    }

    /// The SC Control Point as CSCS 1.0 §3.4 answers: Set Cumulative Value (0x01, uint32 little-endian) sets the
    /// count the next measurements go on from; a wrong length is an Invalid Parameter (0x03); calibration and
    /// sensor locations, which the hub does not declare, are Op Code Not Supported (0x02).
    @Test func anAppSetsTheCumulativeWheelRevolutionsAndIsAnsweredOnEveryOtherRequest() throws {
        let wheel: (Double) -> [ChannelReading] = { _ in
            [ChannelReading(channel: .speedMetersPerSecond, value: 10, rank: 0)]
        }
        // 1 000 000 = 0x000F4240.
        let set = HubBroadcast.speedAndCadenceAnswer([0x01, 0x40, 0x42, 0x0F, 0x00])
        #expect(set.answer == [0x10, 0x01, 0x01] && set.wheelRevolutions == 1_000_000)
        for (written, answer) in [
            ([0x01, 0x40, 0x42], [0x10, 0x01, 0x03]), ([0x02], [0x10, 0x02, 0x02]), ([0x04], [0x10, 0x04, 0x02]),
            ([], [0x10, 0x00, 0x02]),
        ] as [([UInt8], [UInt8])] {
            #expect(HubBroadcast.speedAndCadenceAnswer(written).answer == answer)
            #expect(HubBroadcast.speedAndCadenceAnswer(written).wheelRevolutions == nil)
        }
        var hub = HubBroadcast()
        hub.setWheelRevolutions(1_000_000)
        // From the set count on: 10 m/s over a 2.096 m wheel for the next 10 s is 47.7 revolutions more.
        let sent = broadcast([("C0:11:22:33:44:88", wheel, 0, 10.25)], seconds: 10.25, hub: hub)
        let last = try #require(
            sent.last { $0.notification.characteristic == .cscMeasurement }.map {
                try CSCMeasurement(decoding: $0.notification.value)
            })
        #expect(last.wheelRevolutionData?.cumulativeWheelRevolutions == 1_000_047)
    }
}
