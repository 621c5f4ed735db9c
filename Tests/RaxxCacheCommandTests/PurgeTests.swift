import Foundation
import RaxxCacheCommand
import RaxxCore
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-cache purge` in-process.
@Suite struct PurgeTests {
    @Test func allEmptiesTheCache() async throws {
        let cache = try Fixtures.filledCache()
        let world = TestWorld()
        world.stores = MemoryStores(cache: cache)
        #expect(try await world.run(RaxxCache.Purge.self, ["--all"]) == .ok)
        #expect(try cache.counts()["positions"] == 0)
        #expect(world.jsonLines.first?["emptied"] as? Bool == true)
    }

    @Test func olderThanEvictsHistoryOnly() async throws {
        let cache = try Fixtures.filledCache()
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(100 * 86400))
        world.stores = MemoryStores(cache: cache)
        #expect(try await world.run(RaxxCache.Purge.self, ["--older-than", "30d"]) == .ok)
        #expect(world.jsonLines.first?["removed"] as? Int == 2)  // the fill and its filled order
        #expect(try cache.counts()["positions"] == 2)
    }

    @Test func notWhileARefreshWrites() async throws {
        let stores = MemoryStores(cache: try Fixtures.filledCache())
        stores.hold(.refresh)
        let world = TestWorld()
        world.stores = stores
        #expect(try await world.run(RaxxCache.Purge.self, ["--all"]) == .temporary)
    }

    @Test func exactlyOneOfOlderThanAndAll() {
        #expect(throws: (any Error).self) { try RaxxCache.Purge.parse([]) }
        #expect(throws: (any Error).self) { try RaxxCache.Purge.parse(["--all", "--older-than", "1d"]) }
        #expect(throws: (any Error).self) { try RaxxCache.Purge.parse(["--older-than", "soon"]) }
    }
}
