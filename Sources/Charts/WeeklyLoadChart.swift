import Formats
import Workouts

/// The weekly training load as bars: TSS per week, the week's Monday under each bar.
public enum WeeklyLoadChart {
    public static func svg(_ load: WeeklyLoad, theme: ChartTheme = .light) -> String {
        let width = 1000.0, height = 360.0, left = 60.0, right = 20.0, top = 50.0, bottom = 50.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        var svg = SVG(width: width, height: height)
        svg.theme = theme
        let highest = max(load.weeks.map(\.trainingStressScore).max() ?? 0, 100)
        let axis = ValueAxis(highest: highest, ticks: 6)
        func y(_ score: Double) -> Double { top + plotHeight - score / axis.ceiling * plotHeight }
        svg.text("Training load: TSS per week (Monday to Sunday, UTC)", x: left, y: 24, size: 15, bold: true)
        let unscored = load.weeks.map(\.ridesWithoutScore).reduce(0, +)
        if unscored > 0 {
            svg.text(
                "\(unscored) ride\(unscored == 1 ? "" : "s") without a TSS (no power, or no FTP known then) not counted",
                x: left, y: 42, size: 11, fill: "#555")
        }
        axis.draw(on: &svg, left: left, right: left + plotWidth, y: y)
        let slot = plotWidth / Double(max(load.weeks.count, 1))
        // A label under every bar when they fit, else under every n-th.
        let every = max(1, Int((80 / slot).rounded(.up)))
        for (index, week) in load.weeks.enumerated() {
            let x = left + Double(index) * slot
            if week.trainingStressScore > 0 {
                svg.rect(
                    x: x + slot * 0.15, y: y(week.trainingStressScore), width: slot * 0.7,
                    height: y(0) - y(week.trainingStressScore), fill: "#d62728")
            }
            if index % every == 0 {
                svg.text(
                    String(UTCTime.formatSeconds(microseconds: week.startMicroseconds).prefix(10)), x: x + slot / 2,
                    y: top + plotHeight + 16, anchor: "middle", size: 10, fill: "#666")
            }
        }
        svg.line(left, top + plotHeight, left + plotWidth, top + plotHeight, stroke: "#888")
        return svg.document
    }
}
