import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCore
import RaxxSecrets
import RaxxTestSupport
import RaxxVault
import Synchronization
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
            guard case .json(let start) = input.body, start.email == Fixtures.email else { throw RaxxError(code: .internal, message: "wrong email") }
            return .ok(.init(body: .json(Self.options)))
        }
        world.api.onRegisterVerify { input in
            guard case .json(let response) = input.body else { throw RaxxError(code: .internal, message: "no body") }
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

    /// On a terminal, an empty Enter, a code of the wrong length and a wrong code are each asked
    /// again, the same code live, with no new ask (no new mail); from --code-fd there is one line.
    @Test func aSlipAtTheCodePromptIsAskedAgainOnATerminal() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "246813"
        world.keystore = MemoryKeystore()
        world.codesTyped = ["", "1234", "00000000", "24681357"]
        let asks = Counter()
        world.api.onRegisterOptions { input in
            guard case .json(let start) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            switch start.code {
            case nil:
                asks.add()
                return .accepted(.init(body: .json(.init(email: Fixtures.email, digits: 8, expiresAt: Fixtures.now.addingTimeInterval(600)))))
            case "24681357"?: return .ok(.init(body: .json(Self.options)))
            default:
                return .default(
                    statusCode: 400,
                    Fixtures.problem(
                        400, code: "code_invalid", title: "That is not the code we emailed.",
                        detail: "9 more wrong tries allowed for this address in the next 10 minutes."))
            }
        }
        world.api.onRegisterVerify { _ in .ok(.init(body: .json(Fixtures.grant()))) }
        #expect(try await world.run(RaxxAuth.Register.self, ["--email", Fixtures.email, "--format", "text"]) == .ok)
        #expect(asks.value == 1, "one ask, one mail")
        #expect(world.stderr.contents.contains("the code is 8 digits"), "\(world.stderr.contents)")
        #expect(world.stderr.contents.contains("That is not the code we emailed. 9 more wrong tries"), "\(world.stderr.contents)")

        // From a file descriptor, a wrong code ends the run: there is no one to ask.
        let fd = TestWorld()
        fd.clock = TestClock(Fixtures.now)
        fd.pin = "246813"
        fd.keystore = MemoryKeystore()
        fd.code = "00000000"
        fd.api.onRegisterOptions { input in
            guard case .json(let start) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            if start.code == nil {
                return .accepted(.init(body: .json(.init(email: Fixtures.email, digits: 8, expiresAt: Fixtures.now.addingTimeInterval(600)))))
            }
            return .default(statusCode: 400, Fixtures.problem(400, code: "code_invalid", title: "That is not the code we emailed."))
        }
        #expect(try await fd.run(RaxxAuth.Register.self, ["--email", Fixtures.email, "--code-fd", "3"]) == .dataError)
    }

    @Test func aDeviceWithAPasskeyIsNotRegisteredTwice() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "246813"
        let pin = SecretBytes(copying: Array("246813".utf8))
        let made = try SoftwareAuthenticator.makeCredential(
            rpID: "raxx.app", userHandle: [1, 2, 3], email: Fixtures.email,
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

/// A count the stubs keep across calls.
final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
