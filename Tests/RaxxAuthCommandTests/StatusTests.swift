import Foundation
import RaxxAuthCommand
import RaxxCore
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-auth status` in-process: the keystore alone, never the network.
@Suite struct StatusTests {
    @Test func signedInPrintsTheSessionAndNoToken() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        #expect(try await world.run(RaxxAuth.Status.self) == .ok)
        let line = try #require(world.jsonLines.first)
        #expect(line["signed_in"] as? Bool == true)
        #expect(line["account"] as? String == Fixtures.email)
        #expect(line["keystore"] as? String == "memory:keystore")
        #expect(!world.stdout.contents.contains("access-1") && !world.stdout.contents.contains("renewal-1"))
        #expect(world.api.calls.isEmpty)
    }

    @Test func notSignedInExits4WithAHint() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxAuth.Status.self, ["--format", "text"]) == .signInRequired)
        #expect(world.stderr.contents.contains("Not signed in."))
        #expect(world.stderr.contents.contains("raxx-auth register"))
    }

    @Test func anEndedSessionSaysWhenItEnded() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(13 * 3600))
        world.keystore = Fixtures.signedIn()
        #expect(try await world.run(RaxxAuth.Status.self, ["--json"]) == .signInRequired)
        #expect(world.stderr.contents.contains("The session ended at"))
        #expect(world.jsonLines.first?["signed_in"] as? Bool == false)
    }
}
