import Dispatch
import Formats
import Foundation
import LiveRecording
import ProgramMain
import RecorderInterface
import StructuredWorkouts
import Synchronization
import TrainerControl
import Workouts

/// The live dashboard on a terminal (redrawn in place, keys read raw), or a plain status line every few
/// seconds when the output is not a terminal (a service's journal, a pipe).
final class LiveDisplay: Sendable {
    let interactive: Bool
    let recorder: LiveRecorder
    /// What `w` logs: one glass.
    let waterStep: Intake
    private let state = Mutex(DisplayState())

    private struct DisplayState {
        var linesDrawn = 0
        var lastPlainLine = ContinuousClock.now - .seconds(60)
        var savedTerminal: termios?
        var prompt = Prompt.none
    }

    /// What the bottom line asks for, when a key started something that takes more keys.
    enum Prompt: Equatable {
        case none
        case confirmingCancel
        /// `m`: the marker's text so far, as typed (UTF-8).
        case marker([UInt8])
        /// `s`: the presets offered, numbered from 1.
        case start([WorkoutPreset])
    }

    init(interactive: Bool, recorder: LiveRecorder, waterStep: Intake) {
        self.interactive = interactive
        self.recorder = recorder
        self.waterStep = waterStep
    }

    func show(_ status: LiveStatus) async {
        // Written while the lock is held: a notice written between this frame's count and its bytes would move the
        // cursor by the wrong number of rows and leave a copy of the frame's top behind.
        state.withLock { state in
            if interactive {
                let lines = Self.dashboard(status, prompt: state.prompt)
                // Move up over the previous frame and clear it, then draw the new one.
                let up = state.linesDrawn > 0 ? "\u{1B}[\(state.linesDrawn)A\u{1B}[J" : ""
                state.linesDrawn = Self.rows(lines, columns: Self.terminalColumns())
                StandardStream.output.write(up + lines.joined(separator: "\r\n") + "\r\n")
                return
            }
            guard ContinuousClock.now - state.lastPlainLine >= .seconds(5) || status.state == .ended else {
                return
            }
            state.lastPlainLine = ContinuousClock.now
            StandardStream.output.write(Self.plainLine(status) + "\n")
        }
    }

    /// A notice for the rider. On a terminal it goes where the dashboard was, which is drawn again below it at
    /// the next status: a line written between two frames would leave the frame's top behind on the screen.
    /// Otherwise it goes to standard error.
    func notice(_ text: String) {
        guard interactive else {
            printError("cyclelog: \(text)")
            return
        }
        state.withLock { state in
            let up = state.linesDrawn > 0 ? "\u{1B}[\(state.linesDrawn)A\u{1B}[J" : ""
            state.linesDrawn = 0
            StandardStream.output.write(up + "cyclelog: " + ShownText.visible(text) + "\r\n")
        }
    }

    /// The terminal rows `lines` take: a line wider than the terminal wraps onto the next row (one exactly as wide
    /// does not: the cursor waits at its end for the line break), and the next frame must move up over all of them.
    static func rows(_ lines: [String], columns: Int) -> Int {
        guard columns > 0 else { return lines.count }
        return lines.reduce(0) { $0 + max(1, ($1.unicodeScalars.count + columns - 1) / columns) }
    }

    /// The width of the terminal on standard output; 0 when it cannot be told.
    static func terminalColumns() -> Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 ? Int(size.ws_col) : 0
    }

    /// The frame's lines. They go to the terminal through `StandardStream` (the frame moves the cursor on purpose),
    /// so sensor names, which come over the air, and notices are escaped here.
    static func dashboard(_ s: LiveStatus, prompt: Prompt) -> [String] {
        // No workout yet (`record --wait`, `--auto`): the state alone, with what it waits for.
        let heading =
            s.workoutId == 0
            ? "cyclelog  \(s.state.rawValue)" + (s.state == .armed ? ": the ride starts at the first pedal stroke" : "")
            : "cyclelog  workout \(s.workoutId)  \(s.state.rawValue)  lap \(s.lap)"
                + (s.goalProgress.map { "  goal \(Int(($0 * 100).rounded())) %" } ?? "")
        var lines = [
            heading,
            "  power (3 s) \(SummaryText.whole(s.powerWatts)) W   cadence \(SummaryText.whole(s.cadenceRPM)) rpm   "
                + "speed \(SummaryText.kmh(s.speedMetersPerSecond)) km/h   heart rate \(SummaryText.whole(s.heartRateBPM)) bpm",
            "  distance \(SummaryText.fixed(s.distanceMeters / 1000, 2)) km   elapsed \(SummaryText.duration(s.elapsedSeconds))"
                + "   moving \(SummaryText.duration(s.movingSeconds))",
        ]
        for sensor in s.sensors {
            lines.append(
                "  \(SummaryText.pad(ShownText.visible(sensor.name), 24)) "
                    + "\(SummaryText.pad(sensor.state?.rawValue ?? "", 12))"
                    + (sensor.batteryPercent.map {
                        " battery \($0) %" + ($0 <= LiveStatus.lowBatteryPercent ? " (low)" : "")
                    } ?? ""))
        }
        if s.trainerMode != nil { lines.append("  " + trainerLine(s)) }
        if s.stepIndex >= 0 { lines += workoutLines(s) }
        if s.waterMillilitres > 0 { lines.append("  water \(SummaryText.amount(s.waterMillilitres)) ml") }
        if let message = s.screen.message { lines.append("  " + ShownText.visible(message)) }
        if let undo = StatusText.undoLine(s.published, key: "u") { lines.append("  undo " + undo) }
        switch prompt {
        case .none:
            lines.append(
                s.can.start
                    ? "  s start a ride" + (s.can.cancel ? "   c cancel the armed start" : "")
                    : "  space pause/resume   l lap   e end and save   u undo   c cancel   m marker   w water"
                        + (s.stepIndex >= 0
                            ? "   n next step   b back   x +1 min   + / - 5 %"
                            : s.trainerMode == nil ? "" : "   + / - 10 W   f trainer free"))
        case .confirmingCancel: lines.append("  Cancel this ride and discard it? y = yes, any other key = no")
        case .marker(let typed):
            lines.append(
                "  Marker: \(ShownText.visible(String(decoding: typed, as: UTF8.self)))_   (Enter saves, Esc drops)")
        case .start(let presets):
            let choices = presets.enumerated().map { "\($0.offset + 1) \(ShownText.visible($0.element.title))" }
            lines.append("  Start: " + choices.joined(separator: "   ") + "   (a number; Esc: none)")
        }
        return lines
    }

    static func plainLine(_ s: LiveStatus) -> String {
        let sensors = s.sensors.map { "\(ShownText.visible($0.name))=\($0.state?.rawValue ?? "")" }
            .joined(separator: ",")
        let trainer = s.trainerMode.map { mode in
            " trainer=\(mode.rawValue)/\(s.trainerState?.rawValue ?? "")"
                + (s.screen.trainerTargetWatts.map { "/\($0)W" } ?? "")
        }
        let step =
            s.stepIndex < 0
            ? "" : " step=\(s.stepIndex + 1)/\(s.stepCount)" + (s.targetPowerWatts.map { "/\(Int($0))W" } ?? "")
        return
            "\(s.state.rawValue) elapsed=\(SummaryText.duration(s.elapsedSeconds)) moving=\(SummaryText.duration(s.movingSeconds))"
            + " power=\(SummaryText.whole(s.powerWatts))W cadence=\(SummaryText.whole(s.cadenceRPM))rpm"
            + " speed=\(SummaryText.kmh(s.speedMetersPerSecond))km/h hr=\(SummaryText.whole(s.heartRateBPM))bpm"
            + " distance=\(SummaryText.fixed(s.distanceMeters / 1000, 2))km lap=\(s.lap) sensors=\(sensors)"
            + (trainer ?? "") + step + (s.screen.message.map { " note=\"\(ShownText.visible($0))\"" } ?? "")
    }

    /// "workout Sweet spot 2×20  step 2 of 5  182 W (176–188 W)  19:40 left  next 110 W  intensity 100 %", and
    /// the whole workout's profile with a mark under where the ride is.
    static func workoutLines(_ s: LiveStatus) -> [String] {
        var words = ["  workout \(ShownText.visible(ShownText.cut(s.workoutPlanName, to: 40)))"]
        if s.stepIndex >= s.stepCount {
            words.append("complete")
        } else {
            words.append("step \(s.stepIndex + 1) of \(s.stepCount)")
            if !s.stepName.isEmpty { words.append(ShownText.visible(ShownText.cut(s.stepName, to: 30))) }
            let target =
                if let watts = s.targetPowerWatts {
                    "\(Int(watts)) W"
                } else if let grade = s.screen.stepGradePercent {
                    "grade \(SummaryText.fixed(grade, 1)) %"
                } else {
                    "free"
                }
            let range =
                if let low = s.targetRangeLowWatts, let high = s.targetRangeHighWatts {
                    " (\(Int(low))–\(Int(high)) W)"
                } else {
                    ""
                }
            words.append(target + range)
            if let cadence = s.screen.cadenceTarget { words.append("\(cadence.lowerBound)–\(cadence.upperBound) rpm") }
            if let left = s.screen.stepSecondsLeft {
                words.append("\(SummaryText.duration(left.rounded(.up))) left")
            }
            if let next = s.nextTargetPowerWatts { words.append("next \(Int(next)) W") }
        }
        if s.intensityPercent != 100 { words.append("intensity \(s.intensityPercent) %") }
        let (profile, mark) = profileText(s.screen.profile, stepIndex: Int(s.stepIndex), width: 60)
        return [words.joined(separator: "  "), "  " + profile, "  " + String(repeating: " ", count: mark) + "^"]
    }

    /// The workout's targets as a row of block characters, `width` wide, time along it; and the column of the
    /// step `stepIndex`'s start.
    static func profileText(_ segments: [LiveStatus.ProfileSegment], stepIndex: Int, width: Int) -> (String, Int) {
        let total = max(1, segments.reduce(0) { $0 + $1.seconds })
        let highest = max(1, segments.compactMap { max($0.startWatts ?? 0, $0.endWatts ?? 0) }.max() ?? 1)
        let blocks = Array("▁▂▃▄▅▆▇█")
        var columns: [Character] = []
        var mark = 0
        var elapsed = 0
        for (index, segment) in segments.enumerated() {
            if index == stepIndex { mark = elapsed * width / total }
            let first = elapsed * width / total
            elapsed += segment.seconds
            let last = max(first + 1, elapsed * width / total)
            for column in first..<min(last, width) where column >= columns.count {
                let progress = Double(column - first) / Double(max(1, last - first))
                let watts = segment.startWatts.map { start in
                    Double(start) + Double((segment.endWatts ?? start) - start) * progress
                }
                columns.append(watts.map { blocks[min(7, Int($0 / Double(highest) * 7.99))] } ?? "·")
            }
        }
        if stepIndex >= segments.count { mark = min(width, columns.count) }
        return (String(columns), min(mark, max(0, columns.count - 1)))
    }

    /// "trainer ERG 250 W (now 180 W), controlled, power match −8 W", and the trainer's refusal when it has one.
    static func trainerLine(_ s: LiveStatus) -> String {
        var words = "trainer "
        switch s.trainerMode {
        case .erg?:
            words += "ERG \(s.screen.trainerTargetWatts ?? 0) W"
            if let now = s.screen.trainerNowWatts, now != s.screen.trainerTargetWatts { words += " (now \(now) W)" }
        case .simulation?: words += "simulation \(SummaryText.fixed(s.screen.trainerGradePercent ?? 0, 1)) %"
        case .resistance?: words += "resistance \(SummaryText.fixed(s.resistanceLevel ?? 0, 0)) %"
        case .free?, nil: words += "free (not steered)"
        }
        if let state = s.trainerState, state != .free { words += ", \(state.rawValue)" }
        if let offset = s.screen.powerMatchOffsetWatts { words += ", power match \(SummaryText.fixed(offset, 0)) W" }
        if !s.trainerHolder.isEmpty { words += ", steered by \(ShownText.visible(s.trainerHolder)) through the hub" }
        if !s.trainerMessage.isEmpty { words += ": " + ShownText.visible(s.trainerMessage) }
        return words
    }

    /// The keys typed on the terminal, one byte each, until `stopKeys`.
    struct Keys {
        fileprivate let source: DispatchSourceRead
        let bytes: AsyncStream<UInt8>
    }

    /// Puts the terminal in raw mode and reads single keys, until `stopKeys` with what it returned; `follow`
    /// acts on them.
    func startKeys() -> Keys? {
        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(0, TCSANOW, &raw)
        let (bytes, typed) = AsyncStream<UInt8>.makeStream()
        let source = DispatchSource.makeReadSource(fileDescriptor: 0, queue: .main)
        source.setEventHandler {
            var byte: UInt8 = 0
            guard read(0, &byte, 1) == 1 else { return }
            typed.yield(byte)
        }
        source.setCancelHandler { typed.finish() }
        source.resume()
        state.withLock { $0.savedTerminal = saved }
        return Keys(source: source, bytes: bytes)
    }

    /// Acts on each key until the keys stop.
    func follow(_ bytes: AsyncStream<UInt8>) async {
        for await byte in bytes { await key(byte) }
    }

    /// Gives the terminal back as it was; more than once does no harm.
    func stopKeys(_ keys: Keys?) {
        keys?.source.cancel()
        state.withLock { state in
            if var saved = state.savedTerminal { tcsetattr(0, TCSANOW, &saved) }
            state.savedTerminal = nil
        }
    }

    private func key(_ byte: UInt8) async {
        let prompt = state.withLock { state in
            defer { state.prompt = .none }
            return state.prompt
        }
        switch prompt {
        case .none: break
        case .confirmingCancel:
            if byte == UInt8(ascii: "y") || byte == UInt8(ascii: "Y") { await perform(.control(.cancel)) }
            return await show(await recorder.status())
        case .marker(var typed):
            switch byte {
            case 13, 10:
                let text = String(decoding: typed, as: UTF8.self)
                if !text.isEmpty { await perform(.marker(String(text.prefix(200)))) }
            case 27: break
            case 127, 8:
                // Back over one whole character (UTF-8 continuation bytes are 10xxxxxx).
                while let last = typed.popLast(), last & 0xC0 == 0x80 {}
                state.withLock { $0.prompt = .marker(typed) }
            default:
                if byte >= 0x20 { typed.append(byte) }
                state.withLock { $0.prompt = .marker(typed) }
            }
            return await show(await recorder.status())
        case .start(let presets):
            if byte >= UInt8(ascii: "1"), Int(byte - UInt8(ascii: "0")) <= presets.count {
                await perform(.start(style: ["preset": .text(presets[Int(byte - UInt8(ascii: "1"))].id)]))
            }
            return await show(await recorder.status())
        }
        switch byte {
        case UInt8(ascii: " "):
            let paused = await recorder.status().state == .paused
            await perform(.control(paused ? .resume : .pause))
        case UInt8(ascii: "l"), UInt8(ascii: "L"): await perform(.control(.lap))
        case UInt8(ascii: "e"), UInt8(ascii: "E"): await perform(.control(.end))
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            // The action the screen shows, not whatever came since.
            let shown = await recorder.status().published.undoId
            await perform(.undo(action: shown > 0 ? shown : nil))
        case UInt8(ascii: "w"), UInt8(ascii: "W"): await perform(.intake(waterStep))
        case UInt8(ascii: "c"), UInt8(ascii: "C"): await ask(.confirmingCancel)
        case UInt8(ascii: "m"), UInt8(ascii: "M"): await ask(.marker([]))
        // With a structured workout, + and - scale its targets (as the step's target would undo a nudge of the
        // trainer); without one, they nudge ERG's target.
        case UInt8(ascii: "+"), UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "_"):
            let up = byte == UInt8(ascii: "+") || byte == UInt8(ascii: "=")
            if await recorder.status().stepIndex >= 0 {
                await perform(.player(.intensityChange(percent: up ? 5 : -5)))
            } else {
                await perform(.steer(.targetChange(watts: up ? 10 : -10)))
            }
        case UInt8(ascii: "n"), UInt8(ascii: "N"): await perform(.player(.skip))
        case UInt8(ascii: "b"), UInt8(ascii: "B"): await perform(.player(.back))
        case UInt8(ascii: "x"), UInt8(ascii: "X"): await perform(.player(.extend(seconds: 60)))
        case UInt8(ascii: "f"), UInt8(ascii: "F"): await perform(.steer(.mode("free")))
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            guard await recorder.status().can.start else { return }
            await ask(.start(Array(await recorder.presets().prefix(9))))
        default: break
        }
    }

    private func ask(_ prompt: Prompt) async {
        state.withLock { $0.prompt = prompt }
        await show(await recorder.status())
    }

    /// A key's command, as every client's is carried out (`RecorderCommand`); a refused one says why (pausing a
    /// paused ride, a drink while waiting).
    private func perform(_ command: RecorderCommand) async {
        do throws(LiveRecorder.CommandRefusal) { try await recorder.perform(command) } catch { notice(error.reason) }
    }
}
