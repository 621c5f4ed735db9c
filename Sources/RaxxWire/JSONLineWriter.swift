import Foundation

/// Builds one JSON object line by hand, for output paths too hot for JSONEncoder (a cache read
/// of a million fills, a push's result line). Callers add keys in sorted order, as JSONLines does.
/// The line is written as bytes and made a string once, at the end.
public struct JSONLineWriter {
    private var bytes: [UInt8]
    private var first = true

    public init() {
        bytes = []
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ k: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: k.utf8)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func add(_ k: String, _ value: String?) {
        guard let value else { return }
        key(k)
        Self.quote(value, into: &bytes)
    }

    public mutating func add(_ k: String, _ value: Int64) { key(k); RFC3339.appendDigits(value, to: &bytes) }
    public mutating func add(_ k: String, _ value: Int) { key(k); RFC3339.appendDigits(Int64(value), to: &bytes) }
    public mutating func add(_ k: String, _ value: Bool) { key(k); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    public mutating func add(_ k: String, _ value: Date?) {
        guard let value else { return }
        key(k)
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A finite number with at most `decimals` digits after the point (none written when nil).
    public mutating func add(_ k: String, _ value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        key(k)
        Self.append(value, decimals: decimals, to: &bytes)
    }

    /// Appends finite `value` with at most `decimals` digits after the point, trailing zeros dropped.
    public static func append(_ value: Double, decimals: Int, to bytes: inout [UInt8]) {
        var scaled = (value * pow(10, Double(decimals))).rounded()
        if scaled < 0 { bytes.append(UInt8(ascii: "-")); scaled = -scaled }
        let unit = Int64(pow(10, Double(decimals)))
        let whole = Int64(scaled) / unit
        var fraction = Int64(scaled) % unit
        RFC3339.appendDigits(whole, to: &bytes)
        guard decimals > 0 && fraction > 0 else { return }
        // The fraction's digits, zero-padded to `decimals`, without trailing zeros.
        var width = decimals
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        bytes.append(UInt8(ascii: "."))
        RFC3339.appendDigits(fraction, width: width, to: &bytes)
    }

    /// The object and its newline.
    public mutating func line() -> String {
        bytes.append(contentsOf: "}\n".utf8)
        defer { bytes.removeLast(2) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `object` (another writer's `object`) as the value of `k`.
    public mutating func add(_ k: String, object: String) { key(k); bytes.append(contentsOf: object.utf8) }

    /// The object, without a newline.
    public var object: String { String(decoding: bytes, as: UTF8.self) + "}" }

    /// Whether `s` is written between quotes as it is (no quote, backslash, control character or
    /// C1 control: 0xC2 leads the C1 controls' UTF-8, and a few letters', which go the long way).
    private static func isPlain(_ s: String) -> Bool {
        func plain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte != 0xC2 }
        return s.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(plain) } ?? s.utf8.allSatisfy(plain)
    }

    /// Appends `s` as a JSON string literal.
    public static func quote(_ s: String, into out: inout String) {
        if isPlain(s) {
            out += "\""
            out += s
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        quote(s, into: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `s` as a JSON string literal, as UTF-8.
    public static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if isPlain(s) {
            out.append(contentsOf: s.utf8)
        } else {
            func add(_ text: StaticString) {
                out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
            }
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": add("\\\"")
                case "\\": add("\\\\")
                case "\n": add("\\n")
                case "\r": add("\\r")
                case "\t": add("\\t")
                // As JSONEncoder writes them.
                case "\u{8}": add("\\b")
                case "\u{c}": add("\\f")
                // C0 controls, and C1 controls as JSONEscaping writes them (a terminal shown the
                // JSON would take one for an escape sequence).
                case _ where scalar.value < 0x20 || (0x80...0x9F).contains(scalar.value):
                    out.append(contentsOf: String(format: "\\u%04x", scalar.value).utf8)
                default:
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
