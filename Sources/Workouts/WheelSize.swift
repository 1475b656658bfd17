import Foundation

/// A wheel's rolling circumference from what is printed on the tyre, by ISO 5775 (ETRTO) geometry: the rim's
/// bead seat diameter plus the tyre's height on both sides (taken as its width, as for a round section), times π.
/// Published charts measure a loaded tyre and come out up to about 0.5 % shorter; riders who want better
/// roll the wheel out and give millimetres.
public enum WheelSize {
    /// Tyres are 16 to 130 mm wide (track tubulars to fat bikes), rims 200 to 700 mm.
    /// Millimetres from "2105" (already a circumference), "25-622" (ETRTO width-BSD), "700x25c", "650x23c",
    /// "650bx47", "29x2.2", "27.5x2.4", "26x2.1" and the like; nil when the text is none of those.
    public static func circumferenceMillimetres(_ text: String) -> Int? {
        let compact = text.lowercased().filter { !$0.isWhitespace }.replacingOccurrences(of: "×", with: "x")
        if let millimetres = Int(compact) { return (500...4000).contains(millimetres) ? millimetres : nil }
        if let (width, bead) = etrto(compact) ?? french(compact) ?? inches(compact) {
            guard (16...130).contains(width), (200...700).contains(bead) else { return nil }
            return Int((Double.pi * (bead + 2 * width)).rounded())
        }
        return nil
    }

    /// "25-622": width and bead seat diameter in millimetres.
    private static func etrto(_ text: String) -> (Double, Double)? {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let width = Double(parts[0]), let bead = Double(parts[1]) else { return nil }
        return (width, bead)
    }

    /// The French sizes: 700x25c, 650x23c, 650bx47 / 650x47b; the letter names the rim.
    private static let frenchBeads: [String: Double] = ["700c": 622, "700": 622, "650c": 571, "650b": 584, "650a": 590]

    private static func french(_ text: String) -> (Double, Double)? {
        let parts = text.split(separator: "x")
        guard parts.count == 2 else { return nil }
        var rim = String(parts[0])
        var widthText = String(parts[1])
        if let letter = widthText.last, letter.isLetter {
            widthText.removeLast()
            if rim.last?.isLetter == false { rim += String(letter) }
        }
        // A bare "650" could be any of three rims: not guessed.
        guard let bead = frenchBeads[rim], let width = Double(widthText) else { return nil }
        return (width, bead)
    }

    /// Inch sizes of mountain and city bikes: 29x2.2, 27.5x2.4, 26x2.1, 24x1.75, 20x1.95 (width in inches).
    private static let inchBeads: [String: Double] = [
        "29": 622, "28": 622, "27.5": 584, "26": 559, "24": 507, "20": 406,
    ]

    private static func inches(_ text: String) -> (Double, Double)? {
        let parts = text.split(separator: "x")
        guard parts.count == 2, let bead = inchBeads[String(parts[0])], let width = Double(parts[1]), width < 5
        else { return nil }
        return (width * 25.4, bead)
    }
}
