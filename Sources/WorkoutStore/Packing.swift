import Foundation
import RideJournal
import Workouts

/// How the 1 Hz samples and the statistics are packed into BLOBs. Samples go in chunks of `chunkSeconds`:
/// fixed-point varints (0.1 W, 0.1 rpm, mm/s, 0.1 bpm, mm, ‰ of the second running) deflated, which keeps a
/// ride-hour of samples to a few tens of kilobytes. A minute is about 1 kB: zlib's fastest level stores it 3 %
/// larger than its default level, in four fifths of the time. Statistics keep every Double's exact bits, so a stored
/// summary prints byte for byte what was printed when it was built.
enum StoredPacking {
    static let chunkSeconds = 60

    static func packSamples(_ samples: some Collection<SecondSample>) -> [UInt8] {
        var writer = PackedWriter()
        writer.unsigned(UInt64(samples.count))
        for sample in samples {
            var present: UInt8 = 0
            for channel in Channel.allCases where sample[channel] != nil { present |= 1 << channel.rawValue }
            writer.byte(present)
            writer.signed(fixed(sample.powerWatts, steps(.powerWatts)))
            writer.signed(fixed(sample.cadenceRPM, steps(.cadenceRPM)))
            writer.signed(fixed(sample.speedMetersPerSecond, steps(.speedMetersPerSecond)))
            writer.signed(fixed(sample.heartRateBPM, steps(.heartRateBPM)))
            writer.signed(fixed(sample.distanceMeters, distanceSteps))
            writer.unsigned(running(sample.runningFraction))
            for source in sample.sources { writer.byte(UInt8(bitPattern: source)) }
        }
        return Zlib.deflate(writer.bytes, effort: .fast)
    }

    static func unpackSamples(_ blob: [UInt8], firstSecond: Int) throws(PackedDataError) -> [SecondSample] {
        var reader = PackedReader(try Zlib.inflate(blob))
        let count = try reader.count()
        guard count <= 1 << 20 else {
            throw PackedDataError(.malformed, description: "a sample chunk claims \(count) samples")
        }
        var samples: [SecondSample] = []
        samples.reserveCapacity(count)
        for offset in 0..<count {
            let present = try reader.byte()
            func value(_ channel: Channel) throws(PackedDataError) -> Double? {
                let raw = try reader.signed()
                return present & (1 << channel.rawValue) != 0 ? Double(raw) / steps(channel) : nil
            }
            var sample = SecondSample(second: firstSecond + offset)
            sample.powerWatts = try value(.powerWatts)
            sample.cadenceRPM = try value(.cadenceRPM)
            sample.speedMetersPerSecond = try value(.speedMetersPerSecond)
            sample.heartRateBPM = try value(.heartRateBPM)
            sample.distanceMeters = Double(try reader.signed()) / distanceSteps
            sample.runningFraction = Double(try reader.unsigned()) / runningSteps
            for channel in sample.sources.indices { sample.sources[channel] = Int8(bitPattern: try reader.byte()) }
            samples.append(sample)
        }
        return samples
    }

    /// Chunks' samples as `unpackSamples` gives them back once packed (each value at its stored precision, each
    /// second counted from its chunk's first), made without packing: the summary printed after a save comes from
    /// the values stored, not from the finer ones built.
    static func asStored(_ chunks: [(firstSecond: Int, samples: [SecondSample])]) -> [SecondSample] {
        func atStep(_ value: Double?, _ channel: Channel) -> Double? {
            value.map { Double(fixed($0, steps(channel))) / steps(channel) }
        }
        var stored: [SecondSample] = []
        stored.reserveCapacity(chunks.reduce(0) { $0 + $1.samples.count })
        for (firstSecond, samples) in chunks {
            for (offset, sample) in samples.enumerated() {
                var copy = sample
                copy.second = firstSecond + offset
                copy.powerWatts = atStep(sample.powerWatts, .powerWatts)
                copy.cadenceRPM = atStep(sample.cadenceRPM, .cadenceRPM)
                copy.speedMetersPerSecond = atStep(sample.speedMetersPerSecond, .speedMetersPerSecond)
                copy.heartRateBPM = atStep(sample.heartRateBPM, .heartRateBPM)
                copy.distanceMeters = Double(fixed(sample.distanceMeters, distanceSteps)) / distanceSteps
                copy.runningFraction = Double(running(sample.runningFraction)) / runningSteps
                stored.append(copy)
            }
        }
        return stored
    }

    /// A channel's stored steps per unit: tenths of a watt, of an rpm and of a bpm, millimetres per second.
    private static func steps(_ channel: Channel) -> Double {
        switch channel {
        case .powerWatts, .cadenceRPM, .heartRateBPM: 10
        case .speedMetersPerSecond: 1000
        }
    }

    /// Distance in millimetres, the running part of a second in thousandths.
    private static let distanceSteps = 1000.0, runningSteps = 1000.0

    private static func running(_ fraction: Double) -> UInt64 { UInt64(max(0, (fraction * runningSteps).rounded())) }

    private static func fixed(_ value: Double?, _ scale: Double) -> Int64 {
        guard let value, value.isFinite else { return 0 }
        return Int64((value * scale).rounded())
    }

    static func packStatistics(_ statistics: WorkoutStatistics) -> [UInt8] {
        var writer = PackedWriter()
        func double(_ value: Double?) {
            if let value {
                writer.byte(1)
                writer.unsigned(value.bitPattern)
            } else {
                writer.byte(0)
            }
        }
        double(statistics.elapsedSeconds)
        double(statistics.movingSeconds)
        double(statistics.distanceMeters)
        for value in optionalFields(statistics) { double(value) }
        let durations = statistics.powerCurveWatts.keys.sorted()
        writer.unsigned(UInt64(durations.count))
        for duration in durations {
            writer.unsigned(UInt64(duration))
            double(statistics.powerCurveWatts[duration])
        }
        // Added later, read only when present: rejected seconds per channel, then the corrections.
        for channel in Channel.allCases { writer.unsigned(UInt64(statistics.rejectedSeconds[channel] ?? 0)) }
        writer.unsigned(UInt64(statistics.corrections.count))
        for correction in statistics.corrections { writer.text(correction) }
        // Added later still: the trainer's statistics (1 and the seconds per mode, then ERG's mean difference), or 0.
        if let trainer = statistics.trainer {
            writer.byte(1)
            for mode in TrainerTarget.modes { writer.unsigned(UInt64(trainer.secondsByMode[mode] ?? 0)) }
            double(trainer.ergMeanAbsoluteDifferenceWatts)
        } else {
            writer.byte(0)
        }
        // Added later still: how the ride followed its structured workout, or 0.
        if let plan = statistics.plan {
            func optional(_ value: Int?) {
                writer.byte(value == nil ? 0 : 1)
                if let value { writer.unsigned(UInt64(bitPattern: Int64(value))) }
            }
            writer.byte(1)
            writer.text(plan.workoutName)
            optional(plan.ftpWatts)
            writer.unsigned(UInt64(plan.stepCount))
            writer.byte(plan.completed ? 1 : 0)
            writer.unsigned(UInt64(plan.steps.count))
            for step in plan.steps {
                for value in [step.index, step.startSecond, step.endSecond, step.runningSeconds] {
                    writer.unsigned(UInt64(value))
                }
                optional(step.firstTargetWatts)
                optional(step.lastTargetWatts)
                for value in [
                    step.secondsWithTarget, step.secondsWithin, step.cadenceSeconds, step.cadenceSecondsWithin,
                ] {
                    writer.unsigned(UInt64(value))
                }
                double(step.meanTargetWatts)
                double(step.meanPowerWatts)
                double(step.meanCadenceRPM)
                optional(step.cadenceTarget?.lowerBound)
                optional(step.cadenceTarget?.upperBound)
            }
        } else {
            writer.byte(0)
        }
        // Added later still: what the ride did of its workout's scored steps (1 and four counts), or 0.
        if let scored = statistics.plan?.scoredPart {
            writer.byte(1)
            for value in [scored.steps, scored.stepsRiddenToTheEnd, scored.seconds, scored.secondsWithPower] {
                writer.unsigned(UInt64(value))
            }
        } else {
            writer.byte(0)
        }
        // Added later still: the time an app on the sensor hub held the trainer (1, its seconds, the apps), or 0.
        if let trainer = statistics.trainer, trainer.appSeconds > 0 || !trainer.apps.isEmpty {
            writer.byte(1)
            writer.unsigned(UInt64(trainer.appSeconds))
            writer.unsigned(UInt64(trainer.apps.count))
            for app in trainer.apps { writer.text(app) }
        } else {
            writer.byte(0)
        }
        return writer.bytes
    }

    static func unpackStatistics(_ blob: [UInt8]) throws(PackedDataError) -> WorkoutStatistics {
        var reader = PackedReader(blob)
        func double() throws(PackedDataError) -> Double? {
            try reader.byte() == 1 ? Double(bitPattern: try reader.unsigned()) : nil
        }
        var statistics = WorkoutStatistics([], elapsedSeconds: try double() ?? 0)
        statistics.movingSeconds = try double() ?? 0
        statistics.distanceMeters = try double() ?? 0
        statistics.averagePowerWatts = try double()
        statistics.maximumPowerWatts = try double()
        statistics.normalizedPowerWatts = try double()
        statistics.workJoules = try double()
        statistics.averageCadenceRPM = try double()
        statistics.maximumCadenceRPM = try double()
        statistics.averageSpeedMetersPerSecond = try double()
        statistics.maximumSpeedMetersPerSecond = try double()
        statistics.averageHeartRateBPM = try double()
        statistics.maximumHeartRateBPM = try double()
        let count = try reader.count()
        for _ in 0..<min(count, 1000) {
            let duration = Int(clamping: try reader.unsigned())
            statistics.powerCurveWatts[duration] = try double()
        }
        if !reader.atEnd {
            for channel in Channel.allCases {
                let seconds = Int(clamping: try reader.unsigned())
                if seconds > 0 { statistics.rejectedSeconds[channel] = seconds }
            }
            let corrections = try reader.count()
            for _ in 0..<corrections { statistics.corrections.append(try reader.text()) }
        }
        if !reader.atEnd, try reader.byte() == 1 {
            var seconds: [String: Int] = [:]
            for mode in TrainerTarget.modes {
                let count = Int(clamping: try reader.unsigned())
                if count > 0 { seconds[mode] = count }
            }
            statistics.trainer = TrainerStatistics(
                secondsByMode: seconds, ergMeanAbsoluteDifferenceWatts: try double())
        }
        if !reader.atEnd, try reader.byte() == 1 {
            func optional() throws(PackedDataError) -> Int? {
                try reader.byte() == 1 ? Int(clamping: Int64(bitPattern: try reader.unsigned())) : nil
            }
            func count() throws(PackedDataError) -> Int { Int(clamping: try reader.unsigned()) }
            let name = try reader.text()
            let ftp = try optional()
            let stepCount = try count()
            let completed = try reader.byte() == 1
            var steps: [PlanCompliance.Step] = []
            for _ in 0..<min(try reader.count(), 1_000_000) {
                let (index, start, end, running) = (try count(), try count(), try count(), try count())
                let (first, last) = (try optional(), try optional())
                let (withTarget, within, cadenceSeconds, cadenceWithin) = (
                    try count(), try count(), try count(), try count()
                )
                let (meanTarget, meanPower, meanCadence) = (try double(), try double(), try double())
                let (low, high) = (try optional(), try optional())
                steps.append(
                    PlanCompliance.Step(
                        index: index, startSecond: start, endSecond: end, runningSeconds: running,
                        firstTargetWatts: first, lastTargetWatts: last, secondsWithTarget: withTarget,
                        secondsWithin: within, meanTargetWatts: meanTarget, meanPowerWatts: meanPower,
                        cadenceTarget: low.flatMap { low in high.flatMap { low <= $0 ? low...$0 : nil } },
                        meanCadenceRPM: meanCadence, cadenceSeconds: cadenceSeconds, cadenceSecondsWithin: cadenceWithin
                    ))
            }
            statistics.plan = PlanCompliance(
                workoutName: name, ftpWatts: ftp, stepCount: stepCount, steps: steps, completed: completed)
        }
        if !reader.atEnd, try reader.byte() == 1 {
            let (steps, ridden) = (Int(clamping: try reader.unsigned()), Int(clamping: try reader.unsigned()))
            let (seconds, withPower) = (Int(clamping: try reader.unsigned()), Int(clamping: try reader.unsigned()))
            statistics.plan?.scoredPart = PlanCompliance.ScoredPart(
                steps: steps, stepsRiddenToTheEnd: ridden, seconds: seconds, secondsWithPower: withPower)
        }
        if !reader.atEnd, try reader.byte() == 1 {
            let seconds = Int(clamping: try reader.unsigned())
            var apps: [String] = []
            for _ in 0..<min(try reader.count(), 1000) { apps.append(try reader.text()) }
            statistics.trainer?.appSeconds = seconds
            statistics.trainer?.apps = apps
        }
        return statistics
    }

    /// The optional fields in the order `unpackStatistics` reads them back.
    private static func optionalFields(_ s: WorkoutStatistics) -> [Double?] {
        [
            s.averagePowerWatts, s.maximumPowerWatts, s.normalizedPowerWatts, s.workJoules, s.averageCadenceRPM,
            s.maximumCadenceRPM, s.averageSpeedMetersPerSecond, s.maximumSpeedMetersPerSecond,
            s.averageHeartRateBPM, s.maximumHeartRateBPM,
        ]
    }

    /// A power curve (a ride's, or a week's envelope): its number of durations, then each duration's watts as a
    /// Float32 (a tenth of a milliwatt of rounding at 300 W, far below what a power meter resolves) whose bit
    /// pattern is written as the zig-zag varint of its difference from the one before (the first from zero). A
    /// curve never rises, so neighbouring durations share their exponent and leading mantissa bits and most
    /// differences take two or three bytes: half the Float32s themselves (migration v28), read back to the same
    /// bits. An empty curve (a ride without power) is an empty blob.
    static func packCurve(_ curve: PowerCurve) -> [UInt8] {
        guard !curve.watts.isEmpty else { return [] }
        var writer = PackedWriter()
        writer.unsigned(UInt64(curve.watts.count))
        var previous: Int64 = 0
        for watts in curve.watts {
            let pattern = Int64(Float(watts).bitPattern)
            writer.signed(pattern - previous)
            previous = pattern
        }
        return writer.bytes
    }

    /// The most bytes `packCurve` writes for a curve's first `durations` durations, its count included (a varint
    /// of 33 bits or fewer takes at most 5): what a query reads of a curve to unpack that many.
    static func curveBytes(durations: Int) -> Int {
        min(Int(Int32.max), 5 * (min(max(durations, 0), 1 << 28) + 1))
    }

    /// The number of durations a packed curve holds, from its first bytes; nil when they cannot be a count.
    static func curveCount(_ blob: Data) -> Int? {
        guard !blob.isEmpty else { return 0 }
        var reader = PackedReader([UInt8](blob.prefix(10)))
        guard let count = try? reader.unsigned(), count <= 1 << 40 else { return nil }
        return Int(count)
    }

    /// A curve's first `limit` durations (every one when nil) from what `packCurve` wrote, whole or cut after
    /// `curveBytes(durations: limit)` bytes; nil when it cannot be one (a damaged or foreign value), which the
    /// caller computes again from the ride's samples.
    static func unpackCurve(_ blob: Data, durations limit: Int? = nil) -> PowerCurve? {
        guard !blob.isEmpty else { return PowerCurve(watts: []) }
        let bytes = [UInt8](blob)
        var reader = PackedReader(bytes)
        guard let count = try? reader.unsigned() else { return nil }
        // Each duration takes a byte at least, so a count the bytes cannot hold is damage, found before allocating.
        let wanted = Int(min(count, UInt64(max(limit ?? Int.max, 0))))
        guard wanted <= bytes.count else { return nil }
        var watts: [Double] = []
        watts.reserveCapacity(wanted)
        var pattern: Int64 = 0
        for _ in 0..<wanted {
            guard let difference = try? reader.signed() else { return nil }
            let (next, overflow) = pattern.addingReportingOverflow(difference)
            guard !overflow, let bits = UInt32(exactly: next) else { return nil }
            pattern = next
            watts.append(Double(Float(bitPattern: bits)))
        }
        // A whole curve ends with its last duration (a part read for `limit` durations goes on after it).
        if limit == nil, !reader.atEnd { return nil }
        return PowerCurve(watts: watts)
    }

    /// A curve as migrations before v28 stored it: each duration's watts a little-endian Float32, bytes past the
    /// last whole one ignored.
    static func unpackFloatCurve(_ blob: Data) -> PowerCurve {
        var watts: [Double] = []
        watts.reserveCapacity(blob.count / 4)
        blob.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count - 3, by: 4) {
                watts.append(
                    Double(
                        Float(
                            bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                        )))
            }
        }
        return PowerCurve(watts: watts)
    }

    /// An envelope's source of each duration as runs: the holder's index and how many durations in a row it holds,
    /// each a little-endian UInt32 (a week's curve changes hands a few dozen times over hours of durations).
    static func packSources(_ sources: [Int]) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = 0
        while index < sources.count {
            var end = index + 1
            while end < sources.count, sources[end] == sources[index] { end += 1 }
            for value in [sources[index], end - index] {
                withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { bytes += $0 }
            }
            index = end
        }
        return bytes
    }

    /// The sources of `packSources`; nil when the blob is not made of whole runs.
    static func unpackSources(_ blob: Data) -> [Int]? {
        guard blob.count % 8 == 0 else { return nil }
        var sources: [Int] = []
        blob.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: raw.count, by: 8) {
                let holder = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                let count = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                // No curve is longer than a year of seconds: a larger run is a damaged record, not one to make.
                guard count <= 31_622_400 - sources.count else { sources.removeAll(); return }
                sources += repeatElement(Int(holder), count: Int(count))
            }
        }
        return sources.isEmpty && !blob.isEmpty ? nil : sources
    }

    /// An envelope's holders: each ride's id and start, little-endian Int64.
    static func packHolders(_ holders: [CurveEnvelope.Holder]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(holders.count * 16)
        for holder in holders {
            withUnsafeBytes(of: holder.workoutId.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: holder.startMicroseconds.littleEndian) { bytes += $0 }
        }
        return bytes
    }

    /// The holders of `packHolders`; nil when the blob is not made of whole ones.
    static func unpackHolders(_ blob: Data) -> [CurveEnvelope.Holder]? {
        guard blob.count % 16 == 0 else { return nil }
        return blob.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count, by: 16).map { offset in
                let (id, start) = (
                    raw.loadUnaligned(fromByteOffset: offset, as: Int64.self),
                    raw.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self)
                )
                return CurveEnvelope.Holder(
                    workoutId: Int64(littleEndian: id), startMicroseconds: Int64(littleEndian: start))
            }
        }
    }
}
