import Foundation
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// The dead man's switch of a session (`POST /api/orders/cancel-after`), inside a trading
/// transaction: armed or renewed for 5 to 600 seconds, it covers the orders the session places
/// while it is armed (and open orders a watching client names); when its deadline passes without a
/// renewal, or its session ends, it fires: the account is swept first (what fills by now fills),
/// then every open order under it is cancelled, each with its change-log entry, audit entry and
/// `order_cancelled` alert, and the firing itself is audited — all in the caller's transaction.
struct DeadManSwitch: Sendable {
    let engine: PaperEngine

    /// What an arm, renewal or disarm answers.
    static func answer(_ armed: ArmedSwitch?, orders: Int) -> Components.Schemas.CancelAfter {
        .init(armed: armed != nil, timeoutS: armed?.timeout ?? 0, firesAt: armed?.firesAt, orders: orders)
    }

    /// Arms, renews (`timeout` 5 to 600) or disarms (0) `caller`'s switch, putting `orderIDs` under
    /// it. A switch past its deadline fires first: a late renewal does not save its orders.
    func set(_ ledger: TradingLedger, caller: Caller, timeout: Int, orderIDs: [String], now: Date) throws -> Components.Schemas.CancelAfter {
        let existing = try settle(ledger, session: caller.sessionID, now: now)
        guard timeout > 0 else {
            if existing != nil {
                try ledger.removeSwitch(session: caller.sessionID, release: true)
                try ledger.audit(
                    AuditEntry(
                        at: now, actor: caller.userID, action: .cancelAfterDisarmed, subject: caller.accountID,
                        details: ["session_id": caller.sessionID]))
            }
            return Self.answer(nil, orders: 0)
        }
        let armed = ArmedSwitch(
            sessionID: caller.sessionID, userID: caller.userID, accountID: caller.accountID, timeout: timeout,
            armedAt: existing?.armedAt ?? now, firesAt: now.addingTimeInterval(TimeInterval(timeout)))
        try ledger.saveSwitch(armed)
        if existing == nil {
            try ledger.audit(
                AuditEntry(
                    at: now, actor: caller.userID, action: .cancelAfterArmed, subject: caller.accountID,
                    details: ["session_id": caller.sessionID, "timeout_s": "\(timeout)"]))
        }
        let covered = try ledger.cover(orderIDs: orderIDs, session: caller.sessionID, account: caller.accountID)
        if let id = covered.foreign.first { throw ProblemError.notFound("No order \(id).") }
        // Another live session's switch guards that order: taking it silently would leave that
        // session believing its orders are covered by its own deadline.
        if let id = covered.heldElsewhere.first {
            throw ProblemError(
                409, code: .conflict, title: "The order is under another session's dead man's switch.",
                detail: "Order \(id) is covered by the switch of another of your sessions; disarm it there first.")
        }
        return Self.answer(armed, orders: try ledger.coveredOpenOrderIDs(session: caller.sessionID).count)
    }

    /// `session`'s switch as it stands at `now`: fired first if it is due (then nil).
    func settle(_ ledger: TradingLedger, session: String, now: Date) throws -> ArmedSwitch? {
        guard let armed = try ledger.armedSwitch(session: session) else { return nil }
        if armed.firesAt <= now {
            try fire(ledger, armed, reason: .connectionLost, now: now)
            return nil
        }
        return armed
    }

    /// Fires every switch due at `now` (of `account` only, when given); answers how many orders it
    /// cancelled.
    @discardableResult
    func fireDue(_ ledger: TradingLedger, account: String? = nil, now: Date) throws -> Int {
        try ledger.dueSwitches(now: now, account: account).reduce(0) { count, due in
            count + (try fire(ledger, due.armed, reason: due.sessionEnded ? .sessionEnded : .connectionLost, now: now)).count
        }
    }

    /// Fires `session`'s switch at once, if armed (sign-out); answers the orders it cancelled.
    @discardableResult
    func fire(_ ledger: TradingLedger, session: String, reason: CancelAfter.Reason, now: Date) throws -> [String] {
        guard let armed = try ledger.armedSwitch(session: session) else { return [] }
        return try fire(ledger, armed, reason: reason, now: now)
    }

    /// Sweeps the account, cancels what is still open under the switch, audits the firing and
    /// ends the switch. Answers the IDs of the orders cancelled.
    @discardableResult
    func fire(_ ledger: TradingLedger, _ armed: ArmedSwitch, reason: CancelAfter.Reason, now: Date) throws -> [String] {
        // An order that can fill by now fills rather than being cancelled.
        try engine.sweep(ledger, account: armed.accountID, now: now)
        var cancelled: [String] = []
        for id in try ledger.coveredOpenOrderIDs(session: armed.sessionID) {
            guard var order = try ledger.orderState(id: id) else { continue }
            try engine.setStatus(ledger, &order, .cancelled, rejectCode: reason.rawValue, now: now)
            let open = order.qty - order.filled
            try ledger.event(
                NewEvent(
                    user: order.userID, type: .orderCancelled, order: order.id, title: reason.title,
                    body: "\(order.side.rawValue) \(order.qty) \(order.symbol)" + (order.filled > 0 ? " (\(order.filled) filled, \(open) cancelled)" : "")
                        + " was cancelled by the server: " + Self.why(reason, armed: armed),
                    symbol: order.symbol, side: order.side, qty: open, reason: reason.rawValue, at: now))
            cancelled.append(id)
        }
        try ledger.audit(
            AuditEntry(
                at: now, actor: "system", action: .cancelAfterFired, subject: armed.accountID,
                details: [
                    "session_id": armed.sessionID, "reason": reason.rawValue, "orders": "\(cancelled.count)",
                    "order_ids": cancelled.joined(separator: ","),
                    "fires_at": RFC3339.string(from: armed.firesAt),
                ]))
        try ledger.removeSwitch(session: armed.sessionID, release: true)
        return cancelled
    }

    private static func why(_ reason: CancelAfter.Reason, armed: ArmedSwitch) -> String {
        switch reason {
        case .connectionLost: "no renewal of its \(armed.timeout)-second switch arrived by \(RFC3339.string(from: armed.firesAt))."
        case .signedOut: "the session that placed it signed out."
        case .sessionEnded: "the session that placed it ended."
        }
    }
}

/// The switches of every session, each call one transaction: what the background scan
/// (`PeriodicScan`) uses; sign-out fires its session's switch with `logic` inside the revocation's
/// transaction.
struct DeadManSwitches: Sendable {
    let trading: TradingStore
    let market: Market
    let clock: @Sendable () -> Date

    var logic: DeadManSwitch { DeadManSwitch(engine: PaperEngine(market: market)) }

    /// Fires every due switch; answers how many orders were cancelled.
    @discardableResult
    func fireDue() async throws -> Int {
        let logic = self.logic, now = clock()
        return try await trading.write { ledger in try logic.fireDue(ledger, now: now) }
    }
}
