import Foundation

/// Unpadded base64url (RFC 4648 §5), as WebAuthn's JSON encodings use it.
public enum Base64URL {
    /// Unpadded base64url, written directly: the sandbox hashes every order's action with it,
    /// twice per order, and Foundation's base64 followed by three string replacements through
    /// NSString was 7 % of an order's transaction.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        return String(unsafeUninitializedCapacity: (input.count * 4 + 2) / 3) { out in
            var n = 0
            func put(_ sextet: UInt32) {
                out[n] = alphabet[Int(sextet & 0x3F)]
                n += 1
            }
            var i = 0
            while i + 3 <= input.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                put(v >> 18); put(v >> 12); put(v >> 6); put(v)
                i += 3
            }
            switch input.count - i {
            case 1:
                let v = UInt32(input[i]) << 16
                put(v >> 18); put(v >> 12)
            case 2:
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                put(v >> 18); put(v >> 12); put(v >> 6)
            default:
                break
            }
            return n
        }
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes padded or unpadded base64url; nil when `text` is not base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "=") }) else { return nil }
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        s = s.replacingOccurrences(of: "=", with: "")
        let remainder = s.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { s += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: s).map { [UInt8]($0) }
    }
}
