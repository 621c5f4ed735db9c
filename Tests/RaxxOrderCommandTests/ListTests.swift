import Foundation
import RaxxAPI
import RaxxCore
import RaxxOrderCommand
import RaxxTestSupport
import Testing

/// `raxx-order list` in-process: from the server, or from the cache with --cached.
@Suite struct ListTests {
    @Test func asksTheServerPageByPage() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = MemoryStores()
        world.api.onListOrders { input in
            #expect(input.query.status == .open)
            if input.query.before == nil {
                return .ok(.init(body: .json(.init(orders: [Fixtures.order(id: "o2", status: .open)], nextBefore: "o2"))))
            }
            return .ok(.init(body: .json(.init(orders: [Fixtures.order(id: "o1", status: .open)]))))
        }
        #expect(try await world.run(RaxxOrder.List.self, ["--status", "open"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["id"] as? String } == ["o2", "o1"])
        #expect(world.api.operations == ["listOrders", "listOrders"])
    }

    /// 2,500 orders, 1,000 a page: the default shows 100 and says there are more; --limit up to
    /// 10,000; --all pages to the end.
    @Test func allPagesToTheEndAndALimitSaysThereAreMore() async throws {
        let total = 2_500
        func world() -> TestWorld {
            let world = TestWorld()
            world.clock = TestClock(Fixtures.now)
            world.keystore = Fixtures.signedIn()
            world.stores = MemoryStores()
            world.api.onListOrders { input in
                let start = input.query.before.flatMap { Int($0.dropFirst()) } ?? total
                let count = min(input.query.limit ?? 100, start)
                let orders = (0..<count).map { Fixtures.order(id: "o\(start - $0)", status: .open) }
                return .ok(.init(body: .json(.init(orders: orders, nextBefore: start - count > 0 ? "o\(start - count)" : nil))))
            }
            return world
        }
        let every = world()
        #expect(try await every.run(RaxxOrder.List.self, ["--all", "--format", "json"]) == .ok)
        #expect(every.jsonLines.count == total && every.jsonLines.last?["id"] as? String == "o1")
        #expect(every.api.operations.count == 3 && every.stderr.contents.isEmpty)
        let some = world()
        #expect(try await some.run(RaxxOrder.List.self, ["--format", "json"]) == .ok)
        #expect(some.jsonLines.count == 100)
        #expect(some.stderr.contents.contains("Showing the newest 100 orders; there are more: --all lists every one"))
        #expect(throws: (any Error).self) { try RaxxOrder.List.parse(["--all", "--limit", "5"]) }
    }

    @Test func cachedReadsTheCacheOnlyAndSaysHowOld() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(2 * 86400))
        world.stores = MemoryStores(cache: try Fixtures.filledCache())
        world.keystore = MemoryKeystore() // reads check whose cache it is, offline
        #expect(try await world.run(RaxxOrder.List.self, ["--cached"]) == .ok)
        #expect(world.jsonLines.first?["as_of"] as? String == "2026-11-21T10:00:00Z")
        #expect(world.stderr.contents.contains("(2 days ago)"))
        #expect(world.api.calls.isEmpty)
    }

    @Test func anUnknownStatusIsAUsageError() {
        #expect(throws: (any Error).self) { try RaxxOrder.List.parse(["--status", "done"]) }
        #expect(throws: (any Error).self) { try RaxxOrder.List.parse(["--limit", "0"]) }
    }
}
