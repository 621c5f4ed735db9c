import Foundation
import GRDB
import GRDBSQLite
import RaxxCore
import Testing

@testable import RaxxStore

/// The offline reads open an existing cache on a plain SQLite connection; anything else (a write,
/// a file an older version left, a damaged one) goes through GRDB as before.
@Suite struct CacheReadConnectionTests {
    /// A folder of the test's own (removed when the test is done), and the cache file's place in it.
    final class Folder {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-plain-\(UUID().uuidString)", isDirectory: true)
        var cache: URL { root.appendingPathComponent("cache.sqlite") }
        /// The rule the stores are held to, from this folder down.
        var folders: PrivateFolders { PrivateFolders(roots: [root.path]) }
        init() throws { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: root) }
    }

    func filled(at url: URL) throws {
        let store = try CacheStore.open(at: url, in: PrivateFolders(roots: [url.deletingLastPathComponent().path]))
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "MSFT", seq: 1), position("p2", "AAPL", seq: 2), fill("f1", at: 1_790_000_000, seq: 3)]))
        try store.finishRebuild(accountID: "acc_1")
        try store.recordSuccess(at: Date(timeIntervalSince1970: 1_790_000_100))
    }

    /// A cache made new has the pages `CacheStore.pageSize` says; one an earlier version made
    /// (SQLite's 4 KiB, in WAL already) keeps its own and is filled and read as before.
    @Test func aNewCacheTakesItsPageSizeAndAnOlderOneKeepsItsOwn() throws {
        let folder = try Folder()
        func pageSize(_ url: URL) throws -> Int? {
            try DatabaseQueue(path: url.path).read { try Int.fetchOne($0, sql: "PRAGMA page_size") }
        }
        try filled(at: folder.cache)
        #expect(try pageSize(folder.cache) == CacheStore.pageSize)
        #expect(CacheStore.pageSize == 16384)

        let older = folder.root.appendingPathComponent("older.sqlite")
        let made = try DatabaseQueue(path: older.path)
        try made.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE kept (x)")
        }
        try made.close()
        #expect(try pageSize(older) == 4096)
        try filled(at: older)
        #expect(try pageSize(older) == 4096)
        let store = try #require(try CacheStore.openExisting(at: older, in: folder.folders))
        #expect(try symbols(store) == ["AAPL", "MSFT"])
    }

    @Test func aFilledCacheIsReadOnAPlainConnectionAndAWriteStillLands() throws {
        let folder = try Folder()
        let url = folder.cache
        try filled(at: url)

        let store = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(store.isPlain)
        let state = try store.syncState()
        #expect(state.accountID == "acc_1")
        #expect(state.cursor == 3)
        #expect(state.lastSuccessAt == Date(timeIntervalSince1970: 1_790_000_100))
        #expect(state.connectivity == .online)
        #expect(try store.counts() == ["positions": 2, "fills": 1, "orders": 0, "portfolio": 0])
        #expect(try symbols(store) == ["AAPL", "MSFT"])
        var fills: [CachedFill] = []
        try store.fills(CacheQuery(since: Date(timeIntervalSince1970: 1_789_999_999))) { fills.append($0) }
        #expect(fills.map { $0.id } == ["f1"])
        #expect(store.isPlain)

        // The first write opens GRDB's queue, and what it writes is there for the next reader.
        try store.recordFailure(kind: "offline", message: "no route", connectivity: .offlineHard, at: Date(timeIntervalSince1970: 1_790_000_200))
        #expect(!store.isPlain)
        #expect(try store.syncState().lastErrorKind == "offline")
        let again = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(again.isPlain)
        #expect(try again.syncState().connectivity == .offlineHard)
        #expect(try again.syncState().lastErrorMessage == "no route")
    }

    @Test func ordersPortfolioAndTheJSONExportReadPlainlyWithTheirNulls() throws {
        let folder = try Folder()
        let url = folder.cache
        let writable = try CacheStore.open(at: url, in: folder.folders)
        try writable.beginRebuild(accountID: "acc_1")
        let limit =
            #"""
            {"id":"ord_1","client_order_id":"c-1","symbol":"MSFT","side":"buy","qty":10,"type":"limit","limit_price":"410.5","tif":"gtc",\#
            "status":"partially_filled","filled_qty":4,"avg_fill_price":"410.25","reject_code":null,"mode":"paper","not_after":"2026-11-23T05:45:00.5Z",\#
            "created_at":"2026-11-23T05:44:00Z","updated_at":"2026-11-23T05:44:30Z"}
            """#
        let market =
            #"""
            {"id":"ord_2","client_order_id":"c-2","symbol":"SPY","side":"sell","qty":1,"type":"market","tif":"day","status":"rejected",\#
            "filled_qty":0,"reject_code":"buying_power","mode":"paper","created_at":"2026-11-23T05:40:00Z","updated_at":"2026-11-23T05:40:01Z"}
            """#
        let json = """
            {"changes":[{"seq":1,"entity":"order","op":"upsert","id":"ord_1","order":\(limit)},
                        {"seq":2,"entity":"order","op":"upsert","id":"ord_2","order":\(market)}],
             "cursor":2,"has_more":false,"reset":false,"as_of":"2026-11-23T05:44:40Z"}
            """
        try Array(json.utf8).withUnsafeBytes { _ = try writable.apply(json: $0) }
        try writable.finishRebuild(accountID: "acc_1")
        try writable.savePortfolio(
            .init(
                accountId: "acc_1", asOf: Date(timeIntervalSince1970: 1_795_000_000), mode: .paper, cash: "1000.00",
                marketValue: "0.00", equity: "1000.00", buyingPower: "1000.00", unrealizedPnl: "0.00", positionsCount: 0))
        try writable.recordSuccess(at: Date(timeIntervalSince1970: 1_795_000_100))

        let store = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(store.isPlain)
        var orders: [CachedOrder] = []
        try store.orders(CacheQuery()) { orders.append($0) }
        #expect(orders.map { $0.id } == ["ord_1", "ord_2"])
        #expect(orders[0].limitPrice == "410.5" && orders[0].avgFillPrice == "410.25" && orders[0].rejectCode == nil)
        #expect(orders[0].notAfter == Date(timeIntervalSince1970: 1_795_412_700.5))
        #expect(orders[1].limitPrice == nil && orders[1].avgFillPrice == nil && orders[1].notAfter == nil && orders[1].rejectCode == "buying_power")
        var rejected: [String] = []
        try store.orders(CacheQuery(status: .rejected)) { rejected.append($0.id) }
        #expect(rejected == ["ord_2"])
        let portfolio = try #require(try store.portfolio())
        #expect(portfolio.accountID == "acc_1" && portfolio.cash == "1000.00" && portfolio.positionsCount == 0)
        var out: [UInt8] = []
        try store.exportJSONLines(.orders, CacheQuery(), asOf: Date(timeIntervalSince1970: 1_795_000_100)) { out += $0 }
        let lines = String(decoding: out, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[1].contains(#""reject_code":"buying_power""#) && !lines[1].contains("limit_price") && !lines[1].contains("not_after"))
        #expect(store.isPlain)
    }

    @Test func tasksSharingAPlainStoreReadOneTransactionAtATime() async throws {
        let folder = try Folder()
        let url = folder.cache
        try filled(at: url)
        let store = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(store.isPlain)
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var seen: [String] = []
                    for _ in 0..<50 {
                        seen.append("\(try store.syncState().cursor) \(try store.counts()["positions"] ?? -1) \(try symbols(store))")
                    }
                    return seen
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(answers.count == 400)
        #expect(Set(answers) == ["3 2 [\"AAPL\", \"MSFT\"]"])
    }

    @Test func aCacheAnOlderVersionLeftIsMigratedBeforeItIsRead() throws {
        let folder = try Folder()
        let url = folder.cache
        let first = try #require(CacheStore.migrator.migrations.first)
        try CacheStore.migrator.migrate(DatabaseQueue(path: url.path), upTo: first)

        let store = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(!store.isPlain)
        #expect(try store.syncState().cursor == 0)
        let applied = try DatabaseQueue(path: url.path).read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") }
        #expect(applied == CacheStore.migrator.migrations.sorted())
        // Migrated, it is read plainly from then on.
        #expect(try #require(try CacheStore.openExisting(at: url, in: folder.folders)).isPlain)
    }

    /// A read that closes last leaves the -wal and -shm (the next read need not make them again),
    /// the log checkpointed and cut to nothing, whatever the writer left in it.
    @Test func aReadClosingLastLeavesAnEmptyLog() throws {
        let folder = try Folder()
        let url = folder.cache
        try filled(at: url)
        var writer: CacheStore? = try CacheStore.open(at: url, in: folder.folders)
        try writer?.recordAttempt(at: Date(timeIntervalSince1970: 1_790_000_200))  // frames in the log
        var reader: CacheStore? = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(try reader?.syncState().lastAttemptAt == Date(timeIntervalSince1970: 1_790_000_200))
        writer = nil  // not the last to close: the log stays as it is
        #expect(try size(url.path + "-wal") > 0)
        reader = nil
        #expect(try size(url.path + "-wal") == 0)
        #expect(FileManager.default.fileExists(atPath: url.path + "-shm"))
        let again = try #require(try CacheStore.openExisting(at: url, in: folder.folders))
        #expect(try again.syncState().lastAttemptAt == Date(timeIntervalSince1970: 1_790_000_200))
        #expect(try again.counts(of: CacheStore.liveTables) == [0, 2, 1, 0])
        #expect(throws: RaxxError.self) { try again.counts(of: ["sync_state; DROP TABLE fills"]) }
    }

    func size(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    @Test func theListOfMigrationsIsTheMigrators() {
        #expect(CacheStore.migrationIdentifiers == CacheStore.migrator.migrations.sorted())
    }

    @Test func aDamagedFileIsReportedAsDamaged() throws {
        let folder = try Folder()
        let url = folder.cache
        try Data(repeating: 0x5A, count: 8192).write(to: url)
        #expect(throws: RaxxError.self) { try CacheStore.openExisting(at: url, in: folder.folders) }
        do {
            _ = try CacheStore.openExisting(at: url, in: folder.folders)
        } catch {
            #expect(error.code == "cache_damaged")
        }
    }

    @Test func aFailureMidReadRollsBackAndTheConnectionReadsOn() throws {
        let folder = try Folder()
        let url = folder.cache
        try filled(at: url)
        let connection = try SQLiteReadConnection(path: url.path)
        #expect {
            try connection.read { try SQLiteStatement($0, "SELECT nope FROM positions").run() }
        } throws: { error in
            (error as? DatabaseError)?.message?.contains("no such column: nope") == true
        }
        // A failure after rows were read (the transaction under way) is rolled back too.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try connection.read { c in
                let rows = try SQLiteStatement(c, "SELECT id FROM positions")
                _ = try rows.step()
                throw Stop()
            }
        }
        #expect(sqlite3_get_autocommit(connection.handle) != 0)
        // The failed transaction was rolled back: the connection reads on.
        let count = try connection.read { c in
            let statement = try SQLiteStatement(c, "SELECT COUNT(*) FROM positions WHERE symbol = ?", [.text("AAPL")])
            return try statement.step() ? statement.int64(0) : -1
        }
        #expect(count == 1)
    }
}
