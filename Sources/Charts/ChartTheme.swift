/// The colours a chart is drawn in: light (a file, a print, `cyclelog chart`) or dark (the history page, which is
/// dark, so that a chart is not a white block on it). Charts are written in the light palette; the dark one
/// replaces each colour by its counterpart, chosen for the same contrast on the page's panel colour.
public enum ChartTheme: String, Sendable, CaseIterable {
    case light, dark

    /// What a chart's `theme=` query names, else light.
    public init(query: String?) {
        self = query.flatMap(ChartTheme.init(rawValue:)) ?? .light
    }

    var background: String { self == .dark ? "#181c22" : "white" }

    /// A light-palette colour in this theme.
    func paint(_ colour: String) -> String {
        self == .dark ? Self.darkPaints[colour] ?? colour : colour
    }

    private static let darkPaints = [
        // Text, from darkest to lightest on white, lightest to darkest on the dark panel.
        "#333": "#f2f4f7", "#444": "#c8ced8", "#555": "#b4bcc8", "#666": "#9aa4b2",
        // Axes, gridlines, pauses.
        "#888": "#6b7482", "#e5e5e5": "#2a3038", "#eeeeee": "#232830", "#bbbbbb": "#5a626e",
        // Series: the same hues, lighter.
        "#1f3b73": "#8fb3ff", "#1f77b4": "#4ea8ff", "#9467bd": "#b48ef0", "#d62728": "#ff5a5f", "#2ca02c": "#4cc94c",
    ]
}
