import CSodium
import Crypto
import Foundation
import RaxxCore
import RaxxSecrets
import RaxxWebAuthn

/// A WebAuthn authenticator in software: ES256 (P-256) credentials whose private keys are sealed
/// under a key derived from the user's PIN, so user verification is real — without the PIN the
/// credential cannot sign. Attestation format "none"; flags UP and UV on every operation.
public enum SoftwareAuthenticator {
    public static let kind = "software (P-256, PIN-protected)"
    public static let coseAlgorithmES256: Int64 = ES256Key.algorithm

    /// What a registration produces.
    public struct Registration: Sendable {
        public var credential: StoredCredential
        public var credentialID: [UInt8]
        public var authenticatorData: [UInt8]
        public var attestationObject: [UInt8]
        /// SubjectPublicKeyInfo (DER), for RegistrationResponseJSON's `publicKey`.
        public var publicKeyDER: [UInt8]
    }

    /// What an assertion produces.
    public struct Assertion: Sendable {
        public var credentialID: [UInt8]
        public var authenticatorData: [UInt8]
        public var signature: [UInt8]
        public var userHandle: [UInt8]
    }

    /// Creates a credential for `rpID` and seals its private key under `pin`.
    public static func makeCredential(
        rpID: String, userHandle: [UInt8], email: String, clientDataHash: [UInt8],
        pin: SecretBytes, now: Date,
        opsLimit: UInt64 = PIN.newOpsLimit,
        memLimit: UInt64 = PIN.newMemLimit
    ) throws(RaxxError) -> Registration {
        try Sodium.ensureReady()
        let privateKey = P256.Signing.PrivateKey()
        let credentialID = try Sodium.randomBytes(32).withUnsafeBytes { Array($0) }
        let salt = try Sodium.randomBytes(Int(crypto_pwhash_saltbytes())).withUnsafeBytes { Array($0) }
        let pinKey = try PIN.derivedKey(pin: pin, salt: salt, opsLimit: opsLimit, memLimit: memLimit)
        defer { pinKey.wipe() }
        let raw = SecretBytes(copying: privateKey.rawRepresentation)
        defer { raw.wipe() }
        let sealed = try seal(raw, key: pinKey, ad: credentialID)

        let publicKey = privateKey.publicKey
        let x963 = Array(publicKey.x963Representation)
        let authData = AuthenticatorData(
            rpID: rpID, flags: AuthenticatorData.flagUP | AuthenticatorData.flagUV, signCount: 0,
            attested: .init(credentialID: credentialID, publicKey: ES256Key.cose(x963: x963))
        ).bytes
        let attestation = CBOR.map([
            (.text("fmt"), .text("none")),
            (.text("attStmt"), .map([])),
            (.text("authData"), .bytes(authData)),
        ]).encoded()
        let credential = StoredCredential(
            credentialID: Base64URL.encode(credentialID), rpID: rpID, userHandle: Base64URL.encode(userHandle),
            email: email, publicKey: Base64URL.encode(x963), sealedPrivateKey: Base64URL.encode(sealed),
            pinSalt: Base64URL.encode(salt), pinOpsLimit: opsLimit, pinMemLimit: memLimit,
            signCount: 0, failedPINAttempts: 0, createdAt: now)
        return Registration(
            credential: credential, credentialID: credentialID, authenticatorData: authData,
            attestationObject: attestation, publicKeyDER: Array(publicKey.derRepresentation))
    }

    /// Signs an assertion for `rpID`. A wrong PIN counts against the credential (the caller saves
    /// `credential` whatever happens); after `PIN.maximumAttempts` the credential is locked.
    public static func getAssertion(
        credential: inout StoredCredential, rpID: String, clientDataHash: [UInt8],
        pin: SecretBytes
    ) throws(RaxxError) -> Assertion {
        guard credential.failedPINAttempts < PIN.maximumAttempts else { throw pinLocked }
        guard rpID == credential.rpID else {
            throw RaxxError(code: .rpMismatch, message: "This device's passkey is for \(credential.rpID), not \(rpID).")
        }
        guard let credentialID = Base64URL.decode(credential.credentialID),
            let salt = Base64URL.decode(credential.pinSalt), let sealed = Base64URL.decode(credential.sealedPrivateKey),
            let userHandle = Base64URL.decode(credential.userHandle)
        else { throw RaxxError(code: .keystoreDamaged, message: "The passkey in the keystore is damaged.") }
        let pinKey = try PIN.derivedKey(pin: pin, salt: salt, opsLimit: credential.pinOpsLimit, memLimit: credential.pinMemLimit)
        defer { pinKey.wipe() }
        guard let raw = open(sealed, key: pinKey, ad: credentialID) else {
            credential.failedPINAttempts += 1
            let left = PIN.maximumAttempts - credential.failedPINAttempts
            if left <= 0 { throw pinLocked }
            throw RaxxError(code: .wrongPIN, message: "Wrong PIN.", hint: "\(left) attempt\(left == 1 ? "" : "s") left before the passkey locks.")
        }
        defer { raw.wipe() }
        let privateKey: P256.Signing.PrivateKey
        do {
            privateKey = try raw.withUnsafeBytes { try P256.Signing.PrivateKey(rawRepresentation: $0) }
        } catch {
            throw RaxxError(code: .keystoreDamaged, message: "The passkey in the keystore is damaged.")
        }
        credential.failedPINAttempts = 0
        credential.signCount &+= 1
        let authData = AuthenticatorData(
            rpID: rpID, flags: AuthenticatorData.flagUP | AuthenticatorData.flagUV,
            signCount: credential.signCount
        ).bytes
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try privateKey.signature(for: authData + clientDataHash)
        } catch {
            throw RaxxError(code: .signingFailed, message: "The passkey could not sign: \(error).")
        }
        return Assertion(
            credentialID: credentialID, authenticatorData: authData,
            signature: Array(signature.derRepresentation), userHandle: userHandle)
    }

    /// The code of a wrong PIN's refusal (the attempts left are in its hint).
    public static let wrongPINCode = ErrorCode.wrongPIN

    public static let pinLocked = RaxxError(
        code: .pinLocked, message: "Too many wrong PINs: this device's passkey is locked.",
        hint:
            "Remove it with raxx-auth logout --forget-device, then raxx-auth register again: the code emailed to you makes a new passkey for the same account.")

    private static func seal(_ plain: SecretBytes, key: SecretBytes, ad: [UInt8]) throws(RaxxError) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 24)
        randombytes_buf(&nonce, 24)
        var out = [UInt8](repeating: 0, count: plain.count + 16)
        var outCount: UInt64 = 0
        plain.withUnsafeBytes { m in
            key.withUnsafeBytes { k in
                _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                    &out, &outCount, m.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    UInt64(m.count), ad, UInt64(ad.count), nil, nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return nonce + out
    }

    private static func open(_ sealed: [UInt8], key: SecretBytes, ad: [UInt8]) -> SecretBytes? {
        guard sealed.count > 24 + 16 else { return nil }
        let nonce = Array(sealed[..<24]), cipher = Array(sealed[24...])
        let plain = SecretBytes(count: cipher.count - 16)
        var plainCount: UInt64 = 0
        let status = plain.withUnsafeMutableBytes { p in
            key.withUnsafeBytes { k in
                crypto_aead_xchacha20poly1305_ietf_decrypt(
                    p.baseAddress!.assumingMemoryBound(to: UInt8.self), &plainCount, nil,
                    cipher, UInt64(cipher.count), ad, UInt64(ad.count), nonce,
                    k.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        return status == 0 ? plain : nil
    }
}
