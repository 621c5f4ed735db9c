import Foundation
import RaxxAPI
import RaxxDomain
import RaxxWire

/// Whether an order request is accepted, and on what terms, inside the caller's trading
/// transaction (`TradingLedger`). The rules are judged in this order, the first that fails
/// answering:
/// 1. the spec's limits on the request (`validate`): 400 `bad_request`;
/// 2. idempotency on client_order_id: the same request again (the same `requestHash`) is the
///    order as it stands, nothing changed; another request under it is a 409 `conflict`;
/// 3. paper first: a live order, or any order of an account that is not a paper one, is refused
///    (403 `live_trading_refused`), audited although the transaction rolls back (`AuditedRefusal`);
/// 4. the deadline: an order arriving after its not_after is refused (422 `deadline_passed`);
/// 5. the terms: qty at least 1, a positive limit_price on a limit order and none on a market
///    order (400), an instrument the market lists (422 `unknown_symbol`), a notional that fits;
/// 6. the step-up: an order whose notional, at the price it can trade at (`tradingPrice`), is
///    above `stepUpNotional` needs a grant bound to its request hash, spent here (`StepUpGate`);
/// 7. buying power, once the order is placed: a buy beyond the cash its account has not committed
///    to open buys, or a sell beyond the position not committed to open sells, is rejected (an
///    order with a reject code, not a refusal); any other order is worked at once.
///
/// The handler decodes the request, runs `place` in the transaction and answers its `Outcome`.
struct OrderAcceptance: Sendable {
    let engine: PaperEngine
    /// The notional, in currency units, above which an order needs a step-up.
    let stepUpNotional: Decimal

    var market: Market { engine.market }

    /// What `place` did with a request.
    enum Outcome: Sendable, Equatable {
        /// The same request was placed before under its client_order_id: nothing changed.
        case alreadyPlaced(orderID: String)
        /// A new order: rejected for buying power or position, or worked.
        case placed(orderID: String)
    }

    /// What `judge` decides, before the order is written.
    enum Decision: Sendable, Equatable {
        /// The same request was placed before under its client_order_id.
        case alreadyPlaced(orderID: String)
        /// A new order, on these terms (its step-up, if it needed one, spent).
        case accept(Terms)
    }

    /// The terms an accepted request is placed on.
    struct Terms: Sendable, Equatable {
        /// The instrument's symbol as the market spells it.
        var symbol: String
        /// A limit order's limit, in ticks.
        var limit: Int64?
        /// qty × the price the order can trade at × the multiplier, in ticks.
        var notionalTicks: Int64
    }

    /// What a dry run notes instead of asking for a step-up.
    struct DryRunNote {
        var notionalTicks: Int64?
        /// Set when the order is above the step-up threshold: the hash its grant must bind.
        var actionHash: String?
    }

    /// Rule 2 within a check of several orders (`checkOrders`): each is placed as a dry run in one
    /// transaction, against what the ones before it leave, so a client_order_id a second time would
    /// find the first's row, rolled back afterwards. It is refused as another order under a used
    /// client_order_id is: 409 `conflict`. `seen` holds the ids the check has admitted.
    static func admitToCheck(_ r: Components.Schemas.OrderRequest, seen: inout Set<String>) throws(ProblemError) {
        guard seen.insert(r.clientOrderId).inserted else {
            throw ProblemError(
                409, code: .conflict, title: "This client_order_id is used twice in the check.",
                detail: "Each order needs a client_order_id of its own.")
        }
    }

    /// The hash of an order request: what its client_order_id is held to (rule 2) and what its
    /// step-up grant must be bound to (rule 6).
    static func requestHash(_ r: Components.Schemas.OrderRequest) -> String {
        OrderAction(
            clientOrderID: r.clientOrderId, symbol: r.symbol.uppercased(), side: r.side, qty: r.qty, type: r._type,
            limitPrice: r.limitPrice, tif: r.tif, mode: r.mode
        ).hash
    }

    /// Places request `r` of `caller` (rules 1 to 7). `hash` is `requestHash(r)`; `switchSession`
    /// is the session whose armed dead man's switch covers the order.
    func place(
        _ ledger: TradingLedger, caller: Caller, request r: Components.Schemas.OrderRequest, hash: String, grant: String?,
        switchSession: String? = nil, now: Date
    ) throws -> Outcome {
        var none: DryRunNote? = nil
        return try place(ledger, caller: caller, request: r, hash: hash, grant: grant, switchSession: switchSession, dryRun: &none, now: now)
    }

    /// Places request `r` of `caller` (rules 1 to 7). With a `dryRun` note, a step-up is noted
    /// there instead of asked for (the caller rolls back).
    func place(
        _ ledger: TradingLedger, caller: Caller, request r: Components.Schemas.OrderRequest, hash: String, grant: String?,
        switchSession: String? = nil, dryRun: inout DryRunNote?, now: Date
    ) throws -> Outcome {
        let terms: Terms
        switch try judge(ledger, caller: caller, request: r, hash: hash, grant: grant, dryRun: &dryRun, now: now) {
        case .alreadyPlaced(let id): return .alreadyPlaced(orderID: id)
        case .accept(let accepted): terms = accepted
        }
        let id = Identifier.make("ord")
        try ledger.insertOrder(
            NewOrder(
                id: id, account: caller.accountID, clientOrderID: r.clientOrderId, symbol: terms.symbol,
                side: r.side, qty: r.qty, type: r._type, limit: terms.limit, tif: r.tif,
                notAfter: r.notAfter, requestHash: hash, now: now, switchSession: switchSession))
        try ledger.audit(
            AuditEntry(
                at: now, actor: caller.userID, action: .orderPlaced, subject: caller.accountID,
                details: [
                    "order_id": id, "client_order_id": r.clientOrderId, "symbol": terms.symbol,
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
                ledger, account: caller.accountID, symbol: terms.symbol,
                excluding: id) : 0
        if r.side == .buy, terms.notionalTicks > available {
            try engine.setStatus(ledger, &state, .rejected, rejectCode: RejectCode.insufficientBuyingPower, now: now)
        } else if r.side == .sell, r.qty > sellable {
            try engine.setStatus(ledger, &state, .rejected, rejectCode: RejectCode.insufficientPosition, now: now)
        } else {
            try engine.work(ledger, &state, now: now)
        }
        return .placed(orderID: id)
    }

    /// Judges request `r` of `caller` (rules 1 to 6): the order placed before under its
    /// client_order_id, or the terms it is accepted on, its step-up spent. `hash` is
    /// `requestHash(r)`. With a `dryRun` note, the notional is noted there, and a step-up too
    /// instead of being asked for.
    func judge(
        _ ledger: TradingLedger, caller: Caller, request r: Components.Schemas.OrderRequest, hash: String, grant: String?,
        dryRun: inout DryRunNote?, now: Date
    ) throws -> Decision {
        try Self.validate(r)
        // The same client_order_id again: the same order answers as it stands; another is a conflict.
        if let existing = try ledger.order(account: caller.accountID, clientOrderID: r.clientOrderId) {
            guard existing.requestHash == hash else {
                throw ProblemError(
                    409, code: .conflict, title: "This client_order_id was used for another order.",
                    detail: "Use a new client_order_id for a new order.")
            }
            return .alreadyPlaced(orderID: existing.id)
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
        if Self.needsStepUp(notionalTicks: notionalTicks, threshold: stepUpNotional) {
            if dryRun != nil {
                dryRun?.actionHash = hash
            } else {
                let gate = StepUpGate(
                    actionHash: hash, needs: "This order needs a step-up.", notValidFor: "this order",
                    actor: caller.userID, subject: caller.accountID,
                    details: ["client_order_id": r.clientOrderId, "notional": Money.string(ticks: notionalTicks)])
                try gate.pass(grant, now: now) { grantHash in
                    try ledger.consumeStepUpGrant(grantHash: grantHash, actionHash: hash, userID: caller.userID, now: now)
                }
            }
        }
        return .accept(Terms(symbol: instrument.symbol, limit: limit, notionalTicks: notionalTicks))
    }

    /// Whether an order of `notionalTicks` needs a step-up: above `threshold` (in currency units).
    static func needsStepUp(notionalTicks: Int64, threshold: Decimal) -> Bool {
        // In ticks, without dividing: Decimal's division was 14 % of the sandbox's work on an order.
        Decimal(notionalTicks) > threshold * Decimal(Money.ticksPerUnit)
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
}
