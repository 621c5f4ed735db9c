import Foundation
import GRDB
@testable import RaxxSandbox
import Testing

/// The change log's pruning index holds tombstones alone: upserts, nearly every row of the log,
/// are written and erased without it, and pruning still finds old tombstones through it.
@Suite struct ChangeLogTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func onlyTombstonesAreIndexedAndPruningReadsThatIndex() throws {
        let database = try SandboxDatabase(path: ":memory:")
        let lastOld = try database.writer.write { db -> Int64 in
            for i in 0..<40 { try ChangeLog.record(db, account: "acc_1", .fill, "fil_\(i)", at: now) }
            for i in 0..<3 { try ChangeLog.record(db, account: "acc_1", .position, "pos_old\(i)", deleted: true, at: now - 60 * 86_400) }
            let lastOld = db.lastInsertedRowID
            try ChangeLog.record(db, account: "acc_1", .position, "pos_new", deleted: true, at: now)
            return lastOld
        }
        let (indexed, plans) = try database.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT SUM(ncell) FROM dbstat WHERE name = 'change_log_tombstones' AND pagetype = 'leaf'"),
             try ["SELECT MAX(seq) FROM change_log WHERE op = 'delete' AND at < 1", "DELETE FROM change_log WHERE op = 'delete' AND at < 1"]
                .map { try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + $0).map { $0["detail"] as String }.joined(separator: "; ") })
        }
        #expect(indexed == 4)
        for plan in plans { #expect(plan.contains("USING COVERING INDEX change_log_tombstones") || plan.contains("USING INDEX change_log_tombstones"), "\(plan)") }

        try database.writer.write { db in try ChangeLog.pruneTombstones(db, before: now - 30 * 86_400) }
        let (upserts, tombstones, horizon) = try database.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change_log WHERE op = 'upsert'"),
             try String.fetchAll(db, sql: "SELECT entity_id FROM change_log WHERE op = 'delete'"),
             try ChangeLog.horizon(db))
        }
        #expect(upserts == 40)
        #expect(tombstones == ["pos_new"])
        #expect(horizon == lastOld)
    }
}
