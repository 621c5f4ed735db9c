import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire
import Synchronization

/// The `orders` tag: order entry on the paper engine. Whether an order is accepted (idempotency on
/// client_order_id, paper only, its deadline, the step-up above the notional threshold, buying
/// power) is `OrderAcceptance`'s to decide; the handlers decode the request, run the rules in the
/// trading transaction and answer what they decided.
struct OrderHandlers: Sendable {
    let trading: TradingStore
    /// Refusals are audited through this, in a transaction of their own: the order's transaction
    /// rolls back with the refusal.
    let audit: AuditStore
    let market: Market
    let configuration: SandboxConfiguration
    let clock: @Sendable () -> Date
    let faults: FaultInjector

    var engine: PaperEngine { PaperEngine(market: market) }
    var deadMan: DeadManSwitch { DeadManSwitch(engine: engine) }
    var acceptance: OrderAcceptance { OrderAcceptance(engine: engine, stepUpNotional: configuration.stepUpNotional) }

    /// What every order handler does first inside its transaction: fires the account's dead man's
    /// switches that are due (so no answer shows an order the switch should have cancelled), then
    /// moves the account's open orders on.
    static func sweep(_ ledger: TradingLedger, engine: PaperEngine, account: String, now: Date) throws {
        try DeadManSwitch(engine: engine).fireDue(ledger, account: account, now: now)
        try engine.sweep(ledger, account: account, now: now)
    }

    /// `Access.stepUp`: the grant is asked for, and spent, in `OrderAcceptance`, only when the
    /// order's notional is above the threshold.
    func placeOrder(_ input: Operations.PlaceOrder.Input, caller: Caller) async throws -> Operations.PlaceOrder.Output {
        guard case .json(let request) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let grant = input.headers.raxxStepUpGrant
        let engine = self.engine, acceptance = self.acceptance
        // Made before the transaction: the write lock is held for what needs the database only.
        let hash = OrderAcceptance.requestHash(request)
        let order: Components.Schemas.Order, created: Bool
        do {
            (order, created) = try await trading.write { ledger -> (Components.Schemas.Order, Bool) in
                try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
                // Placed while the session's switch is armed: the order is under it.
                let armed = try DeadManSwitch(engine: engine).settle(ledger, session: caller.sessionID, now: now) != nil
                let outcome = try acceptance.place(
                    ledger, caller: caller, request: request, hash: hash, grant: grant,
                    switchSession: armed ? caller.sessionID : nil, now: now)
                return try Self.answer(ledger, outcome)
            }
        } catch let refusal as AuditedRefusal {
            // The order's transaction is rolled back; the refusal's audit entry commits on its own.
            try? await audit.record(refusal.entry)
            throw refusal.problem
        }
        if created, faults.loseThisReply() {
            // Fault injection (--fault-lose-order-replies): the order is placed, the answer never comes.
            try? await Task.sleep(for: .seconds(5))
            throw ProblemError(503, code: .unavailable, title: "The reply was lost (fault injection).")
        }
        return created ? .created(.init(body: .json(order))) : .ok(.init(body: .json(order)))
    }

    /// `checkOrders`: each order through `OrderAcceptance.place` as a dry run, in turn, in one
    /// transaction that is then rolled back, so each is judged against the account the orders
    /// before it leave and nothing stays: no order, fill, audit entry, change or event. (A dry
    /// run's ledger does not write the audit entries, changes and events at all: they would only
    /// be rolled back.)
    func checkOrders(_ input: Operations.CheckOrders.Input, caller: Caller) async throws -> Operations.CheckOrders.Output {
        guard case .json(let request) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let engine = self.engine, acceptance = self.acceptance
        // Made before the transaction: the write lock is held for what needs the database only.
        let hashes = request.orders.map(OrderAcceptance.requestHash)
        do {
            _ = try await trading.write(dryRun: true) { ledger -> Int in
                try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
                var seen: Set<String> = []
                let checks = try zip(request.orders, hashes).map { order, hash in
                    do throws(ProblemError) {
                        try OrderAcceptance.admitToCheck(order, seen: &seen)
                    } catch {
                        return Self.refused(order, error)
                    }
                    return try Self.check(ledger, acceptance: acceptance, caller: caller, request: order, hash: hash, now: now)
                }
                throw DryRunRollback(checks: checks)
            }
        } catch let dryRun as DryRunRollback {
            return .ok(.init(body: .json(.init(checks: dryRun.checks))))
        }
        throw ProblemError.internalError
    }

    /// Thrown out of a dry run's transaction, which rolls it back, with what it found.
    struct DryRunRollback: Error {
        let checks: [Components.Schemas.OrderCheck]
    }

    /// One order's dry run inside the ledger's transaction: placed as `placeOrder` would place it,
    /// without a step-up (noted instead), and read back as a verdict.
    static func check(
        _ ledger: TradingLedger, acceptance: OrderAcceptance, caller: Caller, request r: Components.Schemas.OrderRequest,
        hash: String, now: Date
    ) throws -> Components.Schemas.OrderCheck {
        var note: OrderAcceptance.DryRunNote? = OrderAcceptance.DryRunNote()
        let order: Components.Schemas.Order, created: Bool
        do {
            let outcome = try acceptance.place(ledger, caller: caller, request: r, hash: hash, grant: nil, dryRun: &note, now: now)
            (order, created) = try answer(ledger, outcome)
        } catch let refusal as AuditedRefusal {
            return refused(r, refusal.problem)
        } catch let problem as ProblemError {
            return refused(r, problem)
        }
        var check = Components.Schemas.OrderCheck(
            clientOrderId: r.clientOrderId, verdict: .wouldPlace,
            notional: note?.notionalTicks.map(Money.string(ticks:)),
            stepUpRequired: note?.actionHash != nil, actionHash: note?.actionHash)
        if !created {
            check.verdict = .alreadyPlaced
            check.orderId = order.id
        } else if order.status == .rejected {
            check.verdict = .wouldReject
            check.code = order.rejectCode
            check.message = order.rejectCode.flatMap(RejectCode.message(for:))
        }
        return check
    }

    static func refused(_ r: Components.Schemas.OrderRequest, _ problem: ProblemError) -> Components.Schemas.OrderCheck {
        Components.Schemas.OrderCheck(
            clientOrderId: r.clientOrderId, verdict: .refused, code: problem.code.rawValue,
            message: [problem.title, problem.detail].compactMap { $0 }.joined(separator: " "), stepUpRequired: false)
    }

    /// An outcome as the API answers it: the order as it stands, and whether it is new (201) or
    /// was placed before (200).
    static func answer(_ ledger: TradingLedger, _ outcome: OrderAcceptance.Outcome) throws -> (Components.Schemas.Order, Bool) {
        switch outcome {
        case .alreadyPlaced(let id): return (try order(ledger, id: id), false)
        case .placed(let id): return (try order(ledger, id: id), true)
        }
    }

    static func order(_ ledger: TradingLedger, id: String) throws -> Components.Schemas.Order {
        guard let order = try ledger.order(id: id) else { throw ProblemError.notFound("No order \(id).") }
        return order
    }

    func listOrders(_ input: Operations.ListOrders.Input, caller: Caller) async throws -> Operations.ListOrders.Output {
        let now = clock()
        let limit = min(max(input.query.limit ?? 100, 1), 1000)
        let before = try input.query.before.map { text -> Int64 in
            guard let v = Int64(text) else { throw ProblemError(400, code: .cursorInvalid, title: "Not a page cursor: \(text).") }
            return v
        }
        let query = OrderQuery(
            account: caller.accountID, status: input.query.status?.rawValue, clientOrderID: input.query.clientOrderId,
            before: before, limit: limit)
        let engine = self.engine
        let list = try await trading.write { ledger -> Components.Schemas.OrderList in
            try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
            return try ledger.orders(query)
        }
        return .ok(.init(body: .json(list)))
    }

    func getOrder(_ input: Operations.GetOrder.Input, caller: Caller) async throws -> Operations.GetOrder.Output {
        let now = clock()
        let engine = self.engine, orderID = input.path.orderId
        let order = try await trading.write { ledger -> Components.Schemas.Order in
            try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
            guard let id = try ledger.ownedOrderID(orderID, account: caller.accountID) else {
                throw ProblemError.notFound("No order \(orderID).")
            }
            return try Self.order(ledger, id: id)
        }
        return .ok(.init(body: .json(order)))
    }

    func cancelOrder(_ input: Operations.CancelOrder.Input, caller: Caller) async throws -> Operations.CancelOrder.Output {
        let now = clock()
        let engine = self.engine, orderID = input.path.orderId
        let order = try await trading.write { ledger -> Components.Schemas.Order in
            try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
            guard var state = try ledger.orderState(id: orderID), state.account == caller.accountID else {
                throw ProblemError.notFound("No order \(orderID).")
            }
            guard OrderStatus.working.contains(state.status) else {
                throw ProblemError(409, code: .notCancellable, title: "The order is \(state.status) and can no longer be cancelled.")
            }
            try engine.setStatus(ledger, &state, .cancelled, now: now)
            return try Self.order(ledger, id: state.id)
        }
        return .ok(.init(body: .json(order)))
    }
}

extension OrderHandlers {
    /// `POST /api/orders/cancel-after`: arms or renews (5 to 600 s) or disarms (0) the caller's
    /// session's dead man's switch; see `DeadManSwitch`.
    func cancelOrdersAfter(_ input: Operations.CancelOrdersAfter.Input, caller: Caller) async throws -> Operations.CancelOrdersAfter.Output {
        guard case .json(let request) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let timeout = request.timeoutS
        guard timeout == 0 || CancelAfter.timeoutRange.contains(timeout) else {
            throw ProblemError.badRequest(
                "Field 'timeout_s' must be 0 (disarm) or \(CancelAfter.timeoutRange.lowerBound) to "
                    + "\(CancelAfter.timeoutRange.upperBound) seconds.")
        }
        let ids = request.orderIds ?? []
        guard ids.count <= 1000 else { throw ProblemError.badRequest("Field 'order_ids' takes at most 1000 orders.") }
        let now = clock()
        let engine = self.engine
        let state = try await trading.write { ledger -> Components.Schemas.CancelAfter in
            try engine.sweep(ledger, account: caller.accountID, now: now)
            return try DeadManSwitch(engine: engine).set(ledger, caller: caller, timeout: timeout, orderIDs: ids, now: now)
        }
        return .ok(.init(body: .json(state)))
    }
}

/// Lost replies on demand, for tests of what a client does when it cannot know an order's fate.
final class FaultInjector: Sendable {
    private let lostReplies: Mutex<Int>

    init(loseOrderReplies: Int) { lostReplies = Mutex(loseOrderReplies) }

    func loseThisReply() -> Bool {
        lostReplies.withLock { lostReplies in
            guard lostReplies > 0 else { return false }
            lostReplies -= 1
            return true
        }
    }
}
