import BlueZ
import DBus
import Foundation
import XCTest

/// The BlueZ stand-in (Tests/BlueZStandIn/bluez_standin.py) on a private bus, playing sensors from a real ride.
public final class StandIn: @unchecked Sendable {
    public static let testsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
    public static let script = testsFolder.appendingPathComponent("BlueZStandIn/bluez_standin.py").path
    public static let ride = testsFolder.deletingLastPathComponent()
        .appendingPathComponent("Fixtures/rides/sweatpy_2020-06-01-16-52-40.journal").path

    public let bus: PrivateBus
    public let process: ChildProcess
    public var sentLogPath: String { bus.folder.appendingPathComponent("sent.log").path }
    public var logPath: String { bus.folder.appendingPathComponent("standin.log").path }
    /// What it has written to its log so far (empty before it wrote anything).
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public static var power: [String: Any] {
        [
            "address": "C0:11:22:33:44:01", "name": "Stages Power L", "service": "1818", "measurement": "2a63",
            "journal": ride, "rateHz": 4, "battery": 80, "reads": ["2a65": "08000000", "2a5d": "05"],
        ]
    }
    public static var cadence: [String: Any] {
        [
            "address": "C0:11:22:33:44:02", "name": "Wahoo CADENCE", "service": "1816", "measurement": "2a5b",
            "journal": ride, "rateHz": 2, "battery": 12, "reads": ["2a5c": "0300"],
        ]
    }
    public static var heartRate: [String: Any] {
        [
            "address": "C0:11:22:33:44:03", "name": "Polar H10", "service": "180d", "measurement": "2a37",
            "journal": ride, "rateHz": 1, "battery": 95,
        ]
    }

    /// A smart trainer (FTMS) taking ERG, resistance and simulation, 0–1500 W, its power following the target with
    /// a time constant of 1 s (Tests/SensorEmulator/ride_sensors.py, `FitnessMachineTrainer`); `trainer` changes
    /// that (targets, powerRange, refuse, readsHigh, tauSeconds, cadence).
    public static func trainer(_ trainer: [String: Any] = [:]) -> [String: Any] {
        [
            "address": "F1:22:33:44:55:66", "name": "KICKR", "service": "1826", "measurement": "2ad2",
            "rateHz": 4, "battery": 100, "trainer": trainer,
        ]
    }
    /// The rider's crank power meter on the trainer's bike: the trainer's true power, 4 a second.
    public static var meterOnTheTrainer: [String: Any] {
        [
            "address": "C0:11:22:33:44:01", "name": "Stages Power L", "service": "1818", "measurement": "2a63",
            "rateHz": 4, "battery": 80, "follows": "F1:22:33:44:55:66", "reads": ["2a65": "00000000"],
        ]
    }

    /// `hub`: a second adapter with an app that connects to what is registered there (the stand-in's `Hub`).
    public init(
        sensors: [[String: Any]], events: [[String: Any]] = [], hub: [String: Any]? = nil, bus: PrivateBus? = nil
    ) throws {
        self.bus = try bus ?? PrivateBus()
        var scenario: [String: Any] = [
            "sensors": sensors, "events": events, "sentLog": self.bus.folder.appendingPathComponent("sent.log").path,
        ]
        scenario["hub"] = hub
        let scenarioPath = self.bus.folder.appendingPathComponent("scenario.json")
        try JSONSerialization.data(withJSONObject: scenario).write(to: scenarioPath)
        process = try ChildProcess(
            ["/usr/bin/env", "python3", Self.script, "--address", self.bus.address, "--scenario", scenarioPath.path],
            outputPath: self.bus.folder.appendingPathComponent("standin.log").path)
    }

    /// One connection of the test's own for asking the bus who owns a name.
    private var probe: DBusConnection?

    /// Who owns a name on the stand-in's bus now (nil: nobody).
    public func busNameOwner(_ name: String) async throws -> String? {
        if probe == nil { probe = try await DBusConnection.connect(to: .address(bus.address)) }
        return try await probe?.nameOwner(name)
    }

    /// Waits until the stand-in owns org.bluez; fails with its log (a missing dbus-fast says how to install it).
    public func waitUntilReady() async throws {
        for _ in 0..<200 {
            if try await busNameOwner("org.bluez") != nil { return }
            guard process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTFail("the BlueZ stand-in did not start (scripts/setup.sh installs dbus-fast):\n\(log)")
        throw CancellationError()
    }

    /// What the stand-in sent: (unix seconds, address, characteristic, bytes), in order.
    public func sent() throws -> [(time: Double, address: String, characteristic: String, value: [UInt8])] {
        try logged().filter { $0.characteristic != "write" }
    }

    /// The scenario's events as each sensor played them: (unix seconds, address, what: `silent`, `still`, …).
    public func events() throws -> [(time: Double, address: String, what: String)] {
        let lines = try String(contentsOfFile: sentLogPath, encoding: .utf8).split(separator: "\n")
        var events: [(time: Double, address: String, what: String)] = []
        for line in lines {
            let words = line.split(separator: " ")
            guard words.count >= 4, words[2] == "event", let time = Double(words[0]) else { continue }
            events.append((time, String(words[1]), String(words[3])))
        }
        return events
    }

    /// What the hub's app at `app` logged, in order, each line's words after the address: `registered`,
    /// `connected`, `subscribed`, `hub-2a63 <hex>` (a value it heard), `withdrawn`, `unregistered` …
    public func appLog(_ app: String) throws -> [[String]] {
        try String(contentsOfFile: sentLogPath, encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: " ").map(String.init) }.filter { $0.count >= 3 && $0[1] == app }
            .map { Array($0.dropFirst(2)) }
    }

    /// What was written to the stand-in's characteristics (the control point), in order.
    public func writes() throws -> [[UInt8]] {
        try logged().filter { $0.characteristic == "write" }.map(\.value)
    }

    private func logged() throws -> [(time: Double, address: String, characteristic: String, value: [UInt8])] {
        try String(contentsOfFile: sentLogPath, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: " ")
        }.filter { $0.count >= 4 && $0[2] != "event" }.map { words in
            let hex = Array(words[3].utf8)
            let bytes = stride(from: 0, to: hex.count, by: 2).map {
                UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)!
            }
            return (Double(words[0])!, String(words[1]), String(words[2]), bytes)
        }
    }
}
