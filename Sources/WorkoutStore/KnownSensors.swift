import Foundation
import GRDB

/// A sensor the rider recorded with before: used again when `record` names none.
public struct KnownSensor: Equatable, Sendable {
    public var address: String
    public var name: String?
    /// Set by the rider; nil uses the default.
    public var wheelCircumferenceMillimetres: Int?
    /// The crank length the rider set (and sent to the power meter); nil when never set.
    public var crankLengthMillimetres: Double?
    public var lastUsedMicroseconds: Int64

    public init(
        address: String, name: String?, wheelCircumferenceMillimetres: Int? = nil,
        crankLengthMillimetres: Double? = nil, lastUsedMicroseconds: Int64
    ) {
        self.address = address
        self.name = name
        self.wheelCircumferenceMillimetres = wheelCircumferenceMillimetres
        self.crankLengthMillimetres = crankLengthMillimetres
        self.lastUsedMicroseconds = lastUsedMicroseconds
    }

    /// Whether a rider's `wanted` (an address or a name, in any case) names this sensor.
    public func isCalled(_ wanted: String) -> Bool {
        address.caseInsensitiveCompare(wanted) == .orderedSame
            || name?.caseInsensitiveCompare(wanted) == .orderedSame
    }
}

/// One answer of a power meter's control point: a zero-offset calibration or a crank length set or read.
public struct Calibration: Equatable, Sendable {
    public var address: String
    public var timeMicroseconds: Int64
    /// `offsetCompensation`, `enhancedOffsetCompensation`, `setCrankLength` or `requestCrankLength`.
    public var operation: String
    public var succeeded: Bool
    /// The offset (in `unit`) or the crank length (mm) the sensor reported.
    public var value: Double?
    public var unit: String?
    /// What it means, in the rider's words.
    public var explanation: String
    /// The indication exactly as it arrived.
    public var response: [UInt8]?

    public init(
        address: String, timeMicroseconds: Int64, operation: String, succeeded: Bool, value: Double? = nil,
        unit: String? = nil, explanation: String, response: [UInt8]? = nil
    ) {
        self.address = address
        self.timeMicroseconds = timeMicroseconds
        self.operation = operation
        self.succeeded = succeeded
        self.value = value
        self.unit = unit
        self.explanation = explanation
        self.response = response
    }
}

extension WorkoutStore {
    /// Remembered sensors, most recently used first.
    public func knownSensors() throws(StoreError) -> [KnownSensor] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM knownSensor ORDER BY lastUsedMicroseconds DESC, address").map {
                KnownSensor(
                    address: try $0.decode(forColumn: "address"), name: try $0.decode(forColumn: "name"),
                    wheelCircumferenceMillimetres: try $0.decode(forColumn: "wheelCircumferenceMillimetres"),
                    crankLengthMillimetres: try $0.decode(forColumn: "crankLengthMillimetres"),
                    lastUsedMicroseconds: try $0.decode(forColumn: "lastUsedMicroseconds"))
            }
        }
    }

    /// Remembers sensors used for a ride (or added by the rider); what was set for them earlier is kept.
    public func rememberSensors(_ sensors: [(address: String, name: String?)], at microseconds: Int64)
        throws(StoreError)
    {
        try write { db in
            for sensor in sensors {
                try db.execute(
                    sql: """
                        INSERT INTO knownSensor (address, name, lastUsedMicroseconds) VALUES (?, ?, ?)
                        ON CONFLICT(address) DO UPDATE SET name = coalesce(excluded.name, name),
                        lastUsedMicroseconds = excluded.lastUsedMicroseconds
                        """, arguments: [sensor.address, sensor.name, microseconds])
            }
        }
    }

    /// Changes one remembered sensor; false when no sensor has that address.
    @discardableResult
    public func updateKnownSensor(
        _ address: String, name: String?? = nil, wheelCircumferenceMillimetres: Int?? = nil,
        crankLengthMillimetres: Double?? = nil
    ) throws(StoreError) -> Bool {
        try write { db in
            var assignments: [String] = []
            var arguments: [(any DatabaseValueConvertible)?] = []
            if let name {
                assignments.append("name = ?")
                arguments.append(name)
            }
            if let wheelCircumferenceMillimetres {
                assignments.append("wheelCircumferenceMillimetres = ?")
                arguments.append(wheelCircumferenceMillimetres)
            }
            if let crankLengthMillimetres {
                assignments.append("crankLengthMillimetres = ?")
                arguments.append(crankLengthMillimetres)
            }
            guard !assignments.isEmpty else {
                return try Bool.fetchOne(
                    db, sql: "SELECT count(*) > 0 FROM knownSensor WHERE address = ?", arguments: [address]) ?? false
            }
            try db.execute(
                sql: "UPDATE knownSensor SET \(assignments.joined(separator: ", ")) WHERE address = ?",
                arguments: StatementArguments(arguments + [address]))
            return db.changesCount > 0
        }
    }

    /// Forgets a remembered sensor (its past workouts keep it); false when it was not remembered.
    public func forgetSensor(_ address: String) throws(StoreError) -> Bool {
        try write { db in
            try db.execute(sql: "DELETE FROM knownSensor WHERE address = ?", arguments: [address])
            return db.changesCount > 0
        }
    }

    public func addCalibration(_ calibration: Calibration) throws(StoreError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO calibration (address, timeMicroseconds, operation, succeeded, value, unit,
                    explanation, response) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    calibration.address, calibration.timeMicroseconds, calibration.operation, calibration.succeeded,
                    calibration.value, calibration.unit, calibration.explanation, calibration.response.map { Data($0) },
                ])
        }
    }

    /// Calibrations of one sensor (or all), oldest first, up to `before` when given.
    public func calibrations(of address: String? = nil, before: Int64? = nil) throws(StoreError) -> [Calibration] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM calibration WHERE (?1 IS NULL OR address = ?1) AND (?2 IS NULL OR timeMicroseconds < ?2)
                    ORDER BY timeMicroseconds, id
                    """, arguments: [address, before]
            ).map {
                Calibration(
                    address: try $0.decode(forColumn: "address"),
                    timeMicroseconds: try $0.decode(forColumn: "timeMicroseconds"),
                    operation: try $0.decode(forColumn: "operation"),
                    succeeded: try $0.decode(forColumn: "succeeded"), value: try $0.decode(forColumn: "value"),
                    unit: try $0.decode(forColumn: "unit"), explanation: try $0.decode(forColumn: "explanation"),
                    response: (try $0.decode(forColumn: "response") as Data?).map { Array($0) })
            }
        }
    }
}
