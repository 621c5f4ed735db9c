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

/// RFC 3339 timestamps in UTC, with fractional seconds only when they are there.
public enum RFC3339 {
    public static func string(from date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let hasMillis = (seconds * 1000).rounded() != seconds.rounded(.down) * 1000
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: hasMillis, timeZone: .gmt))
    }

    public static func date(from text: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
