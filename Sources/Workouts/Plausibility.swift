/// The plausibility rules (Docs/reference/workouts.md, "Only plausible numbers"): one rule per channel, applied to the 1 Hz series of
/// every ride — live, replayed or imported — before anything is computed from it. A second whose value breaks
/// its channel's rule is rejected: it becomes a gap (no value), so that maximum, average, NP, xPower, work,
/// zones, W′ balance and the power curve all leave it out alike, and the ride says how many seconds were rejected.
/// The raw data (journal, imported file) keeps the values: a rebuild applies the rules again.
public enum Plausibility {
    /// Power above what any rider has produced (track sprinters peak near 2500 W), or below zero.
    public static let powerWatts: ClosedRange<Double> = 0...SpikeFilter.ceilingWatts
    /// 0 means "no strap" on many devices (Zwift, Onelap) and on the Bluetooth path it is no reading at all; a
    /// human heart does not beat under 25 or over 250 times a minute.
    public static let heartRateBPM: ClosedRange<Double> = 25...250
    /// Track sprinters spin near 250 rpm; 0 is coasting and is kept.
    public static let cadenceRPM: ClosedRange<Double> = 0...250
    /// 120 km/h: faster than any descent on a bike.
    public static let speedMetersPerSecond: ClosedRange<Double> = 0...(120 / 3.6)

    /// The range of a channel's plausible values.
    public static func range(_ channel: Channel) -> ClosedRange<Double> {
        switch channel {
        case .powerWatts: powerWatts
        case .cadenceRPM: cadenceRPM
        case .speedMetersPerSecond: speedMetersPerSecond
        case .heartRateBPM: heartRateBPM
        }
    }

    /// Rejects every implausible second in place: values outside their channel's range, and power spikes (one or
    /// two seconds that stand out from the three on either side, `SpikeFilter`'s rule). Returns the seconds
    /// rejected per channel, zero heart rates not counted (they mean "no value", not a bad one).
    @discardableResult
    public static func clean(_ samples: inout [SecondSample]) -> [Channel: Int] {
        var rejected: [Channel: Int] = [:]
        for index in samples.indices {
            for channel in Channel.allCases {
                guard let value = samples[index][channel] else { continue }
                if channel == .heartRateBPM && value == 0 {
                    samples[index][channel] = nil
                } else if !value.isFinite || !range(channel).contains(value) {
                    samples[index][channel] = nil
                    rejected[channel, default: 0] += 1
                }
            }
        }
        // Spikes, judged on the power that remains (a gap counts as 0 W for the judging only).
        let watts = samples.map { $0.powerWatts ?? 0 }
        for index in SpikeFilter.spikeSeconds(watts) where samples[index].powerWatts != nil {
            samples[index].powerWatts = nil
            rejected[.powerWatts, default: 0] += 1
        }
        return rejected
    }
}
