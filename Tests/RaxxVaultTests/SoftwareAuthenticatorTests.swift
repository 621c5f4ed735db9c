import Crypto
import Foundation
import RaxxCore
import RaxxSecrets
import RaxxVault
import RaxxWebAuthn
import Testing

@Suite struct SoftwareAuthenticatorTests {
    let clientDataHash = Array(SHA256.hash(data: Data("client data".utf8)))
    // Cheap Argon2id settings: the tests exercise the logic, not the cost.
    func make(pin: String = "1234") throws -> SoftwareAuthenticator.Registration {
        try SoftwareAuthenticator.makeCredential(
            rpID: "raxx.app", userHandle: [1, 2, 3], email: "t@example.com",
            clientDataHash: clientDataHash, pin: SecretBytes(copying: Array(pin.utf8)),
            now: Date(), opsLimit: 1, memLimit: 8192)
    }

    @Test func registrationCarriesAnES256KeyAndTheFlags() throws {
        let r = try make()
        let authData = r.authenticatorData
        #expect(Array(authData[0..<32]) == Array(SHA256.hash(data: Data("raxx.app".utf8))))
        #expect(authData[32] == 0x45)  // UP | UV | AT
        let object = try CBOR.decode(r.attestationObject)
        #expect(object[.text("fmt")]?.textValue == "none")
        #expect(object[.text("authData")]?.bytesValue == authData)
        let length = Int(authData[53]) << 8 | Int(authData[54])
        #expect(Array(authData[55..<(55 + length)]) == r.credentialID)
        let cose = try CBOR.decode(Array(authData[(55 + length)...]))
        #expect(cose[.int(3)]?.intValue == -7)
        let x = try #require(cose[.int(-2)]?.bytesValue), y = try #require(cose[.int(-3)]?.bytesValue)
        #expect(try P256.Signing.PublicKey(derRepresentation: r.publicKeyDER).x963Representation == Data([4] + x + y))
        // The private key is sealed: nothing of it in the stored credential but ciphertext.
        #expect(r.credential.sealedPrivateKey.count > 60)
    }

    @Test func assertionsVerifyAndCount() throws {
        var credential = try make().credential
        let key = try P256.Signing.PublicKey(x963Representation: Base64URL.decode(credential.publicKey)!)
        for expected in UInt32(1)...3 {
            let a = try SoftwareAuthenticator.getAssertion(
                credential: &credential, rpID: "raxx.app", clientDataHash: clientDataHash,
                pin: SecretBytes(copying: Array("1234".utf8)))
            #expect(a.authenticatorData[32] == 0x05)  // UP | UV
            #expect(a.authenticatorData[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } == expected)
            let signature = try P256.Signing.ECDSASignature(derRepresentation: a.signature)
            #expect(key.isValidSignature(signature, for: a.authenticatorData + clientDataHash))
            #expect(a.userHandle == [1, 2, 3])
        }
    }

    @Test func wrongPINsCountAndThenLock() throws {
        var credential = try make().credential
        let wrong = SecretBytes(copying: Array("0000".utf8)), right = SecretBytes(copying: Array("1234".utf8))
        for attempt in 1..<PIN.maximumAttempts {
            do {
                _ = try SoftwareAuthenticator.getAssertion(credential: &credential, rpID: "raxx.app", clientDataHash: clientDataHash, pin: wrong)
                Issue.record("a wrong PIN signed")
            } catch {
                #expect(error.code == "wrong_pin")
                #expect(error.status == .notPermitted)
                #expect(credential.failedPINAttempts == attempt)
            }
        }
        // A right PIN before the limit resets the count…
        _ = try SoftwareAuthenticator.getAssertion(credential: &credential, rpID: "raxx.app", clientDataHash: clientDataHash, pin: right)
        #expect(credential.failedPINAttempts == 0)
        // …and five wrong ones in a row lock the passkey, even against the right PIN.
        for _ in 0..<PIN.maximumAttempts {
            _ = try? SoftwareAuthenticator.getAssertion(credential: &credential, rpID: "raxx.app", clientDataHash: clientDataHash, pin: wrong)
        }
        do {
            _ = try SoftwareAuthenticator.getAssertion(credential: &credential, rpID: "raxx.app", clientDataHash: clientDataHash, pin: right)
            Issue.record("a locked passkey signed")
        } catch {
            #expect(error.code == "pin_locked")
        }
    }

    @Test func refusesAnotherRelyingParty() throws {
        var credential = try make().credential
        do {
            _ = try SoftwareAuthenticator.getAssertion(
                credential: &credential, rpID: "evil.example", clientDataHash: clientDataHash,
                pin: SecretBytes(copying: Array("1234".utf8)))
            Issue.record("signed for another RP")
        } catch {
            #expect(error.code == "rp_mismatch")
        }
    }
}
