import Foundation
import GRDB
import GRDBSQLite
import RaxxCore

/// raxx-order's journal: every order is written here before it is sent, and every outcome after,
/// so that a lost reply can be looked up later and nothing is ever placed twice. It lives in the
/// state folder, beside the keystore; it holds no secret.
public final class OrderJournal: Sendable {
    let writer: any DatabaseWriter

    public enum State: String, Sendable, Codable, CaseIterable {
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

    /// Opens (creating it and its folder) the file at `url`, under `folders`' rule.
    public static func open(at url: URL, in folders: PrivateFolders) throws(RaxxError) -> OrderJournal {
        do {
            return try OrderJournal(writer: try openPool(at: url, in: folders))
        } catch let error as RaxxError {
            throw error
        } catch {
            throw RaxxError(code: .journalUnreadable, message: "The order journal at \(url.path) cannot be opened: \(error).")
        }
    }

    public static func inMemory() throws -> OrderJournal { try OrderJournal(writer: DatabaseQueue()) }

    init(writer: any DatabaseWriter) throws {
        self.writer = writer
        try Self.migrator.migrate(writer)
    }

    /// The journal's schema, step by step (append-only).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: journal and its history") { db in
            try db.execute(
                sql: """
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
        migrator.registerMigration("v3: the dead man's switch this device armed") { db in
            // One row while a switch armed from here may still fire (or has fired unreported): since
            // when, its last known deadline, and the last order_cancelled alert already reported.
            try db.execute(
                sql: """
                    CREATE TABLE cancel_after (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        account_id TEXT NOT NULL,
                        armed_since REAL NOT NULL,
                        timeout_s INTEGER,
                        fires_at REAL,
                        report_cursor INTEGER NOT NULL DEFAULT 0
                    );
                    """)
        }
        migrator.registerMigration("v4: each order's write touches fewer pages") { db in
            // Every order commits its entry and the outcome before it: each page that commit changes
            // is written to the log again. The journal is keyed by client_order_id alone (no rowid
            // beside a key index), only the unresolved orders are indexed by state (an order
            // settling no longer moves between two parts of an index of every order), and the
            // history's ids are its rowids (AUTOINCREMENT updated sqlite_sequence on every insert;
            // nothing is deleted from the history, so the ids still follow the writes). Six pages
            // a commit become three or four.
            try db.execute(
                sql: """
                    CREATE TABLE journal_keyed (
                        client_order_id TEXT PRIMARY KEY NOT NULL,
                        request TEXT NOT NULL,
                        state TEXT NOT NULL,
                        order_id TEXT,
                        status TEXT,
                        error_code TEXT,
                        message TEXT,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        account_id TEXT
                    ) WITHOUT ROWID;
                    INSERT INTO journal_keyed
                        SELECT client_order_id, request, state, order_id, status, error_code, message, created_at, updated_at, account_id
                        FROM journal WHERE client_order_id IS NOT NULL;
                    DROP TABLE journal;
                    ALTER TABLE journal_keyed RENAME TO journal;
                    CREATE INDEX journal_unresolved ON journal(state) WHERE state IN ('sending', 'unknown');
                    CREATE TABLE journal_history_rowids (
                        id INTEGER PRIMARY KEY,
                        client_order_id TEXT NOT NULL,
                        at REAL NOT NULL,
                        state TEXT NOT NULL,
                        order_id TEXT,
                        status TEXT,
                        error_code TEXT,
                        message TEXT
                    );
                    INSERT INTO journal_history_rowids
                        SELECT id, client_order_id, at, state, order_id, status, error_code, message FROM journal_history ORDER BY id;
                    DROP TABLE journal_history;
                    ALTER TABLE journal_history_rowids RENAME TO journal_history;
                    """)
        }
        migrator.registerMigration("v5: the batches placed without ids of their own, by their content") { db in
            // A batch whose lines carry no client_order_id gets new ids each run, so the server
            // cannot tell a re-run from a new batch: the journal remembers what such a batch said
            // (a hash of its lines) and which orders it placed, for a day.
            try db.execute(
                sql: """
                    CREATE TABLE batches (
                        account_id TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        placed_at REAL NOT NULL,
                        orders TEXT NOT NULL,
                        PRIMARY KEY (account_id, fingerprint)
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    /// A batch placed before, as `placedBatch` finds it.
    public struct PlacedBatch: Sendable, Equatable {
        public var placedAt: Date
        /// The orders it placed (or sent with no answer): the server's ids, or the client's where
        /// the reply was lost.
        public var orders: [String]
    }

    /// How long a batch is remembered by its content.
    public static let batchMemory: TimeInterval = 24 * 3600

    /// The batch with `fingerprint` that `accountID` placed in the last `batchMemory` before `now`.
    public func placedBatch(fingerprint: String, accountID: String, now: Date) throws -> PlacedBatch? {
        try writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT placed_at, orders FROM batches WHERE account_id = ? AND fingerprint = ? AND placed_at > ?",
                arguments: [accountID, fingerprint, now.timeIntervalSince1970 - Self.batchMemory]
            ).map { row in
                let orders = (try? JSONDecoder().decode([String].self, from: Data((row["orders"] as String).utf8))) ?? []
                return PlacedBatch(placedAt: Date(timeIntervalSince1970: row["placed_at"]), orders: orders)
            }
        }
    }

    /// The fingerprints of the batches `accountID` placed that are remembered, newest first.
    public func placedBatchFingerprints(accountID: String) throws -> [String] {
        try writer.read { db in
            try String.fetchAll(db, sql: "SELECT fingerprint FROM batches WHERE account_id = ? ORDER BY placed_at DESC", arguments: [accountID])
        }
    }

    /// Remembers that `accountID` placed the batch with `fingerprint` at `at`, with its `orders`
    /// (a later one with the same content replaces it); forgets the batches past `batchMemory`.
    public func recordBatch(fingerprint: String, accountID: String, orders: [String], at: Date) throws {
        let list = String(decoding: try JSONEncoder().encode(orders), as: UTF8.self)
        try writer.write { db in
            try db.execute(sql: "DELETE FROM batches WHERE placed_at <= ?", arguments: [at.timeIntervalSince1970 - Self.batchMemory])
            try db.execute(
                sql: "INSERT OR REPLACE INTO batches (account_id, fingerprint, placed_at, orders) VALUES (?, ?, ?, ?)",
                arguments: [accountID, fingerprint, at.timeIntervalSince1970, list])
        }
    }

    /// An order's outcome, as `record` keeps it.
    public struct Outcome: Sendable, Equatable {
        public var clientOrderID: String
        public var state: State
        public var orderID: String?
        public var status: String?
        public var errorCode: String?
        public var message: String?
        /// When it became known (the answer's arrival).
        public var at: Date

        public init(
            _ clientOrderID: String, _ state: State, orderID: String? = nil, status: String? = nil, errorCode: String? = nil,
            message: String? = nil, at: Date
        ) {
            self.clientOrderID = clientOrderID
            self.state = state
            self.orderID = orderID
            self.status = status
            self.errorCode = errorCode
            self.message = message
            self.at = at
        }
    }

    /// Writes the order before it is sent (the request as it will go on the wire), for `accountID`;
    /// in the same transaction, first, the outcomes of `settling` (the orders answered since the
    /// last write): a batch commits once per order instead of twice.
    public func recordSending(clientOrderID: String, accountID: String, request: String, at: Date, settling: [Outcome] = []) throws {
        try writeOrders { db in
            for outcome in settling { try Self.record(db, outcome) }
            // Cached statements, values bound straight: a batch of orders writes these for every order.
            var entry = BoundRun(
                try db.cachedStatement(
                    sql: """
                        INSERT INTO journal (client_order_id, account_id, request, state, created_at, updated_at) VALUES (?, ?, ?, 'sending', ?, ?)
                        ON CONFLICT (client_order_id) DO UPDATE SET account_id = excluded.account_id, request = excluded.request, state = 'sending',
                            updated_at = excluded.updated_at
                        """))
            entry.text(clientOrderID); entry.text(accountID); entry.text(request)
            entry.real(at.timeIntervalSince1970); entry.real(at.timeIntervalSince1970)
            try entry.run(db)
            try Self.history(db, clientOrderID, .sending, nil, nil, nil, nil, at)
        }
    }

    /// Records an outcome (and keeps it in the history).
    public func record(
        _ clientOrderID: String, _ state: State, orderID: String? = nil, status: String? = nil,
        errorCode: String? = nil, message: String? = nil, at: Date
    ) throws {
        try record([Outcome(clientOrderID, state, orderID: orderID, status: status, errorCode: errorCode, message: message, at: at)])
    }

    /// Records outcomes, in order, in one transaction.
    public func record(_ outcomes: [Outcome]) throws {
        guard !outcomes.isEmpty else { return }
        try writeOrders { db in
            for outcome in outcomes { try Self.record(db, outcome) }
        }
    }

    /// One write transaction of orders' entries and outcomes, begun and committed by cached
    /// statements: `write` prepares its BEGIN and COMMIT again for every transaction, and a batch
    /// makes one for every order. An error rolls it back and is thrown.
    private func writeOrders(_ body: (Database) throws -> Void) throws {
        try writer.writeWithoutTransaction { db in
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            do {
                try body(db)
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                if db.isInsideTransaction { try? db.rollback() }
                throw error
            }
        }
    }

    private static func record(_ db: Database, _ o: Outcome) throws {
        var update = BoundRun(
            try db.cachedStatement(
                sql: """
                    UPDATE journal SET state = ?, order_id = COALESCE(?, order_id), status = ?, error_code = ?, message = ?, updated_at = ?
                    WHERE client_order_id = ?
                    """))
        update.text(o.state.rawValue); update.text(o.orderID); update.text(o.status); update.text(o.errorCode); update.text(o.message)
        update.real(o.at.timeIntervalSince1970); update.text(o.clientOrderID)
        try update.run(db)
        try history(db, o.clientOrderID, o.state, o.orderID, o.status, o.errorCode, o.message, o.at)
    }

    private static func history(
        _ db: Database, _ id: String, _ state: State, _ orderID: String?, _ status: String?,
        _ errorCode: String?, _ message: String?, _ at: Date
    ) throws {
        var insert = BoundRun(
            try db.cachedStatement(
                sql: """
                    INSERT INTO journal_history (client_order_id, at, state, order_id, status, error_code, message) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """))
        insert.text(id); insert.real(at.timeIntervalSince1970); insert.text(state.rawValue); insert.text(orderID); insert.text(status)
        insert.text(errorCode); insert.text(message)
        try insert.run(db)
    }

    /// `accountID`'s orders whose fate is not known: sent (or being sent) with no answer. Another
    /// account's are left for that account to settle.
    public func unresolved(accountID: String) throws -> [Entry] {
        try writer.read { db in
            try Row.fetchAll(db, sql: Self.unresolvedSQL, arguments: [accountID]).map(Self.entry)
        }
    }

    /// An account's unresolved orders (and those of no account), oldest first: through the index of
    /// the unresolved alone (v4's `journal_unresolved`), whose condition this must keep.
    static let unresolvedSQL = """
        SELECT * FROM journal WHERE state IN ('sending', 'unknown') AND (account_id = ? OR account_id IS NULL) ORDER BY created_at
        """

    static func entry(_ r: Row) throws -> Entry {
        try Entry(
            clientOrderID: r["client_order_id"], request: r["request"],
            state: storedCase(r["state"] as String, table: "journal", column: "state", code: .journalUnreadable),
            orderID: r["order_id"], status: r["status"], errorCode: r["error_code"], message: r["message"])
    }

    // MARK: The dead man's switch

    /// What this device knows of the dead man's switch it armed: so that the next run can tell
    /// the trader, once, which orders it cancelled.
    public struct SwitchWatch: Sendable, Equatable {
        public var accountID: String
        /// Since when a switch armed from here may have fired (alerts before are not its).
        public var armedSince: Date
        /// The timeout last armed, in seconds (nil once disarmed).
        public var timeout: Int?
        /// The deadline the server last answered (nil once disarmed).
        public var firesAt: Date?
        /// The last `order_cancelled` alert already reported.
        public var reportCursor: Int64
    }

    public func switchWatch() throws -> SwitchWatch? {
        try writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM cancel_after WHERE id = 1").map { r in
                let fires: Double? = r["fires_at"]
                return SwitchWatch(
                    accountID: r["account_id"], armedSince: Date(timeIntervalSince1970: r["armed_since"]), timeout: r["timeout_s"],
                    firesAt: fires.map { Date(timeIntervalSince1970: $0) }, reportCursor: r["report_cursor"])
            }
        }
    }

    /// The server answered an arm or renewal for `accountID` (`firesAt` set) or a disarm (nil).
    public func noteSwitch(accountID: String, timeout: Int?, firesAt: Date?, at: Date) throws {
        try writer.write { db in
            let existing = try String.fetchOne(db, sql: "SELECT account_id FROM cancel_after WHERE id = 1")
            if existing != nil, existing != accountID {
                // Another account signed in here: what was watched for the first is not this one's to report.
                try db.execute(sql: "DELETE FROM cancel_after WHERE id = 1")
            }
            if firesAt == nil, existing != accountID { return }
            try db.execute(
                sql: """
                    INSERT INTO cancel_after (id, account_id, armed_since, timeout_s, fires_at) VALUES (1, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET timeout_s = COALESCE(excluded.timeout_s, timeout_s), fires_at = excluded.fires_at
                    """, arguments: [accountID, at.timeIntervalSince1970, timeout, firesAt?.timeIntervalSince1970])
            if firesAt == nil {
                try db.execute(sql: "UPDATE cancel_after SET timeout_s = NULL WHERE id = 1")
            }
        }
    }

    /// The switch's alerts up to `cursor` were reported; with `done`, nothing more can come of it.
    public func noteSwitchReported(cursor: Int64, done: Bool) throws {
        try writer.write { db in
            if done {
                try db.execute(sql: "DELETE FROM cancel_after WHERE id = 1")
            } else {
                try db.execute(sql: "UPDATE cancel_after SET report_cursor = MAX(report_cursor, ?) WHERE id = 1", arguments: [cursor])
            }
        }
    }
}
