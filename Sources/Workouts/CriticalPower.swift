/// The 2-parameter critical power model: P(t) = CP + W′/t (Monod & Scherrer).
public struct CriticalPowerModel: Equatable, Sendable {
    public var criticalPowerWatts: Double
    public var wPrimeJoules: Double

    public init(criticalPowerWatts: Double, wPrimeJoules: Double) {
        self.criticalPowerWatts = criticalPowerWatts
        self.wPrimeJoules = wPrimeJoules
    }

    /// The power the model says can be held for `seconds`.
    public func watts(seconds: Double) -> Double {
        criticalPowerWatts + wPrimeJoules / seconds
    }
}

/// Critical power from a best-power curve by GoldenCheetah's envelope method (its src/Metrics/PDModel.cpp): the model is
/// the member of the family that touches the highest point of a short and a long window and lies on or above
/// every curve point in both, because the points of a curve built from ordinary rides are lower bounds of what
/// the rider can do. A least-squares fit through them reads W′ low.
public enum CriticalPowerFit {
    /// Efforts of 3 to 5 minutes pin W′.
    public static let anaerobicSeconds = 180...300
    /// Efforts of 12 to 20 minutes pin CP.
    public static let aerobicSeconds = 720...1200

    /// GoldenCheetah's lower limit of τ = W′/CP, in minutes.
    static let tauFloorMinutes = 0.5

    /// A fitted model with the two points of the curve that pinned it.
    public struct Result: Equatable, Sendable {
        public var model: CriticalPowerModel
        public var anaerobicPinSeconds: Int
        public var aerobicPinSeconds: Int
        /// False when no short effort rose above the model and W′ is only GoldenCheetah's floor (τ = 0.5 min):
        /// steady riding says nothing about W′, and its "CP" is just the steady power.
        public var shortEffortPinsWPrime: Bool
    }

    /// The envelope fit, or nil when the curve does not reach into both windows. The iteration works in minutes
    /// as GoldenCheetah does: τ = W′/CP; CP = max over the long window of P(t)/(1 + τ/t), then τ = max(0.5,
    /// max over the short window of (P(t)/CP − 1)·t), until τ moves by less than 1e-4 min.
    public static func envelope(_ curve: PowerCurve) -> Result? {
        guard curve.watts.count >= aerobicSeconds.lowerBound else { return nil }
        let aerobic = aerobicSeconds.lowerBound...min(aerobicSeconds.upperBound, curve.watts.count)
        let anaerobic = anaerobicSeconds
        var tauMinutes = 1.0, criticalPower = 0.0
        var aerobicPin = aerobic.lowerBound, anaerobicPin = anaerobic.lowerBound
        var pinned = false
        for _ in 0..<100 {
            criticalPower = 0
            for seconds in aerobic {
                let candidate = curve.watts[seconds - 1] / (1 + tauMinutes / (Double(seconds) / 60))
                if candidate > criticalPower { (criticalPower, aerobicPin) = (candidate, seconds) }
            }
            guard criticalPower > 0 else { return nil }
            var nextTau = tauFloorMinutes
            pinned = false
            for seconds in anaerobic {
                let candidate = (curve.watts[seconds - 1] / criticalPower - 1) * (Double(seconds) / 60)
                if candidate > nextTau { (nextTau, anaerobicPin, pinned) = (candidate, seconds, true) }
            }
            let change = abs(nextTau - tauMinutes)
            tauMinutes = nextTau
            if change < 1e-4 { break }
        }
        // CP from the final τ, so the long-window pin lies on the model.
        criticalPower = aerobic.map { curve.watts[$0 - 1] / (1 + tauMinutes / (Double($0) / 60)) }.max() ?? 0
        return Result(
            model: CriticalPowerModel(criticalPowerWatts: criticalPower, wPrimeJoules: criticalPower * tauMinutes * 60),
            anaerobicPinSeconds: anaerobicPin, aerobicPinSeconds: aerobicPin, shortEffortPinsWPrime: pinned)
    }
}
