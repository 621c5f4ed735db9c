import Foundation
import RaxxAPI

/// What erasure does to each table holding personal data (GDPR Art. 17), in one place: the plan
/// lists these rules with the rows each touches, the erasure executes them in this order, and
/// raxx.7 prints this table (a test keeps the two the same).
///
/// `identifiers` rules go first, in one transaction (the subject loses access at once);
/// `history` rules go next in chunks, each its own transaction; `final` rules close the erasure.
public struct ErasureRule: Sendable, Equatable {
    public enum Phase: String, Sendable { case identifiers, history, final }

    /// A stable name for the rule (the executor's switch).
    public var id: String
    /// The table it applies to.
    public var table: String
    /// Which rows, and what the action does to them.
    public var what: String
    public var action: Components.Schemas.ErasureAction
    /// The legal ground.
    public var ground: String
    /// How long retained rows are kept ("none" when deleted).
    public var retention: String
    public var phase: Phase
}

public enum ErasureRules {
    static let noObligation = "Art. 17(1): no longer needed; no legal obligation to keep"
    static let paperTrading = "Art. 17(1): paper trading carries no record-keeping obligation"

    public static let table: [ErasureRule] = [
        .init(id: "sessions", table: "sessions", what: "sessions and their spent renewal tokens (revoked at once)",
              action: .delete, ground: noObligation, retention: "none", phase: .identifiers),
        .init(id: "passkeys", table: "passkeys", what: "passkeys: credential IDs, public keys, counters",
              action: .delete, ground: noObligation, retention: "none", phase: .identifiers),
        .init(id: "device_tokens", table: "device_tokens", what: "APNs device tokens",
              action: .delete, ground: noObligation, retention: "none", phase: .identifiers),
        .init(id: "challenges", table: "challenges", what: "pending sign-in and step-up challenges, and emailed registration codes",
              action: .delete, ground: noObligation, retention: "none", phase: .identifiers),
        .init(id: "step_up_grants", table: "step_up_grants", what: "step-up grants",
              action: .delete, ground: noObligation, retention: "none", phase: .identifiers),
        .init(id: "users", table: "users", what: "the sign-in identity: email (replaced at once), display name, user handle",
              action: .delete, ground: noObligation, retention: "none", phase: .identifiers),
        .init(id: "fills", table: "fills", what: "paper-trading fills",
              action: .delete, ground: paperTrading, retention: "none", phase: .history),
        .init(id: "orders", table: "orders", what: "paper-trading orders",
              action: .delete, ground: paperTrading, retention: "none", phase: .history),
        .init(id: "orders_live", table: "orders", what: "live-mode orders and their fills, when they exist (pseudonymised)",
              action: .pseudonymise, ground: "Art. 17(3)(b): MiFID II Art. 16(6), MiFIR Art. 25", retention: "5 years", phase: .history),
        .init(id: "positions", table: "positions", what: "paper-trading positions",
              action: .delete, ground: paperTrading, retention: "none", phase: .history),
        .init(id: "change_log", table: "change_log", what: "the account's sync change log",
              action: .delete, ground: noObligation, retention: "none", phase: .history),
        .init(id: "events", table: "events", what: "alerts: fills, rejections, session and security alerts",
              action: .delete, ground: noObligation, retention: "none", phase: .history),
        .init(id: "audit_events", table: "audit_events", what: "audit events by or about the subject: identifiers replaced by a stable pseudonym",
              action: .pseudonymise, ground: "Art. 5(2) accountability; Art. 17(3)(b)", retention: "6 years", phase: .history),
        .init(id: "accounts", table: "accounts", what: "the paper account (deleted once its history is)",
              action: .delete, ground: paperTrading, retention: "none", phase: .final),
        .init(id: "dsr_requests", table: "dsr_requests", what: "the data-subject requests: the email replaced by a keyed hash",
              action: .pseudonymise, ground: "Art. 5(2) and 12: proof the requests were handled", retention: "6 years", phase: .final),
    ]
}
