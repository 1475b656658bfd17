#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// Training metrics of a 1 Hz power series (watts per second, seconds without power already left out: the gap rule). Each definition is
/// one sentence; the [training guide](../../Docs/guide/training.md) writes them out.
public enum PowerMetrics {
    /// Normalized Power: the fourth root of the mean fourth power of the 30-s rolling mean, over full windows only
    /// (nil under 30 s).
    public static func normalizedPower(_ watts: [Double]) -> Double? {
        let window = 30
        guard watts.count >= window else { return nil }
        var sum = watts[0..<window].reduce(0, +)
        var fourthPowers = pow4(sum / Double(window))
        for index in window..<watts.count {
            sum += watts[index] - watts[index - window]
            fourthPowers += pow4(sum / Double(window))
        }
        return root4(fourthPowers / Double(watts.count - window + 1))
    }

    /// xPower (Skiba): the fourth root of the mean fourth power of a 25-s exponentially weighted mean started at
    /// 0 W (nil for an empty series).
    public static func xPower(_ watts: [Double]) -> Double? {
        guard !watts.isEmpty else { return nil }
        var smoothed = 0.0, fourthPowers = 0.0
        for value in watts {
            smoothed = smoothed * (25.0 / 26.0) + value / 26.0
            fourthPowers += pow4(smoothed)
        }
        return root4(fourthPowers / Double(watts.count))
    }

    /// Aerobic decoupling (Pw:Hr) in percent: how much the Normalized Power per heartbeat of the second half falls
    /// below the first half's, positive when heart rate drifts up (as TrainingPeaks and GoldenCheetah sign it).
    /// Each half's heart rate is the mean of its seconds with a heart rate; nil when a half lacks one or NP, or is
    /// shorter than 10 minutes: heart rate lags power by a minute or two, so a short ride's halves differ by that
    /// lag, not by fatigue (a 12-minute ride read −110 %).
    public static func aerobicDecouplingPercent(watts: [Double], heartRateBPM: [Double?]) -> Double? {
        let half = watts.count / 2
        guard half >= minimumHalfSeconds, heartRateBPM.count == watts.count else { return nil }
        func efficiency(_ range: Range<Int>) -> Double? {
            let beats = heartRateBPM[range].compactMap { $0 }.filter { $0 > 0 }
            guard !beats.isEmpty, let np = normalizedPower(Array(watts[range])) else { return nil }
            return np / (beats.reduce(0, +) / Double(beats.count))
        }
        guard let first = efficiency(0..<half), let second = efficiency(half..<watts.count), first > 0 else {
            return nil
        }
        return (first - second) / first * 100
    }

    /// Each half of a ride with a decoupling is at least this long (so the ride at least 20 minutes).
    public static let minimumHalfSeconds = 600

    /// Intensity Factor: NP / FTP.
    public static func intensityFactor(normalizedPowerWatts: Double, ftpWatts: Double) -> Double? {
        ftpWatts > 0 ? normalizedPowerWatts / ftpWatts : nil
    }

    /// Training Stress Score: 100 × moving hours × IF² (an hour at FTP scores 100).
    public static func trainingStressScore(normalizedPowerWatts: Double, movingSeconds: Double, ftpWatts: Double)
        -> Double?
    {
        intensityFactor(normalizedPowerWatts: normalizedPowerWatts, ftpWatts: ftpWatts).map {
            100 * movingSeconds / 3600 * $0 * $0
        }
    }

    /// Metabolic energy in kcal from mechanical work: 1 kcal = 4184 J at a gross efficiency of 24 %, which is
    /// the "kJ ≈ kcal" rule bike computers use.
    public static func kilocalories(workJoules: Double) -> Double {
        workJoules / 4184 / 0.24
    }

    /// The lower bounds of Coggan's seven power zones as fractions of FTP; zone n holds [bound n, bound n + 1).
    public static let zoneLowerBounds = [0, 0.55, 0.75, 0.90, 1.05, 1.20, 1.50]

    /// Seconds spent in each of Coggan's seven zones (active recovery … neuromuscular), [low, high) boundaries.
    public static func zoneSeconds(_ watts: [Double], ftpWatts: Double) -> [Double] {
        var seconds = [Double](repeating: 0, count: zoneLowerBounds.count)
        for value in watts {
            // As a fraction of FTP, so that 110 W of 200 W is exactly the 0.55 bound (0.55 × 200 rounds above 110).
            let zone = zoneLowerBounds.lastIndex { value / ftpWatts >= $0 } ?? 0
            seconds[zone] += 1
        }
        return seconds
    }

    /// The lowest W′ balance (joules) in both of Skiba's forms; a negative value says the CP/W′ pair is wrong for
    /// this ride.
    /// - integral (Skiba 2012): W′ minus every second's work above CP, each decayed by e^(−age/τ), with
    ///   τ = 546·e^(−0.01·(CP − mean power of the seconds below CP)) + 316 s, summed in the recursive form;
    /// - differential (Skiba 2015): above CP the balance falls by the excess; below it recovers by
    ///   (CP − P)·(W′ − balance)/W′ each second.
    public static func wPrimeBalanceMinimum(_ watts: [Double], model: CriticalPowerModel) -> (
        integralJoules: Double, differentialJoules: Double
    )? {
        guard let balance = wPrimeBalance(watts, model: model) else { return nil }
        return (
            min(model.wPrimeJoules, balance.integralJoules.min() ?? model.wPrimeJoules),
            min(model.wPrimeJoules, balance.differentialJoules.min() ?? model.wPrimeJoules)
        )
    }

    /// W′ balance after each second, by both models (the integral one of Skiba 2012, the differential one of
    /// Skiba 2015), for the chart of a ride; nil without W′.
    public static func wPrimeBalance(_ watts: [Double], model: CriticalPowerModel) -> (
        integralJoules: [Double], differentialJoules: [Double]
    )? {
        guard !watts.isEmpty, model.wPrimeJoules > 0 else { return nil }
        let criticalPower = model.criticalPowerWatts, wPrime = model.wPrimeJoules
        let below = watts.filter { $0 < criticalPower }
        let recoveryDeficit = below.isEmpty ? 0 : criticalPower - below.reduce(0, +) / Double(below.count)
        let tau = 546 * exp(-0.01 * recoveryDeficit) + 316
        let decay = exp(-1 / tau)
        var expended = 0.0, balance = wPrime
        var integral: [Double] = [], differential: [Double] = []
        integral.reserveCapacity(watts.count)
        differential.reserveCapacity(watts.count)
        for value in watts {
            expended = expended * decay + max(0, value - criticalPower)
            integral.append(wPrime - expended)
            if value >= criticalPower {
                balance -= value - criticalPower
            } else {
                balance += (criticalPower - value) * (wPrime - balance) / wPrime
            }
            differential.append(balance)
        }
        return (integral, differential)
    }

    static func pow4(_ x: Double) -> Double { (x * x) * (x * x) }
    static func root4(_ x: Double) -> Double { x.squareRoot().squareRoot() }
}
