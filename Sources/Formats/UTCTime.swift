/// ISO 8601 UTC timestamps for microsecond times, without Foundation: the journal and the JSON contract both
/// print them, and they must read back to the same microsecond.
public enum UTCTime {
    /// `2024-05-01T08:00:00.510000Z` (always six fraction digits, so journal lines align and round-trip).
    public static func format(microseconds: Int64) -> String {
        var text: [UInt8] = []
        write(microseconds: microseconds, into: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// `format(microseconds:)` appended as UTF-8: the journal's digest formats one per event, without a String.
    public static func write(microseconds: Int64, into output: inout [UInt8]) {
        var writer = Writer()
        writer.write(microseconds: microseconds, into: &output)
    }

    /// Writes the times of events in order, as a journal's digest does: events of the same second share its date
    /// and time of day, worked out once and copied after.
    public struct Writer: Sendable {
        private var second: Int64 = .min
        private var secondText: [UInt8] = []

        public init() {}

        /// As `UTCTime.write(microseconds:into:)`.
        public mutating func write(microseconds: Int64, into output: inout [UInt8]) {
            let (seconds, micros) = floorDivide(microseconds, 1_000_000)
            if seconds != second {
                secondText.removeAll(keepingCapacity: true)
                UTCTime.write(seconds: seconds, into: &secondText)
                second = seconds
            }
            output += secondText
            // ".", the six digits of the microseconds (0 ... 999 999) and "Z": eight bytes, made in one integer
            // and appended at once (zeros appended, then overwritten digit by digit, showed in a sync's profile).
            var rest = UInt64(micros)
            var bytes = UInt64(UInt8(ascii: "Z")) << 56 | UInt64(UInt8(ascii: "."))
            for place in stride(from: UInt64(6), through: 1, by: -1) {
                bytes |= (UInt64(UInt8(ascii: "0")) + rest % 10) << (8 * place)
                rest /= 10
            }
            withUnsafeBytes(of: bytes.littleEndian) { output.append(contentsOf: $0) }
        }
    }

    /// `2024-05-01T08:00:00Z` for the JSON contract (whole seconds, rounded down).
    public static func formatSeconds(microseconds: Int64) -> String {
        var text: [UInt8] = []
        write(seconds: floorDivide(microseconds, 1_000_000).quotient, into: &text)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    fileprivate static func write(seconds: Int64, into output: inout [UInt8]) {
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)
        appendPadded(year, 4, to: &output)
        output.append(UInt8(ascii: "-"))
        appendPadded(month, 2, to: &output)
        output.append(UInt8(ascii: "-"))
        appendPadded(day, 2, to: &output)
        output.append(UInt8(ascii: "T"))
        appendPadded(secondOfDay / 3600, 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay / 60 % 60, 2, to: &output)
        output.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay % 60, 2, to: &output)
    }

    /// `value` in at least `width` digits (leading zeros), as `padded` writes it.
    fileprivate static func appendPadded(_ value: Int64, _ width: Int, to output: inout [UInt8]) {
        var limit: Int64 = 1
        for _ in 0..<width { limit *= 10 }
        guard value >= 0, value < limit else {
            // A year before 0 or after 9999, from a damaged clock: rare, and written as `padded` spells it.
            output += padded(value, width).utf8
            return
        }
        // Zeros first, then the digits from the right: a division by the constant 10 is a multiplication, where
        // dividing by a power of ten held in a variable is a real division per digit.
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width))
        var rest = value
        var position = start + width - 1
        while rest > 0 {
            output[position] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            position -= 1
        }
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`; nil when it is anything else.
    public static func parse(_ text: some StringProtocol) -> Int64? {
        if let time = text.utf8.withContiguousStorageIfAvailable({ parse(bytes: $0) }) { return time }
        return Array(text.utf8).withUnsafeBufferPointer { parse(bytes: $0) }
    }

    /// The same, of the time's UTF-8 bytes: what a journal's reader calls for each of its lines, so nothing is
    /// allocated.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 20, bytes[bytes.count - 1] == UInt8(ascii: "Z") else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<(start + count) {
                let digit = Int64(bytes[index]) - 48
                guard digit >= 0, digit <= 9 else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        // 2024-02-30 is no date (it is not quietly March 1st).
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        guard day <= daysIn(month: month, leap: leap) else { return nil }
        var micros: Int64 = 0
        let fractionEnd = bytes.count - 1
        if fractionEnd > 19 {
            let digits = fractionEnd - 20
            guard bytes[19] == UInt8(ascii: "."), (1...6).contains(digits), let fraction = number(20, digits) else {
                return nil
            }
            micros = fraction
            for _ in digits..<6 { micros *= 10 }
        } else if fractionEnd != 19 {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 86_400 + hour * 3600 + minute * 60 + second) * 1_000_000) + micros
    }

    /// The days of a month (1–12).
    static func daysIn(month: Int64, leap: Bool) -> Int64 {
        switch month {
        case 2: leap ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Reads a date `YYYY-MM-DD` (midnight UTC) or a full time as `parse` does.
    public static func parseDate(_ text: some StringProtocol) -> Int64? {
        text.utf8.count == 10 ? parse(text + "T00:00:00Z") : parse(text)
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil`.
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
