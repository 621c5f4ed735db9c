import Crypto
import Foundation
import RaxxAPI

/// The authenticator data (WebAuthn §6.1): the RP ID's hash, the flags, the signature counter and,
/// on registration, the attested credential (its ID and COSE public key). Written by the software
/// authenticator, parsed by the relying party: one layout for both.
public struct AuthenticatorData: Sendable, Equatable {
    /// User present.
    public static let flagUP: UInt8 = 0x01
    /// User verified.
    public static let flagUV: UInt8 = 0x04
    /// Attested credential data included.
    public static let flagAT: UInt8 = 0x40

    public struct AttestedCredential: Sendable, Equatable {
        public var credentialID: [UInt8]
        public var publicKey: CBOR

        public init(credentialID: [UInt8], publicKey: CBOR) {
            self.credentialID = credentialID
            self.publicKey = publicKey
        }
    }

    public var rpIDHash: [UInt8]
    public var flags: UInt8
    public var signCount: UInt32
    public var attested: AttestedCredential?

    public var userPresent: Bool { flags & Self.flagUP != 0 }
    public var userVerified: Bool { flags & Self.flagUV != 0 }

    public init(rpID: String, flags: UInt8, signCount: UInt32, attested: AttestedCredential? = nil) {
        self.rpIDHash = Self.rpIDHash(rpID)
        self.flags = attested == nil ? flags : flags | Self.flagAT
        self.signCount = signCount
        self.attested = attested
    }

    public static func rpIDHash(_ rpID: String) -> [UInt8] { Array(SHA256.hash(data: Data(rpID.utf8))) }

    /// The bytes, as signed (no AAGUID: 16 zero bytes).
    public var bytes: [UInt8] {
        var out = rpIDHash
        out.append(flags)
        out += [UInt8(signCount >> 24 & 0xFF), UInt8(signCount >> 16 & 0xFF), UInt8(signCount >> 8 & 0xFF), UInt8(signCount & 0xFF)]
        if let attested {
            out += [UInt8](repeating: 0, count: 16)
            out += [UInt8(attested.credentialID.count >> 8 & 0xFF), UInt8(attested.credentialID.count & 0xFF)] + attested.credentialID
            out += attested.publicKey.encoded()
        }
        return out
    }

    /// Parses authenticator data (trailing extension data is ignored).
    public init(parsing bytes: [UInt8]) throws(WebAuthnRefusal) {
        guard bytes.count >= 37 else { throw WebAuthnRefusal(.badRequest, "authenticatorData is too short.") }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        attested = nil
        if flags & Self.flagAT != 0 {
            guard bytes.count >= 55 else { throw WebAuthnRefusal(.badRequest, "attested credential data is truncated.") }
            let length = Int(bytes[53]) << 8 | Int(bytes[54])
            guard length > 0, length <= 1023, bytes.count >= 55 + length else {
                throw WebAuthnRefusal(.badRequest, "the credential ID is malformed.")
            }
            let key: CBOR
            do { key = try CBOR.decode(prefixOf: Array(bytes[(55 + length)...])).0 } catch {
                throw WebAuthnRefusal(.badRequest, "the credential public key is not valid CBOR.")
            }
            attested = AttestedCredential(credentialID: Array(bytes[55..<(55 + length)]), publicKey: key)
        }
    }
}

/// An ES256 (P-256) public key as COSE writes it (RFC 9053): the only kind this suite makes or
/// accepts.
public enum ES256Key {
    /// COSE's algorithm number for ES256.
    public static let algorithm: Int64 = -7

    /// The COSE key of an X9.63 uncompressed point (0x04 ‖ x ‖ y).
    public static func cose(x963 point: [UInt8]) -> CBOR {
        .map([
            (.int(1), .int(2)),  // kty: EC2
            (.int(3), .int(algorithm)),  // alg: ES256
            (.int(-1), .int(1)),  // crv: P-256
            (.int(-2), .bytes(Array(point[1...32]))),  // x
            (.int(-3), .bytes(Array(point[33...64]))),  // y
        ])
    }

    /// The public key a COSE key holds, when it is an ES256 key on P-256.
    public static func publicKey(cose key: CBOR) -> P256.Signing.PublicKey? {
        guard key[.int(1)]?.intValue == 2, key[.int(3)]?.intValue == algorithm, key[.int(-1)]?.intValue == 1,
            let x = key[.int(-2)]?.bytesValue, let y = key[.int(-3)]?.bytesValue, x.count == 32, y.count == 32
        else { return nil }
        return try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
    }
}

/// Why a relying party refused a WebAuthn response: the spec's problem code, and what failed.
public struct WebAuthnRefusal: Error, Sendable, Equatable {
    public var code: Components.Schemas.ProblemCode
    public var detail: String

    public init(_ code: Components.Schemas.ProblemCode, _ detail: String) {
        self.code = code
        self.detail = detail
    }
}
