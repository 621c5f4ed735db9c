import Crypto
import Foundation
import RaxxAPI
import RaxxCore

/// Relying-party verification of WebAuthn registrations and assertions (ES256, attestation
/// "none"), as the WebAuthn Level 2 specification's §7.1 and §7.2 describe.
struct WebAuthnVerifier: Sendable {
    let rpID: String
    let origin: String

    struct ClientData: Decodable {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool?
    }

    struct NewCredential: Sendable {
        var id: [UInt8]
        /// X9.63 uncompressed point.
        var publicKey: [UInt8]
        var signCount: UInt32
    }

    static func problem(_ code: Components.Schemas.ProblemCode, _ detail: String) -> ProblemError {
        ProblemError(400, code: code, title: "The passkey response was refused.", detail: detail)
    }

    /// Parses clientDataJSON and checks its type and origin; answers the challenge it signs.
    func clientData(_ bytes: [UInt8], type expected: String) throws -> ClientData {
        guard let data = try? JSONDecoder().decode(ClientData.self, from: Data(bytes)) else {
            throw Self.problem(.badRequest, "clientDataJSON is not valid JSON.")
        }
        guard data.type == expected else { throw Self.problem(.badRequest, "clientDataJSON has type \(data.type), not \(expected).") }
        guard data.origin == origin else { throw Self.problem(.originMismatch, "The origin \(data.origin) is not \(origin).") }
        guard data.crossOrigin != true else { throw Self.problem(.originMismatch, "Cross-origin credentials are not accepted.") }
        return data
    }

    struct AuthenticatorData {
        var rpIDHash: [UInt8]
        var flags: UInt8
        var signCount: UInt32
        var attested: (credentialID: [UInt8], publicKey: CBOR)?

        var userPresent: Bool { flags & 0x01 != 0 }
        var userVerified: Bool { flags & 0x04 != 0 }
    }

    func authenticatorData(_ bytes: [UInt8]) throws -> AuthenticatorData {
        guard bytes.count >= 37 else { throw Self.problem(.badRequest, "authenticatorData is too short.") }
        let flags = bytes[32]
        let count = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var result = AuthenticatorData(rpIDHash: Array(bytes[0..<32]), flags: flags, signCount: count, attested: nil)
        if flags & 0x40 != 0 {
            guard bytes.count >= 55 else { throw Self.problem(.badRequest, "attested credential data is truncated.") }
            let length = Int(bytes[53]) << 8 | Int(bytes[54])
            guard length > 0, length <= 1023, bytes.count >= 55 + length else {
                throw Self.problem(.badRequest, "the credential ID is malformed.")
            }
            let id = Array(bytes[55..<(55 + length)])
            let key: CBOR
            do { key = try CBOR.decode(prefixOf: Array(bytes[(55 + length)...])).0 } catch {
                throw Self.problem(.badRequest, "the credential public key is not valid CBOR.")
            }
            result.attested = (id, key)
        }
        return result
    }

    func checkRelyingParty(_ data: AuthenticatorData) throws {
        guard data.rpIDHash == Array(SHA256.hash(data: Data(rpID.utf8))) else {
            throw Self.problem(.rpMismatch, "The credential is not scoped to \(rpID).")
        }
        guard data.userPresent else { throw Self.problem(.userPresenceRequired, "The authenticator did not show user presence.") }
    }

    /// Verifies a registration's attestation object; answers the new credential.
    func verifyRegistration(attestationObject: [UInt8], requireUserVerification: Bool) throws -> NewCredential {
        let object: CBOR
        do { object = try CBOR.decode(attestationObject) } catch {
            throw Self.problem(.badRequest, "attestationObject is not valid CBOR.")
        }
        guard let format = object[.text("fmt")]?.textValue, let authDataBytes = object[.text("authData")]?.bytesValue else {
            throw Self.problem(.badRequest, "attestationObject lacks fmt or authData.")
        }
        guard format == "none" else { throw Self.problem(.attestationUnsupported, "Attestation format \(format) is not accepted; use none.") }
        let authData = try authenticatorData(authDataBytes)
        try checkRelyingParty(authData)
        if requireUserVerification && !authData.userVerified {
            throw Self.problem(.userVerificationRequired, "The authenticator did not verify the user.")
        }
        guard let (id, coseKey) = authData.attested else { throw Self.problem(.badRequest, "No attested credential data.") }
        guard coseKey[.int(1)]?.intValue == 2, coseKey[.int(3)]?.intValue == -7, coseKey[.int(-1)]?.intValue == 1,
              let x = coseKey[.int(-2)]?.bytesValue, let y = coseKey[.int(-3)]?.bytesValue, x.count == 32, y.count == 32,
              let publicKey = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
        else { throw Self.problem(.algorithmUnsupported, "Only ES256 (P-256) credentials are accepted.") }
        return NewCredential(id: id, publicKey: Array(publicKey.x963Representation), signCount: authData.signCount)
    }

    /// Verifies an assertion's signature, flags and counter; answers the new sign count.
    func verifyAssertion(clientDataJSON: [UInt8], authenticatorData bytes: [UInt8], signature: [UInt8],
                         publicKey: P256.Signing.PublicKey, storedSignCount: UInt32,
                         requireUserVerification: Bool) throws -> UInt32 {
        let authData = try authenticatorData(bytes)
        try checkRelyingParty(authData)
        if requireUserVerification && !authData.userVerified {
            throw Self.problem(.userVerificationRequired, "The authenticator did not verify the user.")
        }
        guard let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature),
              publicKey.isValidSignature(ecdsa, for: bytes + Array(SHA256.hash(data: Data(clientDataJSON))))
        else { throw Self.problem(.signatureInvalid, "The assertion's signature does not verify.") }
        if authData.signCount != 0 || storedSignCount != 0 {
            guard authData.signCount > storedSignCount else {
                throw Self.problem(.counterInvalid, "The signature counter went backwards: the credential may have been cloned.")
            }
        }
        return authData.signCount
    }
}
