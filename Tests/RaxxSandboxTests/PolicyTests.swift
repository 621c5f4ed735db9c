import Foundation
import RaxxAPI
import RaxxDomain
import Testing

@testable import RaxxSandbox

/// The domain's rules, judged without a database: the step-up gate, what an erasure plan's hash
/// covers, and when a plan may be applied. The stores only feed them facts.
@Suite struct PolicyTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    let rules = ErasureRule.allCases

    func gate() -> StepUpGate {
        StepUpGate(
            actionHash: "act", needs: "This needs a step-up.", notValidFor: "this", actor: "usr_1", subject: "acct_1",
            details: ["client_order_id": "c1"])
    }

    @Test func noGrantIsRefusedWithTheActionHashAndAnAuditEntry() throws {
        var spent = false
        let error = #expect(throws: AuditedRefusal.self) {
            try gate().pass(nil, now: Self.now) { _ in
                spent = true; return true
            }
        }
        #expect(!spent)
        #expect(error?.problem.code == .stepUpRequired && error?.problem.actionHash == "act" && error?.problem.status == 403)
        #expect(
            error?.entry
                == AuditEntry(
                    at: Self.now, actor: "usr_1", action: .stepUpRequired, subject: "acct_1",
                    details: ["client_order_id": "c1", "reason": "step_up_required"]))
    }

    @Test func aGrantIsSpentByItsHashAndARefusedOneIsAudited() throws {
        var asked: [String] = []
        try gate().pass("grant-1", now: Self.now) {
            asked.append($0); return true
        }
        #expect(asked == [Tokens.hash("grant-1")])
        let error = #expect(throws: AuditedRefusal.self) { try gate().pass("grant-2", now: Self.now) { _ in false } }
        #expect(error?.problem.code == .stepUpInvalid && error?.problem.actionHash == nil)
        #expect(error?.entry.action == .stepUpRefused && error?.entry.details["reason"] == "grant_invalid")
    }

    func items(_ rows: [ErasureRule: Int64] = [:]) -> [Components.Schemas.ErasureItem] {
        rules.map {
            .init(
                table: $0.table, what: $0.what, rows: rows[$0] ?? ($0.refusesErasureWhenPresent ? 0 : 1), action: $0.action, ground: $0.ground,
                retention: $0.retention)
        }
    }

    func plan(_ rows: [ErasureRule: Int64] = [:], facts: ErasurePlanning.Facts = .init(cashTicks: 100, lastFill: 5)) throws
        -> Components.Schemas.ErasurePlan
    {
        try ErasurePlanning.plan(requestID: "dsr_1", items: items(rows), facts: facts, rules: rules, now: Self.now)
    }

    @Test func thePlanHashCoversTheHistoryAndTheTradingStateButNotTheIdentifiers() throws {
        let base = try plan()
        #expect(base.planHash.count == 64 && base.planHash.allSatisfy(\.isHexDigit))
        // Sign-in housekeeping changes the identifiers' counts at any time: the hash holds.
        #expect(try plan([.sessions: 9, .challenges: 0]).planHash == base.planHash)
        // The history and the account's trading state are what staff approve.
        #expect(try plan([.fills: 2]).planHash != base.planHash)
        #expect(try plan(facts: .init(cashTicks: 101, lastFill: 5)).planHash != base.planHash)
        #expect(
            try ErasurePlanning.plan(
                requestID: "dsr_2", items: items(), facts: .init(cashTicks: 100, lastFill: 5), rules: rules,
                now: Self.now
            ).planHash != base.planHash)
        #expect(try plan([.sessions: 9]).items.first { $0.table == "sessions" }?.rows == 9)
    }

    func state(_ status: Components.Schemas.DSRStatus, kind: Components.Schemas.DSRKind = .erasure, planHash: String? = nil) -> DSRState {
        DSRState(
            id: "dsr_1", kind: kind, status: status, subject: "a@example.com", ticket: "T-1", receivedAt: Self.now, dueOn: "2027-01-15",
            extended: false, planHash: planHash)
    }

    func judge(
        _ state: DSRState, planHash: String, grant: String? = "g", current: Components.Schemas.ErasurePlan? = nil,
        spend: Bool = true
    ) throws -> (ErasurePlanning.Start, [String]) {
        var spent: [String] = []
        let start = try ErasurePlanning.judgeApply(
            state, planHash: planHash, grant: grant, staffUserID: "usr_staff", rules: rules, now: Self.now,
            current: {
                guard let current else { Issue.record("the plan was recomputed when it need not be"); throw CancellationError() }
                return current
            },
            spend: { grantHash, action in
                spent.append(action); #expect(grantHash == Tokens.hash("g")); return spend
            })
        return (start, spent)
    }

    @Test func applyingIsJudgedOnTheRequestThePlanAndTheGrant() throws {
        let current = try plan()
        let hash = current.planHash
        let action = ErasureApplyAction(requestID: "dsr_1", planHash: hash).actionHash
        #expect(try judge(state(.planned, planHash: hash), planHash: hash, current: current) == (ErasurePlanning.Start.start, [action]))
        #expect(try judge(state(.erasing, planHash: hash), planHash: hash) == (ErasurePlanning.Start.resume, [action]))
        #expect(try judge(state(.completed, planHash: hash), planHash: hash, grant: nil) == (ErasurePlanning.Start.alreadyCompleted, [String]()))

        func code(_ body: () throws -> Any) -> Components.Schemas.ProblemCode? {
            do { _ = try body(); return nil } catch let p as ProblemError { return p.code } catch let r as AuditedRefusal { return r.problem.code } catch {
                return nil
            }
        }
        #expect(code { try judge(state(.verified), planHash: hash) } == .planRequired)
        #expect(code { try judge(state(.planned, kind: .access, planHash: hash), planHash: hash) } == .invalidState)
        #expect(code { try judge(state(.identityUnverified), planHash: hash) } == .invalidState)
        // The data changed since the plan: the plan made now has another hash.
        #expect(code { try judge(state(.planned, planHash: hash), planHash: hash, current: try plan([.fills: 7])) } == .planStale)
        #expect(code { try judge(state(.erasing, planHash: "other"), planHash: hash) } == .planStale)
        // Live-mode records are refused, whatever the grant.
        let live = try plan([.ordersLive: 1])
        #expect(code { try judge(state(.planned, planHash: live.planHash), planHash: live.planHash, current: live) } == .invalidState)
        #expect(code { try judge(state(.planned, planHash: hash), planHash: hash, grant: nil, current: current) } == .stepUpRequired)
        #expect(code { try judge(state(.planned, planHash: hash), planHash: hash, current: current, spend: false) } == .stepUpInvalid)
    }
}
