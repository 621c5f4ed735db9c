import Foundation
import RaxxAPI
import RaxxCore
import RaxxHTTP
import RaxxNotifyCommand
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-notify list` in-process: fetched, kept, printed newest last; offline from what was kept.
@Suite struct NotifyListTests {
    func world(_ stores: MemoryStores = MemoryStores()) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = stores
        return world
    }

    @Test func fetchesWhatIsNewKeepsItAndPrintsNewestLast() async throws {
        let stores = MemoryStores()
        let world = world(stores)
        world.api.onListEvents { input in
            switch input.query.cursor ?? 0 {
            case 0: .ok(.init(body: .json(Fixtures.alerts([1, 2], hasMore: true))))
            case 2: .ok(.init(body: .json(Fixtures.alerts([3]))))
            default: .ok(.init(body: .json(Fixtures.alerts([], cursor: input.query.cursor))))
            }
        }
        #expect(try await world.run(RaxxNotify.List.self, ["--limit", "2"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [2, 3])
        #expect(world.jsonLines.first?["order_id"] as? String == "ord-2")
        #expect(world.api.calls.allSatisfy { $0.authorization == "Bearer access-1" })
        #expect(try stores.alerts().latestSeq() == 3)
    }

    @Test func offlineItAnswersFromWhatWasKeptAndSaysHowOld() async throws {
        let stores = MemoryStores()
        try stores.alerts().save([Fixtures.alert(1), Fixtures.alert(2, .orderRejected)], fetchedAt: Fixtures.now.addingTimeInterval(-3600))
        let world = world(stores)
        world.api.onListEvents { _ in throw TransportFailure(kind: .offlineHard, curlCode: 7, detail: "refused") }
        #expect(try await world.run(RaxxNotify.List.self, ["--type", "order_rejected"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["seq"] as? Int } == [2])
        #expect(world.stderr.contents == "No connection — data last updated at 2026-11-21T09:00:00Z\n")
    }

    @Test func cachedNeverAsksAndNothingKeptExits3() async throws {
        let world = world()
        world.keystore = MemoryKeystore()
        #expect(try await world.run(RaxxNotify.List.self, ["--cached", "--format", "text"]) == .stale)
        #expect(world.stderr.contents.contains("No alerts fetched yet"))
        #expect(world.api.calls.isEmpty)
        #expect(try RaxxNotify.List.parse(["--cached"]).requirement == .offlineCapable)
    }

    @Test func anUnknownTypeIsAUsageError() {
        #expect(throws: (any Error).self) { try RaxxNotify.List.parse(["--type", "fill_confirmed,price_alert"]) }
    }
}
