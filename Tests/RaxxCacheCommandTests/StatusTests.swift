import Foundation
import RaxxCore
import RaxxStore
import RaxxTestSupport
import RaxxWire
import Testing

@testable import RaxxCacheCommand

/// `raxx-cache status` in-process.
@Suite struct StatusTests {
    @Test func oneRecordPerEntity() async throws {
        let world = TestWorld()
        world.stores = MemoryStores(cache: try Fixtures.filledCache())
        #expect(try await world.run(RaxxCache.Status.self) == .ok)
        let lines = world.jsonLines
        #expect(lines.compactMap { $0["entity"] as? String } == ["portfolio", "positions", "fills", "orders"])
        #expect(lines.first(where: { $0["entity"] as? String == "positions" })?["rows"] as? Int == 2)
        #expect(lines.allSatisfy { $0["cache"] as? String == "memory:cache" && $0["cursor"] as? Int == 4 })
        #expect(world.api.calls.isEmpty)
    }

    /// A first fill under way writes the live tables, but status counts what reads would show: none.
    @Test func aFirstFillUnderWayShowsNoRows() async throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(
            .init(
                changes: [
                    .init(
                        seq: 1, entity: .position, op: .upsert, id: "p1",
                        position: .init(id: "p1", symbol: "AAPL", qty: 1, avgPrice: "1.00", updatedAt: Date()))
                ],
                cursor: 1, hasMore: true, reset: false, asOf: Date()))
        #expect(try store.counts()["positions"] == 1)
        let world = TestWorld()
        world.stores = MemoryStores(cache: store)
        #expect(try await world.run(RaxxCache.Status.self) == .stale)
        #expect(world.jsonLines.count == 4)
        #expect(world.jsonLines.allSatisfy { $0["rows"] as? Int == 0 && $0["rebuilding"] as? Bool == true })

        let text = TestWorld()
        text.stores = MemoryStores(cache: store)
        #expect(try await text.run(RaxxCache.Status.self, ["--format", "text"]) == .stale)
        #expect(text.stderr.contents.contains("A first fill is under way or was interrupted (the next refresh carries on): reads show no data until it ends."))
    }

    @Test func noCacheExits3() async throws {
        let world = TestWorld()
        world.stores = MemoryStores()
        #expect(try await world.run(RaxxCache.Status.self) == .stale)
        #expect(world.stdout.contents.isEmpty)
    }

    /// Through the Encodable overload, whatever else the value conforms to.
    static func encoded<T: Encodable>(_ value: T) throws -> String { try JSONLines.line(value) }

    @Test func theRecordWritesWhatItsEncodableConformanceWrites() throws {
        let full = RaxxCache.Status.Record(
            entity: "fills", rows: 1_000_000, last_success_at: Date(timeIntervalSince1970: 1_795_000_000.5), cursor: 1_510_303,
            rebuilding: true, last_error_kind: "offline", last_error_at: Date(timeIntervalSince1970: 1_795_000_100),
            last_error_message: "No connection — \"api.raxx.app\" did not answer\n(timed out)", connectivity: "offline_soft",
            connectivity_at: Date(timeIntervalSince1970: 1_795_000_100), evicted_before: Date(timeIntervalSince1970: 1_760_000_000),
            cache: "/home/trader/.cache/raxx/api.raxx.app/cache.sqlite", size_bytes: 123_456_789, retention: "365d",
            size_cap_bytes: 1 << 30, low_disk_space: false)
        var empty = full
        empty.last_success_at = nil
        empty.last_error_kind = nil
        empty.last_error_at = nil
        empty.last_error_message = nil
        empty.connectivity_at = nil
        empty.evicted_before = nil
        empty.low_disk_space = true
        for record in [full, empty] {
            #expect(JSONLines.line(written: record) == (try Self.encoded(record)))
        }
    }
}
