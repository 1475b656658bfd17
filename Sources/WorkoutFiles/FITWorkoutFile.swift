import FIT
import Formats
import StructuredWorkouts

/// Garmin's FIT workout file (`file_id.type` 5): a `workout` message and its `workout_step`s (FIT profile 21).
///
/// Read: durations of time, distance and open (a heart-rate or power condition is ridden as open: the rider moves
/// on); repeat steps expanded in place, nested ones too; power targets of every averaging (`power`, TrainerRoad's
/// `power_lap`, Stages' `power_3s`, …) as custom low/high — up to 1000 a % of FTP, above it watts + 1000 — or a
/// zone (1–7, taken as the Coggan zone's share of FTP); cadence and heart rate as primary or secondary targets; a
/// step's notes as a message at its start. The declared step count is not trusted: the steps are counted.
///
/// Written: the same messages, and the description (`wkt_description`, its first 255 bytes). FIT has no ramp: a
/// ramp is written as the range it spans (as TrainerRoad writes its own); a maximal effort as an open target; one
/// message per step (the first); two targets per step, power then cadence then heart rate. A step's grade is not
/// written: FIT's `grade` target type has no unit or scale for its values in the profile. `losses` says in words
/// what a workout loses so.
public enum FITWorkoutFile {
    enum Message {
        static let workout: UInt16 = 26
        static let workoutStep: UInt16 = 27
    }

    enum StepField {
        static let name: UInt8 = 0
        static let durationType: UInt8 = 1
        static let durationValue: UInt8 = 2
        static let targetType: UInt8 = 3
        static let targetValue: UInt8 = 4
        static let customLow: UInt8 = 5
        static let customHigh: UInt8 = 6
        static let intensity: UInt8 = 7
        static let notes: UInt8 = 8
        static let secondaryTargetType: UInt8 = 19
        static let secondaryTargetValue: UInt8 = 20
        static let secondaryCustomLow: UInt8 = 21
        static let secondaryCustomHigh: UInt8 = 22
        static let messageIndex: UInt8 = 254
    }

    /// `wkt_step_target` values.
    enum Target {
        static let heartRate: Int64 = 1
        static let open: Int64 = 2
        static let cadence: Int64 = 3
        /// power, power_3s, power_10s, power_30s, power_lap: the same target, averaged differently.
        static let powers: Set<Int64> = [4, 7, 8, 9, 10]
    }

    /// The Coggan power zones as shares of FTP, in %: what a FIT power zone 1–7 is taken to mean.
    static let powerZones: [ClosedRange<Int>] = [0...55, 56...75, 76...90, 91...105, 106...120, 121...150, 151...200]

    public static func read(_ bytes: [UInt8]) throws(WorkoutReadError) -> StructuredWorkout {
        try WorkoutFormat.checkSize(bytes.count)
        // Each record is a step at least (a repeat adds more): the reading stops at the first record past the
        // most steps a workout has, before a file of a million steps is held.
        var messages: [FITMessage] = []
        var stepRecords = 0
        let tooMany =
            "more than \(StructuredWorkout.maximumSteps) steps: a workout has at most \(StructuredWorkout.maximumSteps)"
        do {
            try FITDecoder.forEachMessage(bytes) { (message) throws(FITError) in
                if message.global == Message.workoutStep {
                    stepRecords += 1
                    if stepRecords > StructuredWorkout.maximumSteps { throw FITError(offset: message.offset, tooMany) }
                }
                messages.append(message)
            }
        } catch {
            throw WorkoutReadError(error.reason == tooMany ? "the file" : "byte \(error.offset)", error.reason)
        }
        if let fileID = messages.first(where: { $0.global == FITMessageNumber.fileID }), let type = fileID.integers[0],
            type != 5
        {
            throw WorkoutReadError(
                "byte \(fileID.offset)",
                "the FIT file is of type \(type)\(type == 4 ? " (an activity)" : ""), not a workout (5)")
        }
        guard let workout = messages.first(where: { $0.global == Message.workout }) else {
            throw WorkoutReadError("the file", "has no workout message: it is not a FIT workout")
        }
        if let sport = workout.integers[4], ![0, 2, 10].contains(sport) {
            throw WorkoutReadError("byte \(workout.offset)", "the workout's sport is \(sport), not cycling (2)")
        }
        var records = messages.filter { $0.global == Message.workoutStep }
        guard !records.isEmpty else { throw WorkoutReadError("the file", "has a workout message but no steps") }
        if records.allSatisfy({ $0.integers[StepField.messageIndex] != nil }) {
            records.sort { $0.integers[StepField.messageIndex]! < $1.integers[StepField.messageIndex]! }
        }
        var steps: [WorkoutStep] = []
        // Where each FIT step's expansion starts in `steps`, for the repeats that go back to it.
        var starts: [Int] = []
        for (index, record) in records.enumerated() {
            starts.append(steps.count)
            let place = "step \(index) (byte \(record.offset))"
            let durationType = record.integers[StepField.durationType] ?? 5
            let durationValue = record.integers[StepField.durationValue]
            if (6...13).contains(durationType) {
                guard durationType == 6 else {
                    throw WorkoutReadError(
                        place,
                        "repeats until a time, distance, calorie, heart-rate or power "
                            + "condition (duration type \(durationType)); cyclelog repeats a count of times only")
                }
                guard let from = durationValue, from >= 0, Int(from) < index else {
                    throw WorkoutReadError(
                        place,
                        "repeats from step \(durationValue.map(String.init) ?? "none"), "
                            + "which is not an earlier step")
                }
                let times = record.integers[StepField.targetValue] ?? 1
                guard (1...1000).contains(times) else { throw WorkoutReadError(place, "repeats \(times) times") }
                let block = Array(steps[starts[Int(from)]...])
                guard steps.count + block.count * Int(times - 1) <= StructuredWorkout.maximumSteps else {
                    throw WorkoutReadError(place, "repeats to more than \(StructuredWorkout.maximumSteps) steps")
                }
                for _ in 1..<times { steps += block }
                continue
            }
            steps.append(try step(record, durationType: durationType, durationValue: durationValue, place: place))
        }
        let read = StructuredWorkout(
            name: workout.texts[8]?.withoutSurroundingWhitespace.nonEmpty ?? "Untitled workout", author: nil,
            description: workout.texts[17]?.withoutSurroundingWhitespace.nonEmpty, steps: steps)
        try read.checkLimits()
        return read
    }

    private static func step(
        _ record: FITMessage, durationType: Int64, durationValue: Int64?, place: String
    ) throws(WorkoutReadError) -> WorkoutStep {
        let length: WorkoutStep.Length
        switch durationType {
        case 0, 28, 31:
            guard let milliseconds = durationValue, milliseconds >= 500,
                milliseconds <= Int64(StructuredWorkout.maximumStepSeconds) * 1000
            else { throw WorkoutReadError(place, "a timed step without a time of 1 s to a day") }
            length = .seconds(Int((Double(milliseconds) / 1000).rounded()))
        case 1:
            guard let centimetres = durationValue, centimetres >= 50, centimetres <= 100_000_000 else {
                throw WorkoutReadError(place, "a distance step without a distance of 1 m to 1000 km")
            }
            length = .meters(Int((Double(centimetres) / 100).rounded()))
        case 2, 3, 5, 14, 15, 19...26:
            // Until a heart rate or a power, or until the rider says: the rider moves on (skip, or a lap).
            length = .open
        default:
            throw WorkoutReadError(
                place,
                "a step that lasts for calories, a TSS or repetitions (duration type "
                    + "\(durationType)) cannot be ridden here")
        }
        let intensity: WorkoutStep.Intensity =
            switch record.integers[StepField.intensity] ?? 0 {
            case 1, 4: .rest
            case 2: .warmup
            case 3: .cooldown
            default: .active
            }
        var step = WorkoutStep(intensity, length, .free)
        for (typeField, valueField, lowField, highField) in [
            (StepField.targetType, StepField.targetValue, StepField.customLow, StepField.customHigh),
            (
                StepField.secondaryTargetType, StepField.secondaryTargetValue, StepField.secondaryCustomLow,
                StepField.secondaryCustomHigh
            ),
        ] {
            guard let type = record.integers[typeField] else { continue }
            let zone = record.integers[valueField] ?? 0
            let low = record.integers[lowField] ?? 0, high = record.integers[highField] ?? 0
            let custom = low > 0 || high > 0
            if Target.powers.contains(type) {
                if custom {
                    let a = try level(low, place), b = try level(high, place)
                    step.power = a == b ? .steady(a) : .range(low: min(a, b), high: max(a, b))
                } else if (1...7).contains(zone) {
                    let shares = powerZones[Int(zone) - 1]
                    step.power = .range(
                        low: .percent(Double(shares.lowerBound)), high: .percent(Double(shares.upperBound)))
                }
            } else if type == Target.cadence, (1...250).contains(low), (1...250).contains(high), low <= high {
                step.cadence = Int(low)...Int(high)
            } else if type == Target.heartRate, (125...350).contains(low), (125...350).contains(high), low <= high {
                // Above 100: beats per minute + 100 (25–250 bpm); up to 100 it is a share of a maximum heart rate not
                // known here.
                step.heartRate = Int(low - 100)...Int(high - 100)
            }
        }
        step.name = record.texts[StepField.name]?.withoutSurroundingWhitespace.nonEmpty
        if let notes = record.texts[StepField.notes]?.withoutSurroundingWhitespace.nonEmpty {
            step.texts = [StepText(offsetSeconds: 0, notes)]
        }
        return step
    }

    /// A custom power value: up to 1000 a % of FTP, above it watts + 1000.
    private static func level(_ value: Int64, _ place: String) throws(WorkoutReadError) -> PowerLevel {
        guard value <= 1000 + 3000 else { throw WorkoutReadError(place, "a power of \(value) is beyond 3000 W") }
        return level(custom: UInt64(value))
    }

    /// A custom power value as a level: up to 1000 a % of FTP, above it watts + 1000 (what `custom` writes).
    static func level(custom value: UInt64) -> PowerLevel {
        value <= 1000
            ? PowerLevel(hundredths: Int(value) * 100, .ftp) : PowerLevel(hundredths: Int(value - 1000) * 100, .watts)
    }

    // MARK: - Writing

    /// The workout as a FIT workout file. `createdMicroseconds` is the file's creation time (file_id).
    public static func write(_ workout: StructuredWorkout, createdMicroseconds: Int64) -> [UInt8] {
        var encoder = FITEncoder()
        encoder.define(
            local: 0, global: FITMessageNumber.fileID,
            fields: [
                .init(0, .enumeration), .init(1, .uint16), .init(2, .uint16), .init(3, .uint32z), .init(4, .uint32),
            ])
        // Type 5 (workout), manufacturer 255 (development), product 0.
        encoder.write(
            local: 0,
            [
                .number(5), .number(255), .number(0), .number(1),
                .number(FITEncoder.timestamp(microseconds: createdMicroseconds)),
            ])
        encoder.define(
            local: 1, global: Message.workout,
            fields: [
                .init(4, .enumeration), .init(6, .uint16), .init(8, .string, size: 64),
                .init(17, .string, size: descriptionBytes),
            ])
        encoder.write(
            local: 1,
            [.number(2), .number(UInt64(workout.steps.count)), .text(workout.name), .text(workout.description ?? "")])
        encoder.define(
            local: 2, global: Message.workoutStep,
            fields: [
                .init(StepField.messageIndex, .uint16), .init(StepField.name, .string, size: 32),
                .init(StepField.durationType, .enumeration), .init(StepField.durationValue, .uint32),
                .init(StepField.targetType, .enumeration), .init(StepField.targetValue, .uint32),
                .init(StepField.customLow, .uint32), .init(StepField.customHigh, .uint32),
                .init(StepField.intensity, .enumeration), .init(StepField.notes, .string, size: 64),
                .init(StepField.secondaryTargetType, .enumeration), .init(StepField.secondaryTargetValue, .uint32),
                .init(StepField.secondaryCustomLow, .uint32), .init(StepField.secondaryCustomHigh, .uint32),
            ])
        for (index, step) in workout.steps.enumerated() {
            let (durationType, durationValue): (UInt64, UInt64?) =
                switch step.length {
                case .seconds(let seconds): (0, UInt64(seconds) * 1000)
                case .meters(let meters): (1, UInt64(meters) * 100)
                case .open: (5, nil)
                }
            let targets = Self.targets(step)
            let primary = targets.first ?? (Target.open.magnitude, nil, nil)
            let secondary = targets.dropFirst().first
            encoder.write(
                local: 2,
                [
                    .number(UInt64(index)), step.name.map { .text($0) } ?? .text(""),
                    .number(durationType), .number(durationValue),
                    .number(primary.type), .number(0), .number(primary.low), .number(primary.high),
                    .number(intensityValue(step.intensity)), step.texts.first.map { .text($0.text) } ?? .text(""),
                    .number(secondary?.type), .number(secondary == nil ? nil : 0), .number(secondary?.low),
                    .number(secondary?.high),
                ])
        }
        return encoder.file()
    }

    /// How many bytes of a description FIT's string field holds (its size is one byte; one for the NUL).
    static let descriptionBytes = 255

    /// A step's targets as FIT writes them, at most two: power, then cadence, then heart rate (custom values:
    /// power as `custom`, cadence in rpm, heart rate in bpm + 100).
    static func targets(_ step: WorkoutStep) -> [(type: UInt64, low: UInt64?, high: UInt64?)] {
        var targets: [(type: UInt64, low: UInt64?, high: UInt64?)] = []
        switch step.power {
        case .free, .maxEffort: break
        case .steady(let level): targets.append((4, custom(level), custom(level)))
        case .range(let a, let b), .ramp(let a, let b): targets.append((4, custom(min(a, b)), custom(max(a, b))))
        }
        if let cadence = step.cadence {
            targets.append((Target.cadence.magnitude, UInt64(cadence.lowerBound), UInt64(cadence.upperBound)))
        }
        if let heartRate = step.heartRate {
            targets.append(
                (Target.heartRate.magnitude, UInt64(heartRate.lowerBound + 100), UInt64(heartRate.upperBound + 100)))
        }
        return Array(targets.prefix(2))
    }

    /// What writing `workout` as a FIT workout leaves out or changes, in words; empty when it keeps all of it.
    public static func losses(_ workout: StructuredWorkout) -> [String] {
        func count(_ what: String, _ test: (WorkoutStep) -> Bool) -> String? {
            WorkoutFormat.loss(what, workout.steps, test)
        }
        return [
            workout.author.map { _ in "the author (FIT has no field for one)" },
            (workout.description?.utf8.count ?? 0) >= descriptionBytes
                ? "the description past its first \(descriptionBytes - 1) bytes" : nil,
            workout.name.utf8.count >= 64 ? "the name past its first 63 bytes" : nil,
            count("ramps, written as the range they span (FIT has no ramp)") {
                if case .ramp = $0.power { return true }
                return false
            },
            count("maximal efforts, written as open targets") { $0.power == .maxEffort },
            count("levels to whole percent or watts") { step in
                switch step.power {
                case .free, .maxEffort: false
                case .steady(let level): level.hundredths % 100 != 0
                case .range(let a, let b), .ramp(let a, let b): a.hundredths % 100 != 0 || b.hundredths % 100 != 0
                }
            },
            count("heart-rate targets beside a power and a cadence target (FIT holds two a step)") {
                $0.heartRate != nil && $0.cadence != nil && $0.power.hasLevels
            },
            count("grades (FIT's grade target has no unit or scale)") { $0.gradeHundredths != nil },
            count("which steps a test scores") { $0.scored },
            count("messages after a step's first, and the first's time into the step") {
                $0.texts.count > 1 || ($0.texts.first?.offsetSeconds ?? 0) > 0
            },
            count("step names past 31 bytes") { ($0.name?.utf8.count ?? 0) >= 32 },
        ].compactMap { $0 }
    }

    /// A level as FIT's custom power: a whole % of FTP, or watts + 1000.
    static func custom(_ level: PowerLevel) -> UInt64 {
        let whole = UInt64((Double(level.hundredths) / 100).rounded())
        return level.unit == .ftp ? min(whole, 1000) : whole + 1000
    }

    /// What a FIT string field of `size` bytes keeps of a text: whole characters, room for the NUL.
    static func fitText(_ text: String, size: Int) -> String {
        var kept = ""
        var bytes = 0
        for character in text {
            let count = String(character).utf8.count
            guard bytes + count < size else { break }
            kept.append(character)
            bytes += count
        }
        return kept
    }

    static func intensityValue(_ intensity: WorkoutStep.Intensity) -> UInt64 {
        switch intensity {
        case .active: 0
        case .rest: 1
        case .warmup: 2
        case .cooldown: 3
        }
    }

    /// The workout as FIT would carry it: what `read(write(w))` gives, to compare a round trip with.
    public static func asWritten(_ workout: StructuredWorkout) -> StructuredWorkout {
        var copy = workout
        copy.author = nil
        copy.description = workout.description.flatMap {
            fitText($0, size: descriptionBytes).withoutSurroundingWhitespace.nonEmpty
        }
        copy.name = fitText(workout.name, size: 64)
        for index in copy.steps.indices {
            var step = copy.steps[index]
            func rounded(_ level: PowerLevel) -> PowerLevel { Self.level(custom: custom(level)) }
            switch step.power {
            case .free, .maxEffort: step.power = .free
            case .steady(let level): step.power = .steady(rounded(level))
            case .range(let a, let b), .ramp(let a, let b):
                let low = rounded(min(a, b)), high = rounded(max(a, b))
                step.power = low == high ? .steady(low) : .range(low: low, high: high)
            }
            // Two targets a step: power, cadence, heart rate.
            if step.heartRate != nil, step.cadence != nil, step.power.hasLevels { step.heartRate = nil }
            step.gradeHundredths = nil
            step.scored = false
            step.name = step.name.flatMap { fitText($0, size: 32).withoutSurroundingWhitespace.nonEmpty }
            step.texts =
                step.texts.first.flatMap { fitText($0.text, size: 64).withoutSurroundingWhitespace.nonEmpty }
                .map { [StepText(offsetSeconds: 0, $0)] } ?? []
            copy.steps[index] = step
        }
        return copy
    }
}
