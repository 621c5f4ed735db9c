import Foundation
import RaxxCacheCommand
import RaxxCore
import RaxxTestSupport
import Testing

/// `raxx-cache status` in-process.
@Suite struct StatusTests {
    @Test func oneRecordPerEntity() async throws {
        let world = TestWorld()
        world.services = [MemoryStores(cache: try Fixtures.filledCache())]
        #expect(try await world.run(RaxxCache.Status.self) == .ok)
        let lines = world.jsonLines
        #expect(lines.compactMap { $0["entity"] as? String } == ["portfolio", "positions", "fills", "orders"])
        #expect(lines.first(where: { $0["entity"] as? String == "positions" })?["rows"] as? Int == 2)
        #expect(lines.allSatisfy { $0["cache"] as? String == "memory:cache" && $0["cursor"] as? Int == 4 })
        #expect(world.api.calls.isEmpty)
    }

    @Test func noCacheExits3() async throws {
        let world = TestWorld()
        world.services = [MemoryStores()]
        #expect(try await world.run(RaxxCache.Status.self) == .stale)
        #expect(world.stdout.contents.isEmpty)
    }
}
