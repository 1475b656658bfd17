import Dispatch
import Foundation
import LiveRecording
import Synchronization
import Workouts

/// The live dashboard on a terminal (redrawn in place, keys read raw), or a plain status line every few
/// seconds when the output is not a terminal (a service's journal, a pipe).
final class LiveDisplay: Sendable {
    let interactive: Bool
    let recorder: LiveRecorder
    private let state = Mutex(DisplayState())

    private struct DisplayState {
        var linesDrawn = 0
        var lastPlainLine = ContinuousClock.now - .seconds(60)
        var savedTerminal: termios?
        var confirmingCancel = false
    }

    init(interactive: Bool, recorder: LiveRecorder) {
        self.interactive = interactive
        self.recorder = recorder
    }

    func show(_ status: LiveStatus) async {
        let text: String? = state.withLock { state in
            if interactive {
                let lines = Self.dashboard(status, confirmingCancel: state.confirmingCancel)
                // Move up over the previous frame and clear it, then draw the new one.
                let up = state.linesDrawn > 0 ? "\u{1B}[\(state.linesDrawn)A\u{1B}[J" : ""
                state.linesDrawn = lines.count
                return up + lines.joined(separator: "\r\n") + "\r\n"
            }
            guard ContinuousClock.now - state.lastPlainLine >= .seconds(5) || status.state == "ended" else {
                return nil
            }
            state.lastPlainLine = ContinuousClock.now
            return Self.plainLine(status) + "\n"
        }
        if let text { StandardStream.output.write(text) }
    }

    /// A notice for the rider. On a terminal it goes where the dashboard was, which is drawn again below it at
    /// the next status: a line written between two frames would leave the frame's top behind on the screen.
    /// Otherwise it goes to standard error.
    func notice(_ text: String) {
        guard interactive else {
            printError("cyclelog: \(text)")
            return
        }
        let frame: String = state.withLock { state in
            let up = state.linesDrawn > 0 ? "\u{1B}[\(state.linesDrawn)A\u{1B}[J" : ""
            state.linesDrawn = 0
            return up + "cyclelog: " + ShownText.visible(text) + "\r\n"
        }
        StandardStream.output.write(frame)
    }

    /// The frame's lines. They go to the terminal through `StandardStream` (the frame moves the cursor on purpose),
    /// so sensor names, which come over the air, and notices are escaped here.
    static func dashboard(_ s: LiveStatus, confirmingCancel: Bool) -> [String] {
        var lines = [
            "cyclelog  workout \(s.workoutId)  \(s.state)  lap \(s.lap)"
                + (s.goalProgress.map { "  goal \(Int(($0 * 100).rounded())) %" } ?? ""),
            "  power (3 s) \(SummaryText.whole(s.powerWatts)) W   cadence \(SummaryText.whole(s.cadenceRPM)) rpm   "
                + "speed \(SummaryText.kmh(s.speedMetersPerSecond)) km/h   heart rate \(SummaryText.whole(s.heartRateBPM)) bpm",
            "  distance \(SummaryText.fixed(s.distanceMeters / 1000, 2)) km   elapsed \(SummaryText.duration(s.elapsedSeconds))"
                + "   moving \(SummaryText.duration(s.movingSeconds))",
        ]
        for sensor in s.sensors {
            lines.append(
                "  \(SummaryText.pad(ShownText.visible(sensor.name), 24)) \(SummaryText.pad(sensor.state.rawValue, 12))"
                    + (sensor.batteryPercent.map {
                        " battery \($0) %" + ($0 <= LiveStatus.lowBatteryPercent ? " (low)" : "")
                    } ?? ""))
        }
        if let message = s.message { lines.append("  " + ShownText.visible(message)) }
        lines.append(
            confirmingCancel
                ? "  Cancel this ride and discard it? y = yes, any other key = no"
                : "  space pause/resume   l lap   e end and save   c cancel")
        return lines
    }

    static func plainLine(_ s: LiveStatus) -> String {
        let sensors = s.sensors.map { "\(ShownText.visible($0.name))=\($0.state.rawValue)" }.joined(separator: ",")
        return
            "\(s.state) elapsed=\(SummaryText.duration(s.elapsedSeconds)) moving=\(SummaryText.duration(s.movingSeconds))"
            + " power=\(SummaryText.whole(s.powerWatts))W cadence=\(SummaryText.whole(s.cadenceRPM))rpm"
            + " speed=\(SummaryText.kmh(s.speedMetersPerSecond))km/h hr=\(SummaryText.whole(s.heartRateBPM))bpm"
            + " distance=\(SummaryText.fixed(s.distanceMeters / 1000, 2))km lap=\(s.lap) sensors=\(sensors)"
            + (s.message.map { " note=\"\(ShownText.visible($0))\"" } ?? "")
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
        let confirming = state.withLock { state in
            defer { state.confirmingCancel = false }
            return state.confirmingCancel
        }
        if confirming {
            if byte == UInt8(ascii: "y") || byte == UInt8(ascii: "Y") { await recorder.control(.cancel) }
            await show(await recorder.status())
            return
        }
        switch byte {
        case UInt8(ascii: " "):
            let paused = await recorder.status().state == "paused"
            await recorder.control(paused ? .resume : .pause)
        case UInt8(ascii: "l"), UInt8(ascii: "L"): await recorder.control(.lap)
        case UInt8(ascii: "e"), UInt8(ascii: "E"): await recorder.control(.end)
        case UInt8(ascii: "c"), UInt8(ascii: "C"):
            state.withLock { $0.confirmingCancel = true }
            await show(await recorder.status())
        default: break
        }
    }
}
