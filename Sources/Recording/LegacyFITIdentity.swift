/// The sync identifier an imported FIT activity was given before identities were SHA-256 (RideIdentity's digest
/// version 1: two 64-bit FNV-1a hashes of its identity text, as a UUID). Only looked up, never given: a file
/// imported by an earlier cyclelog finds its ride and keeps its identifier.
enum LegacyFITIdentity {
    /// The identity text of an activity by the earlier rule (`fit-bytes:` with the file's FNV digest when the
    /// file names no device and time), as its sync identifier.
    static func syncIdentifier(fileIdentity: String?, bytes: [UInt8], sessionNumber: Int?) -> String {
        let text = fileIdentity ?? "fit-bytes:" + FNV(bytes).hex + (sessionNumber.map { "#\($0)" } ?? "")
        return FNV(Array(text.utf8)).uuid
    }

    private struct FNV {
        private var first: UInt64 = 0xCBF2_9CE4_8422_2325
        private var second: UInt64 = 0x6C62_272E_07BB_0142

        init(_ bytes: [UInt8]) {
            for byte in [4, 0, 0, 0, 0, 0, 0, 0] + bytes {
                first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                second = (second ^ UInt64(byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
            }
        }

        var hex: String { Self.hex(first) + Self.hex(second) }

        var uuid: String {
            var digits = Array(hex)
            digits[12] = "8"
            digits[16] = ["8", "9", "a", "b"][Int(second >> 62)]
            let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }
            return parts.joined(separator: "-")
        }

        private static func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
    }
}
