import ArgumentParser
import ExitStatus
import Formats
import Foundation
import LiveRecording
import ProgramMain
import SensorSetup
import WorkoutStore
import Workouts

struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Checks what recording needs: adapter, rfkill, bluetoothd, D-Bus access, sensors, database, service.",
        discussion: """
            Each finding comes with a fix in plain words. Exit status 0 when nothing stands in the way of \
            recording (warnings included), 1 when something does.
            """)

    @Flag(
        help: """
            One JSON object: {healthy, checks: [{name, status (ok|warning|problem), detail, fix}], adapters: \
            [{name, address, bus, up, leSupported, leLinks, classicLinks, hciVersion, hciRevision, manufacturerId, \
            manufacturer}], adaptersUnavailable}.
            """)
    var json = false

    @Option(help: "Seconds to look for the remembered sensors.")
    var timeout: Double = 5

    @OptionGroup var buses: BusOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let doctor = SetupDoctor(
            probes: .system(
                bluezBus: buses.bluezBus, adapterName: buses.adapter, sensorSearch: .seconds(timeout),
                databasePath: database.db ?? WorkoutStore.defaultPath()))
        let checks = await doctor.checks()
        let healthy = !checks.contains { $0.status == .problem }
        var adapters: [AdapterFacts] = []
        var unavailable: String?
        switch doctor.adapters() {
        case .adapters(let facts): adapters = facts
        case .unavailable(let reason): unavailable = reason
        }
        if json {
            sayOnStandardOutput(
                JSONValue.object([
                    ("healthy", .bool(healthy)), ("checks", .array(checks.map(\.json))),
                    ("adapters", .array(adapters.map(\.json))), ("adaptersUnavailable", .optionalString(unavailable)),
                ]).rendered())
        } else {
            for check in checks {
                sayOnStandardOutput(
                    "\(check.status.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))\(check.name): \(check.detail)"
                )
                if let fix = check.fix { sayOnStandardOutput("        fix: \(fix)") }
            }
            // The kernel's own facts, for a bug report: which adapter, on which bus, how loaded.
            for adapter in adapters { sayOnStandardOutput("adapter " + adapter.summary) }
            if let unavailable { sayOnStandardOutput("adapter " + unavailable) }
        }
        if !healthy { throw ExitStatus.failed.saidAlready }
    }
}
