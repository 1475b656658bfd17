import FIT
import Workouts

/// A ride read from a bike computer's FIT activity file, ready to be stored like a recorded one.
public struct ImportedActivity: Sendable {
    /// The 1 Hz series from the file's records, pauses from its timer events, laps, and the device's totals.
    public var workout: Workout
    /// What identifies the recording in every copy of the file: file_id's manufacturer, product, serial number
    /// and creation time (nil when the file has no file_id to go by).
    public var fileIdentity: String?
    /// What the file holds that could not be used, in words (the ride is imported without it).
    public var notes: [String]
    /// The session of a multisport file this ride is (1 for the first session), nil for a whole file.
    public var sessionNumber: Int?
}

/// Turns the messages of a FIT activity into a workout. Records become 1 Hz samples at their own second (a record
/// holds for up to `holdSeconds`, as a notification does; later seconds without one are gaps); the timer's start
/// and stop events become start, pause, resume and end; lap messages become laps; the session's elapsed and
/// timer time, distance and work are kept as the device wrote them.
public enum FITActivityReader {
    /// Global message numbers (FITMessageNumber), field numbers and enum values of the FIT profile (21.x) read here.
    typealias Message = FITMessageNumber
    enum Field {
        static let fileType: UInt8 = 0
        static let manufacturer: UInt8 = 1
        static let product: UInt8 = 2
        static let serialNumber: UInt8 = 3
        static let timeCreated: UInt8 = 4
        // record
        static let heartRate: UInt8 = 3
        static let cadence: UInt8 = 4
        static let distance: UInt8 = 5
        static let speed: UInt8 = 6
        static let power: UInt8 = 7
        static let fractionalCadence: UInt8 = 53
        static let enhancedSpeed: UInt8 = 73
        // event
        static let event: UInt8 = 0
        static let eventType: UInt8 = 1
        // session and lap
        static let startTime: UInt8 = 2
        static let sport: UInt8 = 5
        static let subSport: UInt8 = 6
        static let totalElapsedTime: UInt8 = 7
        static let totalTimerTime: UInt8 = 8
        static let totalDistance: UInt8 = 9
        static let sessionTotalWork: UInt8 = 48
        static let lapTotalWork: UInt8 = 41
    }
    static let activityFileType: Int64 = 4
    static let timerEvent: Int64 = 0
    /// event_type start; stop, stop_all, stop_disable and stop_disable_all all stop the timer.
    static let startEventType: Int64 = 0
    static let stopEventTypes: Set<Int64> = [1, 4, 8, 9]
    static let cyclingSport: Int64 = 2
    static let indoorCyclingSubSport: Int64 = 6
    /// sport values that are not rides, named for the refusal.
    static let otherSports: [Int64: String] = [
        1: "running", 5: "swimming", 11: "walking", 12: "cross-country skiing", 13: "alpine skiing",
        15: "rowing", 16: "mountaineering", 17: "hiking", 18: "multisport", 19: "paddling", 3: "transition",
        6: "basketball", 7: "soccer", 8: "tennis", 9: "American football", 14: "snowboarding", 20: "flying",
        22: "motorcycling", 23: "boating", 24: "driving",
    ]
    /// The longest ride accepted (a week): longer spans come from a broken clock.
    public static let longestRideSeconds: Int64 = 7 * 86_400
    /// A record's values hold this long when the next record is late (smart recording writes on change only).
    public static let holdSeconds: Int64 = 3

    /// The rides in a FIT activity: the whole file, or each cycling session of a multisport file (its other
    /// sessions are named in the notes and skipped).
    public static func read(_ bytes: [UInt8]) throws(FITError) -> [ImportedActivity] {
        var fileID: FITMessage?
        var sessions: [FITMessage] = []
        var laps: [FITMessage] = []
        var records: [Record] = []
        var timer: [(second: Int64, running: Bool)] = []
        var notes: [String] = []
        // Where the first record timed from power-on is: said once the whole file has been found sound, so that a
        // damaged file is refused for its damage.
        var powerOnTimed: Int?
        try FITDecoder.forEachMessage(bytes) { message in
            switch message.global {
            case Message.fileID where fileID == nil: fileID = message
            case Message.session: sessions.append(message)
            case Message.lap: laps.append(message)
            case Message.record:
                guard let time = message.timestamp else {
                    notes.append("a record without a time (byte \(message.offset)) was left out")
                    return
                }
                guard time >= FITTime.minimumAbsolute else {
                    powerOnTimed = powerOnTimed ?? message.offset
                    return
                }
                records.append(Record(second: time, message))
            case Message.event where message.integers[Field.event] == timerEvent:
                guard let time = message.timestamp, let type = message.integers[Field.eventType] else { return }
                if type == startEventType {
                    timer.append((time, true))
                } else if stopEventTypes.contains(type) {
                    timer.append((time, false))
                }
            default: return
            }
        }
        if let powerOnTimed {
            throw FITError(
                offset: powerOnTimed,
                "has records timed from the device's power-on rather than by the clock, so the ride's date is unknown")
        }
        if let fileID, let type = fileID.integers[Field.fileType], type != activityFileType {
            throw FITError(
                offset: fileID.offset,
                type == 5
                    ? "is a FIT workout (a plan of steps, type 5), not a ride: `cyclelog workouts import` adds it to the "
                        + "workout library"
                    : "is a FIT file of type \(type), not an activity (type 4)")
        }
        let others = sessions.compactMap { session in
            session.integers[Field.sport].flatMap { otherSports[$0] }.map { (session, $0) }
        }
        if !sessions.isEmpty && others.count == sessions.count {
            let names = Array(Set(others.map(\.1))).sorted()
            throw FITError(
                offset: others[0].0.offset,
                names.count == 1
                    ? "is a \(names[0]) activity, not a ride"
                    : "holds \(names.joined(separator: " and ")) sessions and no ride")
        }
        guard !records.isEmpty else {
            throw FITError(offset: bytes.count, "holds no records: there is no ride in it to import")
        }
        let identity = identity(fileID)
        guard !others.isEmpty else {
            let ride = try activity(
                records: records, timer: timer, sessions: sessions, laps: laps, offset: bytes.count)
            return [
                ImportedActivity(
                    workout: ride.workout, fileIdentity: identity,
                    notes: notes + ride.notes
                        + (sessions.count > 1 ? ["its \(sessions.count) sessions are imported as one ride"] : []))
            ]
        }
        // A multisport file: each cycling session is a ride of its own, made of what lies within its times.
        var rides: [ImportedActivity] = []
        for (number, session) in sessions.enumerated() {
            if let sport = session.integers[Field.sport], let name = otherSports[sport] {
                notes.append("its session \(number + 1) (\(name)) is not a ride and was skipped")
                continue
            }
            guard let start = session.integers[Field.startTime],
                let elapsed = session.scaled(Field.totalElapsedTime, 1000)
            else {
                notes.append("its session \(number + 1) has no start or length and was skipped")
                continue
            }
            let window = start...(start + Int64(elapsed.rounded(.up)))
            let inside = records.filter { window.contains($0.second) }
            guard !inside.isEmpty else {
                notes.append("its session \(number + 1) holds no records and was skipped")
                continue
            }
            // The timer runs on through a multisport file's transitions: a session starts in the state the last
            // timer event before it left (a Garmin starts the timer once, at the swim).
            var sessionTimer = timer.filter { window.contains($0.second) }
            if let before = timer.filter({ $0.second < start }).max(by: { $0.second < $1.second }) {
                sessionTimer.insert((start, before.running), at: 0)
            }
            let ride = try activity(
                records: inside, timer: sessionTimer, sessions: [session],
                laps: laps.filter { $0.integers[Field.startTime].map(window.contains) ?? false },
                offset: session.offset)
            rides.append(
                ImportedActivity(
                    workout: ride.workout, fileIdentity: identity.map { "\($0)#\(number + 1)" },
                    notes: ride.notes, sessionNumber: number + 1))
        }
        guard !rides.isEmpty else {
            throw FITError(offset: bytes.count, "holds no cycling session with records")
        }
        rides[0].notes = notes + rides[0].notes
        return rides
    }

    /// A record's time, where it starts in the file, and the values a ride takes from it.
    struct Record {
        var second: Int64
        var offset: Int
        var powerWatts: Double?
        var cadenceRPM: Double?
        var speedMetersPerSecond: Double?
        var heartRateBPM: Double?
        /// Cumulative from the start of the activity.
        var distanceMeters: Double?

        init(second: Int64, _ message: FITMessage) {
            self.second = second
            offset = message.offset
            powerWatts = message.scaled(Field.power, 1)
            cadenceRPM = message.scaled(Field.cadence, 1).map {
                $0 + (message.scaled(Field.fractionalCadence, 128) ?? 0)
            }
            speedMetersPerSecond = message.scaled(Field.enhancedSpeed, 1000) ?? message.scaled(Field.speed, 1000)
            heartRateBPM = message.scaled(Field.heartRate, 1)
            distanceMeters = message.scaled(Field.distance, 100)
        }
    }

    /// One ride from its records (in the file's order), timer events, sessions and laps.
    static func activity(
        records fileOrder: [Record], timer unsorted: [(second: Int64, running: Bool)],
        sessions: [FITMessage], laps: [FITMessage], offset: Int
    ) throws(FITError) -> (workout: Workout, notes: [String]) {
        // The time-jump rule on the records' times, in the order the device wrote them (RideTimeline).
        let microseconds = fileOrder.map { FITTime.unixMicroseconds($0.second) }
        let repaired = RideTimeline.repair(times: microseconds)
        var notes = repaired.faults.map {
            "the record at byte \(fileOrder[$0.eventIndex].offset) is \($0.message)"
        }
        let joined = repaired.faults.contains { $0.message.hasPrefix("the clock leapt") }
        var records = zip(repaired.indices, repaired.times).map { index, time in
            var record = fileOrder[index]
            record.second += (time - microseconds[index]) / 1_000_000
            return record
        }
        guard let firstRecord = records.first?.second, let lastRecord = records.last?.second else {
            throw FITError(offset: offset, "holds no records in time order")
        }
        records.sort { $0.second < $1.second }
        // Timer events and session starts far from the records belong to a clock fault; after a joined jump the
        // timer's times no longer fit the records' and the ride is taken as running throughout.
        let gap = RideTimeline.longestGapMicroseconds / 1_000_000
        let near = (firstRecord - gap)...(lastRecord + gap)
        let timer = joined ? [] : unsorted.filter { near.contains($0.second) }.sorted { $0.second < $1.second }
        if joined { notes.append("its timer events were not used: the clock jumped during the ride") }

        // The ride runs from the first of its start times to the timer's last stop (records after it are off the
        // timer), or to the end of the last record's second when the timer never stopped.
        let starts =
            sessions.compactMap { $0.integers[Field.startTime] } + [firstRecord] + timer.prefix(1).map(\.second)
        let startSecond =
            starts.filter { $0 >= FITTime.minimumAbsolute && near.contains($0) && $0 <= firstRecord }
            .min() ?? firstRecord
        var endSecond = lastRecord + 1
        if let last = timer.last, !last.running, last.second > startSecond { endSecond = last.second }
        endSecond = max(endSecond, startSecond + 1)
        // One sample per second is allocated: after the time-jump rule a span this long is many long gaps.
        guard endSecond - startSecond <= longestRideSeconds else {
            throw FITError(
                offset: records.last?.offset ?? offset,
                "spans \((endSecond - startSecond) / 86_400) days from its first time to its last: its times "
                    + "cannot all be right")
        }
        var samples = secondSamples(records, timer: timer, startSecond: startSecond, endSecond: endSecond)
        let rejected = Plausibility.clean(&samples)
        let plan = WorkoutPlan(location: location(sessions))
        let events = workoutEvents(timer: timer, startSecond: startSecond, endSecond: endSecond, plan: plan)

        let lapList = laps.compactMap { lap in lap.integers[Field.startTime].map { (start: $0, message: lap) } }
            .sorted { $0.start < $1.start }
        let lapStarts = lapList.dropFirst().map { FITTime.unixMicroseconds($0.start) }
        var workout = Workout(
            plan: plan, state: .ended, startMicroseconds: FITTime.unixMicroseconds(startSecond),
            endMicroseconds: FITTime.unixMicroseconds(endSecond), samples: samples, lapStarts: lapStarts,
            events: (events + lapStarts.map { WorkoutEvent(timeMicroseconds: $0, control: .lap) }).sorted {
                $0.timeMicroseconds < $1.timeMicroseconds
            }, dropouts: [], sensors: [], rejectedSeconds: rejected)
        if !sessions.isEmpty {
            var recorded = totals(sessions, work: Field.sessionTotalWork)
            let span = Double(endSecond - startSecond)
            if !repaired.faults.isEmpty, let elapsed = recorded.elapsedSeconds, elapsed > span + 60 {
                // The device measured its elapsed time across its own clock fault.
                recorded.elapsedSeconds = nil
                recorded.corrections.append(
                    "the device's elapsed time \(RecordedTotals.seconds(elapsed)) spans a clock fault; the ride's own "
                        + "\(RecordedTotals.seconds(span)) is shown")
            }
            decideContradiction(&recorded, spanSeconds: span)
            workout.recordedTotals = recorded
        }
        workout.recordedLapTotals = lapList.map { totals([$0.message], work: Field.lapTotalWork) }
        return (workout, notes)
    }

    /// A timer cannot run longer than the ride it times: when the device's timer time exceeds its elapsed time, one
    /// of the two is wrong, and the records' own span decides which. The one further from it is set aside (the
    /// ride's own figure is shown in its place) with a correction that says so. (GoldenCheetah's
    /// test_rides_14582164182.fit: elapsed 27:12, timer 46:00, records over 46:00; sports-lib's inverted-times.fit:
    /// elapsed 47:20, timer and records about 6 h.)
    static func decideContradiction(_ recorded: inout RecordedTotals, spanSeconds span: Double) {
        guard let elapsed = recorded.elapsedSeconds, let timer = recorded.timerSeconds, timer > elapsed + 0.5 else {
            return
        }
        let (seconds, shown) = (RecordedTotals.seconds, RecordedTotals.seconds(span))
        if abs(timer - span) < abs(elapsed - span) {
            recorded.elapsedSeconds = nil
            recorded.corrections.append(
                "the device's elapsed time \(seconds(elapsed)) is shorter than its timer time \(seconds(timer)); its "
                    + "records span \(shown), which is shown as the elapsed time")
        } else {
            recorded.timerSeconds = nil
            recorded.corrections.append(
                "the device's timer time \(seconds(timer)) is longer than its elapsed time \(seconds(elapsed)), "
                    + "which its records' span \(shown) bears out; moving time is taken from its timer events")
        }
    }

    /// One sample per second from `startSecond` to `endSecond`, on the timer where the timer ran.
    static func secondSamples(
        _ records: [Record], timer: [(second: Int64, running: Bool)], startSecond: Int64, endSecond: Int64
    ) -> [SecondSample] {
        var samples = (0..<Int(endSecond - startSecond)).map { SecondSample(second: $0, runningFraction: 0) }
        // Before its first event the timer is in the opposite state; a file without timer events ran throughout.
        var running = timer.first.map { !$0.running } ?? true
        var nextEvent = 0
        for index in samples.indices {
            let second = startSecond + Int64(index)
            while nextEvent < timer.count && timer[nextEvent].second <= second {
                running = timer[nextEvent].running
                nextEvent += 1
            }
            samples[index].runningFraction = running ? 1 : 0
        }
        var previousDistance = 0.0
        for (position, record) in records.enumerated() {
            let index = Int(record.second - startSecond)
            guard index < samples.count else { break }
            let nextTime = position + 1 < records.count ? records[position + 1].second : endSecond
            let heldUntil = Int(min(nextTime, record.second + holdSeconds) - startSecond)
            for held in index..<min(max(index + 1, heldUntil), samples.count) {
                samples[held].powerWatts = record.powerWatts
                samples[held].cadenceRPM = record.cadenceRPM
                samples[held].speedMetersPerSecond = record.speedMetersPerSecond
                samples[held].heartRateBPM = record.heartRateBPM
            }
            // A second on the timer gets the distance added since the record before it.
            if let distance = record.distanceMeters {
                if samples[index].isRunning { samples[index].distanceMeters += max(0, distance - previousDistance) }
                previousDistance = distance
            }
        }
        return samples
    }

    /// start, pause and resume at the timer's transitions; the last stop is the end.
    static func workoutEvents(
        timer: [(second: Int64, running: Bool)], startSecond: Int64, endSecond: Int64, plan: WorkoutPlan
    ) -> [WorkoutEvent] {
        var events = [
            WorkoutEvent(
                timeMicroseconds: FITTime.unixMicroseconds(startSecond),
                control: .start(plan))
        ]
        var running = true
        for transition in timer where transition.second > startSecond && transition.running != running {
            running = transition.running
            events.append(
                WorkoutEvent(
                    timeMicroseconds: FITTime.unixMicroseconds(transition.second),
                    control: running ? .resume : .pause))
        }
        // The timer's last stop is the end of the ride, not a pause.
        if let last = events.last, last.control == .pause { events.removeLast() }
        events.append(WorkoutEvent(timeMicroseconds: FITTime.unixMicroseconds(endSecond), control: .end))
        return events
    }

    static func location(_ sessions: [FITMessage]) -> WorkoutLocation? {
        guard let subSport = sessions.first?.integers[Field.subSport] else { return nil }
        return subSport == indoorCyclingSubSport ? .indoor : nil
    }

    /// The device's totals summed over the given session or lap messages.
    static func totals(_ messages: [FITMessage], work field: UInt8) -> RecordedTotals {
        func sum(_ field: UInt8, _ scale: Double) -> Double? {
            let values = messages.compactMap { $0.scaled(field, scale) }
            return values.isEmpty ? nil : values.reduce(0, +)
        }
        return RecordedTotals(
            elapsedSeconds: sum(Field.totalElapsedTime, 1000), timerSeconds: sum(Field.totalTimerTime, 1000),
            distanceMeters: sum(Field.totalDistance, 100), workJoules: sum(field, 1))
    }

    static func identity(_ fileID: FITMessage?) -> String? {
        guard let fileID, let created = fileID.integers[Field.timeCreated] else { return nil }
        let parts = [Field.manufacturer, Field.product, Field.serialNumber].map {
            fileID.integers[$0].map(String.init) ?? "-"
        }
        return "fit:" + (parts + [String(created)]).joined(separator: "/")
    }
}
