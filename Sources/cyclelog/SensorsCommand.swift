import ArgumentParser
import ExitStatus
import Formats
import Foundation
import WorkoutStore
import Workouts

/// `cyclelog sensors`: the remembered sensors, what the rider set for each (wheel, crank length) and their
/// latest calibration.
struct Sensors: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensors",
        abstract: "Lists, adds, renames and forgets the remembered sensors; sets wheel size and crank length.",
        discussion: """
            `record` (and the service's `record --auto`) uses the remembered sensors when none are named. A sensor \
            is named by its address or its name.
            """,
        subcommands: [ListSensors.self, AddSensor.self, RenameSensor.self, ForgetSensor.self, SetSensor.self],
        defaultSubcommand: ListSensors.self)

    /// The remembered sensor `wanted` names (address or name, either case), or a rider-worded error.
    static func find(_ wanted: String, in store: WorkoutStore) throws -> KnownSensor {
        let known = try store.knownSensors()
        let matches = known.filter { $0.isCalled(wanted) }
        guard matches.count == 1, let sensor = matches.first else {
            let listed = known.map { "\($0.name ?? "-") (\($0.address))" }.joined(separator: ", ")
            throw CommandFailure(
                matches.isEmpty
                    ? "no remembered sensor is called \(wanted)"
                        + (known.isEmpty ? " (none is remembered yet)" : "; remembered: \(listed)")
                    : "\(matches.count) remembered sensors are called \(wanted): name it by its address")
        }
        return sensor
    }
}

struct ListSensors: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Lists the remembered sensors.")
    @Flag(
        help: """
            One JSON object per sensor: address, name, wheelCircumferenceMillimetres, crankLengthMillimetres, \
            lastUsed, lastCalibration.
            """)
    var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let store = try database.open(.read)
        let sensors = try store.knownSensors()
        for sensor in sensors {
            let calibration = try store.calibrations(of: sensor.address).last
            if json {
                sayOnStandardOutput(Self.object(sensor, calibration).rendered())
            } else {
                var line = "\(sensor.address)  \(sensor.name ?? "-")"
                line += "  wheel \(sensor.wheelCircumferenceMillimetres.map { "\($0) mm" } ?? "default")"
                if let crank = sensor.crankLengthMillimetres { line += "  crank \(CalibrationText.millimetres(crank))" }
                if sensor.lastUsedMicroseconds > 1 {
                    line += "  last used \(SummaryText.dateTime(sensor.lastUsedMicroseconds))"
                }
                sayOnStandardOutput(line)
                if let calibration { sayOnStandardOutput("    " + CalibrationText.line(calibration)) }
            }
        }
        if sensors.isEmpty && !json {
            sayOnStandardOutput(
                "No sensor is remembered yet: record a ride with them, or `cyclelog sensors add ADDRESS`.")
        }
    }

    static func object(_ sensor: KnownSensor, _ calibration: Calibration?) -> JSONValue {
        .object([
            ("address", .string(sensor.address)), ("name", sensor.name.map(JSONValue.string) ?? .null),
            (
                "wheelCircumferenceMillimetres",
                sensor.wheelCircumferenceMillimetres.map { .integer(Int64($0)) } ?? .null
            ),
            ("crankLengthMillimetres", sensor.crankLengthMillimetres.map(JSONValue.number) ?? .null),
            (
                "lastUsed",
                sensor.lastUsedMicroseconds > 1
                    ? .string(UTCTime.format(microseconds: sensor.lastUsedMicroseconds)) : .null
            ),
            ("lastCalibration", calibration.map(CalibrationText.object) ?? .null),
        ])
    }
}

struct AddSensor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Remembers a sensor by its address (from `cyclelog scan`).")
    @Argument(help: "The sensor's Bluetooth address, such as C0:11:22:33:44:01.")
    var address: String
    @Option(help: "A name for it (default: the name it advertises, once recorded with).")
    var name: String?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw ValidationError("'\(address)' is not a Bluetooth address (six hex pairs: C0:11:22:33:44:01)")
        }
    }

    func run() throws {
        let store = try database.open()
        // Remembered but never used: it sorts after the sensors recorded with.
        try store.rememberSensors([(address: address.uppercased(), name: name)], at: 1)
        sayOnStandardOutput("Remembered \(address.uppercased())\(name.map { " as \($0)" } ?? "").")
    }
}

struct RenameSensor: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rename", abstract: "Renames a remembered sensor.")
    @Argument(help: "The sensor's address or current name.") var sensor: String
    @Argument(help: "Its new name.") var name: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let store = try database.open()
        let known = try Sensors.find(sensor, in: store)
        try store.updateKnownSensor(known.address, name: .some(name))
        sayOnStandardOutput("\(known.address) is now called \(name).")
    }
}

struct ForgetSensor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Forgets a remembered sensor (its past rides keep it).")
    @Argument(help: "The sensor's address or name.") var sensor: String
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let store = try database.open()
        let known = try Sensors.find(sensor, in: store)
        _ = try store.forgetSensor(known.address)
        sayOnStandardOutput("Forgot \(known.name ?? known.address) (\(known.address)).")
    }
}

struct SetSensor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Sets a remembered sensor's wheel size or crank length.",
        discussion: """
            The wheel takes millimetres (2105) or what is printed on the tyre (700x25c, 25-622, 650bx47, 29x2.2, \
            26x2.1); the circumference then follows ISO 5775 geometry. The crank length is kept here; send it to \
            the power meter with `cyclelog calibrate SENSOR --crank-length MM`.
            """)
    @Argument(help: "The sensor's address or name.") var sensor: String
    @Option(help: "Wheel circumference in millimetres, or a tyre size such as 700x25c.") var wheel: String?
    @Option(help: "Crank length in millimetres (110 to 220, in half millimetres), such as 172.5.")
    var crankLength: Double?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if wheel == nil && crankLength == nil { throw ValidationError("give --wheel, --crank-length or both") }
        if let wheel, WheelSize.circumferenceMillimetres(wheel) == nil {
            throw ValidationError(
                "--wheel takes millimetres (500 to 4000) or a tyre size such as 700x25c, 25-622 or 29x2.2, not '\(wheel)'"
            )
        }
        if let crankLength, !CalibrationText.isCrankLength(crankLength) {
            throw ValidationError("--crank-length is 110 to 220 mm in half millimetres, such as 172.5")
        }
    }

    func run() throws {
        let store = try database.open()
        let known = try Sensors.find(sensor, in: store)
        let circumference = wheel.flatMap(WheelSize.circumferenceMillimetres)
        try store.updateKnownSensor(
            known.address, wheelCircumferenceMillimetres: circumference.map { .some($0) },
            crankLengthMillimetres: crankLength.map { .some($0) })
        if let circumference { sayOnStandardOutput("\(known.name ?? known.address): wheel \(circumference) mm.") }
        if let crankLength {
            sayOnStandardOutput("\(known.name ?? known.address): crank \(CalibrationText.millimetres(crankLength)).")
        }
    }
}

/// How calibrations read in the sensor list and a workout's summary.
enum CalibrationText {
    static func line(_ calibration: Calibration) -> String {
        "\(SummaryText.dateTime(calibration.timeMicroseconds))  \(calibration.explanation)"
    }

    /// For each of the ride's sensors, its latest zero offset and latest crank length from before the ride.
    static func before(_ summary: WorkoutSummary, in store: WorkoutStore) -> [Calibration] {
        summary.sensors.flatMap { sensor in
            let earlier = (try? store.calibrations(of: sensor.address, before: summary.startMicroseconds)) ?? []
            let offset = earlier.last { $0.operation.hasSuffix("ffsetCompensation") }
            let crank = earlier.last { $0.operation.hasSuffix("CrankLength") }
            return [offset, crank].compactMap { $0 }
        }
    }

    static func object(_ calibration: Calibration) -> JSONValue {
        .object([
            ("time", .string(UTCTime.format(microseconds: calibration.timeMicroseconds))),
            ("operation", .string(calibration.operation)), ("succeeded", .bool(calibration.succeeded)),
            ("value", calibration.value.map(JSONValue.number) ?? .null),
            ("unit", calibration.unit.map(JSONValue.string) ?? .null),
            ("explanation", .string(calibration.explanation)),
        ])
    }

    static func millimetres(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) mm" : String(format: "%.1f mm", value)
    }

    /// Crank lengths the control point can carry (1/2 mm) and cranks come in.
    static func isCrankLength(_ millimetres: Double) -> Bool {
        (110...220).contains(millimetres) && (millimetres * 2).rounded() == millimetres * 2
    }
}
