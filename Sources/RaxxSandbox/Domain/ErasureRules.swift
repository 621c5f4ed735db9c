import Foundation
import RaxxAPI

/// What erasure does to each table holding personal data (GDPR Art. 17), in one place: each rule
/// carries its legal ground and retention, the rows it counts for the plan, what it exports for an
/// access request (Art. 15), and the statements that erase or pseudonymise those rows. The plan,
/// the export, the erasure and the receipt iterate over `allCases`, in this order; raxx.7 prints
/// the same table (a test keeps the two the same), and a test reading the sandbox's schema fails on
/// a table holding personal data that no rule covers (`ErasureRule.coveredTables`,
/// `ErasureRule.withoutRule`).
///
/// `identifiers` rules go first, in one transaction (the subject loses access at once);
/// `history` rules go next in chunks, each its own transaction; `final` rules close the erasure.
///
/// The statements take named arguments, bound from the subject by the store: `:user`, `:account`,
/// `:email`, `:email_hash` (the registration codes' key), `:pseudonym`, `:identifiers` (a JSON
/// array of every identifier of the subject), `:subject_hash` (the email's keyed hash) and, for a
/// chunk, `:limit`. A subject without a user or account binds "" for them, which no row has.
public enum ErasureRule: String, CaseIterable, Sendable {
    case sessions
    case passkeys
    case deviceTokens = "device_tokens"
    case challenges
    case stepUpGrants = "step_up_grants"
    case users
    case fills
    case orders
    case ordersLive = "orders_live"
    case positions
    case changeLog = "change_log"
    case events
    case auditEvents = "audit_events"
    case accounts
    case dsrRequests = "dsr_requests"

    public enum Phase: String, Sendable { case identifiers, history, final }

    /// One chunk of a history rule: a statement deleting at most `:limit` rows, or the audit
    /// trail's pseudonymisation (values that are an identifier whole replaced, as
    /// `AuditPseudonymisation` says, done by the store).
    public enum HistoryStep: Sendable, Equatable {
        case delete(String)
        case pseudonymiseAuditTrail
    }

    /// What an access request exports of this rule's rows: under `name`, the rows `sql` selects.
    public struct Export: Sendable, Equatable {
        public var name: String
        public var sql: String
    }

    /// A stable name for the rule.
    public var id: String { rawValue }

    static let noObligation = "Art. 17(1): no longer needed; no legal obligation to keep"
    static let paperTrading = "Art. 17(1): paper trading carries no record-keeping obligation"

    /// The table it applies to (the plan's and receipt's item).
    public var table: String {
        switch self {
        case .ordersLive: "orders"
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .users, .fills, .orders, .positions, .changeLog, .events,
            .auditEvents, .accounts, .dsrRequests:
            rawValue
        }
    }

    /// Every table whose rows this rule erases: its own, and what goes with it.
    public var coveredTables: [String] {
        switch self {
        case .challenges: [table, "email_codes", "email_code_attempts"]
        case .sessions, .passkeys, .deviceTokens, .stepUpGrants, .users, .fills, .orders, .ordersLive, .positions, .changeLog, .events,
            .auditEvents, .accounts, .dsrRequests:
            [table]
        }
    }

    /// Which rows, and what the action does to them.
    public var what: String {
        switch self {
        case .sessions: "sessions and their spent renewal tokens (revoked at once)"
        case .passkeys: "passkeys: credential IDs, public keys, counters"
        case .deviceTokens: "APNs device tokens"
        case .challenges: "pending sign-in and step-up challenges, and emailed registration codes with their mails and guesses counted"
        case .stepUpGrants: "step-up grants"
        case .users: "the sign-in identity: email (replaced at once), display name, user handle"
        case .fills: "paper-trading fills"
        case .orders: "paper-trading orders"
        case .ordersLive: "live-mode orders and their fills, when they exist (pseudonymised)"
        case .positions: "paper-trading positions"
        case .changeLog: "the account's sync change log"
        case .events: "alerts: fills, rejections, session and security alerts"
        case .auditEvents: "audit events naming the subject (as actor, subject or a detail's whole value): those identifiers replaced by a stable pseudonym"
        case .accounts: "the paper account (deleted once its history is)"
        case .dsrRequests: "the data-subject requests, and those the subject opened or verified as staff: the email replaced by a keyed hash"
        }
    }

    public var action: Components.Schemas.ErasureAction {
        switch self {
        case .ordersLive, .auditEvents, .dsrRequests: .pseudonymise
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .users, .fills, .orders, .positions, .changeLog, .events,
            .accounts:
            .delete
        }
    }

    /// The legal ground.
    public var ground: String {
        switch self {
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .users, .changeLog, .events: Self.noObligation
        case .fills, .orders, .positions, .accounts: Self.paperTrading
        case .ordersLive: "Art. 17(3)(b): MiFID II Art. 16(6), MiFIR Art. 25"
        case .auditEvents: "Art. 5(2) accountability; Art. 17(3)(b)"
        case .dsrRequests: "Art. 5(2) and 12: proof the requests were handled"
        }
    }

    /// How long retained rows are kept ("none" when deleted).
    public var retention: String {
        switch self {
        case .ordersLive: "5 years"
        case .auditEvents, .dsrRequests: "6 years"
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .users, .fills, .orders, .positions, .changeLog, .events,
            .accounts:
            "none"
        }
    }

    public var phase: Phase {
        switch self {
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .users: .identifiers
        case .fills, .orders, .ordersLive, .positions, .changeLog, .events, .auditEvents: .history
        case .accounts, .dsrRequests: .final
        }
    }

    /// Rows of this rule refuse the erasure outright: the sandbox cannot keep live-mode records
    /// under a pseudonym for their retention.
    public var refusesErasureWhenPresent: Bool { self == .ordersLive }

    /// Whether the rule counts rows of a subject without an account (only the requests, kept by
    /// email).
    public var countsWithoutSubject: Bool { self == .dsrRequests }

    /// How many rows the rule touches (one value).
    public var countSQL: String {
        switch self {
        case .sessions: "SELECT COUNT(*) FROM sessions WHERE user_id = :user"
        case .passkeys: "SELECT COUNT(*) FROM passkeys WHERE user_id = :user"
        case .deviceTokens: "SELECT COUNT(*) FROM device_tokens WHERE user_id = :user"
        case .challenges:
            """
            SELECT (SELECT COUNT(*) FROM challenges WHERE user_id = :user OR email = :email)
                 + (SELECT COUNT(*) FROM email_codes WHERE email_hash = :email_hash)
                 + (SELECT COUNT(*) FROM email_code_attempts WHERE email_hash = :email_hash)
            """
        case .stepUpGrants: "SELECT COUNT(*) FROM step_up_grants WHERE user_id = :user"
        case .users: "SELECT COUNT(*) FROM users WHERE id = :user"
        case .fills:
            """
            SELECT (SELECT COUNT(*) FROM fills WHERE account_id = :account)
                 - (SELECT COUNT(*) FROM fills JOIN orders ON orders.id = fills.order_id WHERE orders.account_id = :account AND orders.mode = \(Self.live))
            """
        case .orders: "SELECT COUNT(*) FROM orders WHERE account_id = :account AND mode != \(Self.live)"
        case .ordersLive:
            """
            SELECT (SELECT COUNT(*) FROM orders WHERE account_id = :account AND mode = \(Self.live))
                 + (SELECT COUNT(*) FROM fills JOIN orders ON orders.id = fills.order_id WHERE orders.account_id = :account AND orders.mode = \(Self.live))
            """
        case .positions: "SELECT COUNT(*) FROM positions WHERE account_id = :account"
        case .changeLog: "SELECT COUNT(*) FROM change_log WHERE account_id = :account"
        case .events: "SELECT COUNT(*) FROM events WHERE user_id = :user"
        case .auditEvents: "SELECT COUNT(*) FROM audit_events WHERE \(Self.auditNamingSubject)"
        case .accounts: "SELECT COUNT(*) FROM accounts WHERE id = :account"
        case .dsrRequests:
            "SELECT COUNT(*) FROM dsr_requests WHERE subject = :email OR opened_by = :email COLLATE NOCASE OR verified_by = :email COLLATE NOCASE"
        }
    }

    /// The audit events naming the subject (a condition on `audit_events`): its actor, its subject
    /// or a value of its details is one of `:identifiers` whole, in any ASCII case. The events
    /// `AuditPseudonymisation` changes, as the plan counts them and the access export holds them.
    static let auditNamingSubject = """
        (actor COLLATE NOCASE IN (SELECT value FROM json_each(:identifiers))
         OR subject COLLATE NOCASE IN (SELECT value FROM json_each(:identifiers))
         OR EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(audit_events.details) THEN audit_events.details ELSE '{}' END) AS d
                    WHERE d.value COLLATE NOCASE IN (SELECT value FROM json_each(:identifiers))))
        """

    /// What an access request exports of the rule's rows (nil: nothing of its own; its rows are
    /// exported by another rule, or are sign-in housekeeping that lives minutes).
    public var export: Export? {
        switch self {
        case .users:
            Export(
                name: "account",
                sql: """
                    SELECT users.id AS user_id, users.email, users.display_name, users.staff, users.created_at,
                           accounts.id AS account_id, accounts.mode, accounts.cash_ticks, accounts.created_at AS account_created_at
                    FROM users JOIN accounts ON accounts.user_id = users.id WHERE users.id = :user
                    """)
        case .passkeys:
            Export(
                name: "passkeys",
                sql: """
                    SELECT id AS credential_id, algorithm, sign_count, transports, created_at, last_used_at FROM passkeys
                    WHERE user_id = :user ORDER BY created_at
                    """)
        case .sessions:
            Export(
                name: "sessions",
                sql: """
                    SELECT id, created_at, access_expires_at, expires_at, revoked_at FROM sessions WHERE user_id = :user ORDER BY created_at
                    """)
        case .deviceTokens:
            Export(
                name: "devices",
                sql: """
                    SELECT id, environment, substr(token, -8) AS token_suffix, label, alerts, created_at, revoked_at FROM device_tokens
                    WHERE user_id = :user ORDER BY created_at
                    """)
        case .orders:
            Export(
                name: "orders",
                sql: """
                    SELECT id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty, avg_fill_price_ticks,
                           reject_code, mode, not_after, created_at, updated_at FROM orders WHERE account_id = :account ORDER BY created_at, id
                    """)
        case .fills:
            Export(
                name: "fills",
                sql: """
                    SELECT id, order_id, symbol, side, qty, price_ticks, filled_at FROM fills WHERE account_id = :account ORDER BY filled_at, id
                    """)
        case .positions:
            Export(
                name: "positions",
                sql: """
                    SELECT id, symbol, qty, avg_price_ticks, updated_at FROM positions WHERE account_id = :account ORDER BY symbol
                    """)
        case .events:
            Export(
                name: "alerts",
                sql: """
                    SELECT seq, type, title, body, order_id, symbol, side, qty, price_ticks, reason, expires_at, created_at FROM events
                    WHERE user_id = :user ORDER BY seq
                    """)
        case .auditEvents:
            // Every event the erasure pseudonymises, and those of the subject's own requests.
            Export(
                name: "audit_events",
                sql: """
                    SELECT seq, at, actor, action, subject, details FROM audit_events
                    WHERE \(Self.auditNamingSubject)
                       OR subject IN (SELECT 'dsr:' || id FROM dsr_requests WHERE subject = :email) ORDER BY seq
                    """)
        case .dsrRequests:
            // The subject's own requests whole; those they handled as staff (which the erasure
            // changes too) by their id and the subject's part in them, nothing of the other person.
            Export(
                name: "dsr_requests",
                sql: """
                    SELECT id, 'subject' AS role, kind, ticket, status, received_at, due_on, extended, extension_reason, verification_method,
                           verified_at, closed_reason, created_at, completed_at FROM dsr_requests WHERE subject = :email
                    UNION ALL
                    SELECT id, CASE WHEN opened_by = :email COLLATE NOCASE AND verified_by = :email COLLATE NOCASE THEN 'opened_and_verified'
                                    WHEN opened_by = :email COLLATE NOCASE THEN 'opened' ELSE 'verified' END,
                           kind, NULL, NULL, NULL, NULL, NULL, NULL, NULL, verified_at, NULL, created_at, NULL FROM dsr_requests
                    WHERE subject != :email AND (opened_by = :email COLLATE NOCASE OR verified_by = :email COLLATE NOCASE)
                    ORDER BY created_at, id
                    """)
        case .challenges, .stepUpGrants, .ordersLive, .changeLog, .accounts:
            nil
        }
    }

    /// The statements run in the first transaction, when the subject loses access.
    public var identifierStatements: [String] {
        switch self {
        case .sessions:
            [
                // Its devices are told the account is gone when they next present a token.
                """
                INSERT OR IGNORE INTO closed_account_tokens (token_hash, expires_at)
                SELECT access_token_hash, expires_at FROM sessions WHERE user_id = :user AND revoked_at IS NULL
                UNION ALL SELECT renewal_token_hash, expires_at FROM sessions WHERE user_id = :user AND revoked_at IS NULL
                """,
                "DELETE FROM sessions WHERE user_id = :user",
            ]
        case .passkeys: ["DELETE FROM passkeys WHERE user_id = :user"]
        case .deviceTokens: ["DELETE FROM device_tokens WHERE user_id = :user"]
        case .challenges:
            [
                "DELETE FROM challenges WHERE user_id = :user OR email = :email", "DELETE FROM email_codes WHERE email_hash = :email_hash",
                "DELETE FROM email_code_attempts WHERE email_hash = :email_hash",
            ]
        case .stepUpGrants: ["DELETE FROM step_up_grants WHERE user_id = :user"]
        case .users:
            ["UPDATE users SET email = :pseudonym || '@erased.invalid', display_name = NULL, handle = randomblob(32), staff = 0 WHERE id = :user"]
        case .fills, .orders, .ordersLive, .positions, .changeLog, .events, .auditEvents, .accounts, .dsrRequests: []
        }
    }

    /// One chunk of the history, run until it touches no row.
    public var historyStep: HistoryStep? {
        switch self {
        case .fills: .delete("DELETE FROM fills WHERE rowid IN (SELECT rowid FROM fills WHERE account_id = :account LIMIT :limit)")
        case .orders:
            .delete("DELETE FROM orders WHERE rowid IN (SELECT rowid FROM orders WHERE account_id = :account AND mode != \(Self.live) LIMIT :limit)")
        case .positions: .delete("DELETE FROM positions WHERE rowid IN (SELECT rowid FROM positions WHERE account_id = :account LIMIT :limit)")
        case .changeLog: .delete("DELETE FROM change_log WHERE seq IN (SELECT seq FROM change_log WHERE account_id = :account LIMIT :limit)")
        case .events: .delete("DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE user_id = :user LIMIT :limit)")
        case .auditEvents: .pseudonymiseAuditTrail
        // Refused at the start when there are any (`refusesErasureWhenPresent`).
        case .ordersLive: nil
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .users, .accounts, .dsrRequests: nil
        }
    }

    /// The statements of the last transaction, which completes the erasure.
    public var finalStatements: [String] {
        switch self {
        case .users: ["DELETE FROM users WHERE id = :user"]
        case .accounts: ["DELETE FROM accounts WHERE id = :account"]
        // The staff member who opened or verified a request is named as its subject is.
        case .dsrRequests:
            [
                "UPDATE dsr_requests SET subject = :subject_hash WHERE subject = :email",
                "UPDATE dsr_requests SET opened_by = :subject_hash WHERE opened_by = :email COLLATE NOCASE",
                "UPDATE dsr_requests SET verified_by = :subject_hash WHERE verified_by = :email COLLATE NOCASE",
            ]
        case .sessions, .passkeys, .deviceTokens, .challenges, .stepUpGrants, .fills, .orders, .ordersLive, .positions, .changeLog,
            .events, .auditEvents:
            []
        }
    }

    /// Live trading's mode in SQL (`TradingMode`), never spelt by hand.
    static let live = Components.Schemas.TradingMode.live.sql

    /// Tables without a rule of their own, each with why none is needed: the schema test accepts
    /// a table holding personal data only when a rule covers it or it is here, and a table here
    /// said to go with another must be deleted with it (ON DELETE CASCADE) in the schema.
    public static let withoutRule: [String: String] = [
        "spent_renewal_tokens": "deleted with their session (ON DELETE CASCADE from sessions)",
        "cancel_after": "deleted with its session (ON DELETE CASCADE from sessions)",
        "closed_account_tokens": "hashes of random tokens, tied to no user or account, kept until the session would have ended",
        "dsr_keys": "the sandbox's own signing and pseudonym keys",
        "push_cursor": "the push dispatcher's position in the alerts",
        "sync_meta": "the sync horizon",
        "grdb_migrations": "the schema's version",
        "sqlite_sequence": "SQLite's own counters",
    ]

    /// The tables `withoutRule` says go with another's rows, and the table they go with.
    public static let deletedWith: [String: String] = ["spent_renewal_tokens": "sessions", "cancel_after": "sessions"]

    /// The tables `withoutRule` keeps through an erasure, because nothing in them links to a
    /// person any more.
    public static let keptWithoutPersonalData: Set<String> = ["closed_account_tokens"]

    /// A table that can hold a link to a person but has no rule of its own, with what an erasure
    /// does to its rows.
    public struct Companion: Sendable, Equatable {
        public var table: String
        /// `delete`, `pseudonymise` (as its rule), or `keep`.
        public var action: String
        public var retention: String
        public var ground: String
        public var what: String
    }

    /// Every such table, after the rules in raxx.7's erasure table (`raxx-sandbox erasure-rules`):
    /// those a rule covers beside its own table, those deleted with another's rows, and those kept
    /// without personal data. Derived from the rules and `withoutRule`, so none can be left out.
    public static var companions: [Companion] {
        let covered = allCases.flatMap { rule in
            rule.coveredTables.filter { $0 != rule.table }.map {
                Companion(
                    table: $0, action: rule.action.rawValue, retention: rule.retention, ground: rule.ground,
                    what: "erased with \(rule.table) (rule \(rule.id))")
            }
        }
        let cascaded = deletedWith.sorted { $0.key < $1.key }.compactMap { table, parent -> Companion? in
            guard let rule = allCases.first(where: { $0.table == parent }) else { return nil }
            return Companion(
                table: table, action: rule.action.rawValue, retention: rule.retention, ground: rule.ground,
                what: withoutRule[table] ?? "deleted with \(parent)")
        }
        let kept = keptWithoutPersonalData.sorted().map {
            Companion(
                table: $0, action: "keep", retention: "until the session would have ended",
                ground: "no personal data once the account is erased", what: withoutRule[$0] ?? "")
        }
        return covered + cascaded + kept
    }
}
