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
