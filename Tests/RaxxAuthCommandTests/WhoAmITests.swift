import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCore
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-auth whoami` in-process: asks the server with the session's token, renewing it silently.
@Suite struct WhoAmITests {
    @Test func asksWithTheBearerToken() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onGetSession { _ in .ok(.init(body: .json(Fixtures.serverSession()))) }
        #expect(try await world.run(RaxxAuth.WhoAmI.self) == .ok)
        #expect(world.api.calls == [.init(operation: "getSession", authorization: "Bearer access-1")])
        let line = try #require(world.jsonLines.first)
        #expect(line["account"] as? String == Fixtures.email && line["mode"] as? String == "paper")
    }

    @Test func anExpiredAccessTokenIsRenewedFirst() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        let keystore = Fixtures.keystore(session: Fixtures.session(accessFor: -1))
        world.keystore = keystore
        world.api.onRenewSession { input in
            guard case .json(let body) = input.body, body.renewalToken == "renewal-1" else {
                return .default(statusCode: 401, Fixtures.problem(401, code: "unauthorized"))
            }
            return .ok(.init(body: .json(Fixtures.grant(access: "access-2", renewal: "renewal-2"))))
        }
        world.api.onGetSession { _ in .ok(.init(body: .json(Fixtures.serverSession()))) }
        #expect(try await world.run(RaxxAuth.WhoAmI.self) == .ok)
        #expect(world.api.calls.map(\.operation) == ["renewSession", "getSession"])
        #expect(world.api.calls.last?.authorization == "Bearer access-2")
        #expect(keystore.current?[Fixtures.origin].session?.renewalToken == "renewal-2")
    }

    @Test func aRevokedSessionExits4AndForgetsTheTokens() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        let keystore = Fixtures.keystore(session: Fixtures.session(accessFor: -1))
        world.keystore = keystore
        world.api.onRenewSession { _ in .default(statusCode: 401, Fixtures.problem(401, code: "unauthorized")) }
        #expect(try await world.run(RaxxAuth.WhoAmI.self, ["--format", "text"]) == .signInRequired)
        #expect(world.stderr.contents == "raxx-auth: Sign in again: raxx-auth login\n")
        #expect(keystore.current?[Fixtures.origin].session == nil)
    }

    @Test func signedOutAsksNothing() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxAuth.WhoAmI.self) == .signInRequired)
        #expect(world.api.calls.isEmpty)  // refused before anything went on the wire
    }

    @Test func anotherServersSessionIsNeverSent() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.keystore(session: Fixtures.session(), origin: "http://127.0.0.1:8080")
        #expect(try await world.run(RaxxAuth.WhoAmI.self, ["--format", "text"]) == .signInRequired)
        #expect(world.stderr.contents == "raxx-auth: Not signed in to https://api.raxx.app: raxx-auth login\n")
        #expect(world.api.calls.isEmpty)
    }
}
