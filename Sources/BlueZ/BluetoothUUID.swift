/// Bluetooth UUIDs as BlueZ writes them on D-Bus: 128-bit, lower case. The SIG's 16-bit numbers live in the
/// Bluetooth base UUID `0000xxxx-0000-1000-8000-00805f9b34fb`.
public enum BluetoothUUID {
    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// The 128-bit form of a 16-bit SIG number.
    public static func full(_ short: UInt16) -> String { "0000" + hex4(short) + baseSuffix }

    /// A 16-bit SIG number as four lower-case hex digits, `1818`: the form BlueZ takes for a 16-bit UUID (an
    /// advertisement's `ServiceUUIDs`).
    public static func hex4(_ short: UInt16) -> String {
        let hex = String(short, radix: 16)
        return String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// The 16-bit SIG number of a UUID in the base range, compared case-insensitively (BlueZ emits lower case,
    /// other stacks upper case).
    public static func short(_ uuid: String) -> UInt16? {
        let lower = uuid.lowercased()
        guard lower.count == 36, lower.hasPrefix("0000"), lower.hasSuffix(baseSuffix) else { return nil }
        return UInt16(lower.dropFirst(4).prefix(4), radix: 16)
    }
}
