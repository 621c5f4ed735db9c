import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire
import Synchronization

/// The `orders` tag: order entry on the paper engine, idempotent on client_order_id, refusing
/// live trading and late arrivals, asking for a step-up above the notional threshold.
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

    /// What every order handler does first inside its transaction: fires the account's dead man's
    /// switches that are due (so no answer shows an order the switch should have cancelled), then
    /// moves the account's open orders on.
    static func sweep(_ ledger: TradingLedger, engine: PaperEngine, account: String, now: Date) throws {
        try DeadManSwitch(engine: engine).fireDue(ledger, account: account, now: now)
        try engine.sweep(ledger, account: account, now: now)
    }

    static func requestHash(_ r: Components.Schemas.OrderRequest) -> String {
        OrderAction(
            clientOrderID: r.clientOrderId, symbol: r.symbol.uppercased(), side: r.side, qty: r.qty, type: r._type,
            limitPrice: r.limitPrice, tif: r.tif, mode: r.mode
        ).hash
    }

    /// `Access.stepUp`: the grant is asked for, and spent, here, only when the order's notional is
    /// above the threshold.
    func placeOrder(_ input: Operations.PlaceOrder.Input, caller: Caller) async throws -> Operations.PlaceOrder.Output {
        guard case .json(let request) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let grant = input.headers.raxxStepUpGrant
        let engine = self.engine, market = self.market, notional = configuration.stepUpNotional
        // Made before the transaction: the write lock is held for what needs the database only.
        let hash = Self.requestHash(request)
        let order: Components.Schemas.Order, created: Bool
        do {
            (order, created) = try await trading.write { ledger -> (Components.Schemas.Order, Bool) in
                try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
                // Placed while the session's switch is armed: the order is under it.
                let armed = try DeadManSwitch(engine: engine).settle(ledger, session: caller.sessionID, now: now) != nil
                return try Self.place(
                    ledger, engine: engine, market: market, caller: caller, request: request, hash: hash, grant: grant,
                    stepUpNotional: notional, switchSession: armed ? caller.sessionID : nil, now: now)
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

    /// `checkOrders`: each order through `place` as a dry run, in turn, in one transaction that is
    /// then rolled back, so each is judged against the account the orders before it leave and
    /// nothing stays: no order, fill, audit entry, change or event. (A dry run's ledger does not
    /// write the audit entries, changes and events at all: they would only be rolled back.)
    func checkOrders(_ input: Operations.CheckOrders.Input, caller: Caller) async throws -> Operations.CheckOrders.Output {
        guard case .json(let request) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let engine = self.engine, market = self.market, notional = configuration.stepUpNotional
        // Made before the transaction: the write lock is held for what needs the database only.
        let hashes = request.orders.map(Self.requestHash)
        do {
            _ = try await trading.write(dryRun: true) { ledger -> Int in
                try Self.sweep(ledger, engine: engine, account: caller.accountID, now: now)
                var seen: Set<String> = []
                let checks = try zip(request.orders, hashes).map { order, hash in
                    // A client_order_id twice in one check would find the first's row, rolled back
                    // afterwards: the second is refused as placeOrder would refuse another order.
                    guard seen.insert(order.clientOrderId).inserted else {
                        return Self.refused(
                            order,
                            ProblemError(
                                409, code: .conflict, title: "This client_order_id is used twice in the check.",
                                detail: "Each order needs a client_order_id of its own."))
                    }
                    return try Self.check(
                        ledger, engine: engine, market: market, caller: caller, request: order, hash: hash,
                        stepUpNotional: notional, now: now)
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

    /// One order's dry run inside the ledger's transaction: placed as `place` would place it,
    /// without a step-up (noted instead), and read back as a verdict.
    static func check(
        _ ledger: TradingLedger, engine: PaperEngine, market: Market, caller: Caller,
        request r: Components.Schemas.OrderRequest, hash: String, stepUpNotional: Decimal, now: Date
    ) throws -> Components.Schemas.OrderCheck {
        var note: DryRunNote? = DryRunNote()
        let order: Components.Schemas.Order, created: Bool
        do {
            (order, created) = try place(
                ledger, engine: engine, market: market, caller: caller, request: r, hash: hash, grant: nil,
                stepUpNotional: stepUpNotional, dryRun: &note, now: now)
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

    /// What a dry run notes instead of asking for a step-up.
    struct DryRunNote {
        var notionalTicks: Int64?
        /// Set when the order is above the step-up threshold: the hash its grant must bind.
        var actionHash: String?
    }

    /// Places an order inside the ledger's transaction; answers it and whether it is new.
    /// `hash` is `requestHash(r)`.
    static func place(
        _ ledger: TradingLedger, engine: PaperEngine, market: Market, caller: Caller,
        request r: Components.Schemas.OrderRequest, hash: String, grant: String?, stepUpNotional: Decimal,
        switchSession: String? = nil, now: Date
    ) throws -> (Components.Schemas.Order, Bool) {
        var none: DryRunNote? = nil
        return try place(
            ledger, engine: engine, market: market, caller: caller, request: r, hash: hash, grant: grant,
            stepUpNotional: stepUpNotional, switchSession: switchSession, dryRun: &none, now: now)
    }

    /// Places an order inside the ledger's transaction; answers it and whether it is new. With a
    /// `dryRun` note, a step-up is noted there instead of asked for (the caller rolls back).
    private static func place(
        _ ledger: TradingLedger, engine: PaperEngine, market: Market, caller: Caller,
        request r: Components.Schemas.OrderRequest, hash: String, grant: String?, stepUpNotional: Decimal,
        switchSession: String? = nil, dryRun: inout DryRunNote?, now: Date
    ) throws -> (Components.Schemas.Order, Bool) {
        try validate(r)
        // The same client_order_id again: the same order answers as it stands; another is a conflict.
        if let existing = try ledger.order(account: caller.accountID, clientOrderID: r.clientOrderId) {
            guard existing.requestHash == hash else {
                throw ProblemError(
                    409, code: .conflict, title: "This client_order_id was used for another order.",
                    detail: "Use a new client_order_id for a new order.")
            }
            return (try order(ledger, id: existing.id), false)
        }
        let accountMode = try ledger.mode(account: caller.accountID)
        guard r.mode == .paper, accountMode == .paper else {
            throw AuditedRefusal(
                ProblemError(403, code: .liveTradingRefused, title: "Live trading is not available; orders are paper only."),
                AuditEntry(
                    at: now, actor: caller.userID, action: .orderRefused, subject: caller.accountID,
                    details: ["client_order_id": r.clientOrderId, "reason": "live_trading_refused"]))
        }
        guard r.notAfter > now else {
            throw ProblemError(
                422, code: .deadlinePassed, title: "The order arrived after its deadline.",
                detail: "It was due by \(RFC3339.string(from: r.notAfter)).")
        }
        guard r.qty >= 1 else { throw ProblemError.badRequest("qty must be at least 1.") }
        var limit: Int64? = nil
        switch r._type {
        case .limit:
            guard let text = r.limitPrice, let ticks = Money.ticks(parsing: text), ticks > 0 else {
                throw ProblemError.badRequest("A limit order needs a positive limit_price.")
            }
            limit = ticks
        case .market:
            guard r.limitPrice == nil else { throw ProblemError.badRequest("A market order takes no limit_price.") }
        }
        guard let instrument = market.instrument(r.symbol), let price = market.priceTicks(instrument, at: now) else {
            throw ProblemError(422, code: .unknownSymbol, title: "The market has no such instrument.", detail: r.symbol)
        }
        // Large orders need a fresh passkey assertion bound to exactly this order. The notional is
        // judged at the price the order can trade at (`tradingPrice`), not at its limit alone.
        guard
            let notionalTicks = PaperEngine.value(
                r.qty, Self.tradingPrice(side: r.side, limit: limit, market: price),
                instrument.multiplier)
        else {
            throw ProblemError.badRequest("The order is too large.")
        }
        dryRun?.notionalTicks = notionalTicks
        // In ticks, without dividing: Decimal's division was 14 % of the sandbox's work on an order.
        let needsStepUp = Decimal(notionalTicks) > stepUpNotional * Decimal(Money.ticksPerUnit)
        if needsStepUp, dryRun != nil {
            dryRun?.actionHash = hash
        } else if needsStepUp {
            let gate = StepUpGate(
                actionHash: hash, needs: "This order needs a step-up.", notValidFor: "this order",
                actor: caller.userID, subject: caller.accountID,
                details: ["client_order_id": r.clientOrderId, "notional": Money.string(ticks: notionalTicks)])
            try gate.pass(grant, now: now) { grantHash in
                try ledger.consumeStepUpGrant(grantHash: grantHash, actionHash: hash, userID: caller.userID, now: now)
            }
        }
        let id = Identifier.make("ord")
        try ledger.insertOrder(
            NewOrder(
                id: id, account: caller.accountID, clientOrderID: r.clientOrderId, symbol: instrument.symbol,
                side: r.side, qty: r.qty, type: r._type, limit: limit, tif: r.tif,
                notAfter: r.notAfter, requestHash: hash, now: now, switchSession: switchSession))
        try ledger.audit(
            AuditEntry(
                at: now, actor: caller.userID, action: .orderPlaced, subject: caller.accountID,
                details: [
                    "order_id": id, "client_order_id": r.clientOrderId, "symbol": instrument.symbol,
                    "side": r.side.rawValue, "qty": "\(r.qty)",
                ]))
        try ledger.recordChange(account: caller.accountID, .order, id, at: now)
        guard var state = try ledger.orderState(id: id) else { throw ProblemError.internalError }
        // Buying power: cash less what open buy orders already commit.
        let available = try engine.buyingPower(ledger, account: caller.accountID, excluding: id, now: now)
        // Paper accounts sell only what they hold, less what open sell orders already commit.
        let sellable =
            try r.side == .sell
            ? engine.sellablePosition(
                ledger, account: caller.accountID, symbol: instrument.symbol,
                excluding: id) : 0
        if r.side == .buy, notionalTicks > available {
            try engine.setStatus(ledger, &state, .rejected, rejectCode: RejectCode.insufficientBuyingPower, now: now)
        } else if r.side == .sell, r.qty > sellable {
            try engine.setStatus(ledger, &state, .rejected, rejectCode: RejectCode.insufficientPosition, now: now)
        } else {
            try engine.work(ledger, &state, now: now)
        }
        return (try order(ledger, id: id), true)
    }

    /// The largest order the spec admits.
    static let maxQty: Int64 = 1_000_000

    /// The spec's own limits on an order request, which the generated server does not enforce:
    /// client_order_id (1 to 64 of `A-Z a-z 0-9 . _ : -`), symbol (1 to 32 characters), qty (1 to
    /// 1,000,000).
    static func validate(_ r: Components.Schemas.OrderRequest) throws {
        let id = r.clientOrderId
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy(Self.isClientOrderIDByte) else {
            throw ProblemError.badRequest("Field 'client_order_id' must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'.")
        }
        guard (1...32).contains(r.symbol.unicodeScalars.count) else {
            throw ProblemError.badRequest("Field 'symbol' must be 1 to 32 characters.")
        }
        // (qty below 1 is refused further on, as it always was.)
        guard r.qty <= maxQty else { throw ProblemError.badRequest("Field 'qty' must be at most \(maxQty).") }
    }

    private static func isClientOrderIDByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// The price an order can trade at, per unit, in ticks: a market order at the market; a buy
    /// limit at most at its limit; a sell limit at its limit or above, so at the higher of the
    /// limit and the market (a sell limited far below the market fills at the market).
    static func tradingPrice(side: Components.Schemas.Side, limit: Int64?, market: Int64) -> Int64 {
        guard let limit else { return market }
        return side == .sell ? max(limit, market) : limit
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
