// `make bench`: decode throughput per characteristic over every real fixture payload, in process,
// release build; pycycling 0.4.1 and tshark measured on the same payloads in the same run.
import CyclingSensors
import Foundation

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

/// Every fixture payload that decodes, by characteristic (non-conformant ones would only measure errors).
func loadCorpus() throws -> [Characteristic: [[UInt8]]] {
    var corpus: [Characteristic: [[UInt8]]] = [:]
    let folder = root.appendingPathComponent("Fixtures/captures")
    for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where file.hasSuffix(".tsv") {
        let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        for line in text.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count > 6, columns[6] == "conformant",
                let characteristic = Characteristic(identifier: String(columns[2]))
            else { continue }
            var bytes: [UInt8] = []
            var index = columns[5].startIndex
            while index < columns[5].endIndex {
                let next = columns[5].index(index, offsetBy: 2)
                bytes.append(UInt8(columns[5][index..<next], radix: 16) ?? 0)
                index = next
            }
            corpus[characteristic, default: []].append(bytes)
        }
    }
    return corpus
}

/// Decodes the corpus over and over in `rounds` rounds of about 0.2 s and returns the best round's
/// payloads per second: on a shared machine the fastest round is the one least disturbed by others.
/// Inlined so each call site's closure is inlined too, as a decoder called directly would be.
@inline(__always)
func measure(_ payloads: [[UInt8]], rounds: Int = 7, _ decode: ([UInt8]) -> Int) -> (rate: Double, checksum: Int) {
    var checksum = 0
    var best = 0.0
    let clock = ContinuousClock()
    for _ in 0..<rounds {
        var count = 0
        let start = clock.now
        var elapsed = 0.0
        repeat {
            for _ in 0..<200 {
                for payload in payloads { checksum &+= decode(payload) }
            }
            count += 200 * payloads.count
            let duration = clock.now - start
            elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        } while elapsed < 0.2
        best = max(best, Double(count) / elapsed)
    }
    return (best, checksum)
}

func measure(_ characteristic: Characteristic, _ payloads: [[UInt8]]) -> (rate: Double, checksum: Int) {
    switch characteristic {
    case .cyclingPowerMeasurement:
        return measure(payloads) {
            (try? CyclingPowerMeasurement(decoding: $0)).map { Int($0.instantaneousPower) } ?? -1
        }
    case .cscMeasurement:
        return measure(payloads) {
            (try? CSCMeasurement(decoding: $0)).map { Int($0.crankRevolutionData?.cumulativeCrankRevolutions ?? 0) }
                ?? -1
        }
    case .heartRateMeasurement:
        return measure(payloads) { (try? HeartRateMeasurement(decoding: $0)).map { Int($0.heartRate) } ?? -1 }
    case .indoorBikeData:
        return measure(payloads) { (try? IndoorBikeData(decoding: $0)).map { Int($0.instantaneousPower ?? 0) } ?? -1 }
    default:
        return measure(payloads) { (try? characteristic.decodeFields($0))?.count ?? -1 }
    }
}

func runPeer(_ arguments: [String]) -> [String: Double]? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.standardError
    do { try process.run() } catch { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Double]
}

func formatted(_ rate: Double) -> String {
    rate >= 1e6 ? String(format: "%.2f M/s", rate / 1e6) : String(format: "%.1f k/s", rate / 1e3)
}

let corpus = try loadCorpus()
let peerInput = FileManager.default.temporaryDirectory.appendingPathComponent("cyclelog-bench-corpus.txt")
let lines = corpus.sorted { $0.key.rawValue < $1.key.rawValue }.flatMap { characteristic, payloads in
    payloads.map { "\(String(characteristic.rawValue, radix: 16)) \($0.map { String(format: "%02x", $0) }.joined())" }
}
try lines.joined(separator: "\n").write(to: peerInput, atomically: true, encoding: .utf8)

print(
    "cyclelog decode benchmark — release build, one core, \(ProcessInfo.processInfo.processorCount) cores on this machine"
)
let pycycling = runPeer([
    "python3", root.appendingPathComponent("Benchmarks/peers/pycycling_bench.py").path, peerInput.path,
])
if pycycling == nil { print("pycycling: not measured (scripts/setup.sh --bench installs pycycling 0.4.1)") }

print("")
print("| characteristic | corpus payloads | cyclelog | pycycling 0.4.1 | ratio |")
print("|---|---:|---:|---:|---:|")
var checksum = 0
var cpRate = 0.0
for (characteristic, payloads) in corpus.sorted(by: { $0.value.count > $1.value.count }) {
    let result = measure(characteristic, payloads)
    checksum &+= result.checksum
    if characteristic == .cyclingPowerMeasurement { cpRate = result.rate }
    let key = String(characteristic.rawValue, radix: 16)
    let peer = pycycling?[key]
    print(
        "| \(characteristic.name) | \(payloads.count) | \(formatted(result.rate)) | \(peer.map(formatted) ?? "—") | "
            + "\(peer.map { String(format: "%.0f×", result.rate / $0) } ?? "—") |")
}

let notifications = 200_000
if let tshark = runPeer([
    "python3", root.appendingPathComponent("Benchmarks/peers/tshark_bench.py").path, peerInput.path,
    String(notifications),
]),
    let rate = tshark["payloadsPerSecond"]
{
    print("")
    print(
        "tshark 4.0 on a btsnoop of \(notifications) CP/CSC/HRM notifications: \(formatted(rate)) (whole process, "
            + String(format: "%.2f s", tshark["seconds"] ?? 0) + "); cyclelog CP in process is "
            + String(format: "%.0f×", cpRate / rate) + " that")
} else {
    print("tshark: not measured (scripts/setup.sh installs it)")
}
print("")
print("targets: ≥ 20 M CP payloads/s in process, ≥ 50× pycycling (checksum \(checksum & 0xFFFF))")
