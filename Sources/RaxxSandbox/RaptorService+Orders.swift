import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxDomain

/// Order entry on the paper engine: idempotent on client_order_id, refusing live trading and late
/// arrivals, asking for a step-up above the notional threshold.
extension RaptorService {
    var engine: PaperEngine { PaperEngine(market: market) }

    public func getInstruments(_ input: Operations.GetInstruments.Input) async throws -> Operations.GetInstruments.Output {
        _ = try await authenticate()
        let now = clock()
        var known: [Components.Schemas.Instrument] = []
        var unknown: [String] = []
        for symbol in input.query.symbol {
            guard let instrument = market.instrument(symbol), let price = market.priceTicks(instrument, at: now) else {
                unknown.append(symbol)
                continue
            }
            var underlying: String? = nil
            if case .option(let contract) = instrument { underlying = contract.underlying }
            known.append(.init(symbol: instrument.symbol, kind: underlying == nil ? .equity : .option, underlying: underlying,
                               price: Money.string(ticks: price), multiplier: Int(instrument.multiplier)))
        }
        return .ok(.init(body: .json(.init(instruments: known, unknown: unknown))))
    }

    static func requestHash(_ r: Components.Schemas.OrderRequest) -> String {
        OrderAction(clientOrderID: r.clientOrderId, symbol: r.symbol.uppercased(), side: r.side, qty: r.qty, type: r._type,
                    limitPrice: r.limitPrice, tif: r.tif, mode: r.mode).hash
    }

    public func placeOrder(_ input: Operations.PlaceOrder.Input) async throws -> Operations.PlaceOrder.Output {
        let caller = try await authenticate()
        guard case .json(let request) = input.body else { throw ProblemError.badRequest("Expected JSON.") }
        let now = clock()
        let grant = input.headers.raxxStepUpGrant
        let notional = configuration.stepUpNotional
        let (order, created) = try await database.writer.write { db -> (Components.Schemas.Order, Bool) in
            try engine.sweep(db, account: caller.accountID, now: now)
            return try place(db, caller: caller, request: request, grant: grant, stepUpNotional: notional, now: now)
        }
        if created, faults.loseThisReply() {
            // Fault injection (--fault-lose-order-replies): the order is placed, the answer never comes.
            try? await Task.sleep(for: .seconds(5))
            throw ProblemError(503, code: "unavailable", title: "The reply was lost (fault injection).")
        }
        return created ? .created(.init(body: .json(order))) : .ok(.init(body: .json(order)))
    }

    func place(_ db: Database, caller: Caller, request r: Components.Schemas.OrderRequest, grant: String?, stepUpNotional: Decimal,
               now: Date) throws -> (Components.Schemas.Order, Bool) {
        let hash = Self.requestHash(r)
        // The same client_order_id again: the same order answers as it stands; another is a conflict.
        if let existing = try Row.fetchOne(db, sql: "SELECT id, request_hash FROM orders WHERE account_id = ? AND client_order_id = ?",
                                           arguments: [caller.accountID, r.clientOrderId]) {
            guard existing["request_hash"] == hash else {
                throw ProblemError(409, code: "conflict", title: "This client_order_id was used for another order.",
                                   detail: "Use a new client_order_id for a new order.")
            }
            return (try order(db, id: existing["id"]), false)
        }
        let accountMode = try String.fetchOne(db, sql: "SELECT mode FROM accounts WHERE id = ?", arguments: [caller.accountID])
        guard r.mode == .paper, accountMode == "paper" else {
            try SandboxDatabase.audit(db, at: now, actor: caller.userID, action: "order.refused", subject: caller.accountID,
                                      details: ["client_order_id": r.clientOrderId, "reason": "live_trading_refused"])
            throw ProblemError(403, code: "live_trading_refused", title: "Live trading is not available; orders are paper only.")
        }
        guard r.notAfter > now else {
            throw ProblemError(422, code: "deadline_passed", title: "The order arrived after its deadline.",
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
            throw ProblemError(422, code: "unknown_symbol", title: "The market has no such instrument.", detail: r.symbol)
        }
        // Large orders need a fresh passkey assertion bound to exactly this order.
        guard let notionalTicks = PaperEngine.value(r.qty, limit ?? price, instrument.multiplier) else {
            throw ProblemError.badRequest("The order is too large.")
        }
        if Decimal(notionalTicks) / Decimal(Money.ticksPerUnit) > stepUpNotional {
            guard let grant else {
                var problem = ProblemError(403, code: "step_up_required", title: "This order needs a step-up.",
                                           detail: "Confirm it with your passkey; the grant must be bound to action_hash.")
                problem.actionHash = hash
                throw problem
            }
            guard try consumeStepUpGrant(db, grant: grant, actionHash: hash, userID: caller.userID, now: now) else {
                try SandboxDatabase.audit(db, at: now, actor: caller.userID, action: "step_up.refused", subject: caller.accountID,
                                          details: ["client_order_id": r.clientOrderId, "reason": "grant_invalid"])
                throw ProblemError(403, code: "step_up_invalid", title: "The step-up grant is not valid for this order.")
            }
        }
        let id = Identifier.make("ord")
        try db.execute(sql: """
            INSERT INTO orders (id, account_id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty, mode,
            not_after, request_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', 0, 'paper', ?, ?, ?, ?)
            """, arguments: [id, caller.accountID, r.clientOrderId, instrument.symbol, r.side.rawValue, r.qty, r._type.rawValue, limit,
                             r.tif.rawValue, r.notAfter.timeIntervalSince1970, hash, now.timeIntervalSince1970, now.timeIntervalSince1970])
        try SandboxDatabase.audit(db, at: now, actor: caller.userID, action: "order.placed", subject: caller.accountID,
                                  details: ["order_id": id, "client_order_id": r.clientOrderId, "symbol": instrument.symbol,
                                            "side": r.side.rawValue, "qty": "\(r.qty)"])
        try ChangeLog.record(db, account: caller.accountID, .order, id, at: now)
        guard var row = try PaperEngine.load(db, id: id) else { throw ProblemError.internalError }
        // Buying power: cash less what open buy orders already commit.
        let available = try engine.buyingPower(db, account: caller.accountID, excluding: id, now: now)
        if r.side == .buy, notionalTicks > available {
            try engine.setStatus(db, &row, "rejected", rejectCode: "insufficient_buying_power", now: now)
        } else {
            try engine.work(db, orderID: id, now: now)
        }
        return (try order(db, id: id), true)
    }

    func order(_ db: Database, id: String) throws -> Components.Schemas.Order {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.orderColumns) FROM orders WHERE id = ?", arguments: [id]) else {
            throw ProblemError.notFound("No order \(id).")
        }
        return Self.order(row)
    }

    public func listOrders(_ input: Operations.ListOrders.Input) async throws -> Operations.ListOrders.Output {
        let caller = try await authenticate()
        let now = clock()
        let limit = min(max(input.query.limit ?? 100, 1), 1000)
        let before = try input.query.before.map { text -> Int64 in
            guard let v = Int64(text) else { throw ProblemError(400, code: "cursor_invalid", title: "Not a page cursor: \(text).") }
            return v
        }
        let list = try await database.writer.write { db -> Components.Schemas.OrderList in
            try engine.sweep(db, account: caller.accountID, now: now)
            var clauses = ["account_id = ?"]
            var arguments: StatementArguments = [caller.accountID]
            if let status = input.query.status { clauses.append("status = ?"); arguments += [status.rawValue] }
            if let id = input.query.clientOrderId { clauses.append("client_order_id = ?"); arguments += [id] }
            if let before { clauses.append("rowid < ?"); arguments += [before] }
            let rows = try Row.fetchAll(db, sql: """
                SELECT rowid AS page_key, \(Self.orderColumns) FROM orders WHERE \(clauses.joined(separator: " AND "))
                ORDER BY rowid DESC LIMIT \(limit + 1)
                """, arguments: arguments)
            let page = rows.prefix(limit)
            return .init(orders: page.map(Self.order), nextBefore: rows.count > limit ? page.last.map { "\($0["page_key"] as Int64)" } : nil)
        }
        return .ok(.init(body: .json(list)))
    }

    public func getOrder(_ input: Operations.GetOrder.Input) async throws -> Operations.GetOrder.Output {
        let caller = try await authenticate()
        let now = clock()
        let order = try await database.writer.write { db -> Components.Schemas.Order in
            try engine.sweep(db, account: caller.accountID, now: now)
            guard let id = try String.fetchOne(db, sql: "SELECT id FROM orders WHERE id = ? AND account_id = ?",
                                               arguments: [input.path.orderId, caller.accountID]) else {
                throw ProblemError.notFound("No order \(input.path.orderId).")
            }
            return try self.order(db, id: id)
        }
        return .ok(.init(body: .json(order)))
    }

    public func cancelOrder(_ input: Operations.CancelOrder.Input) async throws -> Operations.CancelOrder.Output {
        let caller = try await authenticate()
        let now = clock()
        let order = try await database.writer.write { db -> Components.Schemas.Order in
            try engine.sweep(db, account: caller.accountID, now: now)
            guard var row = try PaperEngine.load(db, id: input.path.orderId), row.account == caller.accountID else {
                throw ProblemError.notFound("No order \(input.path.orderId).")
            }
            guard ["open", "partially_filled", "pending"].contains(row.status) else {
                throw ProblemError(409, code: "not_cancellable", title: "The order is \(row.status) and can no longer be cancelled.")
            }
            try engine.setStatus(db, &row, "cancelled", now: now)
            return try self.order(db, id: row.id)
        }
        return .ok(.init(body: .json(order)))
    }
}

/// Lost replies on demand, for tests of what a client does when it cannot know an order's fate.
final class FaultInjector: @unchecked Sendable {
    private let lock = NSLock()
    private var lostReplies: Int

    init(loseOrderReplies: Int) { lostReplies = loseOrderReplies }

    func loseThisReply() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard lostReplies > 0 else { return false }
        lostReplies -= 1
        return true
    }
}
