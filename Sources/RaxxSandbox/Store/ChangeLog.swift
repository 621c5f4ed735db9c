import Foundation
import GRDB
import RaxxAPI

/// The change log behind delta sync, compacted: each entity keeps only its latest change (an
/// upsert or a tombstone) under a fresh sequence number. A full sync reads the whole log; a delta
/// sync reads what follows a cursor. Tombstones older than the retention window are pruned, and
/// a cursor older than the newest pruned tombstone (the horizon) gets a reset.
enum ChangeLog {
    /// Records that `entity` `id` changed, inside the caller's transaction: its earlier change, if
    /// any, goes (the unique index on entity and id, `REPLACE`), and this one takes a fresh
    /// sequence number. One statement rather than a DELETE and an INSERT: every order records
    /// three to four changes, and this was a quarter of an order's transaction.
    static func record(_ db: Database, account: String, _ entity: ChangeEntity, _ id: String, deleted: Bool = false, at: Date) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO change_log (account_id, entity, entity_id, op, at) VALUES (?, ?, ?, ?, ?)").execute(
            arguments: [account, entity.rawValue, id, deleted ? "delete" : "upsert", at.timeIntervalSince1970])
    }

    /// Prunes tombstones older than `cutoff`; the horizon moves to the newest pruned one.
    static func pruneTombstones(_ db: Database, before cutoff: Date) throws {
        guard
            let newest = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT MAX(seq) FROM change_log WHERE op = \(Components.Schemas.SyncChange.OpPayload.delete.sql) AND at < ?"),
                arguments: [cutoff.timeIntervalSince1970])
        else { return }
        try db.cachedStatement(sql: "DELETE FROM change_log WHERE op = \(Components.Schemas.SyncChange.OpPayload.delete.sql) AND at < ?").execute(arguments: [
            cutoff.timeIntervalSince1970
        ])
        try db.cachedStatement(sql: "UPDATE sync_meta SET horizon = MAX(horizon, ?) WHERE id = 1").execute(arguments: [newest])
    }

    static func horizon(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT horizon FROM sync_meta WHERE id = 1")) ?? 0
    }
}
