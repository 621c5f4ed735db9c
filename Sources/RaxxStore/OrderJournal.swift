import Foundation
import GRDB
import RaxxCore

/// raxx-order's journal: every order is written here before it is sent, and every outcome after,
/// so that a lost reply can be looked up later and nothing is ever placed twice. It lives in the
/// state folder, beside the keystore; it holds no secret.
public final class OrderJournal: Sendable {
    let writer: any DatabaseWriter

    public enum State: String, Sendable, Codable {
        /// Written, about to be sent (or the process died while sending).
        case sending
        case placed
        case rejected
        /// Sent, but the reply was lost: look it up before anything else.
        case unknown
        /// Never reached the server.
        case notPlaced = "not_placed"
        /// Found open after a lost connection, and cancelled.
        case cancelled
    }

    public struct Entry: Sendable, Equatable {
        public var clientOrderID: String
        public var request: String
        public var state: State
        public var orderID: String?
        public var status: String?
        public var errorCode: String?
        public var message: String?
    }

    public static func open(at url: URL) throws(RaxxError) -> OrderJournal {
        do {
            return try OrderJournal(writer: try openPool(at: url))
        } catch let error as RaxxError {
            throw error
        } catch {
            throw RaxxError.failure(code: "journal_unreadable", "The order journal at \(url.path) cannot be opened: \(error).")
        }
    }

    public static func inMemory() throws -> OrderJournal { try OrderJournal(writer: DatabaseQueue()) }

    init(writer: any DatabaseWriter) throws {
        self.writer = writer
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: journal and its history") { db in
            try db.execute(sql: """
                CREATE TABLE journal (
                    client_order_id TEXT PRIMARY KEY,
                    request TEXT NOT NULL,
                    state TEXT NOT NULL,
                    order_id TEXT,
                    status TEXT,
                    error_code TEXT,
                    message TEXT,
                    created_at REAL NOT NULL,
                    updated_at REAL NOT NULL
                );
                CREATE INDEX journal_state ON journal(state);
                CREATE TABLE journal_history (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    client_order_id TEXT NOT NULL,
                    at REAL NOT NULL,
                    state TEXT NOT NULL,
                    order_id TEXT,
                    status TEXT,
                    error_code TEXT,
                    message TEXT
                );
                """)
        }
        migrator.registerMigration("v2: the account each order was placed for") { db in
            // Orders journalled before this were the one signed-in account's: they stay unresolved for
            // any account (NULL), as they always were.
            try db.execute(sql: "ALTER TABLE journal ADD COLUMN account_id TEXT")
        }
        try migrator.migrate(writer)
    }

    /// Writes the order before it is sent (the request as it will go on the wire), for `accountID`.
    public func recordSending(clientOrderID: String, accountID: String, request: String, at: Date) throws {
        try writer.write { db in
            try db.execute(sql: """
                INSERT INTO journal (client_order_id, account_id, request, state, created_at, updated_at) VALUES (?, ?, ?, 'sending', ?, ?)
                ON CONFLICT (client_order_id) DO UPDATE SET account_id = excluded.account_id, request = excluded.request, state = 'sending',
                    updated_at = excluded.updated_at
                """, arguments: [clientOrderID, accountID, request, at.timeIntervalSince1970, at.timeIntervalSince1970])
            try Self.history(db, clientOrderID, .sending, nil, nil, nil, nil, at)
        }
    }

    /// Records an outcome (and keeps it in the history).
    public func record(_ clientOrderID: String, _ state: State, orderID: String? = nil, status: String? = nil,
                       errorCode: String? = nil, message: String? = nil, at: Date) throws {
        try writer.write { db in
            try db.execute(sql: """
                UPDATE journal SET state = ?, order_id = COALESCE(?, order_id), status = ?, error_code = ?, message = ?, updated_at = ?
                WHERE client_order_id = ?
                """, arguments: [state.rawValue, orderID, status, errorCode, message, at.timeIntervalSince1970, clientOrderID])
            try Self.history(db, clientOrderID, state, orderID, status, errorCode, message, at)
        }
    }

    private static func history(_ db: Database, _ id: String, _ state: State, _ orderID: String?, _ status: String?,
                                _ errorCode: String?, _ message: String?, _ at: Date) throws {
        try db.execute(sql: """
            INSERT INTO journal_history (client_order_id, at, state, order_id, status, error_code, message) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, arguments: [id, at.timeIntervalSince1970, state.rawValue, orderID, status, errorCode, message])
    }

    /// `accountID`'s orders whose fate is not known: sent (or being sent) with no answer. Another
    /// account's are left for that account to settle.
    public func unresolved(accountID: String) throws -> [Entry] {
        try writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM journal WHERE state IN ('sending', 'unknown') AND (account_id = ? OR account_id IS NULL) ORDER BY created_at
                """, arguments: [accountID]).map(Self.entry)
        }
    }

    static func entry(_ r: Row) -> Entry {
        Entry(clientOrderID: r["client_order_id"], request: r["request"], state: State(rawValue: r["state"]) ?? .unknown,
              orderID: r["order_id"], status: r["status"], errorCode: r["error_code"], message: r["message"])
    }
}
