import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCore
import RaxxTestSupport
import RaxxWire
import Testing

/// `raxx-auth sessions` in-process: asks for the account's live sessions with the session's token
/// and writes one line (or row) each, this device's marked.
@Suite struct SessionsTests {
    static let sessions: [Components.Schemas.LiveSession] = [
        .init(id: "s-1", createdAt: Fixtures.now.addingTimeInterval(-7200), expiresAt: Fixtures.now.addingTimeInterval(86_400), current: true),
        .init(id: "s-2", createdAt: Fixtures.now.addingTimeInterval(-60), expiresAt: Fixtures.now.addingTimeInterval(90_000), current: false),
    ]

    @Test func eachLiveSessionIsALineWithThisDevicesMarked() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onListSessions { _ in .ok(.init(body: .json(.init(sessions: Self.sessions)))) }
        #expect(try await world.run(RaxxAuth.Sessions.self) == .ok)
        #expect(world.api.calls == [.init(operation: "listSessions", authorization: "Bearer access-1")])
        #expect(world.jsonLines.map { $0["id"] as? String } == ["s-1", "s-2"])
        #expect(world.jsonLines.map { $0["this_device"] as? Bool } == [true, false])
        #expect(world.jsonLines.first?["created_at"] as? String == RFC3339.string(from: Self.sessions[0].createdAt))
        #expect(world.jsonLines.first?["expires_at"] as? String == RFC3339.string(from: Self.sessions[0].expiresAt))
    }

    @Test func asTextItIsATableWithPeoplesTimes() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onListSessions { _ in .ok(.init(body: .json(.init(sessions: Self.sessions)))) }
        #expect(try await world.run(RaxxAuth.Sessions.self, ["--format", "text"]) == .ok)
        let lines = world.stdout.contents.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("ID") == true && lines.first?.contains("THIS DEVICE") == true)
        #expect(lines[1].hasPrefix("s-1") && lines[1].hasSuffix("yes"))
        #expect(lines[2].hasPrefix("s-2") && !lines[2].hasSuffix("yes"))
        #expect(!world.stdout.contents.contains(RFC3339.string(from: Self.sessions[0].createdAt)))
    }

    @Test func signedOutAsksNothing() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxAuth.Sessions.self) == .signInRequired)
        #expect(world.api.calls.isEmpty)
    }
}
