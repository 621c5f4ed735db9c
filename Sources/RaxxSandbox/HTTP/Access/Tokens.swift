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
        ASCIIHex.lowercase(SHA256.hash(data: Data(token.utf8)))
    }
}

/// A WebAuthn user handle: 32 random bytes, no personal data.
func newUserHandle() -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    return (0..<32).map { _ in g.next() }
}

/// Identifiers with a readable prefix, in the order they were made: `ord_` + the time in
/// milliseconds (9 base-36 digits, good until the year 5190) + 56 random bits (11 base-36 digits),
/// 24 characters for a three-letter prefix. Random IDs scatter a table's rows across its ID
/// index: every insert lands on a page of its own, and erasing one account's million fills wrote
/// most of the index again, chunk after chunk. IDs made in time order keep what is written
/// together side by side in every index. An ID tells when its row was made (the rows carry that
/// time anyway) and nothing guessable; it is no secret (tokens are `Tokens.random`).
enum Identifier {
    static func make(_ prefix: String, at date: Date = Date()) -> String {
        var g = SystemRandomNumberGenerator()
        let ms = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        var out = Array(prefix.utf8)
        out.append(UInt8(ascii: "_"))
        out.append(contentsOf: repeatElement(0, count: bodyLength))
        out.withUnsafeMutableBytes { buffer in
            var n = buffer.count - bodyLength
            writeBody(milliseconds: ms, random: g.next(), to: buffer, at: &n)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What follows the prefix and its underscore.
    static let bodyLength = 20

    /// Writes the 20 characters after `prefix_` at `n`: the time, then the random part, each in
    /// fixed-width lowercase base 36 (so that IDs sort as their times do).
    static func writeBody(milliseconds: UInt64, random: UInt64, to out: UnsafeMutableRawBufferPointer, at n: inout Int) {
        writeBase36(milliseconds, width: 9, to: out, at: &n)
        writeBase36(random & 0x00FF_FFFF_FFFF_FFFF, width: 11, to: out, at: &n)
    }

    private static func writeBase36(_ value: UInt64, width: Int, to out: UnsafeMutableRawBufferPointer, at n: inout Int) {
        var v = value
        for j in stride(from: width - 1, through: 0, by: -1) {
            let r = UInt8(v % 36)
            out[n + j] = r < 10 ? 48 + r : 87 + r
            v /= 36
        }
        n += width
    }
}
