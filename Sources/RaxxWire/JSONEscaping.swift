/// The inside of a JSON string, for the writers that build JSON as bytes straight from SQLite's
/// rows (the cache's exports, the sandbox's sync pages): one copy of the rules.
public enum JSONEscaping {
    /// Appends UTF-8 `bytes` as the inside of a JSON string: quotation marks and backslashes
    /// escaped, control characters as `\n`, `\r`, `\t` or `\u00xx`; runs that need no escaping
    /// (nearly all text) are copied whole. The bytes are taken as they are: a caller whose text may
    /// not be valid UTF-8 repairs it first.
    /// C1 controls (U+0080 to U+009F, UTF-8 C2 80 to C2 9F) are escaped as `\u00xx` too: a
    /// terminal that shows the JSON would take one for an escape sequence.
    public static func append(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var start = 0
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let c1 = b == 0xC2 && i + 1 < bytes.count && (0x80...0x9F).contains(bytes[i + 1])
            guard b == 0x22 || b == 0x5C || b < 0x20 || c1 else { i += 1; continue }
            if start < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i])) }
            if c1 {
                let v = bytes[i + 1]
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(v >> 4)], hex[Int(v & 0xF)]]
                i += 2
                start = i
                continue
            }
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            default: out += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
            i += 1
            start = i
        }
        if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
    }

    /// `json` (the encoder's output) with every C1 control escaped as `\u00xx`. Outside its
    /// strings JSON text is ASCII, so every such character is inside one. Foundation's encoder
    /// escapes only the C0 controls.
    public static func escapingC1(_ json: [UInt8]) -> [UInt8] {
        var found = false
        for i in json.indices.dropLast() where json[i] == 0xC2 && (0x80...0x9F).contains(json[i + 1]) { found = true; break }
        guard found else { return json }
        var out: [UInt8] = []
        out.reserveCapacity(json.count + 16)
        var i = 0
        while i < json.count {
            if json[i] == 0xC2, i + 1 < json.count, (0x80...0x9F).contains(json[i + 1]) {
                let v = json[i + 1]
                out += [0x5C, 0x75, 0x30, 0x30, hex[Int(v >> 4)], hex[Int(v & 0xF)]]
                i += 2
            } else {
                out.append(json[i])
                i += 1
            }
        }
        return out
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
