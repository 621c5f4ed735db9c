import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxClient
import RaxxCore
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-auth logout` in-process: revoked on the server when it answers, wiped here always.
@Suite struct LogoutTests {
    @Test func revokesOnTheServerAndWipesTheTokens() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        let keystore = Fixtures.signedIn()
        world.keystore = keystore
        world.api.onLogout { _ in .noContent(.init()) }
        #expect(try await world.run(RaxxAuth.Logout.self, ["--json"]) == .ok)
        #expect(world.api.calls == [.init(operation: "logout", authorization: "Bearer access-1")])
        #expect(keystore.current == nil)  // no passkey either: the keystore is gone
        let line = try #require(world.jsonLines.first)
        #expect(line["revoked_on_server"] as? Bool == true && line["signed_out"] as? Bool == true)
    }

    @Test func offlineItStillWipesAndSaysWhenTheSessionLapses() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        let keystore = Fixtures.signedIn()
        world.keystore = keystore
        world.api.onLogout { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        world.environment["TZ"] = "UTC"
        #expect(try await world.run(RaxxAuth.Logout.self, ["--format", "text"]) == .ok)
        // In the local zone, compact, with how long until: one way of writing a time.
        #expect(
            world.stderr.contents.contains("The server could not be reached; its session will lapse by itself at 22:00 (in 12h)."),
            "\(world.stderr.contents)")
        #expect(keystore.current == nil)
    }

    /// Only --forget-device removes what the device keeps of the account (its cache, journal and
    /// alerts): a plain sign-out keeps it for the account's next sign-in here.
    @Test func forgetDeviceAlsoRemovesTheAccountsLocalData() async throws {
        for forget in [false, true] {
            let world = TestWorld()
            world.clock = TestClock(Fixtures.now)
            let keystore = Fixtures.signedIn()
            world.keystore = keystore
            let account = try #require(keystore.current?[Fixtures.origin].session?.accountID)
            world.api.onLogout { _ in .noContent(.init()) }
            #expect(try await world.run(RaxxAuth.Logout.self, ["--json"] + (forget ? ["--forget-device"] : [])) == .ok)
            #expect(world.accounts.forgotten == (forget ? [account] : []))
            #expect(world.jsonLines.first?["local_data_removed"] as? Bool == forget)
        }
    }

    @Test func notSignedInHasNothingToRevoke() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxAuth.Logout.self, ["--format", "text"]) == .ok)
        #expect(world.stderr.contents == "Not signed in to https://api.raxx.app; nothing to revoke.\n")
        #expect(world.api.calls.isEmpty)
    }

    @Test(arguments: [500, 403, 404])
    func anAnswerOtherThanAConfirmationIsNotCalledRevoked(status: Int) async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        let keystore = Fixtures.signedIn()
        world.keystore = keystore
        world.api.onLogout { _ in .default(statusCode: status, Fixtures.problem(status, code: status == 500 ? "internal" : "not_found")) }
        #expect(try await world.run(RaxxAuth.Logout.self, ["--json"]) == .ok)
        let line = try #require(world.jsonLines.first)
        #expect(line["revoked_on_server"] as? Bool == false)
        #expect(line["server_session_lapses_at"] as? String == "2026-11-21T22:00:00Z")
        #expect(world.stderr.contents.contains("The server did not confirm the sign-out; its session will lapse by itself"))
        #expect(keystore.current == nil)  // wiped here all the same
    }
}
