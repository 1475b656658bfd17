import DBus
import Foundation
import SensorHub

/// The DirCon hub announced on the LAN by mDNS as `_wahoo-fitness-tnp._tcp`, the service DirCon apps browse for,
/// through avahi-daemon's D-Bus API on the system bus (an entry group holding one service; avahi withdraws it when
/// the connection that added it closes).
public enum DirConAnnouncement {
    public static let serviceType = "_wahoo-fitness-tnp._tcp"

    /// The TXT record DirCon apps read: `ble-service-uuids` (the hub's 16-bit service UUIDs in hex, comma-separated),
    /// `mac-address` (which apps remember the device by) and `serial-number`.
    public static func txt(services: [HubService], macAddress: String, serialNumber: String) -> [[UInt8]] {
        let uuids = services.map { String(format: "0x%04X", $0.uuid) }.joined(separator: ",")
        return ["ble-service-uuids=\(uuids)", "mac-address=\(macAddress)", "serial-number=\(serialNumber)"]
            .map { Array($0.utf8) }
    }

    /// Adds and commits the service `name` on `port` to avahi-daemon on `bus`: the connection it was added on,
    /// which must stay open for as long as the hub is announced. Fails in words when avahi-daemon is not there.
    public static func announce(name: String, port: Int, txt: [[UInt8]], bus: BusAddress = .system)
        async throws(DBusError) -> DBusConnection
    {
        let connection = try await DBusConnection.connect(to: bus)
        do throws(DBusError) {
            let group = try await connection.call(
                destination: "org.freedesktop.Avahi", path: "/", interface: "org.freedesktop.Avahi.Server",
                member: "EntryGroupNew", timeout: .seconds(5))
            guard case .objectPath(let path)? = group.first else {
                throw DBusError(name: DBusError.failedName, message: "avahi-daemon gave no entry group")
            }
            // Every interface and protocol (-1), no flags, the default domain and host name.
            try await connection.call(
                destination: "org.freedesktop.Avahi", path: path, interface: "org.freedesktop.Avahi.EntryGroup",
                member: "AddService",
                [
                    .int32(-1), .int32(-1), .uint32(0), .string(name), .string(serviceType), .string(""), .string(""),
                    .uint16(UInt16(clamping: port)), .array(elementSignature: "ay", txt.map(DBusValue.bytes)),
                ], timeout: .seconds(5))
            try await connection.call(
                destination: "org.freedesktop.Avahi", path: path, interface: "org.freedesktop.Avahi.EntryGroup",
                member: "Commit", timeout: .seconds(5))
            return connection
        } catch {
            throw DBusError(
                name: error.name,
                message: "avahi-daemon did not announce the hub (\(error.message)): DirCon apps that look for it by "
                    + "mDNS will not find it; install and start avahi-daemon, or give the app the address")
        }
    }

    /// The hardware address of the machine's first network interface that has one (apps remember a DirCon device
    /// by it), else a fixed one.
    public static func macAddress() -> String {
        let folder = "/sys/class/net"
        let interfaces = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        for name in interfaces where name != "lo" {
            guard
                let text = try? String(contentsOfFile: "\(folder)/\(name)/address", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines),
                text.count == 17, text != "00:00:00:00:00:00"
            else { continue }
            return text.uppercased()
        }
        return "02:00:00:00:00:01"
    }
}
