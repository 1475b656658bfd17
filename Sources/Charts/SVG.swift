import Formats
import Foundation
import Workouts

/// A small SVG writer: elements appended as text, numbers with one decimal, text escaped.
struct SVG {
    private(set) var body: [String] = []
    let width: Double
    let height: Double
    /// `data-` attributes of the root element, for a page that works with the picture (names without the prefix).
    var data: [(name: String, value: String)] = []
    /// Whether there is paint under the picture (the theme's); false leaves it transparent (a small picture on
    /// the page's own colour).
    var hasBackground = true
    var theme = ChartTheme.light

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    var document: String {
        let attributes = data.map { " data-\($0.name)=\"\(Self.escaped($0.value))\"" }.joined()
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" \
            viewBox="0 0 \(n(width)) \(n(height))" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" \
            font-size="12"\(attributes)>

            """ + (hasBackground ? "<rect width=\"100%\" height=\"100%\" fill=\"\(theme.background)\"/>\n" : "")
                + body.joined(separator: "\n") + "\n</svg>\n"
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String, opacity: Double = 1) {
        body.append(
            "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(theme.paint(fill))\""
                + (opacity < 1 ? " fill-opacity=\"\(n(opacity))\"" : "") + "/>")
    }

    mutating func line(
        _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String, width: Double = 1, dashed: Bool = false,
        dotted: Bool = false
    ) {
        body.append(
            "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(theme.paint(stroke))\" "
                + "stroke-width=\"\(n(width))\"" + (dashed ? " stroke-dasharray=\"5 4\"" : "")
                + (dotted ? " stroke-dasharray=\"1.5 3\" stroke-linecap=\"round\"" : "") + "/>")
    }

    /// A line through the points; nil points break it into separate runs.
    mutating func polyline(_ points: [(Double, Double)?], stroke: String, width: Double = 1.2, dashed: Bool = false) {
        var run: [(Double, Double)] = []
        func flush() {
            if run.count > 1 {
                body.append(
                    "<polyline fill=\"none\" stroke=\"\(theme.paint(stroke))\" stroke-width=\"\(n(width))\" stroke-linejoin=\"round\""
                        + (dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\""
                        + run.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ") + "\"/>")
            }
            run = []
        }
        for point in points {
            if let point { run.append(point) } else { flush() }
        }
        flush()
    }

    /// A filled shape through the points.
    mutating func polygon(_ points: [(Double, Double)], fill: String, opacity: Double = 1) {
        body.append(
            "<polygon fill=\"\(theme.paint(fill))\"" + (opacity < 1 ? " fill-opacity=\"\(n(opacity))\"" : "")
                + " points=\"" + points.map { "\(n($0.0)),\(n($0.1))" }.joined(separator: " ") + "\"/>")
    }

    mutating func circle(x: Double, y: Double, radius: Double, fill: String) {
        body.append("<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(radius))\" fill=\"\(theme.paint(fill))\"/>")
    }

    mutating func text(
        _ content: String, x: Double, y: Double, anchor: String = "start", size: Double = 12, fill: String = "#333",
        bold: Bool = false
    ) {
        body.append(
            "<text x=\"\(n(x))\" y=\"\(n(y))\" text-anchor=\"\(anchor)\" font-size=\"\(n(size))\" fill=\"\(theme.paint(fill))\""
                + (bold ? " font-weight=\"bold\"" : "") + ">\(Self.escaped(content))</text>")
    }

    /// One decimal is finer than a pixel.
    private func n(_ value: Double) -> String {
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    /// `text` as XML character data that any parser accepts, whatever it holds: the markup characters as
    /// entities, and the characters XML 1.0 forbids (C0 controls, U+FFFE, U+FFFF; §2.2 "Char") written as the same
    /// visible escapes the terminal shows (`\x1B`), as are DEL and C1 — a ride's name reads the same everywhere.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\u{FFFE}", "\u{FFFF}": result += "\\u" + String(scalar.value, radix: 16, uppercase: true)
            default:
                if let escape = ShownText.escape(scalar) {
                    result += escape
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}

/// A value axis from 0 to a round ceiling at or above the highest value, with gridlines at round steps.
struct ValueAxis {
    let step: Double
    let ceiling: Double

    init(highest: Double, ticks: Int) {
        step = Self.roundStep(range: highest, count: ticks)
        ceiling = (highest / step).rounded(.up) * step
    }

    /// Gridlines from `left` to `right` with their labels left of the plot; `y` places a value.
    func draw(on svg: inout SVG, left: Double, right: Double, y: (Double) -> Double) {
        for tick in stride(from: 0, through: ceiling, by: step) {
            svg.line(left, y(tick), right, y(tick), stroke: "#e5e5e5")
            let label = step < 1 ? String(format: "%.1f", tick) : String(Int(tick))
            svg.text(label, x: left - 6, y: y(tick) + 4, anchor: "end", size: 10, fill: "#666")
        }
    }

    /// The smallest of 1, 2, 5 × 10ⁿ that gives at most `count` steps.
    private static func roundStep(range: Double, count: Int) -> Double {
        guard range > 0 else { return 1 }
        var step = 1.0
        while range / step > Double(count) { step *= 10 }
        while range / (step / 10) <= Double(count) { step /= 10 }
        for factor in [1.0, 2, 5, 10] where range / (step * factor / 10) <= Double(count) { return step * factor / 10 }
        return step
    }
}

/// 1:05:00, 12:30 or 45 s: how riders read times.
func clockLabel(seconds: Int) -> String {
    let hours = seconds / 3600, minutes = seconds / 60 % 60, rest = seconds % 60
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    if hours > 0 {
        return minutes == 0 && rest == 0 ? "\(hours) h" : "\(hours):\(two(minutes))" + (rest > 0 ? ":\(two(rest))" : "")
    }
    return rest == 0 ? "\(minutes) min" : "\(minutes):\(two(rest))"
}
