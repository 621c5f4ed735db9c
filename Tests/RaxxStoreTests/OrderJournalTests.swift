import Foundation
import GRDB
import GRDBSQLite
import RaxxCore
import Testing

@testable import RaxxStore

/// The order journal: an entry before each order is sent, its outcome after; an outcome may go in
/// the same transaction as the next order's entry.
@Suite struct OrderJournalTests {
    let t0 = Date(timeIntervalSince1970: 1_795_000_000)

    func history(_ journal: OrderJournal) throws -> [String] {
        try journal.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT client_order_id, state, order_id FROM journal_history ORDER BY id").map { r in
                let id: String = r["client_order_id"], state: String = r["state"], order: String? = r["order_id"]
                return "\(id) \(state)" + (order.map { " \($0)" } ?? "")
            }
        }
    }

    func row(_ journal: OrderJournal, _ id: String) throws -> (state: String, orderID: String?, status: String?, updated: Double)? {
        try journal.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT state, order_id, status, updated_at FROM journal WHERE client_order_id = ?", arguments: [id])
                .map { ($0["state"], $0["order_id"], $0["status"], $0["updated_at"]) }
        }
    }

    @Test func anOutcomeSettledWithTheNextEntryIsWrittenFirstWithItsOwnTime() throws {
        let journal = try OrderJournal.inMemory()
        try journal.recordSending(clientOrderID: "c-1", accountID: "acc-1", request: #"{"n":1}"#, at: t0)
        #expect(try journal.unresolved(accountID: "acc-1").map(\.clientOrderID) == ["c-1"])

        let answered = OrderJournal.Outcome("c-1", .placed, orderID: "ord-1", status: "filled", at: t0.addingTimeInterval(0.002))
        try journal.recordSending(
            clientOrderID: "c-2", accountID: "acc-1", request: #"{"n":2}"#, at: t0.addingTimeInterval(0.003),
            settling: [answered])
        // c-1 is settled, c-2 is the one in flight.
        #expect(try journal.unresolved(accountID: "acc-1").map(\.clientOrderID) == ["c-2"])
        let first = try #require(try row(journal, "c-1"))
        #expect(first.state == "placed" && first.orderID == "ord-1" && first.status == "filled")
        // The outcome keeps the time its answer came, not the time of the write that carried it.
        #expect(first.updated == t0.addingTimeInterval(0.002).timeIntervalSince1970)
        #expect(try history(journal) == ["c-1 sending", "c-1 placed ord-1", "c-2 sending"])

        try journal.record([OrderJournal.Outcome("c-2", .rejected, status: "rejected", errorCode: "insufficient_buying_power", at: t0)])
        #expect(try journal.unresolved(accountID: "acc-1").isEmpty)
        #expect(try history(journal) == ["c-1 sending", "c-1 placed ord-1", "c-2 sending", "c-2 rejected"])
    }

    /// An entry whose state is none of the journal's (a newer build's, or a hand edit) is an
    /// error naming the column and the value, not read as "unknown" without a word. (The
    /// unresolved are selected by their state, so the row is read here as `unresolved` reads it.)
    @Test func anEntryInAStateOutsideTheEnumIsRefusedNamingIt() throws {
        let journal = try OrderJournal.inMemory()
        try journal.recordSending(clientOrderID: "c-1", accountID: "acc-1", request: #"{"n":1}"#, at: t0)
        try journal.writer.write { try $0.execute(sql: "UPDATE journal SET state = 'sending-again' WHERE client_order_id = 'c-1'") }
        let row = try #require(try journal.writer.read { try Row.fetchOne($0, sql: "SELECT * FROM journal WHERE client_order_id = 'c-1'") })
        let error = #expect(throws: RaxxError.self) { try OrderJournal.entry(row) }
        #expect(error?.code == ErrorCode.journalUnreadable.rawValue)
        #expect(
            error?.message
                == "journal.state holds 'sending-again', which is not one of its values (sending, placed, rejected, unknown, not_placed, cancelled).")
    }

    @Test func aJournalWrittenBeforeV4KeepsItsEntriesAndHistoryInOrder() throws {
        let queue = try DatabaseQueue()
        try OrderJournal.migrator.migrate(queue, upTo: "v3: the dead man's switch this device armed")
        try queue.write { db in
            for (n, (id, state, account))
                in ([("c-1", "placed", "acc-1"), ("c-2", "sending", "acc-1"), ("c-3", "unknown", nil)] as [(String, String, String?)]).enumerated()
            {
                let at = t0.timeIntervalSince1970 + Double(n)
                try db.execute(
                    sql: """
                        INSERT INTO journal (client_order_id, request, state, created_at, updated_at, account_id) VALUES (?, '{}', ?, ?, ?, ?)
                        """, arguments: [id, state, at, at, account])
            }
            for (id, state) in [("c-1", "sending"), ("c-1", "placed"), ("c-2", "sending"), ("c-3", "sending"), ("c-3", "unknown")] {
                try db.execute(
                    sql: "INSERT INTO journal_history (client_order_id, at, state) VALUES (?, ?, ?)", arguments: [id, t0.timeIntervalSince1970, state])
            }
        }
        let journal = try OrderJournal(writer: queue)
        #expect(try journal.unresolved(accountID: "acc-1").map(\.clientOrderID) == ["c-2", "c-3"])
        #expect(try row(journal, "c-1")?.state == "placed")
        try journal.recordSending(
            clientOrderID: "c-4", accountID: "acc-1", request: "{}", at: t0.addingTimeInterval(3),
            settling: [OrderJournal.Outcome("c-2", .placed, orderID: "ord-2", at: t0.addingTimeInterval(3))])
        // The ids go on from the last one kept: the history still reads in the order it was written.
        #expect(
            try history(journal) == [
                "c-1 sending", "c-1 placed", "c-2 sending", "c-3 sending", "c-3 unknown",
                "c-2 placed ord-2", "c-4 sending",
            ])
        #expect(try journal.unresolved(accountID: "acc-1").map(\.clientOrderID) == ["c-3", "c-4"])
    }

    /// The unresolved orders are found through the index of them alone: the query's condition is
    /// the index's (a condition SQLite cannot match to it would scan the whole journal).
    @Test func theUnresolvedAreReadThroughTheirOwnIndex() throws {
        let journal = try OrderJournal.inMemory()
        let plan = try journal.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + OrderJournal.unresolvedSQL, arguments: ["acc-1"]).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("journal_unresolved") }, "\(plan)")
    }

    /// A write that fails half-way leaves nothing of itself: not the entry, not the outcome it
    /// carried; and the next write goes in as if it had not happened.
    @Test func aFailedWriteLeavesNothingHalfWritten() throws {
        let journal = try OrderJournal.inMemory()
        try journal.recordSending(clientOrderID: "c-1", accountID: "acc-1", request: "{}", at: t0)
        try journal.writer.write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER refuse BEFORE INSERT ON journal_history WHEN NEW.client_order_id = 'c-2'
                    BEGIN SELECT RAISE(ABORT, 'the disk is full'); END
                    """)
        }
        #expect(throws: DatabaseError.self) {
            try journal.recordSending(
                clientOrderID: "c-2", accountID: "acc-1", request: "{}", at: t0.addingTimeInterval(1),
                settling: [OrderJournal.Outcome("c-1", .placed, orderID: "ord-1", at: t0.addingTimeInterval(1))])
        }
        #expect(try row(journal, "c-2") == nil)
        #expect(try row(journal, "c-1")?.state == "sending")
        #expect(try history(journal) == ["c-1 sending"])
        try journal.record([OrderJournal.Outcome("c-1", .placed, orderID: "ord-1", at: t0.addingTimeInterval(2))])
        #expect(try history(journal) == ["c-1 sending", "c-1 placed ord-1"])
    }

    /// A value SQLite refuses (larger than its length limit) fails the write; it is never kept as
    /// NULL in its place.
    @Test func aValueSQLiteRefusesFailsTheWrite() throws {
        let journal = try OrderJournal.inMemory()
        try journal.recordSending(clientOrderID: "c-1", accountID: "acc-1", request: "{}", at: t0)
        try journal.writer.writeWithoutTransaction { db in _ = sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, 64) }
        let long = String(repeating: "m", count: 100)
        #expect(throws: DatabaseError.self) {
            try journal.record([OrderJournal.Outcome("c-1", .rejected, message: long, at: t0.addingTimeInterval(1))])
        }
        #expect(try row(journal, "c-1")?.state == "sending")
        #expect(try history(journal) == ["c-1 sending"])
    }

    @Test func recordingNothingWritesNothing() throws {
        let journal = try OrderJournal.inMemory()
        try journal.record([])
        try journal.recordSending(clientOrderID: "c-1", accountID: "acc-1", request: "{}", at: t0, settling: [])
        #expect(try history(journal) == ["c-1 sending"])
    }
}
