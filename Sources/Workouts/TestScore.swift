import Formats

/// What a ride that declared a fitness test gave: the FTP it scores and what from, or why it is not scored. The
/// same rule as the automatic FTP's (`FTPEstimator`), read from the ride's stored statistics, so that `show`, the
/// recorder's word at the end and `ftp` say one thing.
public struct TestScore: Equatable, Sendable {
    public var test: FitnessTest
    /// The test's scored effort (its best minute, its 20 minutes), in watts; nil when the ride has none.
    public var basisWatts: Double?
    /// The FTP it scores; nil when not scored.
    public var ftpWatts: Double?
    /// Why it is not scored (it did not reach its scored part, or has no power for it); nil when scored.
    public var unscoredReason: String?
    /// Whether its FTP is the one in force now.
    public var inForce: Bool

    public init(test: FitnessTest, statistics: WorkoutStatistics, inForce: Bool) {
        self.test = test
        self.inForce = inForce
        basisWatts = statistics.powerCurveWatts[test.scoredSeconds].flatMap { $0 > 0 ? $0 : nil }
        unscoredReason = test.unscoredReason(statistics.plan?.scoredPart, basisWatts: basisWatts)
        if unscoredReason == nil, let basisWatts { ftpWatts = test.factor * basisWatts }
        if ftpWatts == nil { self.inForce = false }
    }

    /// `FTP test: 234.7 W from this ramp test (75 % of its best minute, 312.9 W), the FTP in force`, or why not.
    public var words: String {
        guard let ftpWatts, let basisWatts else {
            return "the \(test.title) is not scored: \(unscoredReason ?? "no power"); the FTP in force stays"
        }
        let basis = test == .ramp ? "best minute" : "20 minutes"
        return "FTP \(Self.tenths(ftpWatts)) W from this \(test.title) (\(Int((test.factor * 100).rounded())) % of its "
            + "\(basis), \(Self.tenths(basisWatts)) W)"
            + (inForce ? ", the FTP in force" : "; `cyclelog ftp accept` makes it the FTP in force")
    }

    /// `{"test", "scored", "ftpWatts", "basisSeconds", "basisWatts", "inForce", "unscoredReason"}`.
    public var json: JSONValue {
        .object([
            ("test", .string(test.rawValue)), ("scored", .bool(ftpWatts != nil)),
            ("ftpWatts", .rounded(ftpWatts, 1)), ("basisSeconds", .integer(Int64(test.scoredSeconds))),
            ("basisWatts", .rounded(basisWatts, 1)), ("inForce", .bool(inForce)),
            ("unscoredReason", .optionalString(unscoredReason)),
        ])
    }

    static func tenths(_ watts: Double) -> String { JSONValue.rounded(watts, 1).rendered() }
}
