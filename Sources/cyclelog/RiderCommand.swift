import ArgumentParser
import Formats
import WorkoutStore
import Workouts

/// `cyclelog rider [NAME]`: whose rides this database holds, as the shared store knows them (cyclelog-sync).
struct RiderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rider", abstract: "Shows this database's rider, or renames them.")

    @Argument(help: "A new name for the rider (1–200 characters).")
    var name: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if let name, name.isEmpty || name.count > 200 || name.contains(where: { $0.isNewline }) {
            throw ValidationError("a rider's name is 1–200 characters on one line")
        }
    }

    func run() throws {
        let store = try database.open()
        if let name { try store.renameRider(name) }
        let rider = try store.rider()
        sayOnStandardOutput(
            "Rider: \(ShownText.visible(rider.name)) (\(rider.uuid))\n"
                + "This database collects as \(ShownText.visible(rider.collectorName)) (\(rider.collectorUUID)).")
    }
}
