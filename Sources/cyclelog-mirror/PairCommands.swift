import ArgumentParser
import DBus
import ExitStatus
import Formats
import Foundation
import Mirror
import ProgramMain
import Workouts

/// `cyclelog-mirror pair`: a one-time link (with its QR code) and a 6-digit code for a new screen.
struct Pair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Offers a pairing to a new screen: a link with its QR code, and a code valid for 120 s.")
    @OptionGroup var control: ControlBusOptions

    @Option(help: "The device's name, as `devices` lists it.")
    var name = "phone"

    @Option(
        help: ArgumentHelp(
            "What it may see and do, comma-separated: power, cadence, speed, hr, energy, history, intake, ride, "
                + "trainer; read (power, cadence, speed, energy, history) and control (read, intake, ride, trainer) "
                + "for short. Heart rate only when hr is named.",
            valueName: "types"))
    var types = "control"

    /// The option's name before types (`read`, `control`), still taken.
    @Option(help: .hidden)
    var scope: String?

    @Flag(help: "Pairs at once and prints a long-lived token for a script or Home Assistant.")
    var token = false

    @Flag(help: "Prints {\"url\", \"code\", \"token\"} as JSON.")
    var json = false

    /// The types asked for, as the option says them.
    var granted: Set<DataType> {
        get throws {
            switch DataType.list(scope ?? types) {
            case .success(let types): return types
            case .failure(let error): throw ValidationError("--types: \(error)")
            }
        }
    }

    func validate() throws { _ = try granted }

    func run() async throws {
        let granted = try granted
        let reply = try await CyclelogMirror.call(
            "Pair", [.string(name), .string(DataType.text(granted)), .boolean(token)], control: control)
        let url = reply.first?.string ?? "", code = reply.dropFirst().first?.string ?? ""
        let deviceToken = reply.dropFirst(2).first?.string ?? ""
        let loopbackOnly = Self.isLoopback(url)
        if json {
            var fields: [(String, JSONValue)] = [
                ("url", .string(url)), ("code", .string(code)), ("loopbackOnly", .bool(loopbackOnly)),
            ]
            if token { fields.append(("token", .string(deviceToken))) }
            print(JSONValue.object(fields).rendered())
            return
        }
        if loopbackOnly {
            print(
                "The mirror listens on this machine only (its default, 127.0.0.1): a phone cannot open this link.\n"
                    + "To let phones on your network in, start it with `cyclelog-mirror --listen 0.0.0.0:8787` "
                    + "(they still need pairing); the link then carries this machine's network address.\n")
        }
        if token {
            print("\(name) is paired for \(Self.said(granted)). Its token, shown only now:\n\(deviceToken)")
            print("Send it as `Authorization: Bearer TOKEN` to \(url)/api/v1/…")
            return
        }
        print("Offered for \(Self.said(granted)).")
        print("Open this on the phone (valid for 120 s, once):\n  \(url)")
        if let picture = Self.qrCode(url) { print(picture) }
        print("or open \(url.components(separatedBy: "/pair").first ?? url) and type the code \(code)")
    }

    /// Types as a rider reads them, heart rate said in words when it is among them or not.
    static func said(_ types: Set<DataType>) -> String {
        DataType.text(types).replacingOccurrences(of: ",", with: ", ")
            + (types.contains(.hr) ? " (heart rate included)" : " (no heart rate: `grant NAME +hr` gives it)")
    }

    /// Whether a pairing link names a loopback address, which only this machine can open.
    static func isLoopback(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host?.lowercased() else { return false }
        return host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
    }

    /// The URL as a QR code for the terminal, drawn by `qrencode` (Debian's qrencode package) when it is there.
    static func qrCode(_ text: String) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/qrencode")
        process.arguments = ["-t", "UTF8", "-m", "2", text]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "(install qrencode for a QR code here)" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }
}

/// `cyclelog-mirror devices`: the paired screens.
struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the paired devices.")
    @OptionGroup var control: ControlBusOptions

    @Flag(help: "As a JSON array.")
    var json = false

    func run() async throws {
        let reply = try await CyclelogMirror.call("Devices", [], control: control)
        guard case .array(_, let entries)? = reply.first else { return }
        let rows: [(id: String, name: String, types: String, asked: String, created: Int64, lastSeen: Int64)] =
            entries.compactMap { entry in
                guard case .structure(let fields) = entry, fields.count == 6 else { return nil }
                return (
                    String((fields[3].string ?? "").prefix(8)), fields[0].string ?? "", fields[1].string ?? "",
                    fields[2].string ?? "", fields[4].integer ?? 0, fields[5].integer ?? 0
                )
            }
        func time(_ seconds: Int64) -> String {
            seconds == 0 ? "never" : UTCTime.formatSeconds(microseconds: seconds * 1_000_000)
        }
        if json {
            let items: [JSONValue] = rows.map {
                .object([
                    ("id", .string($0.id)), ("name", .string($0.name)),
                    ("types", .array($0.types.split(separator: ",").map { .string(String($0)) })),
                    ("asked", .array($0.asked.split(separator: ",").map { .string(String($0)) })),
                    ("paired", .string(time($0.created))),
                    ("lastSeen", $0.lastSeen == 0 ? .null : .string(time($0.lastSeen))),
                ])
            }
            print(JSONValue.array(items).rendered())
            return
        }
        if rows.isEmpty { print("No device is paired: `cyclelog-mirror pair` pairs one.") }
        // A name is what the device sent at pairing: shown with its control characters escaped, never acted on
        // by the terminal; the id is what `revoke` takes when the name cannot be typed.
        for row in rows {
            print(
                "\(row.id)  \(ShownText.visible(row.name))  \(row.types.isEmpty ? "nothing" : row.types)  "
                    + "paired \(time(row.created))  last seen \(time(row.lastSeen))"
                    + (row.asked.isEmpty
                        ? "" : "\n          asked also for \(row.asked): `grant \(row.id) +\(row.asked)`"))
        }
    }
}

/// The paired device a command names: by its name, or its id when the name cannot be typed.
struct NamedDevice: ParsableArguments {
    @Argument(help: "The device's name or its id (the first column of `devices`).")
    var name: String

    /// What a command that names no paired device is told.
    var missing: CommandFailure {
        CommandFailure("no device is called or has the id '\(ShownText.visible(name))' (see `cyclelog-mirror devices`)")
    }
}

/// `cyclelog-mirror grant NAME|ID +hr,-cadence`: changes what a paired device may see and do.
struct Grant: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Gives (+TYPE) or takes (-TYPE) data types from a paired device; its open streams follow within 1 s.")
    @OptionGroup var control: ControlBusOptions
    @OptionGroup var device: NamedDevice

    /// Taken whole after the name: `-hr` is a change here, not a flag (nor `-h`, help).
    @Argument(
        parsing: .captureForPassthrough,
        help: ArgumentHelp(
            "+TYPE gives, -TYPE takes, comma- or space-separated (hr, power, cadence, speed, energy, history, "
                + "intake, ride, trainer; read, control).", valueName: "changes"))
    var words: [String] = []

    var changes: String { words.joined(separator: ",") }

    func validate() throws {
        guard !words.isEmpty else { throw ValidationError("say what to give or take: +hr, -hr, +power,-cadence …") }
        if case .failure(let error) = DataType.changes(changes) { throw ValidationError(error.description) }
    }

    func run() async throws {
        let reply = try await CyclelogMirror.call("Grant", [.string(device.name), .string(changes)], control: control)
        guard case .array(_, let entries)? = reply.first, !entries.isEmpty else { throw device.missing }
        for entry in entries {
            guard case .structure(let fields) = entry, fields.count == 2 else { continue }
            let types = fields[1].string ?? ""
            print(
                "\(ShownText.visible(fields[0].string ?? "")) may now see and do: \(types.isEmpty ? "nothing" : types)")
        }
    }
}

/// `cyclelog-mirror revoke NAME|ID`: forgets a device and closes its streams.
struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Forgets a paired device; its open streams close at once.")
    @OptionGroup var control: ControlBusOptions
    @OptionGroup var device: NamedDevice

    func run() async throws {
        let reply = try await CyclelogMirror.call("Revoke", [.string(device.name)], control: control)
        guard (reply.first?.integer ?? 0) > 0 else { throw device.missing }
        print("Revoked \(ShownText.visible(device.name)).")
    }
}
