import Foundation

/// The real and synthetic rides: their 1 Hz record streams and independent oracle values
/// (`Fixtures/rides/records`) and the real rides' FIT files (`Fixtures/rides/fit`), all copied from
/// `../shared/data/rides`.
public enum RideRecords {
    public static let folder = fixturesFolder.appendingPathComponent("rides/records")

    /// The FIT file a real ride was recorded as.
    public static func fitFile(_ name: String) -> URL {
        folder.deletingLastPathComponent().appendingPathComponent("fit/\(name).fit")
    }

    public static let realRides = [
        "sweatpy_4078723797", "fitparse_Edge810-Vector-2013-08-16-15-35-10", "sweatpy_6449921903_ACTIVITY",
        "sweatpy_2020-06-01-16-52-40",
    ]
    /// The two rides without pauses, whose device NP is comparable with 1 Hz NP.
    public static let continuousRides = Array(realRides.prefix(2))

    /// Watts per elapsed second, missing seconds (pauses, records without power) as 0 W — the oracle's basis.
    public static func watts(_ name: String) throws -> [Double] {
        try columns(name).map { $0.watts ?? 0 }
    }

    /// Watts and heart rate per elapsed second (nil where the record is missing or lacks the field).
    public static func columns(_ name: String) throws -> [(watts: Double?, heartRate: Double?)] {
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

    public static func json(_ file: String) throws -> [String: Any] {
        let data = try Data(contentsOf: folder.appendingPathComponent(file))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FixtureError("\(file) is not a JSON object")
        }
        return object
    }

    public static func oracle(_ name: String) throws -> [String: Any] { try json("\(name).oracle.json") }
    public static func device(_ name: String) throws -> [String: Any] { try json("\(name).device.json") }

    /// A number at a path of keys in a JSON object.
    public static func number(_ object: [String: Any], _ path: String...) throws -> Double {
        var current: Any = object
        for key in path {
            guard let next = (current as? [String: Any])?[key] else { throw FixtureError("no \(path)") }
            current = next
        }
        guard let number = (current as? NSNumber)?.doubleValue else { throw FixtureError("\(path) is not a number") }
        return number
    }
}

/// A fixture that is not what a test expects of it.
public struct FixtureError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
