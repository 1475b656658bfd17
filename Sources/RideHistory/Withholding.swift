import WorkoutStore
import Workouts

/// A stored ride as a party not given some data types sees it (Docs/reference/data-types.md): the values of each
/// type withheld, and everything worked out from them, are taken out of the ride itself, so that its JSON, its
/// charts and every file written from it (FIT, TCX, CSV) hold none of them, whichever code reads it. A ride so
/// seen reads as one recorded without those sensors: a gap, never a made-up value (a distance not given is 0 m,
/// as a ride without a speed sensor's is).
extension WorkoutStore.StoredRide {
    /// Consuming: a ride read for one answer gives its series up to be changed in place, not copied (a 12-hour
    /// ride's is 43 200 seconds).
    public consuming func withholding(_ withheld: Set<DataType>) -> WorkoutStore.StoredRide {
        guard !withheld.isEmpty else { return self }
        var ride = consume self
        let channels = Channel.allCases.filter { withheld.contains(DataType($0)) }
        if !channels.isEmpty {
            for index in ride.samples.indices {
                for channel in channels { ride.samples[index][channel] = nil }
                if withheld.contains(.speed) { ride.samples[index].distanceMeters = 0 }
            }
        }
        ride.summary = ride.summary.withholding(withheld)
        return ride
    }
}

extension WorkoutSummary {
    public func withholding(_ withheld: Set<DataType>) -> WorkoutSummary {
        guard !withheld.isEmpty else { return self }
        var summary = self
        summary.statistics = statistics.withholding(withheld)
        summary.laps = laps.map { lap in
            var lap = lap
            lap.statistics = lap.statistics.withholding(withheld)
            return lap
        }
        if withheld.contains(.intake) { summary.events.removeAll { $0.intake != nil } }
        if var analysis = summary.analysis {
            if withheld.contains(.power) {
                // Every figure of the analysis but the heart rate's is power's; decoupling is power against heart
                // rate.
                analysis = RideAnalysis(withholdingAll: analysis)
            }
            if withheld.contains(.hr) {
                analysis.efficiencyFactor = nil
                analysis.aerobicDecouplingPercent = nil
            }
            if withheld.contains(.energy) { analysis.energyKilocalories = nil }
            summary.analysis = analysis
        }
        return summary
    }
}

extension WorkoutStatistics {
    public func withholding(_ withheld: Set<DataType>) -> WorkoutStatistics {
        var statistics = self
        if withheld.contains(.power) {
            statistics.averagePowerWatts = nil
            statistics.maximumPowerWatts = nil
            statistics.normalizedPowerWatts = nil
            statistics.powerCurveWatts = [:]
            statistics.plan = nil
            statistics.trainer?.ergMeanAbsoluteDifferenceWatts = nil
        }
        // The work is the power's integral: energy, and worked out from power.
        if withheld.contains(.power) || withheld.contains(.energy) { statistics.workJoules = nil }
        if withheld.contains(.cadence) {
            statistics.averageCadenceRPM = nil
            statistics.maximumCadenceRPM = nil
            if var plan = statistics.plan {
                for index in plan.steps.indices {
                    plan.steps[index].meanCadenceRPM = nil
                    plan.steps[index].cadenceSeconds = 0
                    plan.steps[index].cadenceSecondsWithin = 0
                }
                statistics.plan = plan
            }
        }
        if withheld.contains(.speed) {
            statistics.averageSpeedMetersPerSecond = nil
            statistics.maximumSpeedMetersPerSecond = nil
            statistics.distanceMeters = 0
        }
        if withheld.contains(.hr) {
            statistics.averageHeartRateBPM = nil
            statistics.maximumHeartRateBPM = nil
        }
        for channel in Channel.allCases where withheld.contains(DataType(channel)) {
            statistics.rejectedSeconds[channel] = nil
        }
        // What the plausibility checks corrected is said in the values' own words (a heart rate of 250 bpm left
        // out): with any measurement withheld, none is said.
        if !withheld.isDisjoint(with: [.power, .cadence, .speed, .hr]) { statistics.corrections = [] }
        return statistics
    }
}

extension RideAnalysis {
    /// An analysis with none of its power figures: what a ride without power is analysed to.
    init(withholdingAll analysis: RideAnalysis) {
        self = analysis
        ftp = nil
        criticalPower = nil
        variabilityIndex = nil
        efficiencyFactor = nil
        aerobicDecouplingPercent = nil
        xPowerWatts = nil
        energyKilocalories = nil
        zoneSeconds = nil
        wPrimeBalanceMinimumIntegralJoules = nil
        wPrimeBalanceMinimumDifferentialJoules = nil
        spikeSeconds = 0
        test = nil
    }
}

extension WorkoutStore.ListEntry {
    public func withholding(_ withheld: Set<DataType>) -> WorkoutStore.ListEntry {
        var entry = self
        if withheld.contains(.speed) { entry.distanceMeters = entry.distanceMeters.map { _ in 0 } }
        if withheld.contains(.power) {
            entry.averagePowerWatts = nil
            entry.normalizedPowerWatts = nil
        }
        return entry
    }
}
