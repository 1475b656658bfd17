import ArgumentParser

/// The root command: lists the subcommands.
@main
struct Cyclelog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cyclelog",
        abstract:
            "Collects and decodes Bluetooth LE cycling sensor data (power, speed, cadence, heart rate, trainers).",
        version: "0.1.0",
        subcommands: [
            Decode.self, Replay.self, List.self, Show.self, Rebuild.self, Delete.self, FTP.self, Chart.self, Scan.self,
            Record.self, Pause.self, Resume.self, Lap.self, End.self, Cancel.self, Status.self, Recover.self,
            ExportRides.self, ImportRides.self, Doctor.self, Sensors.self, Calibrate.self,
        ]
    )
}
