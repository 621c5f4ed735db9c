import Foundation

/// Builds one JSON object line by hand, for output paths too hot for JSONEncoder (a cache read
/// of a million fills). Callers add keys in sorted order, as JSONLines does.
public struct JSONLineWriter {
    private var text = "{"
    private var first = true

    public init() {}

    private mutating func key(_ k: String) {
        if !first { text += "," }
        first = false
        text += "\"" + k + "\":"
    }

    public mutating func add(_ k: String, _ value: String?) {
        guard let value else { return }
        key(k)
        Self.quote(value, into: &text)
    }

    public mutating func add(_ k: String, _ value: Int64) { key(k); text += String(value) }
    public mutating func add(_ k: String, _ value: Int) { key(k); text += String(value) }
    public mutating func add(_ k: String, _ value: Bool) { key(k); text += value ? "true" : "false" }
    public mutating func add(_ k: String, _ value: Date?) { add(k, value.map(RFC3339.string(from:))) }

    /// A finite number with at most `decimals` digits after the point (none written when nil).
    public mutating func add(_ k: String, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        key(k)
        var scaled = (value * pow(10, Double(decimals))).rounded()
        if scaled < 0 { text += "-"; scaled = -scaled }
        let whole = Int64(scaled) / Int64(pow(10, Double(decimals)))
        let fraction = Int64(scaled) % Int64(pow(10, Double(decimals)))
        text += String(whole)
        if decimals > 0 && fraction > 0 {
            var digits = String(fraction)
            digits = String(repeating: "0", count: decimals - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
    }

    /// The object and its newline.
    public mutating func line() -> String { text + "}\n" }

    /// `object` (another writer's `object`) as the value of `k`.
    public mutating func add(_ k: String, object: String) { key(k); text += object }

    /// The object, without a newline.
    public var object: String { text + "}" }

    /// Appends `s` as a JSON string literal.
    public static func quote(_ s: String, into out: inout String) {
        out += "\""
        // 0xC2 leads the C1 controls' UTF-8 (and a few letters'): those go the long way.
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 != 0xC2 }) {
            out += s
        } else {
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                // As JSONEncoder writes them.
                case "\u{8}": out += "\\b"
                case "\u{c}": out += "\\f"
                // C0 controls, and C1 controls as JSONEscaping writes them (a terminal shown the
                // JSON would take one for an escape sequence).
                case _ where scalar.value < 0x20 || (0x80...0x9F).contains(scalar.value): out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
