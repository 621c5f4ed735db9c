import Crypto
import Foundation
import RaxxCore
import RaxxWebAuthn
import Testing

/// A hand-made authenticator, so each rule of the verifier can be broken on purpose (written
/// byte by byte, not with the module's own `AuthenticatorData`, so the two are checked against
/// each other).
struct CraftedAuthenticator {
    let key = P256.Signing.PrivateKey()
    let credentialID: [UInt8] = Array(repeating: 0xAB, count: 16)

    static func clientData(type: String = "webauthn.get", challenge: String = "challenge", origin: String = "https://raxx.app") -> [UInt8] {
        Array(#"{"type":"\#(type)","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
    }

    func authData(rpID: String = "raxx.app", flags: UInt8, count: UInt32, attested: Bool = false, alg: Int64 = -7) -> [UInt8] {
        var data =
            Array(SHA256.hash(data: Data(rpID.utf8))) + [flags] + [
                UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF),
            ]
        if attested {
            let point = Array(key.publicKey.x963Representation)
            let cose = CBOR.map([
                (.int(1), .int(2)), (.int(3), .int(alg)), (.int(-1), .int(1)),
                (.int(-2), .bytes(Array(point[1...32]))), (.int(-3), .bytes(Array(point[33...64]))),
            ])
            data += [UInt8](repeating: 0, count: 16) + [0, UInt8(credentialID.count)] + credentialID + cose.encoded()
        }
        return data
    }

    func attestation(fmt: String = "none", rpID: String = "raxx.app", flags: UInt8 = 0x45, alg: Int64 = -7) -> [UInt8] {
        CBOR.map([
            (.text("fmt"), .text(fmt)), (.text("attStmt"), .map([])),
            (.text("authData"), .bytes(authData(rpID: rpID, flags: flags, count: 0, attested: true, alg: alg))),
        ]).encoded()
    }

    func sign(_ authData: [UInt8], _ clientData: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: authData + Array(SHA256.hash(data: Data(clientData)))).derRepresentation)
    }
}

@Suite struct WebAuthnVerifierTests {
    let verifier = WebAuthnVerifier(rpID: "raxx.app", origin: "https://raxx.app")
    let authenticator = CraftedAuthenticator()

    func refusal(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let r as WebAuthnRefusal { return r.code.rawValue } catch { return "\(error)" }
    }

    @Test func acceptsAGoodRegistration() throws {
        let credential = try verifier.verifyRegistration(attestationObject: authenticator.attestation(), requireUserVerification: true)
        #expect(credential.id == authenticator.credentialID)
        #expect(credential.publicKey == Array(authenticator.key.publicKey.x963Representation))
    }

    @Test func registrationRefusals() {
        #expect(
            refusal { _ = try verifier.verifyRegistration(attestationObject: authenticator.attestation(rpID: "evil.example"), requireUserVerification: true) }
                == "rp_mismatch")
        #expect(
            refusal { _ = try verifier.verifyRegistration(attestationObject: authenticator.attestation(flags: 0x41), requireUserVerification: true) }
                == "user_verification_required")
        #expect(
            refusal { _ = try verifier.verifyRegistration(attestationObject: authenticator.attestation(flags: 0x44), requireUserVerification: true) }
                == "user_presence_required")
        #expect(
            refusal { _ = try verifier.verifyRegistration(attestationObject: authenticator.attestation(fmt: "packed"), requireUserVerification: true) }
                == "attestation_unsupported")
        #expect(
            refusal { _ = try verifier.verifyRegistration(attestationObject: authenticator.attestation(alg: -257), requireUserVerification: true) }
                == "algorithm_unsupported")
        #expect(refusal { _ = try verifier.verifyRegistration(attestationObject: [0xFF, 0x00], requireUserVerification: true) } == "bad_request")
    }

    @Test func clientDataRefusals() throws {
        #expect(
            refusal { _ = try verifier.clientData(CraftedAuthenticator.clientData(origin: "https://evil.example"), type: "webauthn.get") } == "origin_mismatch")
        #expect(refusal { _ = try verifier.clientData(CraftedAuthenticator.clientData(type: "webauthn.create"), type: "webauthn.get") } == "bad_request")
        #expect(refusal { _ = try verifier.clientData(Array("not json".utf8), type: "webauthn.get") } == "bad_request")
        #expect(try verifier.clientData(CraftedAuthenticator.clientData(), type: "webauthn.get").challenge == "challenge")
    }

    func assert(
        flags: UInt8 = 0x05, count: UInt32 = 5, stored: UInt32 = 4, rpID: String = "raxx.app",
        tamper: Bool = false, requireUV: Bool = true
    ) throws -> UInt32 {
        let clientData = CraftedAuthenticator.clientData()
        let authData = authenticator.authData(rpID: rpID, flags: flags, count: count)
        var signature = try authenticator.sign(authData, clientData)
        if tamper { signature[signature.count - 1] ^= 1 }
        return try verifier.verifyAssertion(
            clientDataJSON: clientData, authenticatorData: authData, signature: signature,
            publicKey: authenticator.key.publicKey, storedSignCount: stored, requireUserVerification: requireUV)
    }

    @Test func acceptsAGoodAssertion() throws {
        #expect(try assert() == 5)
        #expect(try assert(count: 0, stored: 0) == 0)  // authenticators without counters
        #expect(try assert(flags: 0x01, requireUV: false) == 5)
    }

    @Test func assertionRefusals() {
        #expect(refusal { _ = try assert(rpID: "evil.example") } == "rp_mismatch")
        #expect(refusal { _ = try assert(flags: 0x01) } == "user_verification_required")
        #expect(refusal { _ = try assert(flags: 0x04) } == "user_presence_required")
        #expect(refusal { _ = try assert(tamper: true) } == "signature_invalid")
        #expect(refusal { _ = try assert(count: 4, stored: 4) } == "counter_invalid")
        #expect(refusal { _ = try assert(count: 3, stored: 9) } == "counter_invalid")
    }
}

/// The layout the software authenticator writes is the one the verifier reads.
@Suite struct AuthenticatorDataTests {
    @Test func writtenAndParsedAlike() throws {
        let key = P256.Signing.PrivateKey()
        let attested = AuthenticatorData.AttestedCredential(
            credentialID: Array(repeating: 7, count: 32),
            publicKey: ES256Key.cose(x963: Array(key.publicKey.x963Representation)))
        let written = AuthenticatorData(
            rpID: "raxx.app", flags: AuthenticatorData.flagUP | AuthenticatorData.flagUV, signCount: 258,
            attested: attested)
        let parsed = try AuthenticatorData(parsing: written.bytes)
        #expect(parsed == written)
        #expect(parsed.userPresent && parsed.userVerified && parsed.flags & AuthenticatorData.flagAT != 0)
        #expect(ES256Key.publicKey(cose: try #require(parsed.attested).publicKey)?.x963Representation == key.publicKey.x963Representation)
        // The same bytes as the hand-made authenticator of the verifier's tests.
        let crafted = CraftedAuthenticator()
        let hand = crafted.authData(flags: 0x45, count: 0, attested: true)
        let ours = AuthenticatorData(
            rpID: "raxx.app", flags: 0x05, signCount: 0,
            attested: .init(
                credentialID: crafted.credentialID,
                publicKey: ES256Key.cose(x963: Array(crafted.key.publicKey.x963Representation)))
        ).bytes
        #expect(ours == hand)
    }

    @Test(arguments: [[UInt8](repeating: 0, count: 36), [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 10)])
    func refusesTruncatedData(bytes: [UInt8]) {
        #expect(throws: WebAuthnRefusal.self) { try AuthenticatorData(parsing: bytes) }
    }
}
