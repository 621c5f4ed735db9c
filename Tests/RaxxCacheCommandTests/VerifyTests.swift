import Foundation
import RaxxAPI
import RaxxCacheCommand
import RaxxCore
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-cache verify` in-process: the cache's counts and checksums against the server's.
@Suite struct VerifyTests {
    func world(_ cache: CacheStore) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = MemoryStores(cache: cache)
        return world
    }

    func summary(_ local: [String: CacheStore.EntitySummary], orders: Int64? = nil) -> Components.Schemas.SyncSummary {
        func entity(_ name: String) -> Components.Schemas.EntitySummary {
            .init(count: local[name]?.count ?? 0, checksum: local[name]?.checksum ?? "")
        }
        var ordersSummary = entity("orders")
        if let orders { ordersSummary.count = orders }
        return .init(cursor: 4, asOf: Fixtures.now, positions: entity("positions"), fills: entity("fills"), orders: ordersSummary)
    }

    @Test func matchingSummariesExit0() async throws {
        let cache = try Fixtures.filledCache()
        let local = try cache.summary(since: nil)
        let world = world(cache)
        world.api.onGetSyncSummary { _ in .ok(.init(body: .json(self.summary(local)))) }
        #expect(try await world.run(RaxxCache.Verify.self) == .ok)
        #expect(world.jsonLines.allSatisfy { $0["match"] as? Bool == true })
    }

    /// A refresh failed offline, then verify reached the server: reads no longer say "No
    /// connection", and the data's age is what it was.
    @Test func reachingTheServerEndsTheNoConnectionNotice() async throws {
        let cache = try Fixtures.filledCache()
        let before = try cache.syncState().lastSuccessAt
        // The failure is a second after the last refresh, and a second before verify runs.
        let failedAt = Fixtures.now.addingTimeInterval(1)
        try #require((before ?? .distantPast) < failedAt)
        try cache.recordFailure(kind: "offline-hard", message: "refused", connectivity: .offlineHard, at: failedAt)
        #expect(try cache.syncState().lastRefreshFailedOffline)
        let local = try cache.summary(since: nil)
        let world = world(cache)
        world.clock = TestClock(failedAt.addingTimeInterval(1))
        world.api.onGetSyncSummary { _ in .ok(.init(body: .json(self.summary(local)))) }
        #expect(try await world.run(RaxxCache.Verify.self) == .ok)
        let state = try cache.syncState()
        #expect(!state.lastRefreshFailedOffline && state.connectivity == .online)
        #expect(state.lastSuccessAt == before)
    }

    @Test func driftExits1NamingTheEntity() async throws {
        let cache = try Fixtures.filledCache()
        let local = try cache.summary(since: nil)
        let world = world(cache)
        world.api.onGetSyncSummary { _ in .ok(.init(body: .json(self.summary(local, orders: 7)))) }
        #expect(try await world.run(RaxxCache.Verify.self, ["--format", "text"]) == .failure)
        #expect(world.stderr.contents.contains("The cache differs from the server: orders."))
        #expect(world.stdout.contents.contains("NO"))
        // The comparison it made: each side's checksum, shortened.
        #expect(world.stdout.contents.contains("LOCAL CHECKSUM  SERVER CHECKSUM"))
        #expect(world.stdout.contents.contains(String(local["orders"]!.checksum.prefix(12))))
    }
}
