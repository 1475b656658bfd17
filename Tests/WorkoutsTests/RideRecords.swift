import Foundation
import XCTest

/// The 1 Hz record streams of the real and synthetic rides (`Fixtures/rides/records`, copied from
/// `../shared/data/rides`) and their independent oracle values.
enum RideRecords {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/rides/records")

    static let realRides = [
        "sweatpy_4078723797", "fitparse_Edge810-Vector-2013-08-16-15-35-10", "sweatpy_6449921903_ACTIVITY",
        "sweatpy_2020-06-01-16-52-40",
    ]
    /// The two rides without pauses, whose device NP is comparable with 1 Hz NP.
    static let continuousRides = Array(realRides.prefix(2))

    /// Watts per elapsed second, missing seconds (pauses, records without power) as 0 W — the oracle's basis.
    static func watts(_ name: String) throws -> [Double] {
        try columns(name).map { $0.watts ?? 0 }
    }

    /// Watts and heart rate per elapsed second (nil where the record is missing or lacks the field).
    static func columns(_ name: String) throws -> [(watts: Double?, heartRate: Double?)] {
        let file = name.hasPrefix("synthetic") ? "\(name).csv" : "\(name).records.csv"
        let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        var rows: [Int: (Double?, Double?)] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let second = Int(fields[0]) else { continue }
            rows[second] = (Double(fields[1]), fields.count > 2 ? Double(fields[2]) : nil)
        }
        let last = rows.keys.max() ?? -1
        return (0...last).map { rows[$0].map { (watts: $0.0, heartRate: $0.1) } ?? (nil, nil) }
    }

    static func json(_ file: String) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent(file))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func oracle(_ name: String) throws -> [String: Any] { try json("\(name).oracle.json") }
    static func device(_ name: String) throws -> [String: Any] { try json("\(name).device.json") }

    /// A number at a path of keys in a JSON object.
    static func number(_ object: [String: Any], _ path: String...) throws -> Double {
        var current: Any = object
        for key in path { current = try XCTUnwrap((current as? [String: Any])?[key], "no \(path)") }
        return try XCTUnwrap((current as? NSNumber)?.doubleValue, "\(path) is not a number")
    }
}
