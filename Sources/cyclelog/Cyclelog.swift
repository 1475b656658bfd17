import ArgumentParser
import CMalloc
import Foundation
import ProgramMain

/// The root command: lists the subcommands.
@main
struct Cyclelog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cyclelog",
        abstract:
            "Collects and decodes Bluetooth LE cycling sensor data (power, speed, cadence, heart rate, trainers).",
        version: ProgramVersion.text,
        // Every command sets its `commandName`: otherwise ArgumentParser derives each from its type's name with
        // `String(describing:)`, whose dynamic casts scan every protocol conformance in the binary, at each start.
        subcommands: [
            Decode.self, Replay.self, List.self, Show.self, Rebuild.self, Rename.self, Delete.self, Duplicates.self,
            FTP.self,
            Chart.self, Scan.self,
            Record.self, Start.self, Pause.self, Resume.self, Lap.self, End.self, Undo.self, Cancel.self, Marker.self,
            Water.self,
            Target.self, Grade.self, Resistance.self, TrainerModeCommand.self,
            Skip.self, Back.self, Extend.self, Intensity.self,
            Status.self, Recover.self,
            ExportRides.self, ImportRides.self, Doctor.self, Sensors.self, Presets.self, LibraryCommand.self,
            Calibrate.self,
            CaptureCommand.self, RiderCommand.self,
        ]
    )

    /// ArgumentParser reads `-1` as an unknown short option and then reports the missing argument instead
    /// ("show -1" said "Missing expected argument"); apart from a trainer's target change (`target -10`), a
    /// downhill grade (`grade -2`) and an easier workout (`intensity -5`), which take theirs as they come, no
    /// value cyclelog takes is negative, so a
    /// negative number before `--` gets a message of its own.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let takesNegative = ["target", "grade", "intensity"].contains(arguments.first ?? "")
        for argument in arguments.prefix(while: { $0 != "--" }) where argument.isNegativeNumber && !takesNegative {
            let why =
                switch arguments.first {
                case "resistance": "a resistance is a share of the trainer's range, from 0 to 100 %"
                case "extend": "extend adds time to the step (30s, 1m, 2m30s); `cyclelog skip` moves on to the next"
                default:
                    "nothing is negative here (workouts are numbered from 1 in `cyclelog list`, and `last` names the "
                        + "newest)"
                }
            printError("cyclelog: '\(argument)' is not a value cyclelog takes: \(why)")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        // A block of 1 MB or more (a capture's bytes, its events) is mapped for itself and unmapped when freed; by
        // default glibc does so only until the first such block is freed, then keeps the next ones in its
        // per-thread heaps, which a replay's threads would each grow by megabytes. Smaller blocks stay in the
        // heaps: mapping and unmapping each deflate's 270 kB of state took longer than the deflating.
        mallopt(M_MMAP_THRESHOLD, 1024 * 1024)
        Logs.bootstrap()
        runSaying("cyclelog", arguments: arguments)
    }
}

extension String {
    fileprivate var isNegativeNumber: Bool {
        guard let first, first == "-", count > 1 else { return false }
        return dropFirst().allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } && Double(self) != nil
    }
}
