import Foundation
import GRDB
import Testing

@testable import RaxxSandbox

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
            (
                try Int.fetchOne(db, sql: "SELECT SUM(ncell) FROM dbstat WHERE name = 'change_log_tombstones' AND pagetype = 'leaf'"),
                try ["SELECT MAX(seq) FROM change_log WHERE op = 'delete' AND at < 1", "DELETE FROM change_log WHERE op = 'delete' AND at < 1"]
                    .map { try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + $0).map { $0["detail"] as String }.joined(separator: "; ") }
            )
        }
        #expect(indexed == 4)
        for plan in plans {
            #expect(plan.contains("USING COVERING INDEX change_log_tombstones") || plan.contains("USING INDEX change_log_tombstones"), "\(plan)")
        }

        try database.writer.write { db in try ChangeLog.pruneTombstones(db, before: now - 30 * 86_400) }
        let (upserts, tombstones, horizon) = try database.writer.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change_log WHERE op = 'upsert'"),
                try String.fetchAll(db, sql: "SELECT entity_id FROM change_log WHERE op = 'delete'"),
                try ChangeLog.horizon(db)
            )
        }
        #expect(upserts == 40)
        #expect(tombstones == ["pos_new"])
        #expect(horizon == lastOld)
    }

    /// An entity recorded again keeps one row: the latest change, under a sequence number above
    /// every earlier one (its own earlier one, and one deleted since: numbers are never reused).
    @Test func aChangeRecordedAgainReplacesTheEarlierUnderAFreshNumber() throws {
        let database = try SandboxDatabase(path: ":memory:")
        let rows = try database.writer.write { db -> [Row] in
            try ChangeLog.record(db, account: "acc_1", .order, "ord_1", at: now)
            try ChangeLog.record(db, account: "acc_1", .fill, "fil_1", at: now)
            try db.execute(sql: "DELETE FROM change_log WHERE entity_id = 'fil_1'")
            try ChangeLog.record(db, account: "acc_1", .order, "ord_1", deleted: true, at: now + 1)
            return try Row.fetchAll(db, sql: "SELECT seq, entity, entity_id, op, at FROM change_log ORDER BY seq")
        }
        #expect(rows.count == 1)
        #expect(rows.first?["seq"] == 3 as Int64)
        #expect(rows.first?["entity_id"] == "ord_1")
        #expect(rows.first?["op"] == "delete")
        #expect(rows.first?["at"] == now.timeIntervalSince1970 + 1)
    }
}
