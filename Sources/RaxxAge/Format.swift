import Crypto
import Foundation
import RaxxCore

/// The age v1 format's constants and its header (https://age-encryption.org/v1, C2SP age).
enum AgeFormat {
    static let versionLine = "age-encryption.org/v1"
    static let x25519Label = "age-encryption.org/v1/X25519"
    static let scryptLabel = "age-encryption.org/v1/scrypt"
    static let fileKeyLength = 16
    static let payloadNonceLength = 16
    /// Plaintext bytes per payload chunk; each sealed chunk is 16 bytes longer.
    static let chunkLength = 64 << 10
    static let sealedChunkLength = chunkLength + Primitives.aeadTagLength
    static let columns = 64

    /// The 12-byte STREAM nonce: an 11-byte big-endian counter, then 0x01 on the final chunk.
    static func chunkNonce(counter: UInt64, final: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { nonce[10 - i] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(i))) }
        nonce[11] = final ? 1 : 0
        return nonce
    }

    static let zeroNonce = [UInt8](repeating: 0, count: 12)
}

/// One recipient stanza: its arguments (the type first) and its body.
struct Stanza: Equatable {
    var arguments: [String]
    var body: [UInt8]

    /// `-> args…` then the body in base64, wrapped at 64 columns, ending with a line shorter than 64
    /// (empty when the last full line ends exactly at a multiple of 64).
    var encoded: String {
        var text = "-> " + arguments.joined(separator: " ") + "\n"
        let b64 = Array(RawBase64.encode(body).utf8)
        var index = 0
        while true {
            let end = min(index + AgeFormat.columns, b64.count)
            text += String(decoding: b64[index..<end], as: UTF8.self) + "\n"
            if end - index < AgeFormat.columns { break }
            index = end
        }
        return text
    }
}

/// The header up to and including `---`, and what the MAC is over.
struct Header {
    var stanzas: [Stanza]

    /// The bytes the MAC covers: the version line, every stanza, and `---`.
    var macInput: [UInt8] {
        Array((AgeFormat.versionLine + "\n" + stanzas.map(\.encoded).joined() + "---").utf8)
    }

    /// The whole header with its MAC under `fileKey`.
    func encoded(fileKey: UnsafeRawBufferPointer) -> [UInt8] {
        let macKey = Primitives.hkdf(key: fileKey, salt: [], info: "header")
        let input = macInput
        let mac = Primitives.hmac(key: macKey, input)
        return input + Array((" " + RawBase64.encode(mac) + "\n").utf8)
    }
}
