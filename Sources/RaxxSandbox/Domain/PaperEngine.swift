import Foundation
import RaxxCore
import RaxxDomain

/// Paper trading on the simulated market. Marketable orders fill at the market's price, at most
/// `liquidity` units per pass (so large orders fill partially, over several passes); positions,
/// cash, the change log, events (`fill_confirmed` and `order_rejected`, with what they are about)
/// and the audit trail change in the same transaction as each fill (the caller's, through
/// `TradingLedger`). Deterministic under the market's seed and the clock.
struct PaperEngine: Sendable {
    let market: Market

    /// qty × price × multiplier in ticks, or nil when it does not fit.
    static func value(_ qty: Int64, _ price: Int64, _ multiplier: Int64) -> Int64? {
        let (a, o1) = qty.multipliedReportingOverflow(by: price)
        let (b, o2) = a.multipliedReportingOverflow(by: multiplier)
        return o1 || o2 ? nil : b
    }

    // MARK: The arithmetic of a fill (shared with the seeder, so seeded histories follow the same rules)

    /// What a fill does to cash: a buy pays qty × price × multiplier, a sell receives it.
    static func cashChange(buy: Bool, qty: Int64, price: Int64, multiplier: Int64) -> Int64 {
        let value = qty * price * multiplier
        return buy ? -value : value
    }

    /// An order's average fill price after one more fill of `qty` at `price`.
    static func orderAverage(_ average: Int64?, filled: Int64, qty: Int64, price: Int64) -> Int64 {
        ((average ?? 0) * filled + price * qty) / (filled + qty)
    }

    /// A position (`held` at `average`, zero when there is none) after a fill of `qty` at `price`:
    /// growing it averages the price in, shrinking it keeps the average, crossing zero starts over
    /// at the fill's price. A quantity of zero means the position is closed.
    static func position(held: Int64, average: Int64, buy: Bool, qty: Int64, price: Int64) -> (qty: Int64, average: Int64) {
        let signed = buy ? qty : -qty
        let newQty = held + signed
        guard newQty != 0 else { return (0, 0) }
        let growing = (held >= 0 && signed > 0) || (held <= 0 && signed < 0)
        let crossed = (held > 0 && newQty < 0) || (held < 0 && newQty > 0)
        return (newQty, growing ? (abs(held) * average + qty * price) / abs(newQty) : (crossed ? price : average))
    }

    /// Cash less what the account's open buy orders (other than `excluding`) still commit.
    func buyingPower(_ ledger: TradingLedger, account: String, excluding: String? = nil, now: Date) throws -> Int64 {
        var available = try ledger.cash(account: account) ?? 0
        for r in try ledger.openBuys(account: account, excluding: excluding) {
            guard let instrument = market.instrument(r.symbol) else { continue }
            let price: Int64 = r.limit ?? market.priceTicks(instrument, at: now) ?? 0
            available -= Self.value(r.openQty, price, instrument.multiplier) ?? Int64.max / 2
        }
        return available
    }

    /// What the account can still sell of `symbol`: the position held, less the open quantity of
    /// its open sell orders (other than `excluding`). Never negative.
    func sellablePosition(_ ledger: TradingLedger, account: String, symbol: String, excluding: String? = nil) throws -> Int64 {
        let held = try ledger.holding(account: account, symbol: symbol)?.qty ?? 0
        let committed = try ledger.openSellQty(account: account, symbol: symbol, excluding: excluding)
        return max(held - committed, 0)
    }

    /// The most one pass fills of one order.
    static func liquidity(_ instrument: Market.Instrument) -> Int64 { instrument.multiplier == 1 ? 1_000 : 25 }

    /// Moves every open order of `account` on: day orders from an earlier (UTC) day expire, and
    /// marketable ones fill as far as liquidity allows.
    func sweep(_ ledger: TradingLedger, account: String, now: Date) throws {
        for id in try ledger.openOrderIDs(account: account) { try work(ledger, orderID: id, now: now) }
    }

    /// One pass over one open order.
    func work(_ ledger: TradingLedger, orderID: String, now: Date) throws {
        guard var order = try ledger.orderState(id: orderID) else { return }
        try work(ledger, &order, now: now)
    }

    /// One pass over `order`, as the ledger holds it now (an order just placed, read once).
    func work(_ ledger: TradingLedger, _ order: inout OrderState, now: Date) throws {
        guard OrderStatus.resting.contains(order.status) else { return }
        if order.tif == .day, Self.utcDay(order.createdAt) < Self.utcDay(now.timeIntervalSince1970) {
            try setStatus(ledger, &order, .expired, now: now)
            return
        }
        guard let instrument = market.instrument(order.symbol), let price = market.priceTicks(instrument, at: now) else {
            try setStatus(ledger, &order, .expired, now: now)  // the contract expired under the order
            return
        }
        let marketable =
            switch (order.type, order.side) {
            case (.market, _): true
            case (.limit, .buy): price <= (order.limit ?? 0)
            case (.limit, .sell): price >= (order.limit ?? Int64.max)
            }
        guard marketable else { return }
        let qty = min(order.qty - order.filled, Self.liquidity(instrument))
        if order.side == .buy {
            // Cash is checked again at every fill: a paper account never goes below zero.
            let cash = try ledger.cash(account: order.account) ?? 0
            guard let cost = Self.value(qty, price, instrument.multiplier), cost <= cash else {
                try setStatus(ledger, &order, order.filled == 0 ? .rejected : .cancelled, rejectCode: RejectCode.insufficientBuyingPower, now: now)
                return
            }
        }
        try fill(ledger, &order, qty: qty, price: price, instrument: instrument, now: now)
    }

    private static func utcDay(_ t: Double) -> Int { Int((t / 86_400).rounded(.down)) }

    func setStatus(_ ledger: TradingLedger, _ order: inout OrderState, _ status: OrderStatus, rejectCode: String? = nil, now: Date) throws {
        order.status = status
        try ledger.setStatus(orderID: order.id, status, rejectCode: rejectCode, now: now)
        try ledger.recordChange(account: order.account, .order, order.id, at: now)
        try ledger.audit(
            AuditEntry(
                at: now, actor: order.userID, action: .order(status), subject: order.account,
                details: ["order_id": order.id, "reject_code": rejectCode ?? ""].filter { !$0.value.isEmpty }))
        if status == .rejected {
            try ledger.event(
                NewEvent(
                    user: order.userID, type: .orderRejected, order: order.id,
                    title: "Order rejected: \(order.side.rawValue) \(order.qty) \(order.symbol)",
                    body: rejectCode.map { "Reason: \($0.replacingOccurrences(of: "_", with: " "))." },
                    symbol: order.symbol, side: order.side, qty: order.qty, reason: rejectCode, at: now))
        }
    }

    func fill(_ ledger: TradingLedger, _ order: inout OrderState, qty: Int64, price: Int64, instrument: Market.Instrument, now: Date) throws {
        let fillID = Identifier.make("fil")
        let buy = order.side == .buy
        let cashChange = Self.cashChange(buy: buy, qty: qty, price: price, multiplier: instrument.multiplier)
        try ledger.insertFill(
            NewFill(
                id: fillID, account: order.account, orderID: order.id, symbol: order.symbol, side: order.side,
                qty: qty, price: price, at: now))
        try ledger.recordChange(account: order.account, .fill, fillID, at: now)
        // The order.
        let filled = order.filled + qty
        let average = Self.orderAverage(order.averageFill, filled: order.filled, qty: qty, price: price)
        order.filled = filled
        order.averageFill = average
        order.status = filled == order.qty ? .filled : .partiallyFilled
        try ledger.setFilled(orderID: order.id, filled: filled, averagePrice: average, status: order.status, now: now)
        try ledger.recordChange(account: order.account, .order, order.id, at: now)
        // Cash.
        try ledger.addCash(account: order.account, cashChange)
        // The position.
        let p = try ledger.holding(account: order.account, symbol: order.symbol)
        let next = Self.position(held: p?.qty ?? 0, average: p?.averagePrice ?? 0, buy: buy, qty: qty, price: price)
        if let p {
            if next.qty == 0 {
                try ledger.deletePosition(id: p.id)
                try ledger.recordChange(account: order.account, .position, p.id, deleted: true, at: now)
            } else {
                try ledger.updatePosition(id: p.id, qty: next.qty, averagePrice: next.average, now: now)
                try ledger.recordChange(account: order.account, .position, p.id, at: now)
            }
        } else {
            let id = Identifier.make("pos")
            try ledger.insertPosition(id: id, account: order.account, symbol: order.symbol, qty: next.qty, averagePrice: next.average, now: now)
            try ledger.recordChange(account: order.account, .position, id, at: now)
        }
        try ledger.audit(
            AuditEntry(
                at: now, actor: order.userID, action: .orderFilled, subject: order.account,
                details: [
                    "order_id": order.id, "fill_id": fillID, "qty": "\(qty)", "price": Money.string(ticks: price),
                    "cash_change": Money.string(ticks: cashChange),
                ]))
        try ledger.event(
            NewEvent(
                user: order.userID, type: .fillConfirmed, order: order.id,
                title: "Filled: \(order.side.rawValue) \(qty) \(order.symbol) at \(Money.string(ticks: price))",
                body: order.status == .filled ? "The order is complete." : "\(order.qty - order.filled) still open.",
                symbol: order.symbol, side: order.side, qty: qty, price: price, at: now))
    }
}
