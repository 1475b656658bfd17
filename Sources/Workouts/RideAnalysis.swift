/// What a ride's power says measured against the rider's FTP and critical power on its date. It is computed when
/// the ride is shown, from the stored 1 Hz series, because the FTP in force can change after the ride is saved.
public struct RideAnalysis: Equatable, Sendable {
    /// The FTP in force when the ride started (gives IF, TSS and zones).
    public var ftp: FTPEstimate?
    /// The newest critical-power model on that date (gives W′ balance).
    public var criticalPower: CriticalPowerModel?
    /// NP / average power.
    public var variabilityIndex: Double?
    /// NP / average heart rate.
    public var efficiencyFactor: Double?
    public var aerobicDecouplingPercent: Double?
    public var xPowerWatts: Double?
    public var energyKilocalories: Double?
    /// Moving seconds with power in each Coggan zone (nil without an FTP).
    public var zoneSeconds: [Double]?
    public var wPrimeBalanceMinimumIntegralJoules: Double?
    public var wPrimeBalanceMinimumDifferentialJoules: Double?
    /// Seconds the spike filter replaced before the power curve.
    public var spikeSeconds: Int
    /// The fitness test the ride declared, and what it scored (nil for a ride that declared none).
    public var test: TestScore?

    /// The analysis of a ride's samples. Power metrics use the moving seconds with a dropout as 0 W, as NP does;
    /// W′ balance uses every elapsed second (paused seconds at 0 W), because W′ recovers during a stop.
    public init(
        samples: [SecondSample], statistics: WorkoutStatistics, ftp: FTPEstimate?,
        criticalPower: CriticalPowerModel?
    ) {
        self.ftp = ftp
        self.criticalPower = criticalPower
        // The gap rule: seconds without power are left out, as in the average and NP. Gathered in one pass: a
        // copy of the running seconds would be 1.4 MB for four hours.
        var movingWatts: [Double] = []
        var poweredHeartRates: [Double?] = []
        for sample in samples where sample.isRunning {
            guard let watts = sample.powerWatts else { continue }
            movingWatts.append(watts)
            poweredHeartRates.append(sample.heartRateBPM)
        }
        let hasPower = !movingWatts.isEmpty
        spikeSeconds = WorkoutStatistics.runningPowerSegments(samples).map { SpikeFilter.filtered($0).replacedSeconds }
            .reduce(0, +)
        guard hasPower else { return }
        let np = statistics.normalizedPowerWatts
        if let np, let average = statistics.averagePowerWatts, average > 0 { variabilityIndex = np / average }
        if let np, let heartRate = statistics.averageHeartRateBPM, heartRate > 0 { efficiencyFactor = np / heartRate }
        aerobicDecouplingPercent = PowerMetrics.aerobicDecouplingPercent(
            watts: movingWatts, heartRateBPM: poweredHeartRates)
        xPowerWatts = PowerMetrics.xPower(movingWatts)
        energyKilocalories = statistics.workJoules.map { PowerMetrics.kilocalories(workJoules: $0) }
        if let ftp, ftp.watts > 0 {
            zoneSeconds = PowerMetrics.zoneSeconds(movingWatts, ftpWatts: ftp.watts)
        }
        if let criticalPower,
            let balance = PowerMetrics.wPrimeBalanceMinimum(samples.map { $0.powerWatts ?? 0 }, model: criticalPower)
        {
            wPrimeBalanceMinimumIntegralJoules = balance.integralJoules
            wPrimeBalanceMinimumDifferentialJoules = balance.differentialJoules
        }
    }
}
