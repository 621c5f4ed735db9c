import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import Testing

@testable import RaxxStore

/// A filled cache's rebuild stages its pages in keyless logs and applies them to the live tables
/// at its end; an empty cache's first fill writes them to the live tables as they come. Either way,
/// the same rows as applying each change as it came, whatever the order of upserts and tombstones.
@Suite struct RebuildLogTests {
    func quantities(_ store: CacheStore) throws -> [String] {
        var out: [String] = []
        try store.positions(CacheQuery()) { out.append("\($0.symbol)=\($0.qty)") }
        return out.sorted()
    }

    func fillIDs(_ store: CacheStore) throws -> [String] {
        try store.read { db in try String.fetchAll(db, sql: "SELECT id FROM fills ORDER BY id") }
    }

    func indexes(_ store: CacheStore) throws -> [String] {
        try store.read { db in
            try String.fetchAll(db, sql: "SELECT name || ' ' || sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        }
    }

    func staged(_ store: CacheStore) throws -> Int {
        try store.read { db in
            try ["positions", "fills", "orders"].reduce(0) { $0 + (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM rebuild_\($1)") ?? 0) }
        }
    }

    /// Pages where ids come back: upserted, deleted, upserted again, deleted for good.
    static let pages = [
        page([position("p1", "AAPL", qty: 1, seq: 1), position("p2", "MSFT", qty: 2, seq: 2), fill("f1", at: 1_000, seq: 3)], more: true),
        page(
            [
                tombstone(.position, "p1", seq: 4), position("p2", "MSFT", qty: 5, seq: 5), fill("f2", at: 2_000, seq: 6),
                tombstone(.fill, "f9", seq: 7),
            ], more: true),
        page([
            position("p1", "AAPL", qty: 7, seq: 8), position("p3", "SPY", qty: 3, seq: 9), tombstone(.fill, "f1", seq: 10),
            tombstone(.position, "p3", seq: 11),
        ]),
    ]

    @Test(arguments: [false, true])
    func eachIDsLastChangeWinsAsIfAppliedOneByOne(shadow: Bool) throws {
        let store = try CacheStore.inMemory()
        let indexesBefore = try indexes(store)
        if shadow {
            // A filled cache: its old copy (p9, f8) is replaced by the rebuild's rows.
            try store.beginRebuild(accountID: "acc_1")
            try store.apply(page([position("p9", "QQQ", seq: 1), fill("f8", at: 500, seq: 2)]))
            try store.finishRebuild(accountID: "acc_1")
        }
        try store.beginRebuild(accountID: "acc_1")
        #expect(try store.syncState().rebuilding == (shadow ? .shadow : .live))
        for p in Self.pages { try store.apply(p) }
        if shadow {
            #expect(try staged(store) == 11)
            #expect(try quantities(store) == ["QQQ=1"], "the rebuild stays out of readers' sight")
        } else {
            // A first fill writes the live tables; readers see "no data yet" until it ends (CacheReading).
            #expect(try staged(store) == 0)
            #expect(try store.syncState().lastSuccessAt == nil)
        }
        try store.finishRebuild(accountID: "acc_1")
        #expect(try quantities(store) == ["AAPL=7", "MSFT=5"])
        #expect(try fillIDs(store) == ["f2"])
        #expect(try store.syncState().cursor == 11)
        #expect(try staged(store) == 0)
        #expect(try indexes(store) == indexesBefore, "the tables' indexes are built again as they were")

        // The same pages applied one by one to the live tables (a delta refresh) agree.
        let direct = try CacheStore.inMemory()
        try direct.beginRebuild(accountID: "acc_1")
        try direct.finishRebuild(accountID: "acc_1")
        for p in Self.pages { try direct.apply(p) }
        #expect(try quantities(direct) == quantities(store))
        #expect(try fillIDs(direct) == fillIDs(store))
    }

    @Test(arguments: [false, true])
    func theFastReaderWritesTheSameRows(shadow: Bool) throws {
        let json = """
            {"changes":[
              {"seq":1,"entity":"position","op":"upsert","id":"p1",\
              "position":{"id":"p1","symbol":"AAPL","qty":4,"avg_price":"1.5","updated_at":"2026-11-23T05:44:22.123Z"}},
              {"seq":2,"entity":"position","op":"delete","id":"p1"},
              {"seq":3,"entity":"position","op":"upsert","id":"p2",\
              "position":{"id":"p2","symbol":"MSFT","qty":6,"avg_price":"2","updated_at":"2026-11-23T05:44:22Z"}}
            ],"cursor":3,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """
        let store = try CacheStore.inMemory()
        if shadow {
            try store.beginRebuild(accountID: "acc_1")
            try store.apply(page([position("p9", "QQQ", seq: 1)]))
            try store.finishRebuild(accountID: "acc_1")
        }
        try store.beginRebuild(accountID: "acc_1")
        #expect(try Array(json.utf8).withUnsafeBytes { try store.apply(json: $0) } == 3)
        #expect(try staged(store) == (shadow ? 3 : 0))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try quantities(store) == ["MSFT=6"])
    }

    /// A cache left mid-rebuild by the version before the logs: the migration keeps the shadow
    /// rows staged, and a rebuild into the live tables keeps what it had written; both finish.
    @Test(arguments: [1, 2])
    func aRebuildUnderWayBeforeTheLogsFinishes(mode: Int) throws {
        let queue = try DatabaseQueue()
        try CacheStore.migrator.migrate(queue, upTo: "v1: synced entities, rebuild shadows, portfolio, sync state")
        try queue.write { db in
            let table = mode == 2 ? "rebuild_positions" : "positions"
            try db.execute(sql: "INSERT INTO \(table) (id, symbol, qty, avg_price, updated_at) VALUES ('p1', 'AAPL', 1, '1', 0), ('p2', 'MSFT', 2, '2', 0)")
            if mode == 2 {
                try db.execute(sql: "INSERT INTO positions (id, symbol, qty, avg_price, updated_at) VALUES ('p0', 'OLD', 1, '1', 0)")
            }
            try db.execute(sql: "UPDATE sync_state SET rebuilding = ?, rebuild_cursor = 2, account_id = 'acc_1' WHERE id = 1", arguments: [mode])
        }
        let store = try CacheStore(writer: queue, url: nil)
        #expect(try store.syncState().rebuilding == (mode == 2 ? .shadow : .live))
        try store.apply(page([tombstone(.position, "p1", seq: 3), position("p3", "SPY", qty: 3, seq: 4)]))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try quantities(store) == ["MSFT=2", "SPY=3"])
        #expect(try store.syncState().cursor == 4)
    }
}
