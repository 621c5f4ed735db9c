import Foundation

/// The step-up rule, one for every action that needs one (a large order, an erasure, a passkey's
/// removal): the action runs only with a grant bound to its action hash, spent once, by the user
/// who asks, inside the action's own transaction.
/// - No grant: 403 `step_up_required`, carrying the action hash for the client to sign, audited
///   `step_up.required`.
/// - A grant the store will not spend (unknown, spent, expired, or bound to another action or
///   user): 403 `step_up_invalid`, audited `step_up.refused`.
struct StepUpGate: Sendable {
    /// The hash the grant must be bound to.
    var actionHash: String
    /// What the refusals say: "This order needs a step-up.", "… not valid for this order."
    var needs: String
    var notValidFor: String
    var detail = "Confirm it with your passkey; the grant must be bound to action_hash."
    /// The audit entry of a refusal: who asked, about what, and its details (its `reason` is added).
    var actor: String
    var subject: String
    var details: [String: String] = [:]

    /// No grant was presented.
    func required(now: Date) -> AuditedRefusal {
        var problem = ProblemError(403, code: .stepUpRequired, title: needs, detail: detail)
        problem.actionHash = actionHash
        return AuditedRefusal(problem, entry(.stepUpRequired, reason: "step_up_required", now: now))
    }

    /// The grant presented was not good for this action.
    func refused(now: Date) -> AuditedRefusal {
        AuditedRefusal(
            ProblemError(403, code: .stepUpInvalid, title: "The step-up grant is not valid for \(notValidFor)."),
            entry(.stepUpRefused, reason: "grant_invalid", now: now))
    }

    /// Spends `grant` with `spend` (the store's single-use check, given the grant's hash), or
    /// throws the refusal. Call it inside the action's transaction: a refused grant changes
    /// nothing, and an action that rolls back does not spend its grant.
    func pass(_ grant: String?, now: Date, spend: (_ grantHash: String) throws -> Bool) throws {
        guard let grant else { throw required(now: now) }
        guard try spend(Tokens.hash(grant)) else { throw refused(now: now) }
    }

    private func entry(_ action: AuditAction, reason: String, now: Date) -> AuditEntry {
        var details = details
        details["reason"] = reason
        return AuditEntry(at: now, actor: actor, action: action, subject: subject, details: details)
    }
}

/// A refusal that must be audited even though the transaction that refused rolls back: thrown
/// inside a store's transaction, caught around it, its entry recorded in a transaction of its own.
struct AuditedRefusal: Error {
    var problem: ProblemError
    var entry: AuditEntry

    init(_ problem: ProblemError, _ entry: AuditEntry) {
        self.problem = problem
        self.entry = entry
    }
}
