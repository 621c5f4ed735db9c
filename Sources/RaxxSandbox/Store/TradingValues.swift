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

    /// A reject code as a person reads it.
    static func message(for code: String) -> String? {
        switch code {
        case insufficientBuyingPower: "Not enough buying power: cash less what open buy orders commit."
        case insufficientPosition: "Not enough shares or contracts held to sell, less what open sell orders commit."
        default: nil
        }
    }
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
    var mode: Components.Schemas.TradingMode
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
