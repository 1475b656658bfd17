import CBluetooth
import Capture
import Formats
import Foundation
import LiveRecording
import Workouts

/// What the kernel tells any user about each Bluetooth controller, through libbluetooth's HCI ioctls: its bus,
/// address, whether it does LE, how many links it holds now, and what the controller itself says it is (HCI version
/// and manufacturer, for a controller that is up). BlueZ's D-Bus API gives none of these; a rider whose USB dongle
/// keeps dropping links learns from them which adapter it is and how loaded.
public struct AdapterFacts: Sendable, Equatable {
    /// hci0, hci1…
    public var name: String
    public var address: String
    /// "USB", "UART", "virtual" (a VM's or an emulator's), "SDIO"…
    public var bus: String
    public var isUp: Bool
    public var supportsLE: Bool
    /// Open LE links (a sensor each, for cyclelog) and classic ACL links (headphones, keyboards); nil when the
    /// kernel did not list them.
    public var leLinks: Int?
    public var classicLinks: Int?
    /// The Bluetooth Core version the controller implements ("5.0"), its HCI revision and the company that made it
    /// (named from libbluetooth's list of company identifiers); nil for a controller that is down or did not answer.
    public var hciVersion: String?
    public var hciRevision: Int?
    public var manufacturerID: Int?
    public var manufacturer: String?

    /// The controllers now, or why the kernel would not say.
    public enum Reading: Sendable, Equatable {
        case adapters([AdapterFacts])
        case unavailable(String)
    }

    /// Asks the kernel (waiting at most 1 s for each controller's version). A kernel without Bluetooth has no
    /// controllers.
    public static func read() -> Reading {
        let capacity = 16
        var raw = [cbluetooth_adapter](repeating: cbluetooth_adapter(), count: capacity)
        let count = cbluetooth_adapters(&raw, Int32(capacity), 1000)
        if count == -EAFNOSUPPORT { return .adapters([]) }
        if count < 0 {
            return .unavailable(
                "the kernel would not list the Bluetooth controllers: \(String(cString: strerror(-count)))")
        }
        return .adapters(raw.prefix(Int(count)).map(AdapterFacts.init))
    }

    init(_ raw: cbluetooth_adapter) {
        var raw = raw
        name = withUnsafeBytes(of: &raw.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        address = withUnsafeBytes(of: raw.address) { Btsnoop.address(leastSignificantFirst: Array($0)[...]) }
        bus = Self.buses.indices.contains(Int(raw.bus)) ? Self.buses[Int(raw.bus)] : "bus \(raw.bus)"
        isUp = raw.flags & (1 << UInt32(cbluetooth_flag_up)) != 0
        supportsLE = raw.features.4 & 0x40 != 0
        leLinks = raw.le_links >= 0 ? Int(raw.le_links) : nil
        classicLinks = raw.classic_links >= 0 ? Int(raw.classic_links) : nil
        if raw.version_read == 1 {
            hciVersion =
                Self.versions.indices.contains(Int(raw.hci_version))
                ? Self.versions[Int(raw.hci_version)] : "HCI \(raw.hci_version)"
            hciRevision = Int(raw.hci_revision)
            manufacturerID = Int(raw.manufacturer)
            manufacturer = String(cString: cbluetooth_company_name(raw.manufacturer))
        }
    }

    /// The kernel's HCI_VIRTUAL … HCI_IPC, in order.
    static let buses = [
        "virtual", "USB", "PC Card", "UART", "RS-232", "PCI", "SDIO", "SPI", "I2C", "SMD", "virtio", "IPC",
    ]
    /// HCI versions 0 to 14 (Bluetooth Assigned Numbers, "HCI version").
    static let versions = [
        "1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0",
    ]

    public var json: JSONValue {
        .object([
            ("name", .string(name)), ("address", .string(address)), ("bus", .string(bus)), ("up", .bool(isUp)),
            ("leSupported", .bool(supportsLE)), ("leLinks", leLinks.map { .integer(Int64($0)) } ?? .null),
            ("classicLinks", classicLinks.map { .integer(Int64($0)) } ?? .null),
            ("hciVersion", .optionalString(hciVersion)),
            ("hciRevision", hciRevision.map { .integer(Int64($0)) } ?? .null),
            ("manufacturerId", manufacturerID.map { .integer(Int64($0)) } ?? .null),
            ("manufacturer", .optionalString(manufacturer)),
        ])
    }

    /// One line for `doctor`'s text.
    public var summary: String {
        var parts = [address, bus, isUp ? "up" : "down", supportsLE ? "LE" : "no LE"]
        if let leLinks { parts.append("\(leLinks) LE link\(leLinks == 1 ? "" : "s") open") }
        if let hciVersion { parts.append("Bluetooth \(hciVersion)") }
        if let manufacturer { parts.append(manufacturer) }
        return name + ": " + parts.joined(separator: ", ")
    }
}
