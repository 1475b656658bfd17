import ArgumentParser
import Foundation
import LiveRecording
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

    @Flag(help: "One JSON object: {healthy, checks: [{name, status (ok|warning|problem), detail, fix}]}.")
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
        if json {
            print(JSONValue.object([("healthy", .bool(healthy)), ("checks", .array(checks.map(\.json)))]).rendered())
        } else {
            for check in checks {
                print(
                    "\(check.status.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0))\(check.name): \(check.detail)"
                )
                if let fix = check.fix { print("        fix: \(fix)") }
            }
        }
        if !healthy { throw ExitCode(1) }
    }
}
