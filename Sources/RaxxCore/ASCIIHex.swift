extension UInt8 {
    /// Whether this byte is an ASCII hexadecimal digit (0-9, a-f, A-F). Unlike
    /// `Character.isHexDigit`, full-width digits are not: tokens, hashes and escapes are ASCII.
    @inlinable public var isASCIIHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}

/// Bytes written as hexadecimal: hashes at rest, checksums, file names.
public enum ASCIIHex {
    /// `bytes` as lowercase hexadecimal, two digits a byte: what `String(format: "%02x", byte)`
    /// writes for each, joined, without Foundation's formatter (which made a bearer token's hash
    /// 8 % of the sandbox's work per request).
    public static func lowercase<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digit(byte >> 4))
            out.append(digit(byte & 0x0f))
        }
        return String(decoding: out, as: UTF8.self)
    }

    @inline(__always) static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }
}
