/// Durations as people write them on command lines: `500ms`, `90s`, `15m`, `12h`, `7d`, or a
/// sum such as `1h30m`. A bare number is seconds.
public struct RaxxDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public init(seconds: Double) { self.milliseconds = Int64((seconds * 1000).rounded()) }

    public static func seconds(_ s: Int64) -> RaxxDuration { RaxxDuration(milliseconds: s * 1000) }
    public static func minutes(_ m: Int64) -> RaxxDuration { .seconds(m * 60) }
    public static func hours(_ h: Int64) -> RaxxDuration { .seconds(h * 3600) }

    public var seconds: Double { Double(milliseconds) / 1000 }

    public static func < (a: RaxxDuration, b: RaxxDuration) -> Bool { a.milliseconds < b.milliseconds }
    public static func + (a: RaxxDuration, b: RaxxDuration) -> RaxxDuration { RaxxDuration(milliseconds: a.milliseconds + b.milliseconds) }

    private static let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]

    /// Parses `text`, or answers nil when it is not a duration.
    public init?(parsing text: String) {
        let s = Array(text.trimmingWhitespace().lowercased())
        guard !s.isEmpty else { return nil }
        var total: Int64 = 0
        var i = 0
        var sawUnit = false
        while i < s.count {
            var digits = ""
            while i < s.count, s[i].isASCII, s[i].isNumber { digits.append(s[i]); i += 1 }
            guard let value = Int64(digits), digits.count <= 12 else { return nil }
            var unit = ""
            while i < s.count, s[i].isLetter { unit.append(s[i]); i += 1 }
            if unit.isEmpty {
                // A bare number is seconds, and only alone.
                guard !sawUnit, i == s.count else { return nil }
                unit = "s"
            }
            guard let factor = Self.units.first(where: { $0.0 == unit })?.1 else { return nil }
            sawUnit = true
            let (product, overflow) = value.multipliedReportingOverflow(by: factor)
            guard !overflow else { return nil }
            total += product
        }
        self.milliseconds = total
    }

    /// Compact form, e.g. `1h30m`, `90s` → `1m30s`, `250ms`.
    public var description: String {
        if milliseconds == 0 { return "0s" }
        if milliseconds < 1000 { return "\(milliseconds)ms" }
        var rest = milliseconds / 1000
        // Appended, not joined: `joined()` costs a runtime conformance scan (a tenth of a
        // millisecond) the first time, and `raxx-cache status` prints this at start-up.
        var text = ""
        for (unit, size) in [("d", Int64(86400)), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            text += "\(rest / size)\(unit)"
            rest %= size
        }
        return text
    }

    /// Its largest unit alone, compactly, for a span beside a time: "12m", "3h", "2d".
    public var roughly: String {
        let s = milliseconds / 1000
        if s < 60 { return "\(max(s, 0))s" }
        if s < 3600 { return "\(s / 60)m" }
        if s < 86400 { return "\(s / 3600)h" }
        return "\(s / 86400)d"
    }

    /// A person's reading of an age: "42 seconds", "5 minutes", "3 hours", "2 days".
    public var humanAge: String {
        let s = milliseconds / 1000
        func plural(_ n: Int64, _ unit: String) -> String { "\(n) \(unit)\(n == 1 ? "" : "s")" }
        if s < 60 { return plural(max(s, 0), "second") }
        if s < 3600 { return plural(s / 60, "minute") }
        if s < 86400 { return plural(s / 3600, "hour") }
        return plural(s / 86400, "day")
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let f = scalars.first, f.isWhitespace { scalars.removeFirst() }
        while let l = scalars.last, l.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
