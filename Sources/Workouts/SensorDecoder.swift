import CyclingSensors

/// Everything one sensor's notifications mean for the ride: decodes each value, runs its revolution math and
/// reports readings per channel plus the distance covered. Units are applied here and nowhere else.
struct SensorDecoder {
    /// Setting it restarts the wheel math with the new size.
    var wheelCircumferenceMeters: Double {
        didSet { (cyclingPowerWheel, cscWheel) = Self.wheelRates(circumferenceMeters: wheelCircumferenceMeters) }
    }
    private var crank = RevolutionRate.crank()
    private var cyclingPowerWheel: RevolutionRate
    private var cscWheel: RevolutionRate
    private var bikeDataAssembler = IndoorBikeDataAssembler()
    /// The trainer's own total distance, which some machines reset mid-session: accumulate increases.
    private var lastTotalDistanceMeters: UInt32?
    /// Repeated identical power while the cranks stand still is a meter holding its last value, not riding.
    private var lastPower: Int16?
    private var lastCrankRateZero = false

    /// Readings and distance from one notification.
    struct Output {
        var readings = ChannelReadings()
        /// Metres ridden since the previous notification, and the speed rank of the source that measured them.
        var distance: (meters: Double, rank: Int)?
    }

    init(wheelCircumferenceMeters: Double) {
        self.wheelCircumferenceMeters = wheelCircumferenceMeters
        (cyclingPowerWheel, cscWheel) = Self.wheelRates(circumferenceMeters: wheelCircumferenceMeters)
    }

    /// The wheel math of both services for one circumference (its speed limit in revolutions depends on it).
    private static func wheelRates(circumferenceMeters: Double) -> (cyclingPower: RevolutionRate, csc: RevolutionRate) {
        (
            .wheel(
                ticksPerSecond: CyclingPowerMeasurement.wheelTicksPerSecond, circumferenceMeters: circumferenceMeters),
            .wheel(ticksPerSecond: CSCMeasurement.wheelTicksPerSecond, circumferenceMeters: circumferenceMeters)
        )
    }

    /// A new connection: every counter baseline from before it is meaningless.
    mutating func connectionChanged() {
        crank.reset()
        cyclingPowerWheel.reset()
        cscWheel.reset()
        bikeDataAssembler = IndoorBikeDataAssembler()
        lastTotalDistanceMeters = nil
    }

    /// Decodes one notification. Throws the decoder's error for a malformed value; unknown characteristics
    /// (battery, vector, control points) give no readings.
    mutating func decode(characteristic: UInt16, value: [UInt8], at time: Int64) throws(MalformedPayload) -> Output {
        var output = Output()
        switch Characteristic(rawValue: characteristic) {
        case .cyclingPowerMeasurement:
            let measurement = try CyclingPowerMeasurement(decoding: value)
            var crankStill = false
            if let data = measurement.crankRevolutionData {
                if let (revolutionsPerSecond, _) = crank.update(
                    revolutions: UInt32(data.cumulativeCrankRevolutions), eventTime: data.lastCrankEventTime,
                    atMicroseconds: time)
                {
                    output.readings.append(
                        ChannelReading(
                            channel: .cadenceRPM, value: revolutionsPerSecond * 60, rank: SourceRank.cyclingPowerCadence
                        ))
                    crankStill = revolutionsPerSecond == 0
                }
            }
            // Negative power (back-pedalling) is 0 W of work; the raw value stays in the journal. A meter that
            // repeats its last power while the cranks stand still is holding a stale value: show 0.
            var watts = Double(max(0, measurement.instantaneousPower))
            if crankStill && lastCrankRateZero && lastPower == measurement.instantaneousPower { watts = 0 }
            lastCrankRateZero = crankStill
            lastPower = measurement.instantaneousPower
            output.readings.append(
                ChannelReading(channel: .powerWatts, value: watts, rank: SourceRank.cyclingPowerPower))
            if let wheel = measurement.wheelRevolutionData {
                Self.addWheel(
                    wheel, &cyclingPowerWheel, wheelCircumferenceMeters, SourceRank.cyclingPowerSpeed, time, &output)
            }
        case .cscMeasurement:
            let measurement = try CSCMeasurement(decoding: value)
            if let wheel = measurement.wheelRevolutionData {
                Self.addWheel(wheel, &cscWheel, wheelCircumferenceMeters, SourceRank.cscSpeed, time, &output)
            }
            if let data = measurement.crankRevolutionData,
                let (revolutionsPerSecond, _) = crank.update(
                    revolutions: UInt32(data.cumulativeCrankRevolutions), eventTime: data.lastCrankEventTime,
                    atMicroseconds: time)
            {
                output.readings.append(
                    ChannelReading(channel: .cadenceRPM, value: revolutionsPerSecond * 60, rank: SourceRank.cscCadence))
            }
        case .heartRateMeasurement:
            let measurement = try HeartRateMeasurement(decoding: value)
            // A strap that reports no skin contact sends a meaningless number: leave a gap rather than invent one.
            if measurement.sensorContact != .notDetected {
                output.readings.append(
                    ChannelReading(
                        channel: .heartRateBPM, value: Double(measurement.heartRate), rank: SourceRank.heartRateStrap))
            }
        case .indoorBikeData:
            let fragment = try IndoorBikeData(decoding: value)
            if let record = bikeDataAssembler.add(fragment) { output = bikeDataOutput(record) }
        default:
            break
        }
        return output
    }

    /// Speed and distance from a wheel measurement, on that service's wheel clock.
    private static func addWheel(
        _ wheel: WheelRevolutionData, _ rate: inout RevolutionRate, _ circumferenceMeters: Double, _ rank: Int,
        _ time: Int64, _ output: inout Output
    ) {
        guard
            let (revolutionsPerSecond, counted) = rate.update(
                revolutions: wheel.cumulativeWheelRevolutions, eventTime: wheel.lastWheelEventTime,
                atMicroseconds: time)
        else { return }
        output.readings.append(
            ChannelReading(
                channel: .speedMetersPerSecond, value: revolutionsPerSecond * circumferenceMeters, rank: rank))
        output.distance = (Double(counted) * circumferenceMeters, rank)
    }

    /// FTMS reports rates directly (0.01 km/h, 0.5 rpm) and a total distance in metres.
    private mutating func bikeDataOutput(_ record: IndoorBikeData) -> Output {
        var output = Output()
        if let power = record.instantaneousPower {
            output.readings.append(
                ChannelReading(channel: .powerWatts, value: Double(max(0, power)), rank: SourceRank.fitnessMachinePower)
            )
        }
        if let cadence = record.instantaneousCadence {
            output.readings.append(
                ChannelReading(channel: .cadenceRPM, value: Double(cadence) / 2, rank: SourceRank.fitnessMachineCadence)
            )
        }
        if let speed = record.instantaneousSpeed {
            output.readings.append(
                ChannelReading(
                    channel: .speedMetersPerSecond, value: Double(speed) / 100 / 3.6,
                    rank: SourceRank.fitnessMachineSpeed))
        }
        if let heartRate = record.heartRate, heartRate > 0 {
            output.readings.append(
                ChannelReading(
                    channel: .heartRateBPM, value: Double(heartRate), rank: SourceRank.fitnessMachineHeartRate))
        }
        if let total = record.totalDistance {
            if let last = lastTotalDistanceMeters, total > last {
                output.distance = (Double(total - last), SourceRank.fitnessMachineSpeed)
            }
            lastTotalDistanceMeters = total
        }
        return output
    }
}

/// The readings of one notification, in the order they were made: at most one per channel, so never more than
/// four, kept in place rather than in an array (an allocation and a release for each of a 4-hour ride's 100 000
/// notifications).
struct ChannelReadings: RandomAccessCollection {
    private var storage = InlineArray<4, ChannelReading>(
        repeating: ChannelReading(channel: .powerWatts, value: 0, rank: 0))
    private(set) var endIndex = 0

    var startIndex: Int { 0 }

    subscript(position: Int) -> ChannelReading { storage[position] }

    /// Adds a reading, or replaces the one of its channel: one per channel keeps the count within the four places.
    mutating func append(_ reading: ChannelReading) {
        let index = indices.first { storage[$0].channel == reading.channel } ?? endIndex
        storage[index] = reading
        if index == endIndex { endIndex += 1 }
    }
}
