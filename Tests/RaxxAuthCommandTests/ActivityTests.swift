import Foundation
import RaxxAPI
import RaxxAuthCommand
import RaxxCore
import RaxxTestSupport
import Testing

/// `raxx-auth activity` in-process: the account's own audit trail, page by page.
@Suite struct ActivityTests {
    @Test func printsEveryPageAsJSONLines() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onListAuditEvents { input in
            let cursor = input.query.cursor ?? 0
            let events = (1...2).map {
                Components.Schemas.AuditEvent(
                    seq: cursor + Int64($0), at: Fixtures.now, actor: "usr_1",
                    action: "session.started", subject: "usr_1")
            }
            return .ok(.init(body: .json(.init(events: events, cursor: cursor + 2, hasMore: cursor == 0))))
        }
        #expect(try await world.run(RaxxAuth.Activity.self) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [1, 2, 3, 4])
        #expect(world.api.calls.allSatisfy { $0.authorization == "Bearer access-1" })
    }

    @Test func offlineExits69() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onListAuditEvents { _ in throw RaxxError.offline(.offlineHard) }
        #expect(try await world.run(RaxxAuth.Activity.self) == .unavailable)
    }
}
