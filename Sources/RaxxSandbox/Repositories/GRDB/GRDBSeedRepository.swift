import Foundation
import GRDB

/// Bulk writes for `Seeder` (seed and churn): prepared statements reused across a whole slice,
/// one transaction per call, so seeding stays as fast as a hand-written loop.
struct GRDBSeedRepository: Sendable {
    let writer: any DatabaseWriter

    /// Finds or creates `email`'s account, in a transaction of its own.
    func account(email: String, now: Date, actor: String) throws -> AccountRecord {
        try writer.write { db in try Accounts.findOrCreate(db, email: email, at: now, actor: actor) }
    }

    /// Runs `body` over one slice of inserts, in one transaction.
    func writeSlice(_ body: (SeedBatch) throws -> Void) throws {
        try writer.write { db in try body(try SeedBatch(db: db)) }
    }

    /// One churn, in one transaction: `plan` picks changes among the account's position IDs
    /// (sorted); they are applied, each with its change-log entry, then audited.
    func churn(email: String, now: Date, plan: ([String]) throws -> [ChurnStep]) throws -> (account: String, updated: Int, deleted: Int) {
        try writer.write { db in
            guard let account = try String.fetchOne(db, sql: """
                SELECT accounts.id FROM accounts JOIN users ON users.id = accounts.user_id WHERE users.email = ?
                """, arguments: [email]) else { throw Seeder.SeedError.noSuchAccount(email) }
            let ids = try String.fetchAll(db, sql: "SELECT id FROM positions WHERE account_id = ? ORDER BY id", arguments: [account])
            var updated = 0, deleted = 0
            for step in try plan(ids) {
                switch step {
                case .delete(let id):
                    try db.execute(sql: "DELETE FROM positions WHERE id = ?", arguments: [id])
                    try ChangeLog.record(db, account: account, .position, id, deleted: true, at: now)
                    deleted += 1
                case .move(let id, let qtyDelta, let priceDelta):
                    try db.execute(sql: """
                        UPDATE positions SET qty = qty + ?, avg_price_ticks = avg_price_ticks + ?, updated_at = ? WHERE id = ?
                        """, arguments: [qtyDelta, priceDelta, now.timeIntervalSince1970, id])
                    try ChangeLog.record(db, account: account, .position, id, at: now)
                    updated += 1
                }
            }
            try SandboxDatabase.audit(db, AuditEntry(at: now, actor: "sandbox.churn", action: "sandbox.churned", subject: account,
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

/// The seeding statements of one transaction.
struct SeedBatch {
    private let db: Database
    private let position: Statement
    private let order: Statement
    private let fill: Statement
    private let change: Statement

    init(db: Database) throws {
        self.db = db
        position = try db.makeStatement(sql: """
            INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (account_id, symbol) DO UPDATE SET qty = excluded.qty, avg_price_ticks = excluded.avg_price_ticks,
            updated_at = excluded.updated_at
            """)
        order = try db.makeStatement(sql: """
            INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status,
            filled_qty, avg_fill_price_ticks, mode, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'day', 'filled', ?, ?, 'paper', ?, ?)
            """)
        fill = try db.makeStatement(sql: """
            INSERT INTO fills (id, account_id, order_id, symbol, side, qty, price_ticks, filled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        change = try db.makeStatement(sql: """
            INSERT INTO change_log (account_id, entity, entity_id, op, at) VALUES (?, ?, ?, 'upsert', ?)
            """)
    }

    /// A filled day order (with its change-log entry).
    func order(id: String, account: String, symbol: String, side: String, qty: Int64, type: String, averagePrice: Int64,
               openedAt: Double, lastFillAt: Double) throws {
        try order.execute(arguments: [id, account, "seed-\(id)", symbol, side, qty, type,
                                      type == "limit" ? averagePrice : nil, qty, averagePrice, openedAt, lastFillAt])
        try change.execute(arguments: [account, "order", id, lastFillAt])
    }

    /// A fill (with its change-log entry).
    func fill(id: String, account: String, orderID: String, symbol: String, side: String, qty: Int64, price: Int64, at: Double) throws {
        try fill.execute(arguments: [id, account, orderID, symbol, side, qty, price, at])
        try change.execute(arguments: [account, "fill", id, at])
    }

    /// Inserts or replaces the account's position in `symbol`, and records its change.
    func position(id: String, account: String, symbol: String, qty: Int64, averagePrice: Int64, now: Date) throws {
        try position.execute(arguments: [id, account, symbol, qty, averagePrice, now.timeIntervalSince1970])
        let actualID = try String.fetchOne(db, sql: "SELECT id FROM positions WHERE account_id = ? AND symbol = ?",
                                           arguments: [account, symbol]) ?? id
        try ChangeLog.record(db, account: account, .position, actualID, at: now)
    }

    func audit(_ entry: AuditEntry) throws {
        try SandboxDatabase.audit(db, entry)
    }
}
