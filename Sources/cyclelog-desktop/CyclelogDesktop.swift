import ArgumentParser
import DBus
import DesktopItem
import ExitStatus
import Foundation
import ProgramMain
import RecorderInterface
import WorkoutStore
import Workouts

@main
struct CyclelogDesktop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cyclelog-desktop",
        abstract: "The ride being recorded, on the desktop outside any window: a status-area item and notifications.",
        discussion: """
            Follows the recorder (`cyclelog record`) over D-Bus as the mirror does: the live numbers in a \
            status-area item (StatusNotifierItem: KDE, XFCE, waybar, GNOME with the AppIndicator extension) with a \
            menu to start, pause, resume, lap and end, and one notification, replaced in place, for the ride's \
            changes. `cyclelog-desktop autostart` has the desktop session start it at login.
            """,
        version: ProgramVersion.text,
        subcommands: [Follow.self, AutostartCommand.self], defaultSubcommand: Follow.self)

    static func main() { runSaying("cyclelog-desktop") }
}

/// The options that say what the item shows, shared by `follow` and `autostart` (which writes them into the
/// file).
struct ShowOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "What the desktop may read and control, as `cyclelog-mirror pair --types` takes them (heart rate only when named: control,hr).",
            valueName: "types"))
    var types = "control"

    @Option(help: "The ride database the saved rides are read from (default: $CYCLELOG_DB, else cyclelog's).")
    var db: String?

    var granted: Set<DataType> {
        get throws {
            switch DataType.list(types) {
            case .success(let types): return types
            case .failure(let error): throw ValidationError("--types: \(error)")
            }
        }
    }

    /// The options as they were given, for the autostart file.
    var arguments: [String] { ["--types", types] + (db.map { ["--db", $0] } ?? []) }
}

/// `cyclelog-desktop` (`follow`): the item, until the desktop session ends.
struct Follow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "follow", abstract: "Shows the ride in the status area and in notifications.")

    @OptionGroup var control: ControlBusOptions
    @OptionGroup var show: ShowOptions

    func validate() throws { _ = try show.granted }

    func run() async throws {
        let session: DBusConnection
        do { session = try await DBusConnection.connect(to: .session) } catch {
            throw CommandFailure(
                "cannot reach the desktop's session bus (\(error.message)): the item lives in a desktop login "
                    + "(a graphical session, or dbus-user-session installed)")
        }
        let reader = SavedRideReader(databasePath: show.db ?? WorkoutStore.defaultPath())
        let item = DesktopItem(
            session: session,
            link: RecorderLink(
                bus: BusAddress(control.busName), meanwhile: "the item says \"no recorder running\" meanwhile",
                followsLive: false),
            types: try show.granted, readSaved: { id in try? reader.read(id) },
            say: { line in FileHandle.standardError.write(Data(("cyclelog-desktop: " + line + "\n").utf8)) })
        do { try await item.run() } catch {
            throw CommandFailure("the session bus refused the item: \(error.message)")
        }
    }
}

/// `cyclelog-desktop autostart`: the item started by the desktop session at login, or no longer.
struct AutostartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "autostart",
        abstract: "Has the desktop session start the item at login (writes ~/.config/autostart/\(Autostart.fileName)).")

    @OptionGroup var show: ShowOptions

    @Flag(help: "Removes the autostart file instead.")
    var remove = false

    func validate() throws { _ = try show.granted }

    func run() throws {
        let path = Autostart.path()
        if remove {
            guard FileManager.default.fileExists(atPath: path) else {
                print("cyclelog-desktop: no autostart file (\(path)): nothing to remove")
                return
            }
            do { try FileManager.default.removeItem(atPath: path) } catch {
                throw CommandFailure("cannot remove \(path): \(error.localizedDescription)")
            }
            print("cyclelog-desktop: removed \(path): the item no longer starts at login")
            return
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? executable
        let text = Autostart.entry(executable: resolved, arguments: show.arguments)
        do {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure("cannot write \(path): \(error.localizedDescription)")
        }
        print(
            "cyclelog-desktop: wrote \(path): the item starts at the next login (\(show.arguments.joined(separator: " ")))"
        )
    }
}
