import Formats
import StructuredWorkouts
import Workouts

/// The cyclelog journal: a text format of our own, one event per line, append-only and diffable. A live ride
/// writes it as it happens; replaying it rebuilds that ride exactly. Docs/reference/journal.md documents the grammar:
///
///     # cyclelog journal 1
///     2024-05-01T08:00:00.000000Z connect C0:11:22:33:44:55 Stages Power L
///     2024-05-01T08:00:00.100000Z read C0:11:22:33:44:55 2a19 5f
///     2024-05-01T08:00:00.200000Z wheel C0:11:22:33:44:55 2105
///     2024-05-01T08:00:00.200000Z wheel * 2096
///     2024-05-01T08:00:00.200000Z auto-pause below=1.0 after=5
///     2024-05-01T08:00:01.000000Z start preset=endurance-1h goal=45m indoor sync=6F1C… name=Tuesday intervals
///     2024-05-01T08:00:01.510000Z notify C0:11:22:33:44:55 2a63 2000fa002a000040
///     2024-05-01T08:10:00.000000Z pause
///     2024-05-01T08:10:00.000000Z marker text of the marker
///     2024-05-01T08:12:00.000000Z intake water 250ml
///     2024-05-01T08:30:00.000000Z disconnect C0:11:22:33:44:55
///
/// Free text (names, marker text) runs to the end of the line with `\\`, `\n` and `\r` escaped.
public enum Journal {
    public static let header = "# cyclelog journal 1"
    /// The `hub-holder` line's word for the trainer given back to the rider (an app's address never reads so).
    static let riderHolds = "rider"

    /// One event as one line (without the newline).
    public static func line(_ event: RideEvent) -> String {
        var line: [UInt8] = []
        write(event, into: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// One event's line (without the newline) appended as UTF-8. A ride's digests are made of a line per event,
    /// 100 000 of them for four hours, so the common lines (notifications, reads) are written without a String.
    public static func write(_ event: RideEvent, into output: inout [UInt8]) {
        var times = UTCTime.Writer()
        write(event, into: &output, times: &times)
    }

    /// The same, for events written in order: `times` keeps the last second's text.
    public static func write(_ event: RideEvent, into output: inout [UInt8], times: inout UTCTime.Writer) {
        times.write(microseconds: event.timeMicroseconds, into: &output)
        switch event.kind {
        case .notification(let sensor, let characteristic, let value):
            writeValue(" notify ", sensor, characteristic, value, into: &output)
        case .read(let sensor, let characteristic, let value):
            writeValue(" read ", sensor, characteristic, value, into: &output)
        case .write(let sensor, let characteristic, let value):
            writeValue(" write ", sensor, characteristic, value, into: &output)
        case .connected(let sensor, let name):
            output += " connect \(sensor)".utf8
            if let name { output += " \(escaped(name))".utf8 }
        case .disconnected(let sensor):
            output += " disconnect \(sensor)".utf8
        case .hub(.written(let app, let characteristic, let value)):
            writeValue(" hub-write ", app, characteristic, value, into: &output)
        case .hub(.sent(let characteristic, let value)):
            writeValue(" hub-send", "", characteristic, value, into: &output)
        case .hub(.holder(let app, let name)):
            output += " hub-holder \(app ?? Self.riderHolds)".utf8
            if let name { output += " \(escaped(name))".utf8 }
        case .wheelCircumference(let sensor, let millimetres):
            output += " wheel \(sensor) \(millimetres)".utf8
        case .setting(.defaultWheelCircumference(let millimetres)):
            output += " wheel * \(millimetres)".utf8
        case .setting(.autoPause(let autoPause)):
            output += " auto-pause below=\(autoPause.belowSpeedMetersPerSecond) after=\(autoPause.afterSeconds)".utf8
        case .setting(.trainerTarget(let target)):
            switch target {
            case .erg(let watts): output += " trainer erg \(watts)".utf8
            case .simulation(let hundredths): output += " trainer sim \(TrainerWords.grade(hundredths))".utf8
            case .resistance(let percent): output += " trainer resistance \(percent)".utf8
            case .free: output += " trainer free".utf8
            }
        case .setting(.workout(let planned)):
            // The whole workout on one line, so that a ride replays with its plan where the library lacks it.
            let ftp = planned.ftpWatts.map(String.init) ?? "none"
            output += " workout ftp=\(ftp) \(escaped(WorkoutText.text(planned.workout)))".utf8
        case .setting(.player(let control)):
            output += " player \(control.words)".utf8
        case .control(let control):
            switch control {
            case .start(let plan):
                var words = [" start"]
                if let preset = plan.preset { words.append("preset=\(preset)") }
                if let goal = plan.goal { words.append("goal=\(goal)") }
                if let location = plan.location { words.append(location.rawValue) }
                if let sync = plan.syncIdentifier { words.append("sync=\(sync)") }
                if let test = plan.fitnessTest { words.append("test=\(test.rawValue)") }
                if let name = plan.name { words.append("name=" + escaped(name)) }
                output += words.joined(separator: " ").utf8
            case .marker(let text):
                output += " marker \(escaped(text))".utf8
            case .intake(let intake):
                output += " intake \(intake)".utf8
            case .undo(let undone):
                output += " undo ".utf8
                UTCTime.write(microseconds: undone.timeMicroseconds, into: &output)
                output += " \(undone.verb)".utf8
            default:
                output += " \(control.name)".utf8
            }
        }
    }

    /// ` notify SENSOR UUID HEX` (or ` read …`) of a notification or a read: made in a buffer of its own and
    /// appended at once, where appending octet by octet checked the list's room and ownership 70 times a line.
    private static func writeValue(
        _ verb: StaticString, _ sensor: String, _ characteristic: UInt16, _ value: [UInt8],
        into output: inout [UInt8]
    ) {
        var sensor = sensor
        sensor.withUTF8 { address in
            let length = verb.utf8CodeUnitCount + address.count + 6 + 2 * value.count
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { line in
                let digits: StaticString = "0123456789abcdef"
                let hex = digits.utf8Start
                var at = 0
                for byte in UnsafeBufferPointer(start: verb.utf8Start, count: verb.utf8CodeUnitCount) {
                    line[at] = byte
                    at += 1
                }
                for byte in address {
                    line[at] = byte
                    at += 1
                }
                line[at] = UInt8(ascii: " ")
                for shift in stride(from: 12, through: 0, by: -4) {
                    line[at + 1 + (12 - shift) / 4] = hex[Int(characteristic >> UInt16(shift) & 0xF)]
                }
                line[at + 5] = UInt8(ascii: " ")
                at += 6
                for byte in value {
                    line[at] = hex[Int(byte >> 4)]
                    line[at + 1] = hex[Int(byte & 0x0F)]
                    at += 2
                }
                output.append(contentsOf: line)
            }
        }
    }

    /// The whole journal of a list of events, header first, one line each.
    public static func text(_ events: [RideEvent]) -> String {
        // One buffer for every line, and the date and time of day worked out once per second, as the digests write
        // them: a String and a date per line made this half of what a sync's push does itself.
        var output = Array((header + "\n").utf8)
        output.reserveCapacity(events.count * 48)
        var times = UTCTime.Writer()
        for event in events {
            write(event, into: &output, times: &times)
            output.append(UInt8(ascii: "\n"))
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Reads a journal. Lines that cannot be read are reported with their line number and skipped; the others
    /// are still used.
    public static func read(_ text: String) -> (events: [RideEvent], lines: [Int], problems: [CaptureProblem]) {
        var text = text
        return text.withUTF8 { read(utf8: $0) }
    }

    /// The same, of the text's UTF-8 bytes. Lines end at each newline byte, not at each newline character: "\r\n"
    /// is one character, so a journal saved with Windows line ends would otherwise be one line; and a line's end is
    /// found and a plain GATT line read from the bytes where they are, a journal being megabytes of lines (a
    /// Substring per line, as `split` makes them, was a quarter of what a pulled ride's rebuilding did).
    static func read(utf8 text: UnsafeBufferPointer<UInt8>) -> (
        events: [RideEvent], lines: [Int], problems: [CaptureProblem]
    ) {
        var events: [RideEvent] = []
        var lines: [Int] = []
        var problems: [CaptureProblem] = []
        var lineNumber = 0
        var sensors = SensorNames()
        var start = 0
        while start <= text.count {
            var end = start
            while end < text.count && text[end] != UInt8(ascii: "\n") { end += 1 }
            defer { start = end + 1 }
            lineNumber += 1
            let line = UnsafeBufferPointer(
                rebasing: text[start..<(end > start && text[end - 1] == UInt8(ascii: "\r") ? end - 1 : end)])
            if line.isEmpty || line[0] == UInt8(ascii: "#") { continue }
            do {
                events.append(try event(utf8: line, sensors: &sensors))
                lines.append(lineNumber)
            } catch {
                if let kept = error.kept {
                    events.append(kept)
                    lines.append(lineNumber)
                }
                // A bad line may be megabytes long: its message quotes at most a part of it.
                problems.append(CaptureProblem(record: lineNumber, message: ShownText.cut(error.message, to: 300)))
            }
        }
        return (events, lines, problems)
    }

    /// Why a journal line could not be read.
    public struct LineError: Error, CustomStringConvertible {
        public var message: String
        /// What of the line is still used despite the problem (a start whose goal cannot be read).
        public var kept: RideEvent?
        public var description: String { message }

        init(message: String, kept: RideEvent? = nil) {
            self.message = message
            self.kept = kept
        }
    }

    /// Parses one non-comment line: a plain GATT line from its bytes (`gattEvent`), any other by words
    /// (`anyEvent`).
    public static func event(_ line: Substring) throws(LineError) -> RideEvent {
        var sensors = SensorNames()
        if let event = line.utf8.withContiguousStorageIfAvailable({ gattEvent($0, sensors: &sensors) }) ?? nil {
            return event
        }
        return try anyEvent(line)
    }

    /// The same, of a line's UTF-8 bytes (valid UTF-8: a String's), the sensors' names of the lines read before
    /// kept in `sensors`.
    static func event(utf8 line: UnsafeBufferPointer<UInt8>, sensors: inout SensorNames) throws(LineError)
        -> RideEvent
    {
        if let event = gattEvent(line, sensors: &sensors) { return event }
        return try anyEvent(Substring(decoding: line, as: UTF8.self))
    }

    /// The sensors' names a journal's lines repeat, made into a String once each (an address is too long for a
    /// String kept inline, so each line would allocate one).
    struct SensorNames {
        /// Each name with its bytes, which are compared as they are (a String's UTF8View compares a byte at a time
        /// through its index).
        private var names: [(bytes: [UInt8], name: String)] = []

        mutating func name(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
            for known in names where known.bytes.withUnsafeBufferPointer({ $0.elementsEqual(bytes) }) {
                return known.name
            }
            let name = String(decoding: bytes, as: UTF8.self)
            if names.count < 16 { names.append((Array(bytes), name)) }
            return name
        }
    }

    /// The lines that are nearly all of a journal — `notify`, `read` and `write` of a sensor named in printable
    /// ASCII, a characteristic of one to four hex digits and the value's hex bytes — read from their UTF-8 bytes as
    /// they are, without splitting them into words. Any other line, or one of those written otherwise, is nil: it is
    /// read by `anyEvent`, which says what is wrong with it. Both read every line this one reads alike (JournalTests).
    static func gattEvent(_ bytes: UnsafeBufferPointer<UInt8>, sensors: inout SensorNames) -> RideEvent? {
        let space = UInt8(ascii: " ")
        // The ends of the time, the verb, the sensor and the characteristic: each up to the next space.
        func word(from start: Int) -> Range<Int> {
            var end = start
            while end < bytes.count && bytes[end] != space { end += 1 }
            return start..<end
        }
        let time = word(from: 0)
        guard time.upperBound < bytes.count,
            let microseconds = UTCTime.parse(bytes: UnsafeBufferPointer(rebasing: bytes[time]))
        else { return nil }
        let verb = word(from: time.upperBound + 1)
        guard verb.upperBound < bytes.count else { return nil }
        let sensor = word(from: verb.upperBound + 1)
        guard !sensor.isEmpty, sensor.upperBound < bytes.count,
            bytes[sensor].allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        let characteristic = word(from: sensor.upperBound + 1)
        guard (1...4).contains(characteristic.count) else { return nil }
        var uuid: UInt16 = 0
        for byte in bytes[characteristic] {
            guard let nibble = hexDigit(byte) else { return nil }
            uuid = uuid << 4 | UInt16(nibble)
        }
        let valueStart = min(characteristic.upperBound + 1, bytes.count)
        guard let value = parseHex(utf8: bytes[valueStart...]) else { return nil }
        let name = sensors.name(UnsafeBufferPointer(rebasing: bytes[sensor]))
        let verbBytes = bytes[verb]
        let kind: RideEvent.Kind
        if verbBytes.elementsEqual("notify".utf8) {
            kind = .notification(sensor: name, characteristic: uuid, value: value)
        } else if verbBytes.elementsEqual("read".utf8) {
            kind = .read(sensor: name, characteristic: uuid, value: value)
        } else if verbBytes.elementsEqual("write".utf8) {
            kind = .write(sensor: name, characteristic: uuid, value: value)
        } else {
            return nil
        }
        return RideEvent(timeMicroseconds: microseconds, kind)
    }

    /// Parses one non-comment line, whatever it is.
    static func anyEvent(_ line: Substring) throws(LineError) -> RideEvent {
        // Split on the space scalar, not on characters: a name that starts with a combining accent would otherwise
        // join the space before it into one character and hide it.
        var words = Self.words(line, maxSplits: 4)
        guard words.count >= 2, let time = UTCTime.parse(words[0]) else {
            throw LineError(message: "the line does not start with a UTC time such as 2024-05-01T08:00:00.000000Z")
        }
        let verb = words[1]
        words.removeFirst(2)
        func word(_ index: Int, _ what: String) throws(LineError) -> Substring {
            guard index < words.count, !words[index].isEmpty else {
                throw LineError(message: "\(verb): \(what) is missing")
            }
            return words[index]
        }
        func characteristic() throws(LineError) -> UInt16 {
            let text = try word(1, "the characteristic")
            guard let value = UInt16(text, radix: 16) else {
                throw LineError(message: "\(verb): '\(text)' is not a 16-bit characteristic UUID in hex")
            }
            return value
        }
        func bytes() throws(LineError) -> [UInt8] {
            let text = words.count > 2 ? words[2...].joined(separator: " ") : ""
            guard let value = parseHex(text) else {
                throw LineError(message: "\(verb): the value '\(text)' is not hex bytes")
            }
            return value
        }
        let rest = words.joined(separator: " ")
        let kind: RideEvent.Kind
        switch verb {
        case "notify":
            kind = .notification(
                sensor: String(try word(0, "the sensor")), characteristic: try characteristic(), value: try bytes())
        case "read":
            kind = .read(
                sensor: String(try word(0, "the sensor")), characteristic: try characteristic(), value: try bytes())
        case "write":
            kind = .write(
                sensor: String(try word(0, "the sensor")), characteristic: try characteristic(), value: try bytes())
        case "connect":
            let sensor = String(try word(0, "the sensor"))
            let name = words.count > 1 ? words[1...].joined(separator: " ") : ""
            kind = .connected(sensor: sensor, name: name.isEmpty ? nil : unescaped(name))
        case "disconnect":
            kind = .disconnected(sensor: String(try word(0, "the sensor")))
        case "hub-write":
            kind = .hub(
                .written(app: String(try word(0, "the app")), characteristic: try characteristic(), value: try bytes()))
        case "hub-send":
            // No address: what the hub sends goes to every app subscribed.
            words.insert("", at: 0)
            kind = .hub(.sent(characteristic: try characteristic(), value: try bytes()))
        case "hub-holder":
            let app = String(try word(0, "the app, or \(Self.riderHolds)"))
            let name = words.count > 1 ? words[1...].joined(separator: " ") : ""
            kind = .hub(
                app == Self.riderHolds
                    ? .holder(app: nil, name: nil)
                    : .holder(app: app, name: name.isEmpty ? nil : unescaped(name)))
        case "wheel":
            let sensor = String(try word(0, "the sensor"))
            let text = try word(1, "the circumference")
            guard let millimetres = Int(text), (500...4000).contains(millimetres) else {
                throw LineError(message: "wheel: '\(text)' is not a circumference in millimetres (500–4000)")
            }
            // `*`: every sensor without a wheel line of its own (`--wheel-circumference`).
            kind =
                sensor == "*"
                ? .setting(.defaultWheelCircumference(millimetres: millimetres))
                : .wheelCircumference(sensor: sensor, millimetres: millimetres)
        case "auto-pause":
            kind = .setting(.autoPause(try autoPause(words)))
        case "trainer":
            kind = .setting(.trainerTarget(try TrainerWords.target(words)))
        case "workout":
            let ftpWord = try word(0, "ftp=WATTS")
            let ftp: Int?
            if ftpWord == "ftp=none" {
                ftp = nil
            } else if ftpWord.hasPrefix("ftp="), let watts = Int(ftpWord.dropFirst(4)), (1...2000).contains(watts) {
                ftp = watts
            } else {
                throw LineError(
                    message: "workout: '\(ShownText.cut(String(ftpWord), to: 20))' is not ftp=WATTS or ftp=none")
            }
            let text = words.count > 1 ? words[1...].joined(separator: " ") : ""
            do {
                kind = .setting(.workout(PlannedWorkout(try WorkoutText.parse(unescaped(text)), ftpWatts: ftp)))
            } catch {
                throw LineError(message: "workout: \(error)")
            }
        case "player":
            guard let control = PlayerControl(words: rest) else {
                throw LineError(
                    message: "player: '\(ShownText.cut(rest, to: 40))' is not skip, back, extend SECONDS (1–3600) or "
                        + "intensity PERCENT (50–150)")
            }
            kind = .setting(.player(control))
        case "start":
            let (plan, problem) = try plan(Substring(rest))
            if let problem {
                throw LineError(message: problem, kept: RideEvent(timeMicroseconds: time, .control(.start(plan))))
            }
            kind = .control(.start(plan))
        case "marker":
            kind = .control(.marker(unescaped(rest)))
        case "intake":
            guard let intake = Intake(journal: rest) else {
                throw LineError(
                    message:
                        "intake: '\(ShownText.cut(rest, to: 40))' is not water AMOUNTml (up to 5000) or carbs AMOUNTg (up to 1000)"
                )
            }
            kind = .control(.intake(intake))
        case "pause": kind = .control(.pause)
        case "resume": kind = .control(.resume)
        case "lap": kind = .control(.lap)
        case "end": kind = .control(.end)
        case "cancel": kind = .control(.cancel)
        case "undo":
            let named = try word(0, "the time of the action undone")
            guard let undone = UTCTime.parse(named) else {
                throw LineError(message: "undo: '\(ShownText.cut(named, to: 40))' is not a UTC time")
            }
            let action = String(try word(1, "the action undone"))
            guard RideEvent.undoableVerbs.contains(action), words.count == 2 else {
                throw LineError(
                    message: "undo: '\(ShownText.cut(words[1...].joined(separator: " "), to: 40))' is not one of "
                        + RideEvent.undoableVerbs.sorted().joined(separator: ", "))
            }
            kind = .control(.undo(UndoneAction(timeMicroseconds: undone, verb: action)))
        default:
            throw LineError(message: "unknown event '\(verb)'")
        }
        return RideEvent(timeMicroseconds: time, kind)
    }

    /// `below=SPEED after=SECONDS`: the thresholds of an automatic pause.
    private static func autoPause(_ words: [Substring]) throws(LineError) -> AutoPause {
        var autoPause = AutoPause()
        var seen = 0
        for word in words where !word.isEmpty {
            if word.hasPrefix("below="), let speed = Double(word.dropFirst(6)), speed.isFinite, (0...50).contains(speed)
            {
                autoPause.belowSpeedMetersPerSecond = speed
            } else if word.hasPrefix("after="), let seconds = Int(word.dropFirst(6)), (1...3600).contains(seconds) {
                autoPause.afterSeconds = seconds
            } else {
                throw LineError(
                    message: "auto-pause: '\(ShownText.cut(word, to: 40))' is not below=METRES_PER_SECOND (0–50) or "
                        + "after=SECONDS (1–3600)")
            }
            seen += 1
        }
        guard seen == 2 else { throw LineError(message: "auto-pause: needs below=METRES_PER_SECOND and after=SECONDS") }
        return autoPause
    }

    /// A line's words, split at each space scalar (at most `maxSplits` times; the rest stays in the last word).
    static func words(_ line: Substring, maxSplits: Int) -> [Substring] {
        line.unicodeScalars.split(separator: " ", maxSplits: maxSplits, omittingEmptySubsequences: false)
            .map(Substring.init)
    }

    /// A start's plan, and what of it could not be read but does not stop the ride (a goal).
    private static func plan(_ text: Substring) throws(LineError) -> (WorkoutPlan, String?) {
        var plan = WorkoutPlan()
        var problem: String?
        // By scalars, as `words` splits: a name may start with a combining accent.
        var rest = text.unicodeScalars[...]
        while !rest.isEmpty {
            if rest.starts(with: "name=".unicodeScalars) {
                plan.name = unescaped(Substring(rest.dropFirst(5)))
                break
            }
            let scalars = rest.prefix { $0 != " " }
            let word = Substring(scalars)
            rest = rest.dropFirst(scalars.count).drop { $0 == " " }
            if word == "indoor" || word == "outdoor" {
                plan.location = WorkoutLocation(rawValue: String(word))
            } else if word.hasPrefix("goal=") {
                if let goal = WorkoutGoal(String(word.dropFirst(5))) {
                    plan.goal = goal
                } else {
                    problem =
                        "start: '\(ShownText.cut(word, to: 40))' is not a goal such as goal=45m, goal=30km or "
                        + "goal=600kJ (from 1 s, 1 m or 1 kJ to a week, 10 000 km or 100 MJ); the ride starts without it"
                }
            } else if word.hasPrefix("preset=") {
                let id = String(word.dropFirst(7))
                guard WorkoutPreset.isValidID(id) else {
                    throw LineError(
                        message: "start: '\(ShownText.cut(word, to: 40))' is not a preset such as preset=ramp")
                }
                plan.preset = id
            } else if word.hasPrefix("sync=") {
                plan.syncIdentifier = String(word.dropFirst(5))
            } else if word.hasPrefix("test=") {
                guard let test = FitnessTest(rawValue: String(word.dropFirst(5))) else {
                    throw LineError(message: "start: '\(word)' is not a test: test=20min or test=ramp")
                }
                plan.fitnessTest = test
            } else {
                throw LineError(message: "start: unknown word '\(ShownText.cut(word, to: 40))'")
            }
        }
        return (plan, problem)
    }

    /// Hex digits, spaces between bytes allowed.
    static func parseHex(_ text: some StringProtocol) -> [UInt8]? {
        parseHex(utf8: text.utf8)
    }

    /// The same, of the text's UTF-8 bytes.
    static func parseHex(utf8 text: some Collection<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text {
            if character == UInt8(ascii: " ") { continue }
            guard let nibble = hexDigit(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? bytes : nil
    }

    /// The value of one hex digit's byte (either case).
    static func hexDigit(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    static func escaped(_ text: String) -> String { ShownText.lineEscaped(text) }

    static func unescaped(_ text: some StringProtocol) -> String { ShownText.lineUnescaped(text) }
}

/// Something in a capture file that could not be used: the record (or line) number and what is wrong.
public struct CaptureProblem: Equatable, Sendable, CustomStringConvertible {
    /// 1-based record number in a btsnoop file, line number in a journal; 0 for the file as a whole.
    public var record: Int
    public var message: String

    public init(record: Int, message: String) {
        self.record = record
        self.message = message
    }

    public var description: String { record > 0 ? "record \(record): \(message)" : message }
}

/// The words of a `trainer` line: `erg WATTS` (0–3000), `sim GRADE` (%, two decimals, ±40), `resistance PERCENT`
/// (0–100), `free`.
enum TrainerWords {
    static func grade(_ hundredths: Int) -> String {
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = hundredths.magnitude
        let fraction = magnitude % 100
        return "\(sign)\(magnitude / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }

    static func target(_ words: [Substring]) throws(Journal.LineError) -> TrainerTarget {
        let (watts, grade, percent) = (
            TrainerTarget.ergWatts, TrainerTarget.gradePercent, TrainerTarget.resistancePercent
        )
        let forms =
            "erg WATTS (\(watts.lowerBound)–\(watts.upperBound)), sim GRADE (±\(Int(grade.upperBound)) %), "
            + "resistance PERCENT (\(percent.lowerBound)–\(percent.upperBound)) or free"
        guard let mode = words.first else { throw Journal.LineError(message: "trainer: needs \(forms)") }
        let value = words.count > 1 ? String(words[1]) : ""
        switch mode {
        case "free" where words.count == 1: return .free
        case "erg":
            if let value = Int(value), watts.contains(value), words.count == 2 { return .erg(watts: value) }
        case "resistance":
            if let value = Int(value), percent.contains(value), words.count == 2 { return .resistance(percent: value) }
        case "sim":
            if let value = Double(value), grade.contains(value), words.count == 2 {
                return .simulation(gradeHundredthsPercent: Int((value * 100).rounded()))
            }
        default: break
        }
        throw Journal.LineError(
            message: "trainer: '\(ShownText.cut(words.joined(separator: " "), to: 40))' is not \(forms)")
    }
}
