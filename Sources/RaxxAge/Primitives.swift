import CSodium
import Crypto
import Foundation
import RaxxCore
import RaxxSecrets

/// The primitives age is made of, each from a library: X25519, ChaCha20-Poly1305, scrypt, random
/// bytes and wiping from libsodium; HKDF-SHA-256 and HMAC-SHA-256 from swift-crypto.
enum Primitives {

    static let aeadTagLength = 16

    /// The bytes' address for a C call; only for non-empty buffers.
    private static func u8(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
        buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
    }

    private static func u8(_ buffer: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
        buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
    }

    static func random(into buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress, buffer.count > 0 { randombytes_buf(base, buffer.count) }
    }

    static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress, buffer.count > 0 { sodium_memzero(base, buffer.count) }
    }

    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { wipe($0) }
    }

    /// X25519(scalar, basepoint).
    static func x25519Base(scalar: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        _ = crypto_scalarmult_base(u8(out), u8(scalar))
    }

    /// X25519(scalar, point); false when the result is all zeroes (a low-order point), which age
    /// must refuse.
    static func x25519(scalar: UnsafeRawBufferPointer, point: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Bool {
        let status = crypto_scalarmult(
            u8(out), u8(scalar),
            u8(point))
        return status == 0 && sodium_is_zero(u8(out), out.count) == 0
    }

    /// ChaCha20-Poly1305 (RFC 7539): `out` holds plaintext.count + 16 bytes.
    static func seal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) {
        precondition(key.count == 32 && nonce.count == 12 && out.count >= plaintext.count + aeadTagLength)
        var length: UInt64 = 0
        _ = crypto_aead_chacha20poly1305_ietf_encrypt(
            u8(out), &length,
            plaintext.count == 0 ? nil : u8(plaintext), UInt64(plaintext.count),
            nil, 0, nil,
            u8(nonce), u8(key))
    }

    /// scrypt(N = 2^logN, r = 8, p = 1, dkLen = 32) into `out`.
    static func scrypt(passphrase: UnsafeRawBufferPointer, salt: [UInt8], logN: Int, into out: UnsafeMutableRawBufferPointer) throws(RaxxError) {
        var spare: UInt8 = 0
        let status = withUnsafeMutablePointer(to: &spare) { spare in
            crypto_pwhash_scryptsalsa208sha256_ll(
                passphrase.count == 0 ? UnsafePointer(spare) : u8(passphrase), passphrase.count,
                salt, salt.count, UInt64(1) << UInt64(logN), 8, 1,
                u8(out), out.count)
        }
        guard status == 0 else {
            throw RaxxError(code: .outOfMemory, message: "Not enough memory to derive the key from the passphrase (scrypt, work factor \(logN)).")
        }
    }

    /// HKDF-SHA-256 with 32 bytes out. swift-crypto keeps the result in memory it zeroes when freed.
    static func hkdf(key: UnsafeRawBufferPointer, salt: [UInt8], info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: key), salt: salt, info: Array(info.utf8), outputByteCount: 32)
    }

    static func hmac(key: SymmetricKey, _ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws RaxxError.
    func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) throws(RaxxError) -> R) throws(RaxxError) -> R {
        let result: Result<R, RaxxError> = withUnsafeBytes { raw in
            do throws(RaxxError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
