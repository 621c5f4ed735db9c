import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCore
import RaxxSecrets
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-auth login` in-process: the device's passkey signs the server's challenge.
@Suite struct LoginTests {
    static func keystoreWithPasskey() throws -> (MemoryKeystore, StoredCredential) {
        let pin = SecretBytes(copying: Array("246813".utf8))
        let made = try SoftwareAuthenticator.makeCredential(
            rpID: "raxx.app", userHandle: [1, 2, 3], email: Fixtures.email,
            clientDataHash: [UInt8](repeating: 0, count: 32), pin: pin, now: Fixtures.now)
        return (Fixtures.keystore(credential: made.credential), made.credential)
    }

    func options(_ credential: StoredCredential) -> Components.Schemas.PublicKeyCredentialRequestOptionsJSON {
        .init(
            challenge: Base64URL.encode(Array("login-challenge-0123456789".utf8)), rpId: "raxx.app",
            allowCredentials: [.init(_type: .publicKey, id: credential.credentialID)], userVerification: .required)
    }

    @Test func signsInWithThePasskey() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "246813"
        let (keystore, credential) = try Self.keystoreWithPasskey()
        world.keystore = keystore
        world.api.onLoginOptions { _ in .ok(.init(body: .json(self.options(credential)))) }
        world.api.onLoginVerify { input in
            guard case .json(let assertion) = input.body else { throw RaxxError(code: .internal, message: "no body") }
            #expect(assertion.id == credential.credentialID)
            return .ok(.init(body: .json(Fixtures.grant())))
        }
        #expect(try await world.run(RaxxAuth.Login.self, ["--format", "text"]) == .ok)
        #expect(world.stderr.contents == "Signed in as \(Fixtures.email).\n")
        #expect(keystore.current?[Fixtures.origin].session?.renewalToken == "renewal-1")
        #expect(keystore.current?[Fixtures.origin].credential?.signCount == credential.signCount + 1)
        // The account signed in is the one whose local data this device keeps and shows now.
        #expect(try world.accounts.current() == keystore.current?[Fixtures.origin].session?.accountID)
        #expect(try world.accounts.current() != nil)
    }

    /// From --pin-fd (a script): a wrong PIN ends the command (on a terminal it is asked again).
    @Test func aWrongPINIsRefusedCountedAndNothingIsSent() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pin = "999999"
        let (keystore, credential) = try Self.keystoreWithPasskey()
        world.keystore = keystore
        world.api.onLoginOptions { _ in .ok(.init(body: .json(self.options(credential)))) }
        #expect(try await world.run(RaxxAuth.Login.self, ["--pin-fd", "3"]) == .notPermitted)
        #expect(world.api.operations == ["loginOptions"])
        #expect(keystore.current?[Fixtures.origin].credential?.failedPINAttempts == 1)
        #expect(keystore.current?[Fixtures.origin].session == nil)
    }

    /// On a terminal: told, asked again, and the right PIN signs in (the count starts over).
    @Test func aWrongPINOnTheTerminalIsAskedAgain() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.pinsTyped = ["999999"]
        world.pin = "246813"
        let (keystore, credential) = try Self.keystoreWithPasskey()
        world.keystore = keystore
        world.api.onLoginOptions { _ in .ok(.init(body: .json(self.options(credential)))) }
        world.api.onLoginVerify { _ in .ok(.init(body: .json(Fixtures.grant()))) }
        #expect(try await world.run(RaxxAuth.Login.self, ["--format", "text"]) == .ok, "\(world.stderr.contents)")
        #expect(world.stderr.contents == "Wrong PIN. 4 attempts left before the passkey locks.\nSigned in as \(Fixtures.email).\n")
        #expect(keystore.current?[Fixtures.origin].credential?.failedPINAttempts == 0)
    }

    @Test func noPasskeyMeansRegisterFirst() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxAuth.Login.self, ["--format", "text"]) == .signInRequired)
        #expect(world.stderr.contents.contains("raxx-auth register"))
        #expect(world.api.calls.isEmpty)
    }
}
