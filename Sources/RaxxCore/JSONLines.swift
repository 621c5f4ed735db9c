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
        String(decoding: try encoder().encode(value), as: UTF8.self)
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
        appendDigits(month, width: 2, to: &out); out.append(45)
        appendDigits(day, width: 2, to: &out); out.append(84)
        appendDigits(seconds / 3600, width: 2, to: &out); out.append(58)
        appendDigits(seconds / 60 % 60, width: 2, to: &out); out.append(58)
        appendDigits(seconds % 60, width: 2, to: &out)
        if millis > 0 { out.append(46); appendDigits(millis, width: 3, to: &out) }
        out.append(90)
    }

    /// Appends `value` in decimal, zero-padded to `width` (a minus sign first when negative).
    public static func appendDigits(_ value: Int64, width: Int = 1, to out: inout [UInt8]) {
        var v = value.magnitude
        if value < 0 { out.append(45) }
        var buffer: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48, 48)
        var count = 0
        withUnsafeMutableBytes(of: &buffer) { b in
            repeat {
                b[19 - count] = 48 + UInt8(v % 10)
                v /= 10
                count += 1
            } while v > 0
            let n = max(count, min(width, 20))
            out.append(contentsOf: b[(20 - n)...])
        }
    }

    public static func date(from text: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
