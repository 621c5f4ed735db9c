/// An audit entry's details as the audit trail stores them: a JSON object of strings, keys in
/// order, written directly. The same text `JSONEncoder` with `.sortedKeys` writes for the trail's
/// keys (lowercase words and underscores): quotation marks, backslashes and slashes escaped, control
/// characters as `\b`, `\f`, `\n`, `\r`, `\t` or `\u00xx`. Every order writes one entry, and the
/// encoder was a tenth of its transaction.
enum AuditDetailsJSON {
    static func text(_ details: [String: String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(64 * details.count + 2)
        for (index, key) in details.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            append(key, to: &out)
            out.append(UInt8(ascii: ":"))
            append(details[key] ?? "", to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` as a value of the details is written: quoted and escaped.
    static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out += [UInt8(ascii: "\\"), b]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
