import ArgumentParser
import ExitStatus
import Formats
import Foundation
import LiveRecording
import RecorderService
import WorkoutStore
import Workouts

/// `cyclelog presets`: the suggested workouts a ride is started from (launchers, the dashboard, a phone).
struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "Lists, adds, removes and pins the suggested workouts; installs them as desktop actions.",
        discussion: """
            Built in (editable, not removable): open, 20min (FTP test), ramp (ramp test), endurance-1h (goal 1 h). \
            The coach's plan for today (`cyclelog-sync plans`) is offered first, then the pinned presets, then the \
            most recently used. `cyclelog start PRESET` starts one.
            """,
        subcommands: [
            ListPresets.self, AddPreset.self, RemovePreset.self, PinPreset.self, UnpinPreset.self, ResetPreset.self,
            InstallPresets.self,
        ],
        defaultSubcommand: ListPresets.self)

    /// After a change: the desktop actions follow when they were installed.
    static func changed(_ store: WorkoutStore) throws {
        let folders = DesktopFolders()
        guard FileManager.default.fileExists(atPath: folders.desktopFile) else { return }
        try folders.install(try store.presets().map(\.preset))
    }
}

struct ListPresets: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Lists the suggested workouts.")
    @Flag(help: "One JSON object per preset: id, title, style, pinned, lastUsed, builtIn, plannedDay, note.")
    var json = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        for stored in try database.open(.read).presets() {
            let preset = stored.preset
            if json {
                let style = preset.request.style.filter { $0.key != "preset" }.map { ($0.key, $0.value.json) }
                sayOnStandardOutput(
                    JSONValue.object([
                        ("id", .string(preset.id)), ("title", .string(preset.title)), ("style", .object(style)),
                        ("pinned", .bool(stored.pinned)),
                        (
                            "lastUsed",
                            stored.lastUsedMicroseconds.map { .string(UTCTime.format(microseconds: $0)) } ?? .null
                        ),
                        ("builtIn", .bool(stored.builtIn)),
                        ("plannedDay", .optionalString(stored.plannedDay)), ("note", .optionalString(stored.note)),
                    ]).rendered())
            } else {
                let style = preset.request.style.filter { $0.key != "preset" }.map { key, value in
                    if case .text(let text) = value { "\(key)=\(text)" } else { key }
                }
                let planned: String = stored.plannedDay.map { " (planned for \($0))" } ?? ""
                let styleWords: String = style.isEmpty ? "" : "  " + style.joined(separator: " ")
                sayOnStandardOutput(
                    "\(preset.id)\(stored.pinned ? " (pinned)" : "")\(planned)  \(ShownText.visible(preset.title))"
                        + styleWords)
                if let note = stored.note { sayOnStandardOutput("    the coach: \(ShownText.visible(note))") }
            }
        }
    }
}

struct AddPreset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add", abstract: "Adds a preset, or changes one (a built-in one too).")
    @Argument(help: "Its id: lower-case letters, digits and -, e.g. sweet-spot.")
    var id: String
    @Option(help: "What launchers and screens show, e.g. \"Sweet spot 2×20\".")
    var title: String
    @OptionGroup var style: StyleOptions
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        guard WorkoutPreset.isValidID(id) else {
            throw ValidationError("'\(id)' is not a preset id: 1 to 40 lower-case letters, digits and -")
        }
        guard (1...80).contains(title.count), !title.contains(where: \.isNewline) else {
            throw ValidationError("--title takes 1 to 80 characters on one line")
        }
    }

    func run() throws {
        let request: StartRequest
        do {
            request = try StartRequest(style: Dictionary(style.values, uniquingKeysWith: { $1 }), presets: [])
        } catch {
            throw CommandFailure(error.description)
        }
        // A preset keeps the ride's plan, not how the trainer is steered: said, rather than dropped unsaid.
        if request.trainerControl != nil || request.powerFrom != nil {
            throw CommandFailure(
                "a preset keeps a ride's name, goal, place, test, start and workout; --control and --power-from go "
                    + "with `cyclelog start`")
        }
        let store = try database.open()
        // A workout the library does not have would be refused at every start: said now instead.
        if let workout = request.workout, try store.libraryWorkout(workout) == nil {
            throw CommandFailure(UnknownWorkout(id: workout).description, .failed)
        }
        try store.savePreset(WorkoutPreset(id: id, title: title, request: request))
        try Presets.changed(store)
        sayOnStandardOutput("Preset \(id): \(title). Start it with `cyclelog start \(id)`.")
    }
}

/// `presets remove|pin|unpin|reset ID`: one change of a preset by its id.
protocol PresetChange: ParsableCommand {
    var id: String { get }
    var database: DatabaseOptions { get }
    /// Makes the change; false when there is no such preset.
    func change(_ store: WorkoutStore) throws -> Bool
    var done: String { get }
}

extension PresetChange {
    func run() throws {
        let store = try database.open()
        guard try change(store) else {
            let known = try store.presets().map(\.preset.id).joined(separator: ", ")
            throw CommandFailure("no preset '\(id)'; the presets are \(known)")
        }
        try Presets.changed(store)
        sayOnStandardOutput(done)
    }
}

struct RemovePreset: PresetChange {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Removes one of your presets.")
    @Argument(help: "The preset's id.") var id: String
    @OptionGroup var database: DatabaseOptions
    func change(_ store: WorkoutStore) throws -> Bool {
        do { return try store.removePreset(id) } catch { throw CommandFailure(error.description) }
    }
    var done: String { "Removed the preset \(id)." }
}

struct PinPreset: PresetChange {
    static let configuration = CommandConfiguration(commandName: "pin", abstract: "Offers a preset first.")
    @Argument(help: "The preset's id.") var id: String
    @OptionGroup var database: DatabaseOptions
    func change(_ store: WorkoutStore) throws -> Bool { try store.pinPreset(id, true) }
    var done: String { "Pinned \(id): it is offered first." }
}

struct UnpinPreset: PresetChange {
    static let configuration = CommandConfiguration(commandName: "unpin", abstract: "Unpins a preset.")
    @Argument(help: "The preset's id.") var id: String
    @OptionGroup var database: DatabaseOptions
    func change(_ store: WorkoutStore) throws -> Bool { try store.pinPreset(id, false) }
    var done: String { "Unpinned \(id)." }
}

struct ResetPreset: PresetChange {
    static let configuration = CommandConfiguration(
        commandName: "reset", abstract: "Puts a built-in preset back as it was built in.")
    @Argument(help: "The preset's id.") var id: String
    @OptionGroup var database: DatabaseOptions
    func change(_ store: WorkoutStore) throws -> Bool {
        guard WorkoutPreset.builtIn.contains(where: { $0.id == id }) else {
            throw CommandFailure("\(id) is not built in: `cyclelog presets remove \(id)` removes it")
        }
        try store.forgetPreset(id)
        return true
    }
    var done: String { "\(id) is as it was built in again." }
}

struct InstallPresets: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Installs the presets as desktop actions that start the recorder (D-Bus activation).",
        discussion: """
            Writes org.cyclelog.Recorder.desktop to $XDG_DATA_HOME/applications (one action per preset, plus \
            pause, resume, lap and end) and org.cyclelog.Recorder.service to $XDG_DATA_HOME/dbus-1/services, \
            which starts `cyclelog record --wait` when a launcher asks for it. Changing the presets afterwards \
            rewrites the desktop file. `make install` ships the built-in ones system-wide (--built-in).
            """)
    @Option(help: "Where to write (default: $XDG_DATA_HOME, else ~/.local/share).")
    var dataHome: String?
    @Option(help: "The cyclelog the files start (default: this one).")
    var executable: String?
    @Flag(help: "Only the built-in presets, without reading a database (a system-wide install).")
    var builtIn = false
    @OptionGroup var database: DatabaseOptions

    func run() throws {
        let folders = dataHome.map(DesktopFolders.init(dataHome:)) ?? DesktopFolders()
        let presets = builtIn ? WorkoutPreset.builtIn : try database.open(.read).presets().map(\.preset)
        try folders.install(presets, executable: executable)
        sayOnStandardOutput("Installed \(folders.desktopFile)")
        sayOnStandardOutput("Installed \(folders.serviceFile)")
    }
}

/// Where the desktop files go: $XDG_DATA_HOME (else ~/.local/share) as the XDG Base Directory spec says.
struct DesktopFolders {
    let dataHome: String

    init(dataHome: String) { self.dataHome = dataHome }

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            dataHome = home
        } else {
            dataHome = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        }
    }

    var desktopFile: String { dataHome + "/applications/" + DesktopIntegration.desktopFileName }
    var serviceFile: String { dataHome + "/dbus-1/services/" + DesktopIntegration.serviceFileName }

    /// Writes both files; they run `executable`, by default this cyclelog (the one installing them).
    func install(_ presets: [WorkoutPreset], executable: String? = nil) throws {
        let binary =
            executable ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        for (path, text) in [
            (desktopFile, DesktopIntegration.desktopEntry(presets: presets, executable: binary)),
            (serviceFile, DesktopIntegration.dbusService(executable: binary)),
        ] {
            do {
                try FileManager.default.createDirectory(
                    atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try text.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure("cannot write \(path): \(error.localizedDescription)", .cannotUse)
            }
        }
    }
}
