import Foundation
import RaxxAPI
import RaxxDomain
import RaxxWire

/// An order as the paper engine works it.
struct OrderState: Sendable, Equatable {
    var id: String, account: String, userID: String, symbol: String, side: OrderSide, qty: Int64, type: OrderType
    var limit: Int64?, tif: TimeInForce, status: OrderStatus, filled: Int64, averageFill: Int64?, createdAt: Double
}

/// Why the engine rejected or cancelled an order itself (an order's reject_code; the dead man's
/// switch's reasons are its own).
enum RejectCode {
    static let insufficientBuyingPower = Components.Schemas.ProblemCode.insufficientBuyingPower.rawValue
    static let insufficientPosition = Components.Schemas.ProblemCode.insufficientPosition.rawValue
}

/// An open buy order's commitment, for buying power.
struct OpenBuy: Sendable, Equatable {
    var symbol: String
    var openQty: Int64
    var limit: Int64?
}

/// A held position.
struct Holding: Sendable, Equatable {
    var id: String
    var symbol: String
    var qty: Int64
    var averagePrice: Int64
}

/// A new order to insert (open, nothing filled, paper).
struct NewOrder: Sendable {
    var id: String
    var account: String
    var clientOrderID: String
    var symbol: String
    var side: OrderSide
    var qty: Int64
    var type: OrderType
    var limit: Int64?
    var tif: TimeInForce
    var notAfter: Date
    var requestHash: String
    var now: Date
    /// The session whose dead man's switch covers the order (armed when it was placed).
    var switchSession: String? = nil
}

/// A new fill to insert.
struct NewFill: Sendable {
    var id: String
    var account: String
    var orderID: String
    var symbol: String
    var side: OrderSide
    var qty: Int64
    var price: Int64
    var at: Date
}

/// An event for the user's alerts feed, with what it is about (the spec's `Event` fields; never
/// the email or account ID).
struct NewEvent: Sendable {
    var user: String
    var type: AlertType
    var order: String?
    var title: String
    var body: String?
    var symbol: String? = nil
    var side: OrderSide? = nil
    var qty: Int64? = nil
    /// In ticks.
    var price: Int64? = nil
    /// A rejection's reject code, or what a security alert is about.
    var reason: String? = nil
    /// The session's end (`session_expiring`).
    var expiresAt: Date? = nil
    var at: Date
}

/// A session's armed dead man's switch.
struct ArmedSwitch: Sendable, Equatable {
    var sessionID: String
    var userID: String
    var accountID: String
    var timeout: Int
    var armedAt: Date
    var firesAt: Date
}

/// A switch that must fire now: its deadline passed, or its session ended.
struct DueSwitch: Sendable, Equatable {
    var armed: ArmedSwitch
    /// The session was revoked or ran out (rather than the deadline passing first).
    var sessionEnded: Bool
}

/// Filters for a page of an account's orders, newest first.
struct OrderQuery: Sendable {
    var account: String
    var status: String?
    var clientOrderID: String?
    /// The page key to read before.
    var before: Int64?
    var limit: Int
}

/// One page of the change log, its entities loaded.
struct ChangePage: Sendable {
    var changes: [Components.Schemas.SyncChange]
    var hasMore: Bool
    /// The sequence number of the page's last change, if it has any.
    var lastSeq: Int64?
}

/// An account's cash, mode and holdings, for the portfolio.
struct PortfolioState: Sendable {
    var cash: Int64
    var mode: String
    var holdings: [(symbol: String, qty: Int64, averagePrice: Int64)]
}

/// The checksummed summary of an account's copy.
struct SummaryState: Sendable {
    var cursor: Int64
    var positions: Components.Schemas.EntitySummary
    var fills: Components.Schemas.EntitySummary
    var orders: Components.Schemas.EntitySummary
}

enum ChangeEntity: String, Sendable { case position, fill, order }

/// The trading tables inside one transaction of `TradingRepository`. Each method is a statement
/// or two; the rules (matching, buying power, idempotency, step-up) live in the callers.
protocol TradingLedger {
    // Accounts and cash
    func cash(account: String) throws -> Int64?
    func mode(account: String) throws -> String?
    func addCash(account: String, _ delta: Int64) throws

    // Orders
    func openOrderIDs(account: String) throws -> [String]
    func orderState(id: String) throws -> OrderState?
    func openBuys(account: String, excluding: String?) throws -> [OpenBuy]
    /// The quantity the account's open sell orders of `symbol` (other than `excluding`) still have to fill.
    func openSellQty(account: String, symbol: String, excluding: String?) throws -> Int64
    /// The ID and request hash of the account's order under `clientOrderID`.
    func order(account: String, clientOrderID: String) throws -> (id: String, requestHash: String?)?
    func insertOrder(_ order: NewOrder) throws
    func setStatus(orderID: String, _ status: OrderStatus, rejectCode: String?, now: Date) throws
    func setFilled(orderID: String, filled: Int64, averagePrice: Int64, status: OrderStatus, now: Date) throws
    /// An order as the API shows it.
    func order(id: String) throws -> Components.Schemas.Order?
    /// The order if `account` owns it.
    func ownedOrderID(_ id: String, account: String) throws -> String?
    func orders(_ query: OrderQuery) throws -> Components.Schemas.OrderList

    // Fills and positions
    func insertFill(_ fill: NewFill) throws
    func holding(account: String, symbol: String) throws -> Holding?
    func insertPosition(id: String, account: String, symbol: String, qty: Int64, averagePrice: Int64, now: Date) throws
    func updatePosition(id: String, qty: Int64, averagePrice: Int64, now: Date) throws
    func deletePosition(id: String) throws

    // The dead man's switch
    /// `session`'s switch, if armed (whether or not its deadline passed).
    func armedSwitch(session: String) throws -> ArmedSwitch?
    /// Arms or renews a switch (one row per session).
    func saveSwitch(_ armed: ArmedSwitch) throws
    /// Ends `session`'s switch; with `release`, the orders under it are no longer covered.
    func removeSwitch(session: String, release: Bool) throws
    /// Puts the account's open orders among `ids` under `session`'s switch. Answers the IDs not the
    /// account's (`foreign`) and those under another session's armed switch (`heldElsewhere`),
    /// which it leaves where they are.
    func cover(orderIDs ids: [String], session: String, account: String) throws -> (foreign: [String], heldElsewhere: [String])
    /// The open (pending, open, partially filled) orders under `session`'s switch, oldest first.
    func coveredOpenOrderIDs(session: String) throws -> [String]
    /// Switches due at `now` (deadline passed, or session revoked or over), of `account` only when given.
    func dueSwitches(now: Date, account: String?) throws -> [DueSwitch]

    // Step-up grants
    /// Spends a grant (by hash): single use, this user and this action only, before it expires.
    func consumeStepUpGrant(grantHash: String, actionHash: String, userID: String, now: Date) throws -> Bool

    // Change log, events, audit
    func recordChange(account: String, _ entity: ChangeEntity, _ id: String, deleted: Bool, at: Date) throws
    func pruneTombstones(before cutoff: Date) throws
    func syncHorizon() throws -> Int64
    /// The page of the account's changes after `seq`, as the spec's `SyncPage` JSON.
    func changePage(account: String, after seq: Int64, limit: Int, reset: Bool, asOf: Date) throws -> [UInt8]
    func summary(account: String, since: Double) throws -> SummaryState
    func portfolio(account: String) throws -> PortfolioState
    func event(_ event: NewEvent) throws
    func audit(_ entry: AuditEntry) throws
}

extension TradingLedger {
    /// The page of the account's changes after `seq`, decoded (for callers inside the sandbox).
    func changes(account: String, after seq: Int64, limit: Int) throws -> ChangePage {
        let page = try SyncPageReader.decode(changePage(account: account, after: seq, limit: limit, reset: false, asOf: Date()))
        return ChangePage(changes: page.changes, hasMore: page.hasMore, lastSeq: page.changes.last?.seq)
    }

    func recordChange(account: String, _ entity: ChangeEntity, _ id: String, at: Date) throws {
        try recordChange(account: account, entity, id, deleted: false, at: at)
    }
}
