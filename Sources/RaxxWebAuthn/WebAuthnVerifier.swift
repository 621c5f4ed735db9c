import Crypto
import Foundation
import RaxxAPI

/// Relying-party verification of WebAuthn registrations and assertions (ES256, attestation
/// "none"), as the WebAuthn Level 2 specification's §7.1 and §7.2 describe. Refusals carry the
/// spec's problem code (`WebAuthnRefusal`).
public struct WebAuthnVerifier: Sendable {
    public let rpID: String
    public let origin: String

    public init(rpID: String, origin: String) {
        self.rpID = rpID
        self.origin = origin
    }

    public struct NewCredential: Sendable {
        public var id: [UInt8]
        /// X9.63 uncompressed point.
        public var publicKey: [UInt8]
        public var signCount: UInt32
    }

    /// Parses clientDataJSON and checks its type and origin; answers the challenge it signs.
    public func clientData(_ bytes: [UInt8], type expected: String) throws(WebAuthnRefusal) -> ClientData.Collected {
        guard let data = try? JSONDecoder().decode(ClientData.Collected.self, from: Data(bytes)) else {
            throw WebAuthnRefusal(.badRequest, "clientDataJSON is not valid JSON.")
        }
        guard data.type == expected else { throw WebAuthnRefusal(.badRequest, "clientDataJSON has type \(data.type), not \(expected).") }
        guard data.origin == origin else { throw WebAuthnRefusal(.originMismatch, "The origin \(data.origin) is not \(origin).") }
        guard data.crossOrigin != true else { throw WebAuthnRefusal(.originMismatch, "Cross-origin credentials are not accepted.") }
        return data
    }

    func checkRelyingParty(_ data: AuthenticatorData) throws(WebAuthnRefusal) {
        guard data.rpIDHash == AuthenticatorData.rpIDHash(rpID) else {
            throw WebAuthnRefusal(.rpMismatch, "The credential is not scoped to \(rpID).")
        }
        guard data.userPresent else { throw WebAuthnRefusal(.userPresenceRequired, "The authenticator did not show user presence.") }
    }

    /// Verifies a registration's attestation object; answers the new credential.
    public func verifyRegistration(attestationObject: [UInt8], requireUserVerification: Bool) throws(WebAuthnRefusal) -> NewCredential {
        let object: CBOR
        do { object = try CBOR.decode(attestationObject) } catch {
            throw WebAuthnRefusal(.badRequest, "attestationObject is not valid CBOR.")
        }
        guard let format = object[.text("fmt")]?.textValue, let authDataBytes = object[.text("authData")]?.bytesValue else {
            throw WebAuthnRefusal(.badRequest, "attestationObject lacks fmt or authData.")
        }
        guard format == "none" else { throw WebAuthnRefusal(.attestationUnsupported, "Attestation format \(format) is not accepted; use none.") }
        let authData = try AuthenticatorData(parsing: authDataBytes)
        try checkRelyingParty(authData)
        if requireUserVerification && !authData.userVerified {
            throw WebAuthnRefusal(.userVerificationRequired, "The authenticator did not verify the user.")
        }
        guard let attested = authData.attested else { throw WebAuthnRefusal(.badRequest, "No attested credential data.") }
        guard let publicKey = ES256Key.publicKey(cose: attested.publicKey) else {
            throw WebAuthnRefusal(.algorithmUnsupported, "Only ES256 (P-256) credentials are accepted.")
        }
        return NewCredential(id: attested.credentialID, publicKey: Array(publicKey.x963Representation), signCount: authData.signCount)
    }

    /// Verifies an assertion's signature, flags and counter; answers the new sign count.
    public func verifyAssertion(
        clientDataJSON: [UInt8], authenticatorData bytes: [UInt8], signature: [UInt8],
        publicKey: P256.Signing.PublicKey, storedSignCount: UInt32,
        requireUserVerification: Bool
    ) throws(WebAuthnRefusal) -> UInt32 {
        let authData = try AuthenticatorData(parsing: bytes)
        try checkRelyingParty(authData)
        if requireUserVerification && !authData.userVerified {
            throw WebAuthnRefusal(.userVerificationRequired, "The authenticator did not verify the user.")
        }
        guard let ecdsa = try? P256.Signing.ECDSASignature(derRepresentation: signature),
            publicKey.isValidSignature(ecdsa, for: bytes + ClientData.hash(clientDataJSON))
        else { throw WebAuthnRefusal(.signatureInvalid, "The assertion's signature does not verify.") }
        if authData.signCount != 0 || storedSignCount != 0 {
            guard authData.signCount > storedSignCount else {
                throw WebAuthnRefusal(.counterInvalid, "The signature counter went backwards: the credential may have been cloned.")
            }
        }
        return authData.signCount
    }
}
