import Foundation
import GRDB
import RaxxCore
import RaxxTestSupport
import Testing

@testable import RaxxStore

/// The device's databases (the cache, the order journal, the alerts) leave their log's checkpoints
/// to a connection of their own: a full refresh's writer, or an order's journal write, never stops
/// to copy pages into the database file and sync it.
@Suite struct StoreCheckpointTests {
    @Test func theWriterLeavesCheckpointsToTheCheckpointer() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("store-checkpoint-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("store.sqlite")
        let pool = try openPool(at: url, in: PrivateFolders(roots: [folder.path]))
        // SQLite's automatic checkpoint (which would run on the writer, after its commits) is off.
        #expect(try await pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 0)

        let before = fileSize(url.path)
        // SQLite's threshold of log pages and a quarter more, in commits of 128 KiB (32 pages of 4 KiB).
        let commits = 1000 * 5 / 4 / 32
        try await pool.write { try $0.execute(sql: "CREATE TABLE scratch (b BLOB)") }
        for _ in 0..<commits {
            try await pool.write { try $0.execute(sql: "INSERT INTO scratch (b) VALUES (zeroblob(131072))") }
        }
        // Only a checkpoint moves pages from the log into the database file.
        try await waitUntil { fileSize(url.path) - before >= 2 << 20 }
        #expect(fileSize(url.path) - before >= 2 << 20, "the log was not checkpointed into the database file")
        #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM scratch") } == commits)
    }
}
