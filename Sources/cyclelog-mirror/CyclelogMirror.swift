import ArgumentParser
import DBus
import ExitStatus
import Foundation
import Hummingbird
import Logging
import Mirror
import ProgramMain
import RecorderInterface

@main
struct CyclelogMirror: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cyclelog-mirror",
        abstract: "The ride being recorded on a second screen: a phone on the handlebars, a tablet, a browser.",
        discussion: """
            Serves a page and a JSON API (/api/v1) for paired devices, and passes their controls to the recorder \
            (`cyclelog record`) over D-Bus. Listens on 127.0.0.1:8787 unless told otherwise; nothing is shown to a \
            device that is not paired (`cyclelog-mirror pair`).
            """,
        version: ProgramVersion.text,
        subcommands: [Serve.self, Pair.self, Devices.self, Grant.self, Revoke.self], defaultSubcommand: Serve.self)

    /// Every message starts "cyclelog-mirror: " (ArgumentParser's would start "Error: ").
    static func main() { runSaying("cyclelog-mirror") }
}

/// `--control-bus`: the recorder's bus, which the mirror's own object shares.
extension ControlBusOptions {
    var address: BusAddress { BusAddress(busName) }
}

extension CyclelogMirror {
    /// Calls a method of the running mirror's object; explains a missing mirror. With no bus named, the session
    /// bus is asked, and when there is none (a box reached over ssh, without a desktop login) the system bus, where
    /// the mirror runs as a service.
    static func call(_ member: String, _ arguments: [DBusValue], control: ControlBusOptions) async throws
        -> [DBusValue]
    {
        guard control.named == nil else { return try await call(member, arguments, bus: control.address) }
        do {
            _ = try await DBusConnection.connect(to: .session)
        } catch {
            return try await call(member, arguments, bus: .system, sessionProblem: error.message)
        }
        return try await call(member, arguments, bus: .session)
    }

    /// The same on `bus`; `sessionProblem`: why the session bus was not asked first.
    static func call(_ member: String, _ arguments: [DBusValue], bus: BusAddress, sessionProblem: String? = nil)
        async throws -> [DBusValue]
    {
        let before = sessionProblem.map { "there is no session bus here (\($0)), and " } ?? ""
        let connection: DBusConnection
        do { connection = try await DBusConnection.connect(to: bus) } catch {
            throw CommandFailure(
                "\(before)cannot reach \(bus) (\(error.message)), where the running mirror is asked: "
                    + "run this where the mirror's bus is (`--control-bus system` beside the cyclelog service; a "
                    + "session bus is there in a desktop login, or with dbus-user-session installed)")
        }
        do {
            return try await connection.call(
                destination: MirrorControl.busName, path: MirrorControl.path, interface: MirrorControl.interface,
                member: member, arguments)
        } catch  where RecorderControl.isMissing(error) {
            throw CommandFailure(
                "\(before)no cyclelog-mirror is running on \(bus): start it with `cyclelog-mirror`"
                    + (sessionProblem == nil
                        ? ""
                        : " (as the service: `sudo systemctl enable --now cyclelog-mirror`), or in a session bus "
                            + "of its own: `dbus-run-session -- bash`, then `cyclelog-mirror &` and `cyclelog-mirror "
                            + "pair` in that shell"))
        } catch {
            throw CommandFailure(error.message.isEmpty ? error.name : error.message)
        }
    }
}
