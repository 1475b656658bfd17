import CyclingSensors
import FIT
import Workouts

/// A stored ride as a FIT activity file, in the message order bike computers write: file_id, device_info per
/// sensor, timer events and 1 Hz records in time order, the laps, the session and the activity.
public enum FITActivity {
    /// Global message numbers (FITMessageNumber) and enum values of the FIT profile (21.x) that this file uses.
    private typealias Message = FITMessageNumber
    private enum Local {
        static let fileID: UInt8 = 0
        static let deviceInfo: UInt8 = 1
        static let event: UInt8 = 2
        static let record: UInt8 = 3
        static let lap: UInt8 = 4
        static let session: UInt8 = 5
        static let activity: UInt8 = 6
    }
    private enum Event {
        static let timer: UInt64 = 0
        static let session: UInt64 = 8
        static let lap: UInt64 = 9
        static let activity: UInt64 = 26
        /// A point the rider marked; FIT has no message for a drink, so an intake is one too.
        static let userMarker: UInt64 = 32
        static let start: UInt64 = 0
        static let stop: UInt64 = 1
        static let stopAll: UInt64 = 4
        static let marker: UInt64 = 3
    }
    /// `ble_device_type`, the device_type sub-field when source_type is bluetooth_low_energy (3).
    private enum BLEDeviceType {
        static let heartRate: UInt64 = 1
        static let bikePower: UInt64 = 2
        static let bikeSpeedCadence: UInt64 = 3
    }
    private static let developmentManufacturer: UInt64 = 255
    private static let sourceBluetoothLowEnergy: UInt64 = 3
    /// left_right_balance: the low 7 bits are a percentage; bit 7 set says it is the right pedal's, clear that
    /// the side is unknown.
    private static let rightPedalBit: UInt8 = 0x80

    /// The FIT bytes of a workout. `pedalBalance` holds, per second of the ride, the FIT left_right_balance
    /// byte (see `pedalBalanceBytes`).
    public static func encode(
        _ summary: WorkoutSummary, samples: [SecondSample], pedalBalance: [Int: UInt8] = [:]
    ) -> [UInt8] {
        var fit = FITEncoder()
        let start = summary.startMicroseconds
        func time(_ microseconds: Int64) -> FITEncoder.Value {
            .number(FITEncoder.timestamp(microseconds: microseconds))
        }

        fit.define(
            local: Local.fileID, global: Message.fileID,
            fields: [
                .init(0, .enumeration), .init(1, .uint16), .init(2, .uint16), .init(3, .uint32z), .init(4, .uint32),
            ])
        fit.write(
            local: Local.fileID,
            [.number(4), .number(developmentManufacturer), .number(0), .number(serialNumber(summary)), time(start)])

        fit.define(
            local: Local.deviceInfo, global: Message.deviceInfo,
            fields: [
                .init(253, .uint32), .init(0, .uint8), .init(1, .uint8), .init(25, .enumeration), .init(2, .uint16),
                .init(32, .uint8), .init(27, .string, size: 32),
            ])
        // Device 0 is the creator: cyclelog itself.
        fit.write(
            local: Local.deviceInfo,
            [
                time(start), .number(0), .number(nil), .number(5), .number(developmentManufacturer), .number(nil),
                .text("cyclelog"),
            ])
        for (index, sensor) in summary.sensors.enumerated() {
            fit.write(
                local: Local.deviceInfo,
                [
                    time(start), .number(UInt64(index + 1)), .number(deviceType(sensorIndex: index, samples)),
                    .number(sourceBluetoothLowEnergy), .number(developmentManufacturer),
                    .number(sensor.batteryPercent.map { UInt64($0) }), .text(sensor.name ?? sensor.address),
                ])
        }

        fit.define(
            local: Local.event, global: Message.event,
            fields: [.init(253, .uint32), .init(0, .enumeration), .init(1, .enumeration), .init(4, .uint8)])
        fit.define(
            local: Local.record, global: Message.record,
            fields: [
                .init(253, .uint32), .init(7, .uint16), .init(4, .uint8), .init(6, .uint16), .init(5, .uint32),
                .init(3, .uint8), .init(29, .uint32), .init(30, .uint8), .init(53, .uint8),
            ])
        // Timer events (start, pause = stop_all, resume = start, end = stop_all) and the rider's markers and
        // intake (user_marker) in time order with the records of the seconds the timer ran.
        var events: [(microseconds: Int64, event: UInt64, type: UInt64)] = []
        for event in summary.events {
            switch event.control {
            case .start, .resume: events.append((event.timeMicroseconds, Event.timer, Event.start))
            case .pause, .end: events.append((event.timeMicroseconds, Event.timer, Event.stopAll))
            case .marker where !event.isAutoPauseMarker:
                events.append((event.timeMicroseconds, Event.userMarker, Event.marker))
            case .intake: events.append((event.timeMicroseconds, Event.userMarker, Event.marker))
            default: break
            }
        }
        var nextEvent = 0
        func writeEvents(upTo microseconds: Int64) {
            while nextEvent < events.count && events[nextEvent].microseconds <= microseconds {
                let event = events[nextEvent]
                fit.write(
                    local: Local.event,
                    [time(event.microseconds), .number(event.event), .number(event.type), .number(0)])
                nextEvent += 1
            }
        }
        var accumulatedWatts: UInt64 = 0
        for second in RideSecond.list(samples, startMicroseconds: start) where second.sample.isRunning {
            let sample = second.sample
            writeEvents(upTo: second.timeMicroseconds)
            if let watts = sample.powerWatts { accumulatedWatts += UInt64(watts.rounded()) }
            let cadence = cadenceValues(sample.cadenceRPM)
            fit.write(
                local: Local.record,
                [
                    time(second.timeMicroseconds), whole(sample.powerWatts), cadence.whole,
                    scaled(sample.speedMetersPerSecond, 1000), scaled(second.distanceMeters, 100),
                    whole(sample.heartRateBPM),
                    .number(sample.powerWatts == nil ? nil : accumulatedWatts),
                    .number(pedalBalance[sample.second].map(UInt64.init)), cadence.fraction,
                ])
        }
        writeEvents(upTo: .max)

        let totals: [FITEncoder.Field] = [
            .init(253, .uint32), .init(254, .uint16), .init(0, .enumeration), .init(1, .enumeration),
            .init(2, .uint32), .init(7, .uint32), .init(8, .uint32), .init(9, .uint32),
        ]
        let averages: [FITEncoder.Field] = [
            .init(13, .uint16), .init(14, .uint16), .init(15, .uint8), .init(16, .uint8), .init(17, .uint8),
            .init(18, .uint8), .init(19, .uint16), .init(20, .uint16),
        ]
        fit.define(
            local: Local.lap, global: Message.lap,
            fields: totals + averages + [.init(33, .uint16), .init(41, .uint32), .init(24, .enumeration)])
        for (index, lap) in summary.laps.enumerated() {
            let last = index == summary.laps.count - 1
            fit.write(
                local: Local.lap,
                totalsValues(
                    lap.statistics, index: index, event: Event.lap, start: lap.startMicroseconds,
                    end: lap.endMicroseconds) + averageValues(lap.statistics)
                    + [
                        whole(lap.statistics.normalizedPowerWatts), whole(lap.statistics.workJoules),
                        .number(last ? 7 : 0),
                    ])  // lap_trigger: session_end, manual
        }

        // The session's averages use its own field numbers (14…21, one above the lap's).
        let sessionAverages = averages.map { FITEncoder.Field($0.number + 1, $0.type) }
        fit.define(
            local: Local.session, global: Message.session,
            fields: totals + sessionAverages + [
                .init(34, .uint16), .init(48, .uint32), .init(5, .enumeration), .init(6, .enumeration),
                .init(25, .uint16), .init(26, .uint16), .init(35, .uint16), .init(36, .uint16), .init(45, .uint16),
                .init(28, .enumeration),
            ])
        let statistics = summary.statistics
        fit.write(
            local: Local.session,
            totalsValues(
                statistics, index: 0, event: Event.session, start: start, end: summary.endMicroseconds)
                + averageValues(statistics)
                + [
                    whole(statistics.normalizedPowerWatts), whole(statistics.workJoules), .number(2),  // cycling
                    .number(subSport(summary.plan.location)), .number(0), .number(UInt64(summary.laps.count)),
                    scaled(summary.trainingStressScore, 10), scaled(summary.intensityFactor, 1000),
                    whole(summary.ftpWatts), .number(0),  // trigger: activity_end
                ])

        fit.define(
            local: Local.activity, global: Message.activity,
            fields: [
                .init(253, .uint32), .init(0, .uint32), .init(1, .uint16), .init(2, .enumeration),
                .init(3, .enumeration), .init(4, .enumeration),
            ])
        fit.write(
            local: Local.activity,
            [
                time(summary.endMicroseconds), scaled(statistics.movingSeconds, 1000), .number(1), .number(0),
                .number(Event.activity), .number(Event.stop),
            ])
        return fit.file()
    }

    /// The notifications `pedalBalanceBytes` needs: Cycling Power Measurements whose flags say they carry pedal
    /// power balance (bit 0), so a caller can leave every other journal event undecoded.
    public static let pedalBalanceCharacteristic: UInt16 = 0x2A63
    public static func carriesPedalBalance(_ value: [UInt8]) -> Bool { value.first.map { $0 & 0x01 != 0 } ?? false }

    /// Per second of the ride, the FIT left_right_balance byte from the Cycling Power Measurements in the
    /// journal: CPS gives the share of the left pedal (reference bit set) or of an unknown one, in 1/2 %; FIT
    /// marks a right-pedal share with bit 7, so a left share L is written as the right share 100 − L with bit 7.
    public static func pedalBalanceBytes(_ journal: [RideEvent], startMicroseconds: Int64) -> [Int: UInt8] {
        var sums: [Int: (left: Double, unknown: Double, leftCount: Int, unknownCount: Int)] = [:]
        for event in journal {
            guard case .notification(_, 0x2A63, let value) = event.kind,
                let measurement = try? CyclingPowerMeasurement(decoding: value),
                let balance = measurement.pedalPowerBalance
            else { continue }
            let second = Int((event.timeMicroseconds - startMicroseconds) / 1_000_000)
            guard second >= 0 else { continue }
            var sum = sums[second] ?? (0, 0, 0, 0)
            if measurement.flags.contains(.pedalPowerBalanceReferenceLeft) {
                sum.left += Double(balance) / 2
                sum.leftCount += 1
            } else {
                sum.unknown += Double(balance) / 2
                sum.unknownCount += 1
            }
            sums[second] = sum
        }
        return sums.compactMapValues { sum in
            if sum.leftCount > 0 {
                let right = 100 - sum.left / Double(sum.leftCount)
                return rightPedalBit | UInt8(min(100, max(0, right.rounded())))
            }
            guard sum.unknownCount > 0 else { return nil }
            return UInt8(min(100, max(0, (sum.unknown / Double(sum.unknownCount)).rounded())))
        }
    }

    // MARK: Values

    private static func totalsValues(
        _ statistics: WorkoutStatistics, index: Int, event: UInt64, start: Int64, end: Int64
    ) -> [FITEncoder.Value] {
        [
            .number(FITEncoder.timestamp(microseconds: end)), .number(UInt64(index)), .number(event),
            .number(Event.stop), .number(FITEncoder.timestamp(microseconds: start)),
            scaled(statistics.elapsedSeconds, 1000), scaled(statistics.movingSeconds, 1000),
            scaled(statistics.distanceMeters, 100),
        ]
    }

    private static func averageValues(_ statistics: WorkoutStatistics) -> [FITEncoder.Value] {
        [
            scaled(statistics.averageSpeedMetersPerSecond, 1000), scaled(statistics.maximumSpeedMetersPerSecond, 1000),
            whole(statistics.averageHeartRateBPM), whole(statistics.maximumHeartRateBPM),
            whole(statistics.averageCadenceRPM), whole(statistics.maximumCadenceRPM),
            whole(statistics.averagePowerWatts), whole(statistics.maximumPowerWatts),
        ]
    }

    private static func whole(_ value: Double?) -> FITEncoder.Value { scaled(value, 1) }

    /// Cadence as FIT splits it: whole rpm in `cadence`, 1/128 rpm in `fractional_cadence`.
    private static func cadenceValues(_ rpm: Double?) -> (whole: FITEncoder.Value, fraction: FITEncoder.Value) {
        guard let rpm, rpm.isFinite, rpm >= 0 else { return (.number(nil), .number(nil)) }
        let units = UInt64((rpm * 128).rounded())
        return (.number(units / 128), .number(units % 128))
    }

    private static func scaled(_ value: Double?, _ scale: Double) -> FITEncoder.Value {
        guard let value, value.isFinite, value >= 0 else { return .number(nil) }
        return .number(UInt64((value * scale).rounded()))
    }

    private static func subSport(_ location: WorkoutLocation?) -> UInt64 {
        switch location {
        case .indoor: 6  // indoor_cycling
        case .outdoor: 7  // road
        case nil: 0  // generic
        }
    }

    /// What a sensor was used for, from the channels it supplied.
    private static func deviceType(sensorIndex: Int, _ samples: [SecondSample]) -> UInt64? {
        var supplied = Set<Int>()
        for sample in samples {
            for (channel, source) in sample.sources.enumerated() where Int(source) == sensorIndex {
                supplied.insert(channel)
            }
        }
        if supplied.contains(Channel.powerWatts.rawValue) { return BLEDeviceType.bikePower }
        if supplied.contains(Channel.heartRateBPM.rawValue) { return BLEDeviceType.heartRate }
        if !supplied.isEmpty { return BLEDeviceType.bikeSpeedCadence }
        return nil
    }

    /// A stable serial number for file_id, from the workout's sync identifier (never 0, FIT's invalid uint32z).
    private static func serialNumber(_ summary: WorkoutSummary) -> UInt64 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in summary.syncIdentifier.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return UInt64(max(1, hash))
    }
}
