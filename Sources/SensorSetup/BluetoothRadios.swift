import Foundation
import LiveRecording

/// The kernel's view of the Bluetooth controllers, from sysfs: which exist (`/sys/class/bluetooth/hciN`) and
/// whether rfkill blocks them (`/sys/class/rfkill/rfkillN` with `type` "bluetooth"). BlueZ shows a blocked
/// adapter only as "not powered", so this is where `cyclelog doctor` learns why.
public struct BluetoothRadio: Equatable, Sendable {
    public var name: String
    /// Blocked by software (`rfkill block`, a desktop's airplane mode): `rfkill unblock bluetooth` lifts it.
    public var softBlocked: Bool
    /// Blocked by a switch or the firmware: only the switch (or the BIOS setting) lifts it.
    public var hardBlocked: Bool

    public init(name: String, softBlocked: Bool = false, hardBlocked: Bool = false) {
        self.name = name
        self.softBlocked = softBlocked
        self.hardBlocked = hardBlocked
    }

    /// The controllers under `sysfs` (normally "/sys"), sorted by name. A controller with no rfkill switch of its
    /// own is never blocked.
    public static func all(sysfs: String = "/sys") -> [BluetoothRadio] {
        let files = FileManager.default
        let controllers = (try? files.contentsOfDirectory(atPath: sysfs + "/class/bluetooth")) ?? []
        var radios = controllers.filter { $0.hasPrefix("hci") && !$0.contains(":") }.map { BluetoothRadio(name: $0) }
        let switches = (try? files.contentsOfDirectory(atPath: sysfs + "/class/rfkill")) ?? []
        for folder in switches {
            let path = sysfs + "/class/rfkill/" + folder + "/"
            guard read(path + "type") == "bluetooth", let name = read(path + "name"),
                let index = radios.firstIndex(where: { $0.name == name })
            else { continue }
            radios[index].softBlocked = read(path + "soft") == "1"
            radios[index].hardBlocked = read(path + "hard") == "1"
        }
        return radios.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }

    private static func read(_ path: String) -> String? {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
