import Foundation
import GRDB
import RaxxCore
@testable import RaxxStore
import Testing

/// The offline reads open an existing cache on a plain SQLite connection; anything else (a write,
/// a file an older version left, a damaged one) goes through GRDB as before.
@Suite struct CacheReadConnectionTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("raxx-plain-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func filled(at url: URL) throws {
        let store = try CacheStore.open(at: url)
        try store.beginRebuild(accountID: "acc_1")
        try store.apply(page([position("p1", "MSFT", seq: 1), position("p2", "AAPL", seq: 2), fill("f1", at: 1_790_000_000, seq: 3)]))
        try store.finishRebuild(accountID: "acc_1")
        try store.recordSuccess(at: Date(timeIntervalSince1970: 1_790_000_100))
    }

    @Test func aFilledCacheIsReadOnAPlainConnectionAndAWriteStillLands() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cache.sqlite")
        try filled(at: url)

        let store = try #require(try CacheStore.openExisting(at: url))
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
        let again = try #require(try CacheStore.openExisting(at: url))
        #expect(again.isPlain)
        #expect(try again.syncState().connectivity == .offlineHard)
        #expect(try again.syncState().lastErrorMessage == "no route")
    }

    @Test func tasksSharingAPlainStoreReadOneTransactionAtATime() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cache.sqlite")
        try filled(at: url)
        let store = try #require(try CacheStore.openExisting(at: url))
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
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cache.sqlite")
        let first = try #require(CacheStore.migrator.migrations.first)
        try CacheStore.migrator.migrate(DatabaseQueue(path: url.path), upTo: first)

        let store = try #require(try CacheStore.openExisting(at: url))
        #expect(!store.isPlain)
        #expect(try store.syncState().cursor == 0)
        let applied = try DatabaseQueue(path: url.path).read { try String.fetchAll($0, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") }
        #expect(applied == CacheStore.migrator.migrations.sorted())
        // Migrated, it is read plainly from then on.
        #expect(try #require(try CacheStore.openExisting(at: url)).isPlain)
    }

    @Test func aDamagedFileIsReportedAsDamaged() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cache.sqlite")
        try Data(repeating: 0x5A, count: 8192).write(to: url)
        #expect(throws: RaxxError.self) { try CacheStore.openExisting(at: url) }
        do {
            _ = try CacheStore.openExisting(at: url)
        } catch {
            #expect(error.code == "cache_damaged")
        }
    }

    @Test func aStatementsFailureNamesSQLitesReason() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("cache.sqlite")
        try filled(at: url)
        let connection = try SQLiteReadConnection(path: url.path)
        #expect {
            try connection.read { try SQLiteStatement($0, "SELECT nope FROM positions").run() }
        } throws: { error in
            (error as? DatabaseError)?.message?.contains("no such column: nope") == true
        }
        // The failed transaction was rolled back: the connection reads on.
        let count = try connection.read { c in
            let statement = try SQLiteStatement(c, "SELECT COUNT(*) FROM positions WHERE symbol = ?", [.text("AAPL")])
            return try statement.step() ? statement.int64(0) : -1
        }
        #expect(count == 1)
    }
}
