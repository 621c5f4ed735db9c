import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain

/// The `dsr` tag: data-subject requests run by support staff. `AccessGate` lets only staff in
/// (`Access.table`); the handlers judge each transition with `DSRStateMachine` and work over the
/// DSR store. Every transition is audited with the staff member and the ticket.
struct DSRHandlers: Sendable {
    let dsr: DSRStore
    let trail: AuditTrailStore
    let audit: AuditStore
    let configuration: SandboxConfiguration
    let clock: @Sendable () -> Date
    var activity = RequestActivity()
    var rules: [ErasureRule] = ErasureRule.allCases

    static func unknown(_ id: String) -> ProblemError { ProblemError.notFound("No data-subject request \(id).") }

    func createDSRRequest(_ input: Operations.CreateDSRRequest.Input, caller: Caller) async throws -> Operations.CreateDSRRequest.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let email = try AuthHandlers.normalizedEmail(body.email)
        let ticket = try Self.text(body.ticket, field: "ticket", max: DSRText.ticketLength)
        let now = clock()
        let received = body.receivedAt ?? now
        guard received <= now.addingTimeInterval(300) else { throw ProblemError.badRequest("Field 'received_at' is in the future.") }
        let request = try await dsr.open(
            NewDSRRequest(
                id: Identifier.make("dsr"), kind: body.kind, email: email, ticket: ticket,
                receivedAt: received, dueOn: DSRDeadline.due(receivedAt: received).description,
                staffUserID: caller.userID, now: now))
        return .created(.init(body: .json(request)))
    }

    func listDSRRequests(_ input: Operations.ListDSRRequests.Input, caller: Caller) async throws -> Operations.ListDSRRequests.Output {
        .ok(.init(body: .json(.init(requests: try await dsr.list(status: input.query.status, now: clock())))))
    }

    func getDSRRequest(_ input: Operations.GetDSRRequest.Input, caller: Caller) async throws -> Operations.GetDSRRequest.Output {
        guard let request = try await dsr.request(id: input.path.requestId, now: clock()) else { throw Self.unknown(input.path.requestId) }
        return .ok(.init(body: .json(request)))
    }

    func verifyDSRIdentity(_ input: Operations.VerifyDSRIdentity.Input, caller: Caller) async throws -> Operations.VerifyDSRIdentity.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let method = try Self.text(body.method, field: "method")
        let id = input.path.requestId
        guard
            let request = try await dsr.update(
                id: id, staffUserID: caller.userID, now: clock(),
                { state in
                    try DSRStateMachine.verify(state, method: method)
                })
        else { throw Self.unknown(id) }
        return .ok(.init(body: .json(request)))
    }

    func extendDSRRequest(_ input: Operations.ExtendDSRRequest.Input, caller: Caller) async throws -> Operations.ExtendDSRRequest.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let reason = try Self.text(body.reason, field: "reason")
        let id = input.path.requestId, now = clock()
        guard
            let request = try await dsr.update(
                id: id, staffUserID: caller.userID, now: now,
                { state in
                    try DSRStateMachine.extend(state, reason: reason, today: CalendarDay(now))
                })
        else { throw Self.unknown(id) }
        return .ok(.init(body: .json(request)))
    }

    func closeDSRRequest(_ input: Operations.CloseDSRRequest.Input, caller: Caller) async throws -> Operations.CloseDSRRequest.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let reason = try Self.text(body.reason, field: "reason")
        let to: Components.Schemas.DSRStatus = body.status == .refused ? .refused : .cancelled
        let id = input.path.requestId
        guard
            let request = try await dsr.update(
                id: id, staffUserID: caller.userID, now: clock(),
                { state in
                    try DSRStateMachine.close(state, to: to, reason: reason)
                })
        else { throw Self.unknown(id) }
        return .ok(.init(body: .json(request)))
    }

    func exportDSRData(_ input: Operations.ExportDSRData.Input, caller: Caller) async throws -> Operations.ExportDSRData.Output {
        let id = input.path.requestId
        guard let export = try await dsr.export(id: id, staffUserID: caller.userID, now: clock(), check: DSRStateMachine.checkExport)
        else { throw Self.unknown(id) }
        return .ok(.init(body: .json(export)))
    }

    func confirmDSRExport(_ input: Operations.ConfirmDSRExport.Input, caller: Caller) async throws -> Operations.ConfirmDSRExport.Output {
        let id = input.path.requestId
        guard let request = try await dsr.confirmExport(id: id, staffUserID: caller.userID, now: clock()) else { throw Self.unknown(id) }
        return .ok(.init(body: .json(request)))
    }

    func planDSRErasure(_ input: Operations.PlanDSRErasure.Input, caller: Caller) async throws -> Operations.PlanDSRErasure.Output {
        let id = input.path.requestId
        guard let plan = try await dsr.plan(id: id, rules: rules, staffUserID: caller.userID, now: clock(), check: DSRStateMachine.checkPlan)
        else { throw Self.unknown(id) }
        return .ok(.init(body: .json(plan)))
    }

    func checkDSRErasurePlan(_ input: Operations.CheckDSRErasurePlan.Input, caller: Caller) async throws -> Operations.CheckDSRErasurePlan.Output {
        let id = input.path.requestId
        guard let plan = try await dsr.currentPlan(id: id, rules: rules, now: clock(), check: DSRStateMachine.checkPlan)
        else { throw Self.unknown(id) }
        return .ok(.init(body: .json(plan)))
    }

    /// `Access.staff`, and a step-up bound to the plan (`ErasureApplyAction`), spent by the
    /// store in the erasure's first transaction. The history then goes in chunks, each its
    /// own transaction, in a task of its own: a client that stops waiting does not stop it.
    func applyDSRErasure(_ input: Operations.ApplyDSRErasure.Input, caller: Caller) async throws -> Operations.ApplyDSRErasure.Output {
        guard case .json(let body) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let id = input.path.requestId
        let start: ErasureStart
        do {
            start = try await dsr.beginErasure(
                id: id, planHash: body.planHash, grant: input.headers.raxxStepUpGrant, rules: rules,
                staffUserID: caller.userID, now: clock())
        } catch let refusal as AuditedRefusal {
            try? await audit.record(refusal.entry)
            throw refusal.problem
        }
        if case .alreadyCompleted(let request) = start {
            return .ok(.init(body: .json(.init(request: request, alreadyCompleted: true))))
        }
        let dsr = self.dsr, rules = self.rules, clock = self.clock
        let pause = configuration.erasureChunkPause
        let maxRows = configuration.erasureChunkRows, budget = configuration.erasureChunkBudget
        let activity = self.activity
        let yield = ErasureYield(pause: configuration.erasureYield) { activity.heard(within: ErasureYield.window) }
        let work = Task.detached { () throws -> Components.Schemas.DSRRequest in
            try await dsr.eraseHistory(
                id: id, rules: rules, sizing: ErasureChunkSizing(maxRows: maxRows, budget: budget), pause: pause,
                yield: yield)
            return try await dsr.completeErasure(id: id, rules: rules, staffUserID: caller.userID, now: clock())
        }
        let request = try await work.value
        return .ok(.init(body: .json(.init(request: request, alreadyCompleted: false))))
    }

    func getDSRReceipt(_ input: Operations.GetDSRReceipt.Input, caller: Caller) async throws -> Operations.GetDSRReceipt.Output {
        let id = input.path.requestId
        guard let receipt = try await dsr.receipt(id: id) else {
            guard try await dsr.request(id: id, now: clock()) != nil else { throw Self.unknown(id) }
            throw ProblemError(409, code: .invalidState, title: "There is no receipt yet.", detail: "Only a completed erasure has one.")
        }
        return .ok(.init(body: .json(receipt)))
    }

    func getDSRReceiptKey(_ input: Operations.GetDSRReceiptKey.Input) async throws -> Operations.GetDSRReceiptKey.Output {
        .ok(.init(body: .json(try await dsr.receiptKey())))
    }

    func listSubjectAuditEvents(_ input: Operations.ListSubjectAuditEvents.Input, caller: Caller) async throws
        -> Operations.ListSubjectAuditEvents.Output
    {
        let email = try AuthHandlers.normalizedEmail(input.query.email)
        let limit = input.query.limit ?? 100
        guard let subject = try await trail.subject(email: email) else {
            return .ok(.init(body: .json(.init(events: [], cursor: input.query.cursor ?? 0, hasMore: false))))
        }
        let page = try await trail.trail(of: subject, after: input.query.cursor ?? 0, limit: limit, seenBySubject: false)
        return .ok(.init(body: .json(.init(events: page.events, cursor: page.events.last?.seq ?? input.query.cursor ?? 0, hasMore: page.hasMore))))
    }

    /// Free text by `DSRText`'s rule, or 400 naming the field.
    static func text(_ text: String, field: String, max: Int = DSRText.textLength) throws -> String {
        do {
            return try DSRText.checked(text, max: max)
        } catch {
            throw ProblemError.badRequest("Field '\(field)' \(error.description).")
        }
    }
}
