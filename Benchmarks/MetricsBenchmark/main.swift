// `make bench`: the exact all-duration power curve of a 4-hour and a 12-hour ride next to the naive O(N²)
// prefix-sum loop in the same run, and the FTP history over 1000 stored rides. Release build only.
import Foundation
import GRDB
import WorkoutStore
import Workouts

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

/// The real road ride's 1 Hz watts (Fixtures/rides/records), missing seconds as 0 W.
func roadRide() throws -> [Double] {
    let url = root.appendingPathComponent("Fixtures/rides/records/sweatpy_4078723797.records.csv")
    return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").dropFirst().map {
        Double($0.split(separator: ",", omittingEmptySubsequences: false)[1]) ?? 0
    }
}

/// The ride repeated to `seconds`, each lap a little harder so that no two windows tie.
func longRide(_ base: [Double], seconds: Int) -> [Double] {
    (0..<seconds).map { second -> Double in
        let lap = Double(second / base.count)
        return base[second % base.count] * (1 + 0.01 * lap)
    }
}

/// The straightforward exact loop: every window of every duration from prefix sums, four windows at a time in
/// SIMD registers (the vectorised form of the naive loop, as a C compiler would make it).
func naiveCurve(_ watts: [Double]) -> [Double] {
    var prefix = [0.0]
    for value in watts { prefix.append(prefix[prefix.count - 1] + value) }
    var curve = [Double](repeating: 0, count: watts.count)
    prefix.withUnsafeBytes { raw in
        let stride = MemoryLayout<Double>.stride
        for duration in 1...watts.count {
            let starts = watts.count - duration + 1
            var best = SIMD4<Double>(repeating: 0)
            var start = 0
            while start + 4 <= starts {
                let ends = raw.loadUnaligned(fromByteOffset: (start + duration) * stride, as: SIMD4<Double>.self)
                let begins = raw.loadUnaligned(fromByteOffset: start * stride, as: SIMD4<Double>.self)
                best = pointwiseMax(best, ends - begins)
                start += 4
            }
            var result = best.max()
            while start < starts {
                result = max(
                    result,
                    raw.load(fromByteOffset: (start + duration) * stride, as: Double.self)
                        - raw.load(fromByteOffset: start * stride, as: Double.self))
                start += 1
            }
            curve[duration - 1] = result / Double(duration)
        }
    }
    return curve
}

/// Best of `runs` wall-clock times, in milliseconds.
func milliseconds(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<runs {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    return best
}

func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }

let base = try roadRide()
print("Exact mean-maximal power for every duration (best of 5; naive best of 2), release build")
print(pad("ride", 38) + pad("seconds", 9) + pad("cyclelog ms", 13) + pad("naive ms", 10) + "identical")
var noise: UInt64 = 0x9E37_79B9_7F4A_7C15
let rides: [(String, [Double])] = [
    ("real road ride looped, 4 h", longRide(base, seconds: 14_400)),
    ("real road ride looped, 12 h", longRide(base, seconds: 43_200)),
    (
        "uniform noise 0–1000 W, 4 h (worst)",
        (0..<14_400).map { _ in
            noise = noise &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(noise >> 33 % 1000)
        }
    ),
]
for (name, watts) in rides {
    var fast: [Double] = [], slow: [Double] = []
    let fastTime = milliseconds(runs: 5) { fast = PowerCurve.meanMaximal(watts) }
    let slowTime = milliseconds(runs: 2) { slow = naiveCurve(watts) }
    print(
        pad(name, 38) + pad(String(watts.count), 9) + pad(String(format: "%.1f", fastTime), 13)
            + pad(String(format: "%.1f", slowTime), 10) + (fast == slow ? "yes" : "NO"))
}

// 1000 rides of 1–3 h, one every 1–2 days, stored as `finish` stores them, then the whole FTP history rebuilt.
let path = NSTemporaryDirectory() + "cyclelog-ftp-bench-\(getpid()).sqlite"
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
let store = try WorkoutStore(path: path)
let shapes = (0..<10).map { index -> PowerCurve in
    let length = 3600 + index * 720
    let offset = index * 500 % max(1, base.count - length)
    return PowerCurve(segments: [Array(longRide(base, seconds: offset + length)[offset...])])
}
let queue = try DatabaseQueue(path: path)
try queue.write { db in
    var start: Int64 = 1_600_000_000_000_000
    for ride in 0..<1000 {
        let shape = shapes[ride % shapes.count]
        let scale = 0.85 + 0.3 * Double((ride * 37) % 100) / 100
        var blob = Data()
        for watts in shape.watts { withUnsafeBytes(of: Float(watts * scale).bitPattern.littleEndian) { blob += $0 } }
        let end = start + Int64(shape.watts.count) * 1_000_000
        try db.execute(
            sql: """
                INSERT INTO workout (syncIdentifier, status, source, startMicroseconds, endMicroseconds)
                VALUES (?, 'complete', 'bench', ?, ?)
                """, arguments: ["bench-\(ride)", start, end])
        try db.execute(
            sql: "INSERT INTO powerCurve (workoutId, watts) VALUES (?, ?)", arguments: [db.lastInsertedRowID, blob])
        start += Int64(86_400 + (ride % 2) * 86_400) * 1_000_000
    }
}
let ftpTime = try milliseconds(runs: 3) { try store.refreshFTPEstimates() }
let history = try store.ftpHistory()
print("")
print("FTP history over 1000 stored rides (read curves, 42-day envelope fits in date order, write): best of 3")
print(
    String(
        format: "  %.1f ms for %d changes; in force: %.1f W (%@)", ftpTime, history.estimates.count,
        history.inForce(at: .max)?.watts ?? 0, history.inForce(at: .max)?.method.rawValue ?? "none"))
