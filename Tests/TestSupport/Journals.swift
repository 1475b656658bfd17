import Foundation

/// Ride journals written for a test, from the journal format (Docs/reference/journal.md), not by cyclelog.
public enum Journals {
    /// A journal of a power meter sending `watts` once a second from 06:00:01 UTC on `date` (day `day` of January
    /// 2024 by default): Cycling Power Measurement with no optional field (flags 0, then the power as sint16,
    /// little-endian; GATT spec 3.65).
    public static func power(_ watts: [Double], day: Int = 1, date: String? = nil) -> String {
        let date = (date ?? "2024-01-0\(day)") + "T"
        func time(_ second: Int) -> String {
            date + String(format: "%02d:%02d:%02d.500000Z", 6 + second / 3600, second / 60 % 60, second % 60)
        }
        var lines = [
            "# cyclelog journal 1", "\(time(0)) connect C0:11:22:33:44:55 Power meter", "\(time(0)) start indoor",
        ]
        for (second, value) in watts.enumerated() {
            let power = UInt16(Int(value))
            lines.append(
                "\(time(second + 1)) notify C0:11:22:33:44:55 2a63 0000"
                    + String(format: "%02x%02x", power & 0xff, power >> 8))
        }
        lines.append("\(time(watts.count + 1)) end")
        return lines.joined(separator: "\n") + "\n"
    }
}
