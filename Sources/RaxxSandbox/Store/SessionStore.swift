import Crypto
import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxWire

/// What an access token stands for.
enum SessionLookup: Sendable, Equatable {
    case unknown
    case revoked
    /// A token of an erased account's session.
    case accountClosed
    /// The access token or the whole session is past its end.
    case expired
    case live(Caller)
}

/// A session about to start: its ID, its token hashes and its ends.
struct NewSession: Sendable {
    var id: String
    var accessTokenHash: String
    var accessExpiresAt: Date
    var renewalTokenHash: String
    var expiresAt: Date
    /// How the session was started (`registration`, `passkey`, …), for the audit trail.
    var method: String
}

/// The new token hashes of a renewed session.
struct RenewedTokens: Sendable {
    var accessTokenHash: String
    var accessExpiresAt: Date
    var renewalTokenHash: String
}

enum RenewalOutcome: Sendable, Equatable {
    /// Unknown token, revoked or ended session; the refusal is in the audit trail.
    case refused
    /// The token was spent already (rotated by an earlier renewal): someone holds a copy. The
    /// session is revoked, and the refusal, the revocation and a security alert are recorded.
    case reused
    /// A renewal token of an erased account's session.
    case accountClosed
    case renewed(sessionExpiresAt: Date, account: Components.Schemas.Account)
}

struct SessionTimes: Sendable, Equatable {
    var createdAt: Date
    var accessExpiresAt: Date
    var expiresAt: Date

    /// The times of a `sessions` row that selects created_at, access_expires_at and expires_at.
    init(row: Row) {
        createdAt = Date(timeIntervalSince1970: row["created_at"])
        accessExpiresAt = Date(timeIntervalSince1970: row["access_expires_at"])
        expiresAt = Date(timeIntervalSince1970: row["expires_at"])
    }
}

/// Sessions on SQLite.
struct SessionStore: Sendable {
    let writer: StoreWriter
    let notifier: EventNotifier
    let mailer: Mailer

    /// The caller behind an access token's hash, as of `now`.
    func lookup(accessTokenHash: String, now: Date) async throws -> SessionLookup {
        let now = now.timeIntervalSince1970
        // The answer is made inside the read: a `Row` is not Sendable, and a closure returning one
        // resolves to GRDB's blocking `read`, which waits for a reader connection on a thread of
        // the cooperative pool (every request passes here: under load, both of this machine's
        // threads waited for readers held by tasks that needed a thread to finish).
        return try await writer.read { db -> SessionLookup in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT sessions.id, sessions.user_id, sessions.access_expires_at, sessions.expires_at, sessions.revoked_at,
                                   accounts.id AS account_id, users.staff
                            FROM sessions JOIN accounts ON accounts.user_id = sessions.user_id JOIN users ON users.id = sessions.user_id
                            WHERE sessions.access_token_hash = ?
                            """), arguments: [accessTokenHash])
            else {
                return try Self.isClosedAccountToken(db, accessTokenHash, now: now) ? .accountClosed : .unknown
            }
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil else { return .revoked }
            guard (row["access_expires_at"] as Double) > now, (row["expires_at"] as Double) > now else { return .expired }
            return .live(Caller(userID: row["user_id"], accountID: row["account_id"], sessionID: row["id"], staff: (row["staff"] as Int) != 0))
        }
    }

    /// Whether `tokenHash` is a token of an erased account's session (until it would have ended).
    static func isClosedAccountToken(_ db: Database, _ tokenHash: String, now: Double) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM closed_account_tokens WHERE token_hash = ? AND expires_at >= ?"),
            arguments: [tokenHash, now]) ?? false
    }

    /// Starts `session` inside `db`'s transaction and answers the account it signs in to.
    static func start(_ db: Database, _ session: NewSession, userID: String, now: Date) throws -> Components.Schemas.Account {
        try Pruning.sessions(db, now: now)
        try db.cachedStatement(
            sql: """
                INSERT INTO sessions (id, user_id, access_token_hash, access_expires_at, renewal_token_hash, created_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            session.id, userID, session.accessTokenHash, session.accessExpiresAt.timeIntervalSince1970,
            session.renewalTokenHash, now.timeIntervalSince1970, session.expiresAt.timeIntervalSince1970,
        ])
        try SandboxDatabase.audit(
            db,
            AuditEntry(
                at: now, actor: userID, action: .sessionStarted, subject: userID,
                details: ["session_id": session.id, "method": session.method]))
        guard let account = try Accounts.apiAccount(db, userID: userID) else { throw ProblemError.unauthorized }
        return account
    }

    /// Starts `session` for `userID` (audited) and answers the account it signs in to.
    func start(_ session: NewSession, userID: String, now: Date) async throws -> Components.Schemas.Account {
        try await writer.write { db in try Self.start(db, session, userID: userID, now: now) }
    }

    /// Rotates the tokens of the live session behind a renewal token's hash; `tokens` makes the
    /// new ones from the session's end, and the old renewal token is remembered as spent. A spent
    /// token presented again revokes its session (`.reused`). Refusals are audited.
    func renew(renewalTokenHash: String, now: Date, tokens: @escaping @Sendable (Date) -> RenewedTokens) async throws -> RenewalOutcome {
        let notifier = self.notifier, mailer = self.mailer
        return try await writer.write { db -> RenewalOutcome in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT id, user_id, expires_at, revoked_at FROM sessions WHERE renewal_token_hash = ?"),
                    arguments: [renewalTokenHash])
            else {
                if let reused = try Self.reuse(db, renewalTokenHash: renewalTokenHash, now: now, notifier: notifier, mailer: mailer) { return reused }
                let closed = try Self.isClosedAccountToken(db, renewalTokenHash, now: now.timeIntervalSince1970)
                try SandboxDatabase.audit(
                    db,
                    AuditEntry(
                        at: now, actor: "anonymous", action: .sessionRenewalRefused, subject: "unknown",
                        details: ["reason": closed ? "account_closed" : "unknown_token"]))
                return closed ? .accountClosed : .refused
            }
            let sessionID: String = row["id"], userID: String = row["user_id"]
            let revoked: Double? = row["revoked_at"]
            guard revoked == nil, (row["expires_at"] as Double) > now.timeIntervalSince1970 else {
                try SandboxDatabase.audit(
                    db,
                    AuditEntry(
                        at: now, actor: userID, action: .sessionRenewalRefused, subject: userID,
                        details: ["session_id": sessionID, "reason": revoked == nil ? "session_over" : "revoked"]))
                return .refused
            }
            let sessionEnd = Date(timeIntervalSince1970: row["expires_at"])
            let new = tokens(sessionEnd)
            try db.cachedStatement(
                sql: """
                    UPDATE sessions SET access_token_hash = ?, access_expires_at = ?, renewal_token_hash = ? WHERE id = ?
                    """
            ).execute(arguments: [new.accessTokenHash, new.accessExpiresAt.timeIntervalSince1970, new.renewalTokenHash, sessionID])
            try db.execute(
                sql: "INSERT OR IGNORE INTO spent_renewal_tokens (token_hash, session_id, spent_at) VALUES (?, ?, ?)",
                arguments: [renewalTokenHash, sessionID, now.timeIntervalSince1970])
            guard let account = try Accounts.apiAccount(db, userID: userID) else { throw ProblemError.unauthorized }
            return .renewed(sessionExpiresAt: sessionEnd, account: account)
        }
    }

    /// A spent renewal token presented again, inside `db`'s transaction: nil when the token was
    /// never spent. Otherwise the token's session is revoked (if still live) with a security alert
    /// for its user, and the refusal is audited; all of it commits with the refusal.
    static func reuse(_ db: Database, renewalTokenHash: String, now: Date, notifier: EventNotifier, mailer: Mailer) throws -> RenewalOutcome? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT sessions.id, sessions.user_id, sessions.revoked_at FROM spent_renewal_tokens
                        JOIN sessions ON sessions.id = spent_renewal_tokens.session_id WHERE spent_renewal_tokens.token_hash = ?
                        """), arguments: [renewalTokenHash])
        else { return nil }
        let sessionID: String = row["id"], userID: String = row["user_id"]
        let revoked: Double? = row["revoked_at"]
        if revoked == nil {
            try db.cachedStatement(sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?").execute(arguments: [now.timeIntervalSince1970, sessionID])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: "system", action: .sessionRevoked, subject: userID,
                    details: ["session_id": sessionID, "reason": "renewal_reused"]))
            try SecurityAlerts.raise(db, .renewalTokenReused, userID: userID, at: now, notifier: notifier, mailer: mailer)
        }
        try SandboxDatabase.audit(
            db,
            AuditEntry(
                at: now, actor: "anonymous", action: .sessionRenewalRefused, subject: userID,
                details: ["session_id": sessionID, "reason": "renewal_reused"]))
        return .reused
    }

    /// Revokes a session (audited), and runs `then` on the trading tables in the same transaction
    /// (a sign-out fires the session's dead man's switch there).
    func revoke(sessionID: String, userID: String, now: Date, then: (@Sendable (TradingLedger) throws -> Void)? = nil) async throws {
        let notifier = self.notifier
        try await writer.write { db in
            try db.cachedStatement(sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?").execute(arguments: [now.timeIntervalSince1970, sessionID])
            try SandboxDatabase.audit(
                db,
                AuditEntry(
                    at: now, actor: userID, action: .sessionRevoked, subject: userID,
                    details: ["session_id": sessionID]))
            try then?(TradingLedger(db: db, notifier: notifier))
        }
    }

    /// The user's live sessions (neither revoked nor past their end), oldest first, each by its id.
    func liveSessions(userID: String, now: Date) async throws -> [(id: String, times: SessionTimes)] {
        try await writer.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id, created_at, access_expires_at, expires_at FROM sessions
                        WHERE user_id = ? AND revoked_at IS NULL AND expires_at > ? ORDER BY created_at, id
                        """),
                arguments: [userID, now.timeIntervalSince1970]
            ).map { row in
                (
                    id: row["id"],
                    times: SessionTimes(row: row)
                )
            }
        }
    }

    /// A session's times and its user's account, or nil when either is gone.
    func session(id: String, userID: String) async throws -> (SessionTimes, Components.Schemas.Account)? {
        try await writer.read { db -> (SessionTimes, Components.Schemas.Account)? in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT created_at, access_expires_at, expires_at FROM sessions WHERE id = ?"),
                    arguments: [id]),
                let account = try Accounts.apiAccount(db, userID: userID)
            else { return nil }
            return (
                SessionTimes(row: row), account
            )
        }
    }
}
