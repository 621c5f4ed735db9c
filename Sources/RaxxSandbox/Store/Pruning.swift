import Foundation
import GRDB

/// Housekeeping on insert: what can never be used again is deleted whenever a new row of its kind
/// comes in, inside the same transaction, so each table stays about as large as what is live.
/// Nothing pruned changes an answer: an expired or spent challenge or grant is refused just as an
/// unknown one is, and an ended session is kept for a day first.
enum Pruning {
    /// How long a session is kept after it ends (expires or is revoked): meanwhile its tokens still
    /// answer `session_expired` rather than `unauthorized`, and its spent renewal tokens are still
    /// recognised.
    static let endedSessionRetention: TimeInterval = 24 * 3600

    /// Deletes used and expired challenges.
    static func challenges(_ db: Database, now: Date) throws {
        try db.execute(sql: "DELETE FROM challenges WHERE used_at IS NOT NULL OR expires_at <= ?", arguments: [now.timeIntervalSince1970])
    }

    /// Deletes sessions that ended more than `endedSessionRetention` ago (their spent renewal
    /// tokens go with them).
    static func sessions(_ db: Database, now: Date) throws {
        let cutoff = now.timeIntervalSince1970 - endedSessionRetention
        try db.execute(
            sql: "DELETE FROM sessions WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < ?)",
            arguments: [cutoff, cutoff])
        try db.execute(sql: "DELETE FROM closed_account_tokens WHERE expires_at < ?", arguments: [now.timeIntervalSince1970])
    }

    /// Deletes spent and expired step-up grants.
    static func grants(_ db: Database, now: Date) throws {
        try db.execute(sql: "DELETE FROM step_up_grants WHERE used_at IS NOT NULL OR expires_at <= ?", arguments: [now.timeIntervalSince1970])
    }

    /// Deletes expired registration codes, and the mails and guesses counted that are older than
    /// the longest window they are counted over.
    static func emailCodes(_ db: Database, now: Date) throws {
        try db.execute(sql: "DELETE FROM email_codes WHERE expires_at <= ?", arguments: [now.timeIntervalSince1970])
        let oldest = now.timeIntervalSince1970 - max(RegistrationCodeLimits.mailWindow, RegistrationCodeLimits.guessWindow)
        try db.execute(sql: "DELETE FROM email_code_attempts WHERE at <= ?", arguments: [oldest])
    }
}
