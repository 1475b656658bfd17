import Workouts

/// W′ balance over a ride: what is left of the anaerobic work capacity after each second, by Skiba's integral
/// (solid) and differential (dashed) forms, against the ride's elapsed time.
public enum WPrimeBalanceChart {
    public static func svg(
        _ summary: WorkoutSummary, model: CriticalPowerModel, integralJoules: [Double], differentialJoules: [Double],
        theme: ChartTheme = .light
    ) -> String {
        let width = 1100.0, height = 320.0, left = 70.0, right = 20.0, top = 56.0, bottom = 40.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        var svg = SVG(width: width, height: height)
        svg.theme = theme
        let seconds = Double(max(integralJoules.count, 1))
        let lowest = min(0, integralJoules.min() ?? 0, differentialJoules.min() ?? 0)
        let span = model.wPrimeJoules - lowest
        func x(_ second: Double) -> Double { left + second / seconds * plotWidth }
        func y(_ joules: Double) -> Double { top + plotHeight - (joules - lowest) / max(span, 1) * plotHeight }
        svg.text("W′ balance, workout \(summary.id)", x: left, y: 22, size: 15, bold: true)
        svg.text(
            "CP \(Int(model.criticalPowerWatts.rounded())) W, W′ \(String(format: "%.1f", model.wPrimeJoules / 1000)) kJ"
                + " · solid: integral (Skiba 2012) · dashed: differential (Skiba 2015) · lowest "
                + String(
                    format: "%.1f / %.1f kJ", (integralJoules.min() ?? 0) / 1000, (differentialJoules.min() ?? 0) / 1000
                ),
            x: left, y: 40, size: 11, fill: "#555")
        for kilojoules in stride(from: (lowest / 5000).rounded(.up) * 5, through: model.wPrimeJoules / 1000, by: 5) {
            svg.line(left, y(kilojoules * 1000), left + plotWidth, y(kilojoules * 1000), stroke: "#e5e5e5")
            svg.text(
                "\(Int(kilojoules)) kJ", x: left - 6, y: y(kilojoules * 1000) + 4, anchor: "end", size: 10, fill: "#666"
            )
        }
        if lowest < 0 { svg.line(left, y(0), left + plotWidth, y(0), stroke: "#ff5d5d") }
        for (series, dashed) in [(integralJoules, false), (differentialJoules, true)] {
            // The lowest of each pixel column's seconds: a dip is what a rider looks for, and must not be averaged
            // away on a long ride.
            let pixels = max(1, min(Int(plotWidth), series.count))
            var lowestInColumn = [Double](repeating: .infinity, count: pixels)
            for (second, joules) in series.enumerated() {
                let column = min(pixels - 1, second * pixels / series.count)
                lowestInColumn[column] = min(lowestInColumn[column], joules)
            }
            svg.polyline(
                lowestInColumn.enumerated().map { column, joules in
                    (x((Double(column) + 0.5) / Double(pixels) * seconds), y(joules))
                }, stroke: "#1f77b4", dashed: dashed)
        }
        let step = RideChart.timeTickStep(seconds)
        for tick in stride(from: 0, through: seconds, by: step) {
            svg.text(
                clockLabel(seconds: Int(tick)), x: x(tick), y: top + plotHeight + 16, anchor: "middle", size: 10,
                fill: "#666")
        }
        svg.line(left, top + plotHeight, left + plotWidth, top + plotHeight, stroke: "#888")
        return svg.document
    }
}
