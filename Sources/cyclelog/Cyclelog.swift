import ArgumentParser

/// The root command: lists the subcommands.
@main
struct Cyclelog: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cyclelog",
        abstract:
            "Collects and decodes Bluetooth LE cycling sensor data (power, speed, cadence, heart rate, trainers).",
        version: "0.1.0",
        subcommands: [Decode.self, Replay.self, List.self, Show.self, Rebuild.self, Delete.self, FTP.self, Chart.self]
    )
}
