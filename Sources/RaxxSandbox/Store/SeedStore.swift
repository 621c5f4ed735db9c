import Foundation
import GRDB
import GRDBSQLite
import RaxxAPI
import RaxxDomain

/// Bulk writes for `Seeder` (seed and churn). A seed is one transaction over statements prepared
/// once and bound column by column (no argument arrays, no Swift strings per row), so seeding runs
/// near the speed of SQLite's own bulk import.
struct SeedStore: Sendable {
    let writer: any DatabaseWriter

    /// Finds or creates `email`'s account, in a transaction of its own.
    func account(email: String, now: Date, actor: String) throws -> AccountRecord {
        try writer.write { db in try Accounts.findOrCreate(db, email: email, at: now, actor: actor) }
    }

    /// Runs `body` over the account's seeding statements, in one transaction.
    func seed<T>(account: String, _ body: (SeedWriter) throws -> T) throws -> T {
        try writer.write { db in try body(try SeedWriter(db: db, account: account)) }
    }

    /// One churn, in one transaction: `plan` picks changes among the account's position IDs
    /// (sorted); they are applied, each with its change-log entry, then audited.
    func churn(email: String, now: Date, plan: ([String]) throws -> [ChurnStep]) throws -> (account: String, updated: Int, deleted: Int) {
        try writer.write { db in
            guard
                let account = try String.fetchOne(
                    db,
                    sql: """
                        SELECT accounts.id FROM accounts JOIN users ON users.id = accounts.user_id WHERE users.email = ?
                        """, arguments: [email])
            else { throw Seeder.SeedError.noSuchAccount(email) }
            let ids = try String.fetchAll(db, sql: "SELECT id FROM positions WHERE account_id = ? ORDER BY id", arguments: [account])
            var updated = 0, deleted = 0
            for step in try plan(ids) {
                switch step {
                case .delete(let id):
                    try db.execute(sql: "DELETE FROM positions WHERE id = ?", arguments: [id])
                    try ChangeLog.record(db, account: account, .position, id, deleted: true, at: now)
                    deleted += 1
                case .move(let id, let qtyDelta, let priceDelta):
                    try db.execute(
                        sql: """
                            UPDATE positions SET qty = qty + ?, avg_price_ticks = avg_price_ticks + ?, updated_at = ? WHERE id = ?
                            """, arguments: [qtyDelta, priceDelta, now.timeIntervalSince1970, id])
                    try ChangeLog.record(db, account: account, .position, id, at: now)
                    updated += 1
                }
            }
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: "sandbox.churn", action: .sandboxChurned, subject: account,
                    details: ["updated": "\(updated)", "deleted": "\(deleted)"]))
            return (account, updated, deleted)
        }
    }
}

/// One change a churn makes to a position.
enum ChurnStep: Sendable {
    case delete(String)
    /// Adds to the quantity and the average price (ticks).
    case move(String, qty: Int64, averagePrice: Int64)
}

/// The seeding statements of one account inside one transaction. The account is bound once; each
/// row binds only what changes.
struct SeedWriter {
    private let db: Database
    private let account: String
    private let order: Statement
    private let fill: Statement
    private let orderChange: Statement
    private let fillChange: Statement
    private let insertPosition: Statement
    private let updatePosition: Statement

    init(db: Database, account: String) throws {
        self.db = db
        self.account = account
        order = try db.makeStatement(
            sql: """
                INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status,
                filled_qty, avg_fill_price_ticks, mode, created_at, updated_at)
                VALUES (?1, ?2, 'seed-' || ?1, ?3, ?4, ?5, ?6, ?7, \(TimeInForce.day.sql), \(Components.Schemas.OrderStatus.filled.sql),
                ?5, ?8, \(Components.Schemas.TradingMode.paper.sql), ?9, ?10)
                """)
        fill = try db.makeStatement(
            sql: """
                INSERT INTO fills (id, account_id, order_id, symbol, side, qty, price_ticks, filled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                """)
        orderChange = try db.makeStatement(
            sql:
                """
                INSERT INTO change_log (account_id, entity, entity_id, op, at) VALUES (?1, \(Components.Schemas.SyncEntity.order.sql), \
                ?2, \(Components.Schemas.SyncChange.OpPayload.upsert.sql), ?3)
                """
        )
        fillChange = try db.makeStatement(
            sql:
                """
                INSERT INTO change_log (account_id, entity, entity_id, op, at) VALUES (?1, \(Components.Schemas.SyncEntity.fill.sql), \
                ?2, \(Components.Schemas.SyncChange.OpPayload.upsert.sql), ?3)
                """
        )
        insertPosition = try db.makeStatement(
            sql: """
                INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                """)
        updatePosition = try db.makeStatement(sql: "UPDATE positions SET qty = ?, avg_price_ticks = ?, updated_at = ? WHERE id = ?")
        for s in [order, fill] { try Self.bind(s.sqliteStatement, 2, account) }
        for s in [orderChange, fillChange] { try Self.bind(s.sqliteStatement, 1, account) }
    }

    /// The account's cash, and its positions by symbol.
    func holdings() throws -> (cash: Int64, positions: [String: Holding]) {
        let cash = try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts WHERE id = ?", arguments: [account]) ?? 0
        var positions: [String: Holding] = [:]
        for position in try PositionRecord.fetchAll(
            db, sql: "SELECT \(PositionRecord.columns) FROM positions WHERE account_id = ?",
            arguments: [account])
        {
            positions[position.symbol] = position.holding
        }
        return (cash, positions)
    }

    /// The newest change-log sequence number (what seeds before this one left).
    func lastSeq() throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM change_log") ?? 0
    }

    /// Binds `symbol` to the order and fill statements until the next call.
    func setSymbol(_ symbol: String) throws {
        try Self.bind(order.sqliteStatement, 3, symbol)
        try Self.bind(fill.sqliteStatement, 4, symbol)
    }

    /// A filled day order of the current symbol (with its change-log entry).
    func order(id: SeedID, buy: Bool, qty: Int64, limit: Int64?, averagePrice: Int64, openedAt: Double, lastFillAt: Double) throws {
        let s = order.sqliteStatement
        id.bind(s, 1)
        Self.bindSide(s, 4, buy)
        sqlite3_bind_int64(s, 5, qty)
        if let limit {
            sqlite3_bind_text(s, 6, OrderType.limit.rawValue, -1, SQLITE_TRANSIENT)
            sqlite3_bind_int64(s, 7, limit)
        } else {
            sqlite3_bind_text(s, 6, OrderType.market.rawValue, -1, SQLITE_TRANSIENT)
            sqlite3_bind_null(s, 7)
        }
        sqlite3_bind_int64(s, 8, averagePrice)
        sqlite3_bind_double(s, 9, openedAt)
        sqlite3_bind_double(s, 10, lastFillAt)
        try step(s)
        let c = orderChange.sqliteStatement
        id.bind(c, 2)
        sqlite3_bind_double(c, 3, lastFillAt)
        try step(c)
    }

    /// A fill of the current symbol (with its change-log entry).
    func fill(id: SeedID, orderID: SeedID, buy: Bool, qty: Int64, price: Int64, at: Double) throws {
        let s = fill.sqliteStatement
        id.bind(s, 1)
        orderID.bind(s, 3)
        Self.bindSide(s, 5, buy)
        sqlite3_bind_int64(s, 6, qty)
        sqlite3_bind_int64(s, 7, price)
        sqlite3_bind_double(s, 8, at)
        try step(s)
        let c = fillChange.sqliteStatement
        id.bind(c, 2)
        sqlite3_bind_double(c, 3, at)
        try step(c)
    }

    /// Writes the account's position in `symbol` (a new one under `newID`) and records its change.
    func position(existing: String?, newID: String, symbol: String, qty: Int64, averagePrice: Int64, now: Date) throws {
        let id = existing ?? newID
        if existing != nil {
            try updatePosition.execute(arguments: [qty, averagePrice, now.timeIntervalSince1970, id])
        } else {
            try insertPosition.execute(arguments: [id, account, symbol, qty, averagePrice, now.timeIntervalSince1970])
        }
        try ChangeLog.record(db, account: account, .position, id, at: now)
    }

    func setCash(_ ticks: Int64) throws {
        try db.execute(sql: "UPDATE accounts SET cash_ticks = ? WHERE id = ?", arguments: [ticks, account])
    }

    func audit(_ entry: AuditEntry) throws {
        try SandboxDatabase.audit(db, entry)
    }

    private func step(_ s: OpaquePointer) throws {
        let code = sqlite3_step(s)
        sqlite3_reset(s)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    private static func bindSide(_ s: OpaquePointer, _ i: Int32, _ buy: Bool) {
        sqlite3_bind_text(s, i, (buy ? OrderSide.buy : OrderSide.sell).rawValue, -1, SQLITE_TRANSIENT)
    }

    private static func bind(_ s: OpaquePointer, _ i: Int32, _ text: String) throws {
        let code = text.withCString { sqlite3_bind_text(s, i, $0, -1, SQLITE_TRANSIENT) }
        guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code)) }
    }
}

/// SQLite copies what is bound under this destructor.
var SQLITE_TRANSIENT: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// A seeded row's ID (`fil_…`, `ord_…`): `Identifier`'s shape, for the row's own time, from a
/// seeded generator into a fixed buffer, without a String or a system call per row.
struct SeedID {
    private var bytes: (UInt64, UInt64, UInt64) = (0, 0, 0)
    private(set) var count = 0

    /// `prefix` has three letters; `at` is the row's time (seconds since 1970).
    init(prefix: StaticString, at seconds: Double, random: UInt64) {
        precondition(prefix.utf8CodeUnitCount == 3)
        count = withUnsafeMutableBytes(of: &bytes) { out -> Int in
            var n = 0
            for i in 0..<prefix.utf8CodeUnitCount { out[n] = prefix.utf8Start[i]; n += 1 }
            out[n] = UInt8(ascii: "_"); n += 1
            Identifier.writeBody(milliseconds: UInt64(max(0, seconds * 1000)), random: random, to: out, at: &n)
            return n
        }
    }

    func bind(_ s: OpaquePointer, _ i: Int32) {
        var copy = bytes
        withUnsafeBytes(of: &copy) { b in
            _ = sqlite3_bind_text(s, i, b.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(count), SQLITE_TRANSIENT)
        }
    }

    var string: String {
        var copy = bytes
        return withUnsafeBytes(of: &copy) { String(decoding: $0.prefix(count), as: UTF8.self) }
    }
}
