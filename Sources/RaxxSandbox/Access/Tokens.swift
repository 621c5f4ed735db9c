import Crypto
import Foundation
import RaxxCore

/// Bearer, renewal, challenge and grant tokens: random on the wire, hashed at rest.
enum Tokens {
    /// 32 random bytes, base64url.
    static func random() -> String {
        var g = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<32).map { _ in g.next() as UInt8 })
    }

    /// What the database keeps of a token: its SHA-256, hex.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// A WebAuthn user handle: 32 random bytes, no personal data.
func newUserHandle() -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    return (0..<32).map { _ in g.next() }
}

/// Random identifiers with a readable prefix: `usr_…`, `acc_…`, `ord_…`.
enum Identifier {
    static func make(_ prefix: String) -> String {
        var g = SystemRandomNumberGenerator()
        return prefix + "_" + String(g.next() as UInt64, radix: 36) + String(g.next() as UInt32, radix: 36)
    }
}
