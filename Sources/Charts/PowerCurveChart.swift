import Formats
import Foundation
import Workouts

/// `cyclelog chart --power-curve`: the best power of a window of rides against duration on a log axis, with the
/// critical-power model drawn over it and the efforts that pinned it marked.
public enum PowerCurveChart {
    public static func svg(
        _ window: FTPWindow, estimate: FTPEstimate?, fullCurve: PowerCurve, theme: ChartTheme = .light
    ) -> String {
        let width = 1000.0, height = 560.0, left = 70.0, right = 30.0, top = 60.0, bottom = 60.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        var svg = SVG(width: width, height: height)
        svg.theme = theme
        let longest = Double(max(fullCurve.watts.count, 2))
        let highest = max(fullCurve.watts.first ?? 100, 100)
        let axis = ValueAxis(highest: highest, ticks: 8)
        func x(_ seconds: Double) -> Double { left + log(seconds) / log(longest) * plotWidth }
        func y(_ watts: Double) -> Double { top + plotHeight - watts / axis.ceiling * plotHeight }

        svg.text(
            "Best power, \(window.days) days to \(LocalTime.zoned(microseconds: window.endMicroseconds)) "
                + "(\(window.rideCount) ride\(window.rideCount == 1 ? "" : "s"))", x: left, y: 24, size: 15,
            bold: true)
        var legend = "red: best power"
        if let model = estimate?.criticalPower {
            legend += String(
                format: " · dashed: CP %.0f W + W′ %.1f kJ / t (envelope fit, 3–20 min) · dots: its efforts",
                model.criticalPowerWatts, model.wPrimeJoules / 1000)
        } else {
            legend += " · no critical-power fit passes the checks in this window"
        }
        svg.text(legend, x: left, y: 44, size: 11, fill: "#555")

        axis.draw(on: &svg, left: left, right: left + plotWidth, y: y)
        let durations = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400, 28_800, 43_200]
        for seconds in durations where Double(seconds) <= longest {
            svg.line(x(Double(seconds)), top, x(Double(seconds)), top + plotHeight, stroke: "#eeeeee")
            svg.text(
                seconds < 60 ? "\(seconds) s" : clockLabel(seconds: seconds), x: x(Double(seconds)),
                y: top + plotHeight + 16, anchor: "middle", size: 10, fill: "#666")
        }
        svg.text("duration (log scale)", x: left + plotWidth / 2, y: height - 18, anchor: "middle", size: 11)
        svg.text("W", x: left - 40, y: top - 8, size: 11)
        svg.line(left, top + plotHeight, left + plotWidth, top + plotHeight, stroke: "#888")
        svg.line(left, top, left, top + plotHeight, stroke: "#888")

        // One point per pixel column is plenty on a log axis.
        var points: [(Double, Double)?] = []
        var lastColumn = -1.0
        for (index, watts) in fullCurve.watts.enumerated() {
            let px = x(Double(index + 1))
            if px - lastColumn >= 1 || index == fullCurve.watts.count - 1 {
                points.append((px, y(watts)))
                lastColumn = px
            }
        }
        svg.polyline(points, stroke: "#d62728", width: 2)

        if let estimate, let model = estimate.criticalPower {
            let first = 60.0, last = min(longest, 7200)
            let modelPoints = stride(from: log(first), through: log(last), by: (log(last) - log(first)) / 200).map {
                let seconds = exp($0)
                return Optional((x(seconds), y(min(axis.ceiling, model.watts(seconds: seconds)))))
            }
            svg.polyline(modelPoints, stroke: "#1f3b73", width: 1.5, dashed: true)
            svg.line(
                left, y(model.criticalPowerWatts), left + plotWidth, y(model.criticalPowerWatts), stroke: "#1f3b73",
                width: 0.8)
            svg.text(
                "CP \(Int(model.criticalPowerWatts.rounded())) W", x: left + plotWidth - 4,
                y: y(model.criticalPowerWatts) - 5, anchor: "end", size: 11, fill: "#1f3b73")
            for effort in estimate.efforts {
                svg.circle(x: x(Double(effort.durationSeconds)), y: y(effort.watts), radius: 4, fill: "#1f3b73")
                svg.text(
                    "\(clockLabel(seconds: effort.durationSeconds)) \(Int(effort.watts.rounded())) W (#\(effort.workoutId))",
                    x: x(Double(effort.durationSeconds)) + 6, y: y(effort.watts) - 8, size: 10, fill: "#1f3b73")
            }
        }
        return svg.document
    }
}
