import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCore
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-auth register` in-process: a passkey made by the software authenticator, signed in.
@Suite struct RegisterTests {
    static let options = Components.Schemas.PublicKeyCredentialCreationOptionsJSON(
        rp: .init(id: "raxx.app", name: "Raxx"), user: .init(id: Base64URL.encode(Array("user-1".utf8)), name: Fixtures.email, displayName: "T"),
        challenge: Base64URL.encode(Array("a-fresh-challenge-0123456789".utf8)), pubKeyCredParams: [.init(_type: .publicKey, alg: -7)])

    @Test func createsAPasskeyAndSignsIn() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "246813"
        let keystore = MemoryKeystore()
        world.keystore = keystore
        world.api.onRegisterOptions { input in
            guard case .json(let start) = input.body, start.email == Fixtures.email else { throw RaxxError.failure("wrong email") }
            return .ok(.init(body: .json(Self.options)))
        }
        world.api.onRegisterVerify { input in
            guard case .json(let response) = input.body else { throw RaxxError.failure("no body") }
            // What the server checks first: the client data names this challenge, the create type and the RP's origin.
            let clientData = try #require(Base64URL.decode(response.response.clientDataJSON))
            let text = String(decoding: clientData, as: UTF8.self)
            #expect(text.contains(#""type":"webauthn.create""#) && text.contains(Self.options.challenge))
            #expect(text.contains(#""origin":"https://raxx.app""#))
            return .ok(.init(body: .json(Fixtures.grant())))
        }
        #expect(try await world.run(RaxxAuth.Register.self, ["--email", Fixtures.email, "--json"]) == .ok)
        #expect(world.api.operations == ["registerOptions", "registerVerify"])
        #expect(keystore.current?[Fixtures.origin].credential?.rpID == "raxx.app")
        #expect(keystore.current?[Fixtures.origin].session?.accessToken == "access-1")
        #expect(world.jsonLines.first?["signed_in"] as? Bool == true)
        #expect(!world.stdout.contents.contains("access-1"))
    }

    @Test func aDeviceWithAPasskeyIsNotRegisteredTwice() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "246813"
        let pin = SecretBytes(copying: Array("246813".utf8))
        let made = try SoftwareAuthenticator.makeCredential(rpID: "raxx.app", userHandle: [1, 2, 3], email: Fixtures.email,
                                                            clientDataHash: [UInt8](repeating: 0, count: 32), pin: pin, now: Fixtures.now)
        world.keystore = Fixtures.keystore(credential: made.credential)
        #expect(try await world.run(RaxxAuth.Register.self, ["--email", Fixtures.email, "--format", "text"]) == .failure)
        #expect(world.stderr.contents.contains("already holds a passkey"))
        #expect(world.api.calls.isEmpty)
    }

    @Test func aMalformedEmailIsAUsageError() throws {
        #expect(throws: (any Error).self) { try RaxxAuth.Register.parse(["--email", "not an email"]) }
    }

    @Test func aServerAskingForAnotherSitesPasskeyIsRefusedAndNothingIsSigned() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "246813"
        let keystore = MemoryKeystore()
        world.keystore = keystore
        var options = Self.options
        options.rp.id = "evil.example"
        let evil = options
        world.api.onRegisterOptions { _ in .ok(.init(body: .json(evil))) }
        #expect(try await world.run(RaxxAuth.Register.self, ["--email", Fixtures.email, "--format", "text"]) == .notPermitted)
        #expect(world.stderr.contents.contains("asked for a passkey of evil.example"))
        #expect(world.api.operations == ["registerOptions"])
        #expect(keystore.saves == 0)
    }

    @Test func aNewPasskeyNeedsAPINOfAtLeastSixCharacters() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "2468"
        let keystore = MemoryKeystore()
        world.keystore = keystore
        world.api.onRegisterOptions { _ in .ok(.init(body: .json(Self.options))) }
        #expect(try await world.run(RaxxAuth.Register.self, ["--email", Fixtures.email, "--format", "text"]) == .dataError)
        #expect(world.stderr.contents.contains("A new passkey's PIN has 6 to 64 characters."))
        #expect(world.api.operations == ["registerOptions"])
        #expect(keystore.saves == 0)
    }
}
