// `make bench` (Benchmarks/workout_bench.py): reading workout files of 1000 steps, and what a structured workout
// costs a ride: the player's work at every flush of a live ride, and the compliance of a 4-hour ride. Release build
// only. Prints one JSON object for the script, which measures the peer (Python's ElementTree) on the same file.
import FIT
import Foundation
import StructuredWorkouts
import WorkoutFiles
import Workouts

/// Best and median wall-clock milliseconds of `runs` runs.
func milliseconds(runs: Int, _ body: () throws -> Void) rethrows -> (best: Double, median: Double) {
    var times: [Double] = []
    for _ in 0..<runs {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }
    times.sort()
    return (times[0], times[times.count / 2])
}

let arguments = CommandLine.arguments
guard arguments.count == 2, let data = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: WorkoutBenchmark FILE.zwo\n".utf8))
    exit(64)
}
let zwo = Array(data)
let workout = try ZWOFile.read(zwo)
precondition(workout.steps.count == 1000, "the benchmark's file has 1000 steps, not \(workout.steps.count)")
let zwoTime = try milliseconds(runs: 50) { _ = try ZWOFile.read(zwo) }
let text = WorkoutText.text(workout)
let textTime = try milliseconds(runs: 50) { _ = try WorkoutText.parse(text) }
let fit = FITWorkoutFile.write(workout, createdMicroseconds: 0)
let fitTime = try milliseconds(runs: 50) { _ = try FITWorkoutFile.read(fit) }

// The player as a live ride uses it: at every flush (twice a second) moved on, its target, range and next target for
// the status, over a 4-hour ride (the whole workout's profile is made once, and again when the intensity changes).
let planned = PlannedWorkout(workout, ftpWatts: 250)
let ticks = 4 * 3600 * 2
var checksum = 0
let playerTime = milliseconds(runs: 5) {
    var player = WorkoutPlayer(planned)
    for _ in 0..<ticks {
        player.advance(seconds: 0.5, meters: 4)
        checksum &+= player.targetWatts ?? 0
        checksum &+= player.nextTargetWatts ?? 0
        checksum &+= player.targetRangeWatts?.lowerBound ?? 0
    }
}

// A 4-hour ride's compliance against the workout (once when the ride is saved, again at each rebuild).
let samples = (0..<(4 * 3600)).map { second in
    SecondSample(second: second, powerWatts: 150 + Double(second % 200), cadenceRPM: 90, distanceMeters: 8)
}
let complianceTime = milliseconds(runs: 10) {
    let compliance = PlanCompliance(samples[...], planned: planned, controls: [], laps: [], startMicroseconds: 0)
    checksum &+= compliance.steps.count
}

let result: [String: Any] = [
    "steps": workout.steps.count, "bytes": zwo.count,
    "zwoBestMs": zwoTime.best, "zwoMedianMs": zwoTime.median,
    "textBestMs": textTime.best, "fitBestMs": fitTime.best, "fitBytes": fit.count,
    "playerTicks": ticks, "playerBestMs": playerTime.best,
    "complianceSeconds": samples.count, "complianceBestMs": complianceTime.best, "checksum": checksum,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: .sortedKeys), as: UTF8.self))
