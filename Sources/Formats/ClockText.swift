/// A duration as a clock reads it: `42:07` under an hour, `1:02:13` from an hour on (whole seconds, rounded).
public enum ClockText {
    public static func duration(_ seconds: Double) -> String {
        let total = seconds.isFinite ? Int(seconds.rounded()) : 0
        // `%02d`: two digits at least, a sign counted as one.
        func twoDigits(_ number: Int) -> String { (0..<10).contains(number) ? "0\(number)" : "\(number)" }
        let minutesAndSeconds = twoDigits(total / 60 % 60) + ":" + twoDigits(total % 60)
        return total >= 3600 ? "\(total / 3600):" + minutesAndSeconds : "\(total / 60 % 60):\(twoDigits(total % 60))"
    }
}
