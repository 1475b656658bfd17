import ArgumentParser
import ExitStatus
import Foundation
import LiveRecording
import SensorSetup
import UnixSignals

/// `cyclelog capture FILE`: the sensors' Bluetooth traffic without a ride, for a sensor that misbehaves before one.
struct CaptureCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Writes the Bluetooth traffic of the cycling sensors to a btsnoop file, without recording a ride.",
        discussion: """
            Reads the kernel's HCI monitor (what btmon reads; it needs CAP_NET_RAW: root, or \
            `sudo setcap cap_net_raw+ep "$(command -v cyclelog)"`) until --seconds have passed or Ctrl-C, and writes \
            what `btmon -w` would, keeping only the controllers' own records and the traffic of the sensors: the \
            remembered ones (`cyclelog sensors`), those named with --sensor and those that advertise a cycling \
            service. Other devices (a phone's audio, a keyboard) are left out. `cyclelog replay FILE` reads it; \
            Wireshark opens it.
            """)

    @Argument(help: "The btsnoop file to write (created with mode 0600, replaced if it exists).")
    var file: String

    @Option(help: "Only this adapter, by name (hci1) or address (default: every adapter).")
    var adapter: String?

    @Option(help: "Stop after this many seconds (default: at Ctrl-C or SIGTERM).")
    var seconds: Double?

    @Option(name: .customLong("sensor"), help: "A sensor's address, kept even if it does not advertise; repeat.")
    var sensors: [String] = []

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds takes a positive number of seconds") }
    }

    func run() async throws {
        var adapterIndex: UInt16?
        if let adapter {
            guard let index = HCICapture.adapterIndex(named: adapter) else {
                throw CommandFailure(
                    "the kernel has no Bluetooth adapter '\(adapter)'; `cyclelog doctor` lists them", .cannotUse)
            }
            adapterIndex = index
        }
        var remembered: [String] = []
        do {
            remembered = try database.open(.read).knownSensors().map(\.address)
        } catch {
            printError("cyclelog: the remembered sensors cannot be read (\(error)); capturing the others")
        }
        let capture: HCICapture
        do {
            capture = try HCICapture(path: file, adapterIndex: adapterIndex, sensors: sensors + remembered)
        } catch {
            throw CommandFailure("cannot capture: \(error.description)", .cannotUse)
        }
        printError("Capturing to \(file); " + (seconds.map { "for \(Self.number($0)) s" } ?? "Ctrl-C ends it") + ".")
        // Until the time is up or a signal comes, or until the capture stops on its own (a full disk).
        let outcome = await withTaskGroup(of: HCICapture.Outcome?.self) { waits in
            waits.addTask { await capture.run() }
            waits.addTask {
                try? await Task.sleep(for: .seconds(seconds ?? Double(Int32.max)))
                return nil
            }
            waits.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { break }
                return nil
            }
            for await finished in waits {
                guard let finished else {
                    capture.stop()
                    continue
                }
                waits.cancelAll()
                return finished
            }
            return HCICapture.Outcome()
        }
        sayOnStandardOutput(Self.report(outcome, file: file))
        if let problem = outcome.problem { throw CommandFailure(problem) }
    }

    /// "1 234 records in ride.btsnoop (567 of other devices and programs left out)".
    static func report(_ outcome: HCICapture.Outcome, file: String) -> String {
        "Capture: \(outcome.kept) records in \(file) (\(outcome.leftOut) of other devices and programs left out)."
    }

    /// Opens the capture `record --capture` asked for, or says why there is none: the ride is recorded anyway.
    static func forRide(file: String, adapter: String?, sensors: [String]) -> HCICapture? {
        do {
            return try HCICapture(
                path: file, adapterIndex: adapter.flatMap(HCICapture.adapterIndex(named:)),
                sensors: sensors.filter { $0.contains(":") })
        } catch {
            printError("cyclelog: no capture: \(error.description). The ride is recorded without one.")
            return nil
        }
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
