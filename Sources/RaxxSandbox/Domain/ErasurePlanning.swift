import Crypto
import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// An erasure plan's rules: what its hash covers, and when a plan may be applied. The store
/// counts the rows and reads the facts; these decide.
enum ErasurePlanning {
    /// The state of the subject's trading the counts were taken from: a change to any of it makes
    /// the plan stale.
    struct Facts: Sendable, Equatable {
        var cashTicks: Int64?
        var ordersUpdated: Double?
        var positionsUpdated: Double?
        var lastFill: Double?
    }

    /// What the hash covers, in canonical JSON (its keys are part of every plan hash made).
    private struct Hashed: Encodable {
        var request_id: String
        var items: [Components.Schemas.ErasureItem]
        var cash_ticks: Int64?
        var orders_updated: Double?
        var positions_updated: Double?
        var last_fill: Double?
    }

    /// The plan of request `requestID` from the rules' counts (`items`, in the rules' order) and
    /// `facts`. The identifiers' rows are left out of the hash: sign-in housekeeping (pruned
    /// challenges, ended sessions) changes them at any time, and they are deleted whatever their
    /// count. The history and the account are what a staff member approves the erasure of.
    static func plan(requestID: String, items: [Components.Schemas.ErasureItem], facts: Facts, rules: [ErasureRule], now: Date) throws
        -> Components.Schemas.ErasurePlan
    {
        let identifierTables = Set(rules.filter { $0.phase == .identifiers }.map(\.table))
        let hashed = items.map { item in
            var item = item
            if identifierTables.contains(item.table) { item.rows = 0 }
            return item
        }
        let covered = Hashed(
            request_id: requestID, items: hashed, cash_ticks: facts.cashTicks, orders_updated: facts.ordersUpdated,
            positions_updated: facts.positionsUpdated, last_fill: facts.lastFill)
        // Hex, so that it never starts with "-" on a command line.
        let hash = ASCIIHex.lowercase(SHA256.hash(data: try CanonicalJSON.data(covered)))
        return Components.Schemas.ErasurePlan(requestId: requestID, planHash: hash, items: items, computedAt: now)
    }

    /// What applying an erasure does, as judged in its first transaction.
    enum Start: Sendable, Equatable {
        /// Completed before: nothing changes.
        case alreadyCompleted
        /// The identifiers go now; the history follows.
        case start
        /// Erasing already (an earlier run stopped part-way): the history goes on.
        case resume
    }

    /// Judges applying plan `planHash` to request `state` with step-up `grant`, by staff member
    /// `staffUserID`:
    /// - an erasure request only, planned or part-way erasing (`plan_required` before a plan);
    /// - a planned request only with the plan as it would be made now (`current`), else stale;
    /// - no live-mode records (`refusesErasureWhenPresent`);
    /// - a step-up bound to this request and plan, spent with `spend`.
    static func judgeApply(
        _ state: DSRState, planHash: String, grant: String?, staffUserID: String, rules: [ErasureRule], now: Date,
        current: () throws -> Components.Schemas.ErasurePlan, spend: (_ grantHash: String, _ actionHash: String) throws -> Bool
    )
        throws -> Start
    {
        if state.status == .completed, state.kind == .erasure { return .alreadyCompleted }
        guard state.kind == .erasure else {
            throw ProblemError(409, code: .invalidState, title: "Only an erasure request can be applied.", detail: "\(state.id) is an access request.")
        }
        switch state.status {
        case .planned, .erasing: break
        case .verified:
            throw ProblemError(409, code: .planRequired, title: "There is no plan to apply.", detail: "Plan the erasure first.")
        default:
            throw ProblemError(409, code: .invalidState, title: "The request cannot be applied.", detail: "It is \(state.status.rawValue).")
        }
        let stale = ProblemError(409, code: .planStale, title: "The plan is stale.", detail: "The data changed since the plan was made: plan again.")
        guard state.planHash == planHash else { throw stale }
        if state.status == .planned {
            let now = try current()
            guard now.planHash == planHash else { throw stale }
            if zip(rules, now.items).contains(where: { rule, item in rule.refusesErasureWhenPresent && item.rows > 0 }) {
                throw ProblemError(409, code: .invalidState, title: "Live-mode records cannot be erased by this sandbox.")
            }
        }
        let action = ErasureApplyAction(requestID: state.id, planHash: planHash).actionHash
        let gate = StepUpGate(
            actionHash: action, needs: "Applying an erasure needs a step-up.", notValidFor: "this plan",
            actor: staffUserID, subject: "dsr:" + state.id, details: ["ticket": state.ticket])
        try gate.pass(grant, now: now) { grantHash in try spend(grantHash, action) }
        return state.status == .erasing ? .resume : .start
    }
}
