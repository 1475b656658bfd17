import GRDB

/// A sensor the rider recorded with before: used again when `record` names none.
public struct KnownSensor: Equatable, Sendable {
    public var address: String
    public var name: String?
    /// Set by the rider; nil uses the default.
    public var wheelCircumferenceMillimetres: Int?
    public var lastUsedMicroseconds: Int64

    public init(address: String, name: String?, wheelCircumferenceMillimetres: Int? = nil, lastUsedMicroseconds: Int64)
    {
        self.address = address
        self.name = name
        self.wheelCircumferenceMillimetres = wheelCircumferenceMillimetres
        self.lastUsedMicroseconds = lastUsedMicroseconds
    }
}

extension WorkoutStore {
    /// Remembered sensors, most recently used first.
    public func knownSensors() throws(StoreError) -> [KnownSensor] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM knownSensor ORDER BY lastUsedMicroseconds DESC, address").map {
                KnownSensor(
                    address: $0["address"], name: $0["name"],
                    wheelCircumferenceMillimetres: $0["wheelCircumferenceMillimetres"],
                    lastUsedMicroseconds: $0["lastUsedMicroseconds"])
            }
        }
    }

    /// Remembers sensors used for a ride; a wheel circumference set earlier is kept.
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
}
