/// The inside of a JSON string, for the writers that build JSON as bytes straight from SQLite's
/// rows (the cache's exports, the sandbox's sync pages): one copy of the rules.
public enum JSONEscaping {
    /// Appends UTF-8 `bytes` as the inside of a JSON string: quotation marks and backslashes
    /// escaped, control characters as `\n`, `\r`, `\t` or `\u00xx`; runs that need no escaping
    /// (nearly all text) are copied whole. The bytes are taken as they are: a caller whose text may
    /// not be valid UTF-8 repairs it first.
    public static func append(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var start = 0
        for i in bytes.indices {
            let b = bytes[i]
            guard b == 0x22 || b == 0x5C || b < 0x20 else { continue }
            if start < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i])) }
            start = i + 1
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, 0x6E]
            case 0x0D: out += [0x5C, 0x72]
            case 0x09: out += [0x5C, 0x74]
            default: out += [0x5C, 0x75, 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
