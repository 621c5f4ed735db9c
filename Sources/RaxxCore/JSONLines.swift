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
        let totalMillis = (date.timeIntervalSince1970 * 1000).rounded()
        guard totalMillis.isFinite, abs(totalMillis) < 253_402_300_799_000 else {
            return date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
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
        var out = [UInt8]()
        out.reserveCapacity(24)
        func digits(_ v: Int64, _ width: Int) {
            var buffer = [UInt8](repeating: 48, count: width)
            var v = v
            for i in stride(from: width - 1, through: 0, by: -1) { buffer[i] = 48 + UInt8(v % 10); v /= 10 }
            out += buffer
        }
        digits(year, 4); out.append(45); digits(month, 2); out.append(45); digits(day, 2); out.append(84)
        digits(seconds / 3600, 2); out.append(58); digits(seconds / 60 % 60, 2); out.append(58); digits(seconds % 60, 2)
        if millis > 0 { out.append(46); digits(millis, 3) }
        out.append(90)
        return String(decoding: out, as: UTF8.self)
    }

    public static func date(from text: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
