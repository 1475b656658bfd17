import Workouts

/// One second of a ride as every export format lists it: the sample, its UTC time, and the distance ridden up to
/// the end of it.
struct RideSecond {
    var sample: SecondSample
    var timeMicroseconds: Int64
    var distanceMeters: Double

    static func list(_ samples: [SecondSample], startMicroseconds: Int64) -> [RideSecond] {
        var distanceMeters = 0.0
        return samples.map { sample in
            distanceMeters += sample.distanceMeters
            return RideSecond(
                sample: sample, timeMicroseconds: startMicroseconds + Int64(sample.second) * 1_000_000,
                distanceMeters: distanceMeters)
        }
    }
}
