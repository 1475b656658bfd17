#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A time as a rider reads it: in the local time zone (`TZ`, else /etc/localtime), to the second. What another
/// program reads — JSON, journals, files — keeps UTC (`UTCTime`).
public enum LocalTime {
    /// "2019-09-20 16:10:03".
    public static func text(microseconds: Int64) -> String { local(microseconds).text }

    /// The same with the zone's abbreviation on that date ("2019-09-20 16:10:03 CEST"), where a time stands alone.
    public static func zoned(microseconds: Int64) -> String {
        let time = local(microseconds)
        return time.zone.isEmpty ? time.text : time.text + " " + time.zone
    }

    private static func local(_ microseconds: Int64) -> (text: String, zone: String) {
        // Whole seconds, rounded down also before 1970.
        let seconds = microseconds >= 0 ? microseconds / 1_000_000 : (microseconds + 1) / 1_000_000 - 1
        var clock = time_t(seconds)
        var parts = tm()
        guard abs(seconds) < 253_402_300_800, localtime_r(&clock, &parts) != nil else {
            // Beyond what the C library can convert (a damaged database): the UTC form, which handles any value.
            let iso = UTCTime.formatSeconds(microseconds: microseconds)
            return (String(iso.map { $0 == "T" ? " " : $0 }.filter { $0 != "Z" }), "UTC")
        }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(parts.tm_year + 1900)
        let text =
            String(repeating: "0", count: max(0, 4 - year.count)) + year + "-" + two(parts.tm_mon + 1) + "-"
            + two(parts.tm_mday) + " " + two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec)
        return (text, parts.tm_zone.map { String(cString: $0) } ?? "")
    }
}
