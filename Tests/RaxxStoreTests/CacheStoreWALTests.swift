import Foundation
import GRDB
@testable import RaxxStore
import Testing

/// The cache's writer never stops to checkpoint its write-ahead log (a refresh's next page would
/// wait for it); the log is checkpointed by a connection of its own.
@Suite struct CacheStoreWALTests {
    @Test func theCachesWriterLeavesCheckpointsToTheCheckpointer() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cache-wal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try openPool(at: folder.appendingPathComponent("cache.sqlite"))
        let automatic = try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") }
        #expect(automatic == 0)
        // Readers were never given the hook: they never commit, and keep SQLite's default.
        let reader = try pool.read { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") }
        #expect(reader == 1000)
    }
}
