import Foundation
import GRDB
import RaxxCore

/// Paper trading on the simulated market. Marketable orders fill at the market's price, at most
/// `liquidity` units per pass (so large orders fill partially, over several passes); positions,
/// cash, the change log, events and the audit trail change in the same transaction as each fill.
/// Deterministic under the market's seed and the clock.
struct PaperEngine {
    let market: Market

    /// qty × price × multiplier in ticks, or nil when it does not fit.
    static func value(_ qty: Int64, _ price: Int64, _ multiplier: Int64) -> Int64? {
        let (a, o1) = qty.multipliedReportingOverflow(by: price)
        let (b, o2) = a.multipliedReportingOverflow(by: multiplier)
        return o1 || o2 ? nil : b
    }

    /// Cash less what the account's open buy orders (other than `excluding`) still commit.
    func buyingPower(_ db: Database, account: String, excluding: String? = nil, now: Date) throws -> Int64 {
        var available = try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts WHERE id = ?", arguments: [account]) ?? 0
        for r in try Row.fetchAll(db, sql: """
            SELECT id, symbol, qty - filled_qty AS open_qty, limit_price_ticks FROM orders
            WHERE account_id = ? AND side = 'buy' AND status IN ('open', 'partially_filled') AND id != ?
            """, arguments: [account, excluding ?? ""]) {
            guard let instrument = market.instrument(r["symbol"]) else { continue }
            let price: Int64 = r["limit_price_ticks"] ?? market.priceTicks(instrument, at: now) ?? 0
            available -= Self.value(r["open_qty"], price, instrument.multiplier) ?? Int64.max / 2
        }
        return available
    }

    /// The most one pass fills of one order.
    static func liquidity(_ instrument: Market.Instrument) -> Int64 { instrument.multiplier == 1 ? 1_000 : 25 }

    struct OrderRow {
        var id: String, account: String, userID: String, symbol: String, side: String, qty: Int64, type: String
        var limit: Int64?, tif: String, status: String, filled: Int64, averageFill: Int64?, createdAt: Double
    }

    static func load(_ db: Database, id: String) throws -> OrderRow? {
        guard let r = try Row.fetchOne(db, sql: """
            SELECT o.id, o.account_id, a.user_id, o.symbol, o.side, o.qty, o.type, o.limit_price_ticks, o.tif, o.status, o.filled_qty,
                   o.avg_fill_price_ticks, o.created_at
            FROM orders o JOIN accounts a ON a.id = o.account_id WHERE o.id = ?
            """, arguments: [id]) else { return nil }
        return OrderRow(id: r[0], account: r[1], userID: r[2], symbol: r[3], side: r[4], qty: r[5], type: r[6], limit: r[7], tif: r[8],
                        status: r[9], filled: r[10], averageFill: r[11], createdAt: r[12])
    }

    /// Moves every open order of `account` on: day orders from an earlier (UTC) day expire, and
    /// marketable ones fill as far as liquidity allows.
    func sweep(_ db: Database, account: String, now: Date) throws {
        let ids = try String.fetchAll(db, sql: "SELECT id FROM orders WHERE account_id = ? AND status IN ('open', 'partially_filled') ORDER BY rowid",
                                      arguments: [account])
        for id in ids { try work(db, orderID: id, now: now) }
    }

    /// One pass over one open order.
    func work(_ db: Database, orderID: String, now: Date) throws {
        guard var order = try Self.load(db, id: orderID), ["open", "partially_filled"].contains(order.status) else { return }
        if order.tif == "day", Self.utcDay(order.createdAt) < Self.utcDay(now.timeIntervalSince1970) {
            try setStatus(db, &order, "expired", now: now)
            return
        }
        guard let instrument = market.instrument(order.symbol), let price = market.priceTicks(instrument, at: now) else {
            try setStatus(db, &order, "expired", now: now) // the contract expired under the order
            return
        }
        let marketable = switch (order.type, order.side) {
        case ("market", _): true
        case (_, "buy"): price <= (order.limit ?? 0)
        default: price >= (order.limit ?? Int64.max)
        }
        guard marketable else { return }
        let qty = min(order.qty - order.filled, Self.liquidity(instrument))
        if order.side == "buy" {
            // Cash is checked again at every fill: a paper account never goes below zero.
            let cash = try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts WHERE id = ?", arguments: [order.account]) ?? 0
            guard let cost = Self.value(qty, price, instrument.multiplier), cost <= cash else {
                try setStatus(db, &order, order.filled == 0 ? "rejected" : "cancelled", rejectCode: "insufficient_buying_power", now: now)
                return
            }
        }
        try fill(db, &order, qty: qty, price: price, instrument: instrument, now: now)
    }

    private static func utcDay(_ t: Double) -> Int { Int((t / 86_400).rounded(.down)) }

    func setStatus(_ db: Database, _ order: inout OrderRow, _ status: String, rejectCode: String? = nil, now: Date) throws {
        order.status = status
        try db.execute(sql: "UPDATE orders SET status = ?, reject_code = COALESCE(?, reject_code), updated_at = ? WHERE id = ?",
                       arguments: [status, rejectCode, now.timeIntervalSince1970, order.id])
        try ChangeLog.record(db, account: order.account, .order, order.id, at: now)
        try SandboxDatabase.audit(db, at: now, actor: order.userID, action: "order.\(status)", subject: order.account,
                                  details: ["order_id": order.id, "reject_code": rejectCode ?? ""].filter { !$0.value.isEmpty })
        if status == "rejected" {
            try event(db, user: order.userID, type: "order_rejected", order: order.id,
                      title: "Order rejected: \(order.side) \(order.qty) \(order.symbol)",
                      body: rejectCode.map { "Reason: \($0.replacingOccurrences(of: "_", with: " "))." }, now: now)
        }
    }

    func fill(_ db: Database, _ order: inout OrderRow, qty: Int64, price: Int64, instrument: Market.Instrument, now: Date) throws {
        let fillID = Identifier.make("fil")
        let signed = order.side == "buy" ? qty : -qty
        let value = qty * price * instrument.multiplier
        try db.execute(sql: "INSERT INTO fills (id, account_id, order_id, symbol, side, qty, price_ticks, filled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       arguments: [fillID, order.account, order.id, order.symbol, order.side, qty, price, now.timeIntervalSince1970])
        try ChangeLog.record(db, account: order.account, .fill, fillID, at: now)
        // The order.
        let filled = order.filled + qty
        let average = ((order.averageFill ?? 0) * order.filled + price * qty) / filled
        order.filled = filled
        order.averageFill = average
        order.status = filled == order.qty ? "filled" : "partially_filled"
        try db.execute(sql: "UPDATE orders SET filled_qty = ?, avg_fill_price_ticks = ?, status = ?, updated_at = ? WHERE id = ?",
                       arguments: [filled, average, order.status, now.timeIntervalSince1970, order.id])
        try ChangeLog.record(db, account: order.account, .order, order.id, at: now)
        // Cash.
        try db.execute(sql: "UPDATE accounts SET cash_ticks = cash_ticks + ? WHERE id = ?", arguments: [order.side == "buy" ? -value : value, order.account])
        // The position.
        if let p = try Row.fetchOne(db, sql: "SELECT id, qty, avg_price_ticks FROM positions WHERE account_id = ? AND symbol = ?",
                                   arguments: [order.account, order.symbol]) {
            let id: String = p[0], held: Int64 = p[1], heldAverage: Int64 = p[2]
            let newQty = held + signed
            if newQty == 0 {
                try db.execute(sql: "DELETE FROM positions WHERE id = ?", arguments: [id])
                try ChangeLog.record(db, account: order.account, .position, id, deleted: true, at: now)
            } else {
                let growing = (held >= 0 && signed > 0) || (held <= 0 && signed < 0)
                let crossed = (held > 0 && newQty < 0) || (held < 0 && newQty > 0)
                let newAverage = growing ? (abs(held) * heldAverage + qty * price) / abs(newQty) : (crossed ? price : heldAverage)
                try db.execute(sql: "UPDATE positions SET qty = ?, avg_price_ticks = ?, updated_at = ? WHERE id = ?",
                               arguments: [newQty, newAverage, now.timeIntervalSince1970, id])
                try ChangeLog.record(db, account: order.account, .position, id, at: now)
            }
        } else {
            let id = Identifier.make("pos")
            try db.execute(sql: "INSERT INTO positions (id, account_id, symbol, qty, avg_price_ticks, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                           arguments: [id, order.account, order.symbol, signed, price, now.timeIntervalSince1970])
            try ChangeLog.record(db, account: order.account, .position, id, at: now)
        }
        try SandboxDatabase.audit(db, at: now, actor: order.userID, action: "order.filled", subject: order.account,
                                  details: ["order_id": order.id, "fill_id": fillID, "qty": "\(qty)", "price": Money.string(ticks: price),
                                            "cash_change": Money.string(ticks: order.side == "buy" ? -value : value)])
        try event(db, user: order.userID, type: "fill_confirmed", order: order.id,
                  title: "Filled: \(order.side) \(qty) \(order.symbol) at \(Money.string(ticks: price))",
                  body: order.status == "filled" ? "The order is complete." : "\(order.qty - order.filled) still open.", now: now)
    }

    func event(_ db: Database, user: String, type: String, order: String?, title: String, body: String?, now: Date) throws {
        try db.execute(sql: "INSERT INTO events (user_id, type, title, body, order_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       arguments: [user, type, title, body, order, now.timeIntervalSince1970])
    }
}
