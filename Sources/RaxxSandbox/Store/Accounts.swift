import Foundation
import GRDB
import RaxxAPI
import RaxxDomain

/// Users and their paper accounts.
public struct AccountRecord: Sendable, Equatable {
    public var userID: String
    public var accountID: String
    public var email: String
    public var created: Bool
}

enum Accounts {
    /// Paper accounts start with 100,000 in cash.
    static let startingCashTicks: Int64 = 100_000 * Money.ticksPerUnit

    /// Finds the user with `email`, or creates the user and a paper account, inside `db`'s transaction.
    static func findOrCreate(
        _ db: Database, email: String, displayName: String? = nil, handle: [UInt8]? = nil,
        at now: Date, actor: String
    ) throws -> AccountRecord {
        if let row = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT users.id AS user_id, accounts.id AS account_id, users.email FROM users
                    JOIN accounts ON accounts.user_id = users.id WHERE users.email = ?
                    """), arguments: [email])
        {
            return AccountRecord(userID: row["user_id"], accountID: row["account_id"], email: row["email"], created: false)
        }
        let userID = Identifier.make("usr")
        let accountID = Identifier.make("acc")
        let handle = handle ?? newUserHandle()
        try db.execute(
            sql: "INSERT INTO users (id, email, display_name, handle, created_at) VALUES (?, ?, ?, ?, ?)",
            arguments: [userID, email, displayName, Data(handle), now.timeIntervalSince1970])
        try db.execute(
            sql: "INSERT INTO accounts (id, user_id, mode, cash_ticks, created_at) VALUES (?, ?, \(Components.Schemas.TradingMode.paper.sql), ?, ?)",
            arguments: [accountID, userID, startingCashTicks, now.timeIntervalSince1970])
        try SandboxDatabase.audit(
            db,
            AuditEntry(
                at: now, actor: actor, action: .accountCreated, subject: userID,
                details: ["account_id": accountID, "mode": Components.Schemas.TradingMode.paper.rawValue, "cash": Money.string(ticks: startingCashTicks)]))
        return AccountRecord(userID: userID, accountID: accountID, email: email, created: true)
    }

    /// A user's account as the API shows it, or nil when there is none.
    /// The address of the user `userID`, or nil when the user is gone.
    static func email(_ db: Database, userID: String) throws -> String? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT email FROM users WHERE id = ?"), arguments: [userID])
    }

    static func apiAccount(_ db: Database, userID: String) throws -> Components.Schemas.Account? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT accounts.id, users.email, accounts.mode, users.staff FROM users JOIN accounts ON accounts.user_id = users.id
                        WHERE users.id = ?
                        """), arguments: [userID])
        else { return nil }
        return .init(
            id: row["id"], email: row["email"], mode: try .stored(row["mode"], table: "accounts", column: "mode"),
            staff: (row["staff"] as Int) != 0)
    }
}
