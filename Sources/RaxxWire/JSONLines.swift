import Foundation

/// JSON Lines: one compact JSON object per line, keys sorted so output is stable for diffs and
/// tests, dates as RFC 3339.
public enum JSONLines {
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(RFC3339.string(from: date))
        }
        return e
    }

    /// One line, without its newline.
    public static func line<T: Encodable>(_ value: T) throws -> String {
        String(decoding: JSONEscaping.escapingC1(Array(try encoder().encode(value))), as: UTF8.self)
    }
}

/// RFC 3339 timestamps in UTC, with milliseconds only when there are some. Formatting is by
/// hand (civil-from-days arithmetic): it runs for every row a read prints.
public enum RFC3339 {
    public static func string(from date: Date) -> String {
        var out = [UInt8]()
        out.reserveCapacity(24)
        append(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the timestamp's UTF-8 to `out` (no String made: output paths call this per row).
    public static func append(_ date: Date, to out: inout [UInt8]) {
        let totalMillis = (date.timeIntervalSince1970 * 1000).rounded()
        guard totalMillis.isFinite, abs(totalMillis) < 253_402_300_799_000 else {
            out += Array(date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt)).utf8)
            return
        }
        var millis = Int64(totalMillis)
        var seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        millis -= seconds * 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        seconds -= days * 86_400
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        appendDigits(year, width: 4, to: &out); out.append(45)
        appendTwoDigits(month, to: &out); out.append(45)
        appendTwoDigits(day, to: &out); out.append(84)
        appendTwoDigits(seconds / 3600, to: &out); out.append(58)
        appendTwoDigits(seconds / 60 % 60, to: &out); out.append(58)
        appendTwoDigits(seconds % 60, to: &out)
        if millis > 0 {
            out.append(46)
            out.append(48 + UInt8(truncatingIfNeeded: millis / 100))
            appendTwoDigits(millis % 100, to: &out)
        }
        out.append(90)
    }

    /// `value` (0...99) as two digits.
    @inline(__always)
    static func appendTwoDigits(_ value: Int64, to out: inout [UInt8]) {
        out.append(48 + UInt8(truncatingIfNeeded: value / 10))
        out.append(48 + UInt8(truncatingIfNeeded: value % 10))
    }

    /// Appends `value` in decimal, zero-padded to `width` (a minus sign first when negative).
    /// The digits are made in a stack buffer and copied once: reads call this for every row.
    public static func appendDigits(_ value: Int64, width: Int = 1, to out: inout [UInt8]) {
        var v = value.magnitude
        if value < 0 { out.append(45) }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { b in
            var i = 20
            repeat {
                i -= 1
                b[i] = 48 + UInt8(truncatingIfNeeded: v % 10)
                v /= 10
            } while v > 0
            let start = min(i, 20 - min(max(width, 1), 20))
            var j = start
            while j < i { b[j] = 48; j += 1 }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[start...]))
        }
    }

    public static func date(from text: String) -> Date? {
        var text = text
        if let d = text.withUTF8({ commonDate(UnsafeRawBufferPointer($0)) }) { return d }
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// As `date(from:)`, from UTF-8 bytes (a page's, read in place).
    public static func date(utf8 bytes: UnsafeRawBufferPointer) -> Date? {
        commonDate(bytes) ?? date(from: String(decoding: bytes, as: UTF8.self))
    }

    /// The shape every Raxx timestamp has (`2026-11-23T05:44:22Z`, `2026-11-23T05:44:22.123Z`: how
    /// `append` writes them), read by hand: the same Date the ISO 8601 parse answers (the same
    /// arithmetic: days from the reference date, plus the time of day), at a small fraction of
    /// its cost. Anything else (other fractions, offsets, years before 1583, fields out of range)
    /// answers nil and is left to the full parse.
    static func commonDate(_ b: UnsafeRawBufferPointer) -> Date? {
        guard b.count == 20 || b.count == 24 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for i in at..<at + count {
                let d = b[i] &- 48
                guard d <= 9 else { return nil }
                value = value * 10 + Int64(d)
            }
            return value
        }
        guard b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58, b[b.count - 1] == 90,
            let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
            year >= 1583, (1...12).contains(month), day >= 1, hour <= 23, minute <= 59, second <= 59
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: Int64 = month == 2 ? (leap ? 29 : 28) : (month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31)
        guard day <= monthDays else { return nil }
        var millis: Int64 = 0
        if b.count == 24 {
            guard b[19] == 46, let fraction = digits(20, 3) else { return nil }
            millis = fraction
        } else {
            guard b[19] == 90 else { return nil }
        }
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = y / 400, yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
        // The ISO 8601 parse's own sum, in its order: whole days from the reference date (2001,
        // 11,323 days after 1970), plus the time of day with its fraction. Adding the milliseconds
        // to the whole seconds instead differs from it by one ulp now and then
        // (2001-01-03T20:16:35.545Z; two in a million).
        let timeOfDay = Double(hour * 3600 + minute * 60 + second) + Double(millis) / 1000
        return Date(timeIntervalSinceReferenceDate: Double(days - 11_323) * 86_400 + timeOfDay)
    }
}
