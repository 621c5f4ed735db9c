import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxTestSupport
import Testing

@testable import RaxxStore

func position(_ id: String, _ symbol: String, qty: Int64 = 1, seq: Int64) -> Components.Schemas.SyncChange {
    .init(
        seq: seq, entity: .position, op: .upsert, id: id,
        position: .init(id: id, symbol: symbol, qty: qty, avgPrice: "10.00", updatedAt: Date(timeIntervalSince1970: 1_790_000_000)))
}

func fill(_ id: String, _ symbol: String = "AAPL", at: TimeInterval, seq: Int64) -> Components.Schemas.SyncChange {
    .init(
        seq: seq, entity: .fill, op: .upsert, id: id,
        fill: .init(id: id, orderId: "ord_1", symbol: symbol, side: .buy, qty: 1, price: "190.00", filledAt: Date(timeIntervalSince1970: at)))
}

func tombstone(_ entity: Components.Schemas.SyncEntity, _ id: String, seq: Int64) -> Components.Schemas.SyncChange {
    .init(seq: seq, entity: entity, op: .delete, id: id)
}

func page(_ changes: [Components.Schemas.SyncChange], more: Bool = false, reset: Bool = false) -> Components.Schemas.SyncPage {
    .init(changes: changes, cursor: changes.last?.seq ?? 0, hasMore: more, reset: reset, asOf: Date())
}

func symbols(_ store: CacheStore) throws -> [String] {
    var out: [String] = []
    try store.positions(CacheQuery()) { out.append($0.symbol) }
    return out
}

@Suite struct CacheStoreTests {
    @Test func appliesUpsertsAndTombstonesWithTheCursor() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1), position("p2", "MSFT", seq: 2)], more: true))
        #expect(try store.syncState().rebuildCursor == 2)
        try store.apply(page([position("p3", "SPY", seq: 3)]))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try store.syncState().cursor == 3)
        #expect(try symbols(store) == ["AAPL", "MSFT", "SPY"])

        try store.apply(page([position("p1", "AAPL", qty: 9, seq: 4), tombstone(.position, "p2", seq: 5)]))
        #expect(try symbols(store) == ["AAPL", "SPY"])
        var qty: Int64 = 0
        try store.positions(CacheQuery(symbol: "aapl")) { qty = $0.qty }
        #expect(qty == 9)
        #expect(try store.syncState().cursor == 5)
    }

    @Test func aResetRebuildsOutOfReadersSight() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1), position("p2", "MSFT", seq: 2)]))
        try store.finishRebuild(accountID: "acc_1")
        try store.recordSuccess(at: Date())

        try store.beginRebuild(accountID: "acc_1")
        #expect(try store.syncState().rebuilding == .shadow)
        try store.apply(page([position("p9", "QQQ", seq: 7)], more: true, reset: true))
        // Halfway: readers still see the whole old copy, and the old cursor.
        #expect(try symbols(store) == ["AAPL", "MSFT"])
        #expect(try store.syncState().cursor == 2)
        try store.apply(page([position("p1", "AAPL", seq: 8)]))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try symbols(store) == ["AAPL", "QQQ"])
        #expect(try store.syncState().cursor == 8)
        #expect(try store.syncState().rebuilding == .none)
    }

    @Test func anotherAccountStartsFromScratch() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)]))
        try store.finishRebuild(accountID: "acc_1")
        try store.beginRebuild(accountID: "acc_2")
        #expect(try symbols(store).isEmpty)
        #expect(try store.syncState().rebuilding == .live)
    }

    /// The entity tables' indexes other than their keys, by name.
    func secondaryIndexes(_ store: CacheStore) throws -> [String] {
        try store.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL
                    AND tbl_name IN ('positions', 'fills', 'orders') ORDER BY name
                    """)
        }
    }

    /// An empty cache's first fill writes the live tables themselves, out of readers' sight, with
    /// only their keys: the other indexes are built once when it ends, and each id's last change wins.
    @Test func aFirstFillWritesTheLiveTablesAndIndexesThemAtTheEnd() throws {
        let store = try CacheStore.inMemory()
        let indexes = try secondaryIndexes(store)
        #expect(indexes == ["fills_symbol", "fills_time", "orders_status", "orders_symbol", "positions_symbol"])
        try store.beginRebuild(accountID: "acc_1")
        #expect(try store.syncState().rebuilding == .live)
        #expect(try secondaryIndexes(store).isEmpty)
        try store.apply(page([position("p1", "AAPL", seq: 1), position("p2", "MSFT", seq: 2), fill("f1", at: 1_000, seq: 3)], more: true))
        try store.apply(page([position("p1", "AAPL", qty: 5, seq: 4), tombstone(.position, "p2", seq: 5), fill("f2", at: 2_000, seq: 6)], more: true))
        // A tombstone then the id again: the later upsert stands.
        try store.apply(page([tombstone(.fill, "f1", seq: 7), fill("f1", at: 1_500, seq: 8)]))
        #expect(try store.syncState().cursor == 0)
        #expect(try store.syncState().rebuildCursor == 8)
        try store.finishRebuild(accountID: "acc_1")
        #expect(try secondaryIndexes(store) == indexes)
        #expect(try store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM rebuild_set_aside_indexes") } == 0)
        #expect(try store.syncState().rebuilding == .none)
        #expect(try store.syncState().cursor == 8)
        #expect(try symbols(store) == ["AAPL"])
        var qty: Int64 = 0
        try store.positions(CacheQuery()) { qty = $0.qty }
        #expect(qty == 5)
        #expect(try store.counts()["fills"] == 2)
        #expect(try store.read { try Double.fetchOne($0, sql: "SELECT filled_at FROM fills WHERE id = 'f1'") } == 1_500)
        // The query planner uses them again.
        let plan = try store.read { try Row.fetchAll($0, sql: "EXPLAIN QUERY PLAN SELECT * FROM fills WHERE symbol = 'AAPL' ORDER BY filled_at") }
        #expect(plan.map { $0["detail"] as String }.joined().contains("fills_symbol"))
    }

    /// A first fill that is started again (not carried on) begins from nothing: what the unfinished
    /// one wrote goes, and its indexes stay set aside until the new one ends.
    @Test func aFirstFillStartedAgainDropsWhatTheLastOneWrote() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)], more: true))
        try store.beginRebuild(accountID: "acc_1")
        #expect(try store.syncState().rebuilding == .live)
        #expect(try store.counts()["positions"] == 0)
        try store.apply(page([position("p2", "MSFT", seq: 2)]))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try symbols(store) == ["MSFT"])
        #expect(try secondaryIndexes(store).count == 5)
    }

    /// A cache that was filled, even with nothing (an account with no positions, or all of it
    /// evicted), is rebuilt out of its readers' sight: they keep the old copy and its age.
    @Test func aFilledButEmptyCacheIsRebuiltInTheShadows() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.finishRebuild(accountID: "acc_1")
        try store.recordSuccess(at: Date())
        try store.beginRebuild(accountID: "acc_1")
        #expect(try store.syncState().rebuilding == .shadow)
        #expect(try store.syncState().lastSuccessAt != nil)
        try store.apply(page([position("p1", "AAPL", seq: 1)]))
        #expect(try store.counts()["positions"] == 0)
        try store.finishRebuild(accountID: "acc_1")
        #expect(try symbols(store) == ["AAPL"])
        #expect(try secondaryIndexes(store).count == 5)
    }

    /// Another account's sign-in in the middle of a first fill: wiped, and a first fill again.
    @Test func anotherAccountInTheMiddleOfAFirstFill() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)], more: true))
        try store.beginRebuild(accountID: "acc_2")
        #expect(try store.syncState().rebuilding == .live)
        #expect(try store.syncState().accountID == "acc_2")
        #expect(try store.counts()["positions"] == 0)
        #expect(try store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM rebuild_set_aside_indexes") } == 5)
        try store.apply(page([position("p2", "MSFT", seq: 1)]))
        try store.finishRebuild(accountID: "acc_2")
        #expect(try symbols(store) == ["MSFT"])
        #expect(try secondaryIndexes(store).count == 5)
    }

    /// A sync state outside its enums (a connectivity or a rebuild no case has: a newer build's, or
    /// a hand edit) is the damaged cache's error naming the column and the value, not "unknown"
    /// or "not rebuilding" made up.
    @Test func aSyncStateOutsideItsEnumsIsRefusedNamingTheColumn() throws {
        let store = try CacheStore.inMemory()
        try store.write { try $0.execute(sql: "UPDATE sync_state SET connectivity = 'sideways' WHERE id = 1") }
        let connectivity = #expect(throws: RaxxError.self) { try store.syncState() }
        #expect(connectivity?.code == ErrorCode.cacheDamaged.rawValue)
        #expect(
            connectivity?.message
                == "sync_state.connectivity holds 'sideways', which is not one of its values (online, offline-hard, offline-soft, unknown).")
        #expect(connectivity?.hint == CacheStore.refillHint)
        try store.write { try $0.execute(sql: "UPDATE sync_state SET connectivity = 'online', rebuilding = 7 WHERE id = 1") }
        let rebuilding = #expect(throws: RaxxError.self) { try store.syncState() }
        #expect(rebuilding?.message == "sync_state.rebuilding holds '7', which is not one of its values (0, 1, 2).")
        try store.write { try $0.execute(sql: "UPDATE sync_state SET rebuilding = 0 WHERE id = 1") }
        #expect(try store.syncState().connectivity == .online)
    }

    /// Indexes left set aside by a fill that ended without building them (an older version ended
    /// it, say) are built when the next rebuild begins.
    @Test func indexesLeftAsideComeBackAtTheNextRebuild() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)]))
        try store.write { try $0.execute(sql: "UPDATE sync_state SET rebuilding = 0, cursor = 1 WHERE id = 1") }
        try store.recordSuccess(at: Date())
        #expect(try secondaryIndexes(store).isEmpty)
        try store.beginRebuild(accountID: "acc_1")
        #expect(try store.syncState().rebuilding == .shadow)
        #expect(try secondaryIndexes(store).count == 5)
    }

    /// What is set aside is built again only if it is an index, one statement.
    @Test func onlyIndexesAreBuiltFromWhatWasSetAside() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.write { db in
            try db.execute(sql: "INSERT INTO rebuild_set_aside_indexes (name, sql) VALUES ('x', 'DROP TABLE fills')")
        }
        // Read as a damaged cache, which a refresh sets aside and fills again.
        let error = #expect(throws: RaxxError.self) { try store.finishRebuild(accountID: "acc_1") }
        #expect(error?.message.contains("damaged") == true)
        #expect(try store.read { try Bool.fetchOne($0, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'fills')") } == true)
        #expect(try store.syncState().rebuilding == .live)
    }

    /// A purge in the middle of a first fill leaves a cache with all its indexes.
    @Test func aPurgeDuringAFirstFillRestoresTheIndexes() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)], more: true))
        try store.purgeAll()
        #expect(try secondaryIndexes(store).count == 5)
        #expect(try store.syncState().rebuilding == .none)
    }

    /// A cache left in the middle of a first fill by the version before (its pages staged in the
    /// logs) has them applied to the live tables, where the fill carries on from where it stopped.
    @Test func aFirstFillStagedByTheVersionBeforeCarriesOn() throws {
        let queue = try DatabaseQueue()
        try CacheStore.migrator.migrate(queue, upTo: "v2: rebuilds staged in keyless logs, keyed and indexed once at the end")
        try queue.write { db in
            try db.execute(sql: "UPDATE sync_state SET rebuilding = 1, rebuild_cursor = 3, account_id = 'acc_1' WHERE id = 1")
            try db.execute(
                sql: """
                    INSERT INTO rebuild_positions (id, symbol, qty, avg_price, updated_at) VALUES
                    ('p1', 'AAPL', 1, '1.00', 0), ('p2', 'MSFT', 1, '1.00', 0), ('p1', NULL, NULL, NULL, NULL)
                    """)
        }
        let store = try CacheStore(writer: queue, url: nil)
        #expect(try store.syncState().rebuilding == .live)
        #expect(try store.syncState().rebuildCursor == 3)
        #expect(try store.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM rebuild_positions") } == 0)
        try store.apply(page([position("p3", "SPY", seq: 4)]))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try symbols(store) == ["MSFT", "SPY"])
        #expect(try secondaryIndexes(store).count == 5)
    }

    @Test func failuresAreRecordedAndDataKept() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)]))
        try store.finishRebuild(accountID: "acc_1")
        let success = Date(timeIntervalSince1970: 1_790_000_000)
        try store.recordSuccess(at: success)
        try store.recordFailure(kind: "offline-hard", message: "no route", connectivity: .offlineHard, at: success.addingTimeInterval(60))
        let state = try store.syncState()
        #expect(state.lastRefreshFailedOffline)
        #expect(state.connectivity == .offlineHard)
        #expect(state.lastSuccessAt == success)
        #expect(try symbols(store) == ["AAPL"])
        try store.recordSuccess(at: success.addingTimeInterval(120))
        #expect(!(try store.syncState().lastRefreshFailedOffline))
    }

    @Test func evictsOldHistoryAndRemembersWhere() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([fill("f1", at: 1_000, seq: 1), fill("f2", at: 2_000, seq: 2), fill("f3", at: 3_000, seq: 3)]))
        try store.finishRebuild(accountID: "acc_1")
        #expect(try store.evict(before: Date(timeIntervalSince1970: 2_500)) == 2)
        #expect(try store.counts()["fills"] == 1)
        #expect(try store.syncState().evictedBefore == Date(timeIntervalSince1970: 2_500))
        // The summary counts what the cache keeps, as the server's would with the same `since`.
        #expect(try store.summary(since: Date(timeIntervalSince1970: 2_500))["fills"]?.count == 1)
    }

    @Test func summaryChecksumsTheCanonicalLines() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p2", "MSFT", seq: 1), position("p1", "AAPL", seq: 2)]))
        try store.finishRebuild(accountID: "acc_1")
        let summary = try #require(try store.summary(since: nil)["positions"])
        #expect(summary.count == 2)
        // sha256 of "p1\tAAPL\t1\t10.00\np2\tMSFT\t1\t10.00\n"
        #expect(summary.checksum == "5e89aae680802e988bc84d38126e0a992dcba3fce66656e5a59df8b7ce7d67a0")
    }

    @Test func purgeEmptiesEverything() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "AAPL", seq: 1)]))
        try store.finishRebuild(accountID: "acc_1")
        try store.recordSuccess(at: Date())
        try store.purgeAll()
        #expect(try symbols(store).isEmpty)
        let state = try store.syncState()
        #expect(state.cursor == 0 && state.lastSuccessAt == nil && state.accountID == nil)
    }

    @Test func exportsJSONLinesStraightFromTheRows() throws {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([fill("f\"1", "MSFT", at: 1_790_000_000, seq: 1), fill("f2", "AAPL261218C00192500", at: 1_790_000_000, seq: 2)]))
        try store.finishRebuild(accountID: "acc_1")
        var bytes: [UInt8] = []
        try store.exportJSONLines(.fills, CacheQuery(), asOf: Date(timeIntervalSince1970: 1_790_000_000.5)) { bytes += $0 }
        // An option's parts beside its OCC symbol.
        #expect(
            String(decoding: bytes, as: UTF8.self) == """
                {"as_of":"2026-09-21T14:13:20.500Z","filled_at":"2026-09-21T14:13:20Z","id":"f\\"1","order_id":"ord_1","price":"190.00",\
                "qty":1,"side":"buy","symbol":"MSFT"}
                {"as_of":"2026-09-21T14:13:20.500Z","filled_at":"2026-09-21T14:13:20Z","id":"f2",\
                "option":{"expiry":"2026-12-18","multiplier":100,"right":"call","strike":"192.50","underlying":"AAPL"},\
                "order_id":"ord_1","price":"190.00","qty":1,"side":"buy","symbol":"AAPL261218C00192500"}\n
                """)
    }

    /// Three positions at 10.00 (10 AAPL, a short AAPL call, `msft` MSFT), and a snapshot that prices
    /// the first two (AAPL at 12.5, the call at 9.00) and not MSFT.
    static func valuedPositions(msft: Int64) throws -> (CacheStore, Components.Schemas.Portfolio) {
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(
            page([
                position("p1", "AAPL", qty: 10, seq: 1), position("p2", "AAPL261218C00192500", qty: -2, seq: 2),
                position("p3", "MSFT", qty: msft, seq: 3),
            ]))
        try store.finishRebuild(accountID: "acc_1")
        var p = Fixtures.portfolio()
        p.marks = [.init(symbol: "AAPL", price: "12.5"), .init(symbol: "AAPL261218C00192500", price: "9.00")]
        try store.savePortfolio(p)
        return (store, p)
    }

    @Test func positionsAreValuedAtTheSnapshotsPrices() throws {
        var (store, p) = try Self.valuedPositions(msft: 1)
        var values: [String: Valuation?] = [:]
        try store.positions(CacheQuery()) { values[$0.symbol] = $0.valuation }
        // 10 × (12.50 − 10.00); a short call: −2 × 100 × (9.00 − 10.00); MSFT was not in the snapshot.
        #expect(values["AAPL"] == Valuation(marketValueTicks: 1_250_000, unrealizedTicks: 250_000, costTicks: 1_000_000))
        #expect(values["AAPL261218C00192500"] == Valuation(marketValueTicks: -18_000_000, unrealizedTicks: 2_000_000, costTicks: 20_000_000))
        #expect(values["MSFT"] == .some(nil))
        // A newer snapshot replaces the prices; a purge drops them.
        p.marks = [.init(symbol: "MSFT", price: "11")]
        try store.savePortfolio(p)
        values = [:]
        try store.positions(CacheQuery()) { values[$0.symbol] = $0.valuation }
        #expect(values["AAPL"] == .some(nil) && values["MSFT"]??.unrealizedTicks == 10_000)
    }

    /// Positions go out valued at the snapshot's prices, as the table shows them: money to the cent,
    /// the P&L's per cent to two places, nothing of a valuation for a position the snapshot did
    /// not price.
    @Test func exportsPositionsValued() throws {
        let (store, _) = try Self.valuedPositions(msft: 3)
        var bytes: [UInt8] = []
        try store.exportJSONLines(.positions, CacheQuery(), asOf: Date(timeIntervalSince1970: 1_790_000_000)) { bytes += $0 }
        #expect(
            String(decoding: bytes, as: UTF8.self) == """
                {"as_of":"2026-09-21T14:13:20Z","avg_price":"10.00","id":"p1","last_price":"12.5","market_value":"125.00","qty":10,\
                "symbol":"AAPL","unrealized_pnl":"25.00","unrealized_pnl_percent":25,"updated_at":"2026-09-21T14:13:20Z"}
                {"as_of":"2026-09-21T14:13:20Z","avg_price":"10.00","id":"p2","last_price":"9.00","market_value":"-1800.00",\
                "option":{"expiry":"2026-12-18","multiplier":100,"right":"call","strike":"192.50","underlying":"AAPL"},"qty":-2,\
                "symbol":"AAPL261218C00192500","unrealized_pnl":"200.00","unrealized_pnl_percent":10,"updated_at":"2026-09-21T14:13:20Z"}
                {"as_of":"2026-09-21T14:13:20Z","avg_price":"10.00","id":"p3","qty":3,"symbol":"MSFT","updated_at":"2026-09-21T14:13:20Z"}\n
                """)
        var symbols: [String] = []
        try store.exportJSONLines(.positions, CacheQuery(symbol: "msft"), asOf: Date()) { bytes in
            symbols += String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { String($0.split(separator: "\"symbol\":\"")[1].prefix(4)) }
        }
        #expect(symbols == ["MSFT"])
    }

    /// Text is escaped as JSON wants it whatever it holds (runs without escapes are copied whole):
    /// each line decodes back to the stored values.
    @Test func exportEscapesEveryKindOfText() throws {
        let symbols = [
            "PLAIN", "q\"uote", "back\\slash", "new\nline", "tab\tret\r", "ctl\u{01}\u{1f}end", "\"", "\\\\",
            "é€😀 unicode", "\u{7f}del", "", "mixed \"a\\b\nc\u{02}d\" tail",
        ]
        let store = try CacheStore.inMemory()
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page(symbols.enumerated().map { fill("f\($0.offset)", $0.element, at: 1_790_000_000, seq: Int64($0.offset + 1)) }))
        try store.finishRebuild(accountID: "acc_1")
        var bytes: [UInt8] = []
        try store.exportJSONLines(.fills, CacheQuery(), asOf: Date(timeIntervalSince1970: 1_790_000_000)) { bytes += $0 }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == symbols.count)
        var decoded: [String] = []
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            decoded.append(object?["symbol"] as? String ?? "?")
        }
        #expect(Set(decoded) == Set(symbols))
        #expect(lines.contains { $0.contains(#""symbol":"ctl\u0001\u001fend""#) })
        #expect(lines.contains { $0.contains(#""symbol":"mixed \"a\\b\nc\u0002d\" tail""#) })
    }
}

/// The cache, the order journal and the alert store hold a person's trading data: their files
/// (and SQLite's -wal and -shm beside them) are the owner's alone, new or made by an earlier version.
@Suite struct StoreFileModeTests {
    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func storesAreCreatedAndKept0600() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-modes-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let folders = PrivateFolders(roots: [folder.path])
        let cacheURL = folder.appendingPathComponent("cache.sqlite")
        let cache = try CacheStore.open(at: cacheURL, in: folders)
        try cache.recordAttempt(at: Date())  // a write: the -wal and -shm exist now
        for suffix in ["", "-wal", "-shm"] { #expect(try mode(cacheURL.path + suffix) == 0o600, "cache.sqlite\(suffix)") }
        _ = try OrderJournal.open(at: folder.appendingPathComponent("orders.sqlite"), in: folders)
        #expect(try mode(folder.appendingPathComponent("orders.sqlite").path) == 0o600)
        // A file an earlier version left readable by others is brought back to 0600.
        let older = folder.appendingPathComponent("alerts.sqlite")
        FileManager.default.createFile(atPath: older.path, contents: nil, attributes: [.posixPermissions: 0o644])
        _ = try AlertStore.open(at: older, in: folders)
        #expect(try mode(older.path) == 0o600)
    }
}
