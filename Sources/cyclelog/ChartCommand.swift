import ArgumentParser
import Charts
import ExitStatus
import Foundation
import RideHistory
import WorkoutStore
import Workouts

struct Chart: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chart",
        abstract: "Draws a ride (power, cadence, speed, heart rate) or the power curve of a window of rides as SVG.",
        discussion: """
            cyclelog chart last -o ride.svg
            cyclelog chart --power-curve --window 90d -o curve.svg
            The power-curve window ends with the newest stored ride.
            """)

    @Argument(help: "The workout to draw: its id from `cyclelog list`, or `last`.")
    var workout: String?

    @Flag(help: "Draw the best power curve of a window of rides, with the critical-power model.")
    var powerCurve = false

    @Option(help: "The power-curve window, in days (90d) or weeks (12w).")
    var window = Days(argument: "90d")!

    @Option(name: .shortAndLong, help: "The SVG file to write (default: ride-ID.svg or power-curve.svg).")
    var output: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if powerCurve == (workout != nil) {
            throw ValidationError("name a workout to draw, or --power-curve (not both)")
        }
    }

    func run() throws {
        let store = try database.openRides()
        let svg: String
        let path: String
        if powerCurve {
            let window = try PowerCurveReport.window(store, days: window.days)
            guard window.rideCount > 0 else {
                throw CommandFailure("no rides are stored yet; `cyclelog replay` adds some")
            }
            svg = PowerCurveChart.svg(window, estimate: window.estimate, fullCurve: window.curve)
            path = output ?? "power-curve.svg"
        } else {
            let id = try WorkoutReference.resolve(workout ?? "last", in: store)
            let ride = try WorkoutReference.ride(id, in: store, analysed: false)
            svg = RideChart.svg(ride.summary, samples: ride.samples)
            path = output ?? "ride-\(id).svg"
        }
        try OutputFile.write(Array(svg.utf8), to: path)
        if path != "-" { sayOnStandardOutput("Wrote \(path).") }
    }
}
