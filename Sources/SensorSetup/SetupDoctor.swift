import BlueZ
import DBus
import Formats
import Foundation
import LiveRecording
import WorkoutStore
import Workouts

/// One finding of `cyclelog doctor`: what was checked, what was found and, when something is wrong, what to do.
public struct HealthCheck: Sendable, Equatable {
    public enum Status: String, Sendable {
        case ok
        /// Worth knowing, but recording works (a remembered sensor asleep, the service stopped).
        case warning
        /// Recording cannot work until it is fixed.
        case problem
    }

    public var name: String
    public var status: Status
    public var detail: String
    public var fix: String?

    public init(name: String, status: Status, detail: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }

    public var json: JSONValue {
        .object([
            ("name", .string(name)), ("status", .string(status.rawValue)), ("detail", .string(detail)),
            ("fix", fix.map(JSONValue.string) ?? .null),
        ])
    }
}

/// What recording needs, checked in order: the radio, bluetoothd and this user's access to it, the adapter and
/// the remembered sensors, the database, the service. Everything it looks at goes through `Probes`, so its tests
/// replace the machine (sysfs, programs, files) and need no root.
public struct SetupDoctor: Sendable {
    public struct Probes: Sendable {
        /// Where sysfs is (`/sys`; a folder a test made).
        public var sysfs: String
        public var connectBlueZ: @Sendable () async throws(BlueZError) -> BlueZClient
        /// The bus BlueZ is looked for on, as the rider named it.
        public var bluezBus: String
        public var adapterName: String?
        /// How long to look for the remembered sensors.
        public var sensorSearch: Duration
        public var databasePath: String
        /// Runs a program to its end: its exit status and standard output, or nil when it cannot start.
        public var run: @Sendable (_ path: String, _ arguments: [String]) -> (status: Int32, output: String)?
        /// Whether a file is there (unit files, bluetoothd's binary).
        public var fileExists: @Sendable (_ path: String) -> Bool
        /// The kernel's facts about each controller (HCI ioctls).
        public var adapterFacts: @Sendable () -> AdapterFacts.Reading = { .adapters([]) }

        /// This machine's.
        public static func system(
            bluezBus: BusAddress, adapterName: String?, sensorSearch: Duration, databasePath: String,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) -> Probes {
            Probes(
                sysfs: environment["CYCLELOG_SYSFS"] ?? "/sys",
                connectBlueZ: { () throws(BlueZError) in try await BlueZClient.connect(to: bluezBus) },
                bluezBus: "\(bluezBus)", adapterName: adapterName, sensorSearch: sensorSearch,
                databasePath: databasePath, run: SetupDoctor.runProgram,
                fileExists: { FileManager.default.fileExists(atPath: $0) }, adapterFacts: AdapterFacts.read)
        }
    }

    public let probes: Probes

    public init(probes: Probes) {
        self.probes = probes
    }

    /// Every check, in the order a rider fixes them.
    public func checks() async -> [HealthCheck] {
        var checks = [radioCheck()]
        let (storeCheck, known) = databaseCheck()
        if let bluez = await blueZChecks(into: &checks) {
            checks += await adapterAndSensorChecks(bluez, known: known)
        }
        checks.append(storeCheck)
        checks.append(serviceCheck())
        return checks
    }

    /// Each controller's bus, address, LE support, open links, version and maker, as the kernel has them.
    public func adapters() -> AdapterFacts.Reading {
        probes.adapterFacts()
    }

    /// The kernel's controllers and their rfkill switches (`$CYCLELOG_SYSFS` replaces /sys, for tests).
    func radioCheck() -> HealthCheck {
        let radios = BluetoothRadio.all(sysfs: probes.sysfs)
        let name = "radio"
        if radios.isEmpty {
            return HealthCheck(
                name: name, status: .problem, detail: "the kernel shows no Bluetooth controller",
                fix: "plug in a Bluetooth 4.0 (LE) or newer adapter; `lsusb` should list it, and "
                    + "`sudo dmesg | grep -i bluetooth` says why the kernel did not take it")
        }
        if let blocked = radios.first(where: \.hardBlocked) {
            return HealthCheck(
                name: name, status: .problem, detail: "\(blocked.name) is switched off by hardware (rfkill hard block)",
                fix: "turn the radio on with the computer's wireless switch or key, or in its firmware settings")
        }
        if let blocked = radios.first(where: \.softBlocked) {
            return HealthCheck(
                name: name, status: .problem, detail: "\(blocked.name) is blocked (rfkill soft block, airplane mode)",
                fix: "`rfkill unblock bluetooth`")
        }
        return HealthCheck(
            name: name, status: .ok, detail: radios.map(\.name).joined(separator: ", ") + ", not blocked")
    }

    /// bluetoothd on the bus and this user allowed to talk to it; the client when both hold.
    func blueZChecks(into checks: inout [HealthCheck]) async -> BlueZClient? {
        do {
            let bluez = try await probes.connectBlueZ()
            let version = bluetoothdVersion().map { "version \($0)" } ?? "version unknown"
            checks.append(HealthCheck(name: "bluetoothd", status: .ok, detail: "on the bus (\(version))"))
            checks.append(HealthCheck(name: "access", status: .ok, detail: "this user may talk to org.bluez"))
            return bluez
        } catch  where error.kind == .accessDenied {
            checks.append(HealthCheck(name: "bluetoothd", status: .ok, detail: "on the bus"))
            checks.append(
                HealthCheck(
                    name: "access", status: .problem, detail: "the D-Bus policy refuses this user (\(error.dbus.name))",
                    fix: "org.bluez allows members of the 'bluetooth' group (/etc/dbus-1/system.d/bluetooth.conf): "
                        + "`sudo usermod -aG bluetooth $USER`, then log out and back in"))
        } catch  where error.kind == .bluetoothdNotRunning {
            checks.append(
                HealthCheck(
                    name: "bluetoothd", status: .problem, detail: "nobody owns org.bluez on the bus",
                    fix: "`sudo systemctl enable --now bluetooth` (Debian: `sudo apt install bluez` first)"))
        } catch {
            checks.append(
                HealthCheck(
                    name: "bluetoothd", status: .problem,
                    detail: "\(probes.bluezBus) cannot be reached (\(error.dbus.name))",
                    fix: "is dbus running (`systemctl status dbus`), and is --bus or $CYCLELOG_DBUS_ADDRESS right?"))
        }
        return nil
    }

    /// `bluetoothd --version` where Debian and Fedora put it (BlueZ does not say its version on the bus).
    func bluetoothdVersion() -> String? {
        let candidates = ["/usr/libexec/bluetooth/bluetoothd", "/usr/lib/bluetooth/bluetoothd", "/usr/sbin/bluetoothd"]
        guard let path = candidates.first(where: probes.fileExists),
            let version = probes.run(path, ["--version"])?.output.trimmingCharacters(in: .whitespacesAndNewlines),
            !version.isEmpty
        else { return nil }
        return version
    }

    /// Runs a program to its end: its exit status and standard output, or nil when it cannot start.
    @Sendable static func runProgram(_ path: String, _ arguments: [String]) -> (status: Int32, output: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// The adapter BlueZ would record with, powered; then each remembered sensor, looked for for `timeout` s.
    func adapterAndSensorChecks(_ bluez: BlueZClient, known: [KnownSensor]) async -> [HealthCheck] {
        let search: SensorSearch
        do {
            search = try await SensorSearch.open(bluez, adapterName: probes.adapterName, poweringOn: false)
        } catch {
            return [
                HealthCheck(
                    name: "adapter", status: .problem, detail: "\(error)",
                    fix: "check `bluetoothctl list`; with a radio shown above, restarting bluetoothd "
                        + "(`sudo systemctl restart bluetooth`) makes it take it again")
            ]
        }
        let adapter = search.adapter
        let name = adapter.interfaceName
        guard adapter.powered else {
            return [
                HealthCheck(
                    name: "adapter", status: .problem, detail: "\(name) (\(adapter.address)) is off",
                    fix: "`bluetoothctl power on`; to have it on at every start, `AutoEnable=true` in "
                        + "/etc/bluetooth/main.conf")
            ]
        }
        var checks = [HealthCheck(name: "adapter", status: .ok, detail: "\(name) (\(adapter.address)) is on")]
        guard !known.isEmpty else {
            checks.append(
                HealthCheck(
                    name: "sensors", status: .ok,
                    detail: "none remembered yet: `cyclelog record` remembers the sensors it rides with "
                        + "(the service's `record --auto` needs them: `cyclelog sensors add ADDRESS`)"))
            return checks
        }
        _ = try? await search.scan(for: probes.sensorSearch)
        let devices = await search.devices
        for sensor in known {
            let label = sensor.name.map { "\($0) (\(sensor.address))" } ?? sensor.address
            let device = devices.first { $0.address.caseInsensitiveCompare(sensor.address) == .orderedSame }
            if let device, device.connected || device.rssiDBm != nil {
                let battery = device.batteryPercent.map { ", battery \($0) %" } ?? ""
                if let percent = device.batteryPercent, percent <= LiveStatus.lowBatteryPercent {
                    checks.append(
                        HealthCheck(
                            name: "sensor", status: .warning, detail: "\(label) is in range\(battery)",
                            fix: "charge it or replace its battery before the next ride"))
                } else {
                    checks.append(HealthCheck(name: "sensor", status: .ok, detail: "\(label) is in range\(battery)"))
                }
            } else {
                checks.append(
                    HealthCheck(
                        name: "sensor", status: .warning,
                        detail: "\(label) was not heard in \(probes.sensorSearch.components.seconds) s",
                        fix: "wake it (turn the cranks, spin the wheel, wet the strap) and look again; "
                            + "otherwise it is out of range or its battery is flat"))
            }
        }
        return checks
    }

    /// The workout database: writable and intact, or its folder writable when it does not exist yet. Also
    /// returns the remembered sensors.
    func databaseCheck() -> (HealthCheck, [KnownSensor]) {
        let path = probes.databasePath
        let name = "database"
        guard FileManager.default.fileExists(atPath: path) else {
            var folder = (path as NSString).deletingLastPathComponent
            while !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
            if FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder) {
                return (HealthCheck(name: name, status: .ok, detail: "\(path) will be made on the first ride"), [])
            }
            return (
                HealthCheck(
                    name: name, status: .problem, detail: "\(path) cannot be made: \(folder) is not writable",
                    fix: "choose another place with --db or $CYCLELOG_DB, or make \(folder) writable for this user"),
                []
            )
        }
        let folder = (path as NSString).deletingLastPathComponent
        let writable =
            FileManager.default.isWritableFile(atPath: path)
            && FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder)
        let store: WorkoutStore
        do {
            store = try WorkoutStore(path: path, access: .read)
        } catch {
            // Advice by cause: a file that is not ours is left alone, a damaged one recovered, a newer one kept.
            let fix: String
            switch error.code {
            case .notOurs: fix = "it is not cyclelog's: leave it, and name another file with --db or $CYCLELOG_DB"
            case .newerLayout: fix = "use the newer cyclelog that wrote it; this one leaves it untouched"
            case .busy: fix = "another program holds it (a recording?); wait for it, do not move the file"
            case .readOnly, .badPath: fix = "`ls -l \(path)`: give this user read access to the file and its folder"
            case .diskFull, .damaged, .conflict, .notFound, .deleted, .other:
                fix = "keep a copy, then `sqlite3 \(path) .recover | sqlite3 recovered.sqlite`"
            }
            return (HealthCheck(name: name, status: .problem, detail: error.description, fix: fix), [])
        }
        do {
            let integrity = try store.integrityCheck()
            guard integrity == "ok" else {
                return (
                    HealthCheck(
                        name: name, status: .problem, detail: "\(path) is damaged: \(integrity)",
                        fix: "keep a copy, then `sqlite3 \(path) .recover | sqlite3 recovered.sqlite`"), []
                )
            }
            let damaged = try store.damagedStoredData()
            if !damaged.isEmpty {
                let shown = damaged.prefix(3).map(\.description).joined(separator: "; ")
                return (
                    HealthCheck(
                        name: name, status: .problem,
                        detail: "\(path): \(damaged.count) damaged value\(damaged.count == 1 ? "" : "s"): \(shown)",
                        fix:
                            "`cyclelog rebuild ID` rebuilds a ride whose journal is intact; otherwise `cyclelog delete ID`"
                    ),
                    (try? store.knownSensors()) ?? []
                )
            }
            guard writable else {
                return (
                    HealthCheck(
                        name: name, status: .warning,
                        detail: "\(path) is intact but read-only for this user (or its folder is): rides can be "
                            + "read, not stored",
                        fix: "`ls -l \(path)`: record as its owner, or give this user write access to the file and "
                            + "its folder"),
                    (try? store.knownSensors()) ?? []
                )
            }
            return (
                HealthCheck(name: name, status: .ok, detail: "\(path) is writable and intact"),
                (try? store.knownSensors()) ?? []
            )
        } catch {
            let text = "\(error)"
            let fix =
                text.contains("locked")
                ? "another program holds it (a recording?); wait for it, do not move the file"
                : "keep a copy, then `sqlite3 \(path) .recover | sqlite3 recovered.sqlite`"
            return (HealthCheck(name: name, status: .problem, detail: text, fix: fix), [])
        }
    }

    /// The systemd service that records unattended, when it is installed.
    func serviceCheck() -> HealthCheck {
        let units = ["/etc/systemd/system/cyclelog.service", "/usr/local/lib/systemd/system/cyclelog.service"]
        guard units.contains(where: probes.fileExists) else {
            return HealthCheck(
                name: "service", status: .ok, detail: "not installed: cyclelog records when started by hand")
        }
        let active = probes.run("/usr/bin/systemctl", ["is-active", "--quiet", "cyclelog.service"])?.status == 0
        return active
            ? HealthCheck(name: "service", status: .ok, detail: "installed and running")
            : HealthCheck(
                name: "service", status: .warning, detail: "installed but not running",
                fix: "`sudo systemctl enable --now cyclelog`; `journalctl -u cyclelog` says why it stopped")
    }
}
