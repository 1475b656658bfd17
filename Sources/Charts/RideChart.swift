import Formats
import Workouts

/// `cyclelog chart <id>`: power, cadence, speed and heart rate over the ride's elapsed time, one panel each, with
/// pauses shaded, dropouts marked, laps drawn as dashed lines and markers as dotted ones with their text.
public enum RideChart {
    struct Panel: Sendable {
        var title: String
        var unit: String
        var colour: String
        var channel: Channel
        /// From the stored unit to the shown one.
        var scale: Double

        func value(_ sample: SecondSample) -> Double? { sample[channel].map { $0 * scale } }
    }

    static let panels = [
        Panel(title: "Power", unit: "W", colour: "#d62728", channel: .powerWatts, scale: 1),
        Panel(title: "Cadence", unit: "rpm", colour: "#9467bd", channel: .cadenceRPM, scale: 1),
        Panel(title: "Speed", unit: "km/h", colour: "#1f77b4", channel: .speedMetersPerSecond, scale: 3.6),
        Panel(title: "Heart rate", unit: "bpm", colour: "#2ca02c", channel: .heartRateBPM, scale: 1),
    ]

    /// The whole ride, or with `seconds` only that part of it (a zoom): seconds from the start, the part's first
    /// and the one after its last. The root element carries the plot's place (`data-plot-left`, `data-plot-width`,
    /// in the picture's units) and the seconds it spans (`data-from`, `data-to`), for a page that lets the rider
    /// pick a range on it.
    /// A zoom held to the ride: `seconds` is clamped to it (at least one second wide), so a range from anywhere
    /// (a query string, a script) draws at most the ride's own seconds and ticks.
    /// `widthPixels`: the picture's width (held to 320…2400), so that a page can ask for its own width and show
    /// the text at its size — a phone's 400 pixels draw the panels narrower rather than everything smaller.
    public static func svg(
        _ summary: WorkoutSummary, samples allSamples: [SecondSample], seconds requested: Range<Int>? = nil,
        theme: ChartTheme = .light, widthPixels: Int = 1100
    ) -> String {
        let width = Double(min(max(widthPixels, 320), 2400))
        let narrow = width < 700
        let left = narrow ? 44.0 : 70.0, right = narrow ? 10.0 : 20.0
        let panelHeight = narrow ? 130.0 : 150.0, gap = 30.0
        let plotWidth = width - left - right
        let rideSeconds = max(1, summary.statistics.elapsedSeconds)
        let seconds = requested.map {
            zoom(from: $0.lowerBound, to: $0.upperBound, rideSeconds: rideLength(summary, allSamples))
        }
        let from = Double(seconds?.lowerBound ?? 0)
        let to = seconds.map { Double($0.upperBound) } ?? rideSeconds
        let header = headerLines(summary, shown: seconds.map { _ in (from, to) }, width: width - left - right)
        // The first panel's title sits under the header's last line.
        let top = 40 + 15 * Double(header.count - 1) + 10
        let samples = seconds.map { range in allSamples.filter { range.contains($0.second) } } ?? allSamples
        let shown = panels.filter { panel in samples.contains { panel.value($0) != nil } }
        let height = top + Double(max(shown.count, 1)) * (panelHeight + gap) + 20
        var svg = SVG(width: width, height: height)
        svg.theme = theme
        svg.data = [
            ("plot-left", "\(left)"), ("plot-width", "\(plotWidth)"), ("from", "\(from)"), ("to", "\(to)"),
        ]
        let elapsed = max(1, to - from)
        // A zoom keeps what lies outside its seconds (a pause, a gap) at its edges.
        let clamp: (Double) -> Double = seconds == nil ? { $0 } : { min(max($0, from), to) }
        func x(_ seconds: Double) -> Double { left + (clamp(seconds) - from) / elapsed * plotWidth }

        svg.text(title(summary, width: width - left - right), x: left, y: 22, size: 15, bold: true)
        for (number, line) in header.enumerated() {
            svg.text(line, x: left, y: 40 + 15 * Double(number), size: 11, fill: "#555")
        }
        if shown.isEmpty { svg.text("no sensor data", x: left, y: top + 40) }

        for (index, panel) in shown.enumerated() {
            let panelTop = top + Double(index) * (panelHeight + gap) + 12
            let drawn = columns(samples, pixels: Int(plotWidth), from: from, elapsed: elapsed, value: panel.value)
            // A structured workout's targets are drawn under the power, each step from its first second's target
            // to its last's.
            let targets = panel.channel == .powerWatts ? planTargets(summary) : []
            // Scale to what is drawn (pixel means), so one sprint second does not flatten the rest.
            let highest = max(
                drawn.compactMap(\.value).max() ?? 1, targets.map { max($0.first, $0.last) }.max() ?? 1, 1)
            let axis = ValueAxis(highest: highest, ticks: 4)
            func y(_ value: Double) -> Double { panelTop + panelHeight - value / axis.ceiling * panelHeight }

            svg.text(
                "\(panel.title) (\(panel.unit))", x: left, y: panelTop - 4, size: 12, fill: panel.colour, bold: true)
            shadeStops(
                &svg, summary: summary, samples: samples, end: seconds?.upperBound ?? samples.count, x: x,
                top: panelTop, height: panelHeight)
            axis.draw(on: &svg, left: left, right: left + plotWidth, y: y)
            for target in targets where seconds == nil || (target.end > from && target.start < to) {
                svg.polygon(
                    [
                        (x(target.start), y(0)), (x(target.start), y(target.first)), (x(target.end), y(target.last)),
                        (x(target.end), y(0)),
                    ], fill: panel.colour, opacity: 0.18)
            }
            svg.polyline(
                drawn.map { column in column.value.map { (x(column.second), y($0)) } },
                stroke: panel.colour)
            for lap in summary.laps.dropFirst() {
                let offset = Double(lap.startMicroseconds - summary.startMicroseconds) / 1_000_000
                guard seconds == nil || (offset >= from && offset <= to) else { continue }
                svg.line(x(offset), panelTop, x(offset), panelTop + panelHeight, stroke: "#444", dashed: true)
                if index == 0 { svg.text("lap \(lap.number)", x: x(offset) + 3, y: panelTop + 11, size: 10) }
            }
            for marker in markers(summary) {
                guard seconds == nil || (marker.second >= from && marker.second <= to) else { continue }
                svg.line(
                    x(marker.second), panelTop, x(marker.second), panelTop + panelHeight, stroke: "#ff9f1c",
                    dotted: true)
                if index == 0 {
                    svg.text(
                        shortened(marker.text), x: x(marker.second) + 3, y: panelTop + panelHeight - 4, size: 10,
                        fill: "#666")
                }
            }
            svg.line(left, panelTop + panelHeight, left + plotWidth, panelTop + panelHeight, stroke: "#888")
            svg.line(left, panelTop, left, panelTop + panelHeight, stroke: "#888")
            let timeStep = timeTickStep(elapsed, most: max(3, Int(plotWidth / 80)))
            for tick in stride(from: (from / timeStep).rounded(.up) * timeStep, through: to, by: timeStep) {
                svg.line(x(tick), panelTop + panelHeight, x(tick), panelTop + panelHeight + 4, stroke: "#888")
                svg.text(
                    clockLabel(seconds: Int(tick)), x: x(tick), y: panelTop + panelHeight + 15, anchor: "middle",
                    size: 10, fill: "#666")
            }
        }
        return svg.document
    }

    /// The targets of the ride's structured workout, step by step as ridden: seconds from the start and watts at
    /// its first and last second (steps without a target are left out).
    static func planTargets(_ summary: WorkoutSummary) -> [(start: Double, end: Double, first: Double, last: Double)] {
        (summary.statistics.plan?.steps ?? []).compactMap { step in
            guard let first = step.firstTargetWatts else { return nil }
            return (
                Double(step.startSecond), Double(step.endSecond), Double(first), Double(step.lastTargetWatts ?? first)
            )
        }
    }

    /// The part of a ride of `rideSeconds` that a zoom from `from` to `to` (seconds from its start, as typed)
    /// shows: both ends held to the ride, at least one second wide, whatever the numbers — a query's
    /// `from=9223372036854775807` is the ride's last second, not an overflow, and `to=100000000000` its end, not
    /// 10^11 seconds of ticks.
    public static func zoom(from: Int, to: Int, rideSeconds: Int) -> Range<Int> {
        let length = max(1, rideSeconds)
        let lower = min(max(0, from), length - 1)
        return lower..<min(max(lower + 1, to), length)
    }

    /// The seconds a chart can show of a ride: its elapsed time, or its samples where they reach further.
    public static func rideLength(_ summary: WorkoutSummary, _ samples: [SecondSample]) -> Int {
        let elapsed = summary.statistics.elapsedSeconds
        let elapsedSeconds = elapsed.isFinite ? Int(min(max(elapsed.rounded(.up), 0), 1e9)) : 0
        return max(elapsedSeconds, (samples.last?.second ?? -1) + 1, 1)
    }

    /// Paused seconds in grey and dropouts in orange, behind the lines.
    private static func shadeStops(
        _ svg: inout SVG, summary: WorkoutSummary, samples: [SecondSample], end: Int, x: (Double) -> Double,
        top: Double, height: Double
    ) {
        var pauseStart: Int?
        for sample in samples + [SecondSample(second: end, runningFraction: 1)] {
            if !sample.isRunning, pauseStart == nil { pauseStart = sample.second }
            if sample.isRunning, let start = pauseStart {
                svg.rect(
                    x: x(Double(start)), y: top, width: max(1, x(Double(sample.second)) - x(Double(start))),
                    height: height, fill: "#bbbbbb", opacity: 0.45)
                pauseStart = nil
            }
        }
        for dropout in summary.dropouts {
            let start = Double(dropout.startMicroseconds - summary.startMicroseconds) / 1_000_000
            let end = Double(dropout.endMicroseconds - summary.startMicroseconds) / 1_000_000
            svg.rect(
                x: x(start), y: top, width: max(1, x(end) - x(start)), height: height, fill: "#ff9f1c", opacity: 0.3)
        }
    }

    /// The mean of each pixel column's seconds (nil where none has a value), so a 12-hour ride draws as fast as
    /// a short one and a gap stays a gap.
    static func columns(
        _ samples: [SecondSample], pixels: Int, from: Double = 0, elapsed: Double, value: (SecondSample) -> Double?
    ) -> [(second: Double, value: Double?)] {
        // Never more columns than seconds, or a short ride would draw as isolated dots.
        let pixels = max(1, min(pixels, samples.count))
        var sums = [Double](repeating: 0, count: pixels), counts = [Int](repeating: 0, count: pixels)
        for sample in samples {
            guard let measured = value(sample) else { continue }
            let column = min(pixels - 1, max(0, Int((Double(sample.second) - from) / elapsed * Double(pixels))))
            sums[column] += measured
            counts[column] += 1
        }
        return (0..<pixels).map { column in
            let second = from + (Double(column) + 0.5) / Double(pixels) * elapsed
            return (second, counts[column] > 0 ? sums[column] / Double(counts[column]) : nil)
        }
    }

    /// The step between time ticks: at most `most` of them (80 pixels apart at least: a label is "1:00:00").
    static func timeTickStep(_ elapsed: Double, most: Int = 12) -> Double {
        [60.0, 300, 600, 900, 1800, 3600, 7200, 14_400, 28_800].first { elapsed / $0 <= Double(most) } ?? 86_400
    }

    /// About how wide a text of `size` is, per character (DejaVu Sans averages a little over half its size).
    static func textWidth(_ text: String, size: Double) -> Double { Double(text.count) * size * 0.6 }

    /// "Workout 1 “Name” — 2013-08-16 20:05:10 CEST" (local time, as every time a rider reads), shortened to fit
    /// `width`.
    static func title(_ summary: WorkoutSummary, width: Double) -> String {
        let name = summary.plan.name.map { " “\($0)”" } ?? ""
        let full = "Workout \(summary.id)\(name) — \(LocalTime.zoned(microseconds: summary.startMicroseconds))"
        if textWidth(full, size: 15) <= width { return full }
        let short = "Workout \(summary.id)\(name)"
        let fits = max(10, Int(width / (15 * 0.6)))
        return short.count <= fits ? short : String(short.prefix(fits - 1)) + "…"
    }

    /// The facts and the key under the title, as many to a line as fit in `width`.
    static func headerLines(_ summary: WorkoutSummary, shown: (from: Double, to: Double)?, width: Double) -> [String] {
        let s = summary.statistics
        var items = [
            "elapsed \(clockLabel(seconds: Int(s.elapsedSeconds)))",
            "moving \(clockLabel(seconds: Int(s.movingSeconds)))",
        ]
        if let np = s.normalizedPowerWatts { items.append("NP \(Int(np.rounded())) W") }
        if let ftp = summary.ftpWatts { items.append("FTP \(Int(ftp.rounded())) W") }
        if let shown {
            items.append("shown: \(clockLabel(seconds: Int(shown.from)))–\(clockLabel(seconds: Int(shown.to)))")
        }
        items += ["grey: paused", "orange: sensor gap", "dashed: lap", "dotted: marker"]
        if let plan = summary.statistics.plan { items.append("pale red: the target of \(plan.workoutName)") }
        var lines: [String] = []
        for item in items {
            if let last = lines.last, textWidth(last + " · " + item, size: 11) <= width {
                lines[lines.count - 1] = last + " · " + item
            } else {
                lines.append(item)
            }
        }
        return lines
    }

    /// The ride's markers: seconds from its start and their text.
    static func markers(_ summary: WorkoutSummary) -> [(second: Double, text: String)] {
        summary.events.compactMap { event in
            guard case .marker(let text) = event.control else { return nil }
            return (Double(event.timeMicroseconds - summary.startMicroseconds) / 1_000_000, text)
        }
    }

    /// A marker's text as a label: at most 24 characters.
    static func shortened(_ text: String) -> String {
        text.count <= 24 ? text : String(text.prefix(23)) + "…"
    }
}
