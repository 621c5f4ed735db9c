import Foundation
import RaxxCore
import RaxxDomain

/// What `raxx-cache show` reads: rows straight from the cache, streamed, never from the network.
public struct CacheQuery: Sendable {
    public var symbol: String?
    public var since: Date?
    public var status: OrderStatus?
    public var limit: Int?

    public init(symbol: String? = nil, since: Date? = nil, status: OrderStatus? = nil, limit: Int? = nil) {
        self.symbol = symbol
        self.since = since
        self.status = status
        self.limit = limit
    }
}

public struct CachedPosition: Sendable, Equatable {
    public var id: String, symbol: String, qty: Int64, avgPrice: String, updatedAt: Date
    /// The price the last portfolio snapshot valued it at; nil when that snapshot had none.
    public var lastPrice: String? = nil

    /// Its market value and unrealised P&L at `lastPrice`; nil without one.
    public var valuation: Valuation? {
        guard let lastPrice else { return nil }
        return Valuation(qty: qty, averagePrice: avgPrice.utf8, price: lastPrice.utf8, multiplier: InstrumentSymbol(parsing: symbol)?.multiplier ?? 1)
    }
}

public struct CachedFill: Sendable, Equatable {
    public var id: String, orderID: String, symbol: String, side: String, qty: Int64, price: String, filledAt: Date
}

public struct CachedOrder: Sendable, Equatable {
    public var id: String, clientOrderID: String, symbol: String, side: String, qty: Int64, type: String
    public var limitPrice: String?, tif: String, status: String, filledQty: Int64, avgFillPrice: String?
    public var rejectCode: String?, mode: String, notAfter: Date?, createdAt: Date, updatedAt: Date
}

public struct CachedPortfolio: Sendable, Equatable {
    public var accountID: String, asOf: Date, mode: String, cash: String, marketValue: String, equity: String
    public var buyingPower: String, unrealizedPnl: String, positionsCount: Int

    /// The unrealised P&L with the cost it is made on (market value less P&L); nil when a figure
    /// does not parse.
    public var unrealized: Valuation? {
        guard let value = Money.ticks(parsing: marketValue), let pnl = Money.ticks(parsing: unrealizedPnl) else { return nil }
        let (cost, overflow) = value.subtractingReportingOverflow(pnl)
        guard !overflow, cost != .min else { return nil }
        return Valuation(marketValueTicks: value, unrealizedTicks: pnl, costTicks: abs(cost))
    }
}

extension CacheStore {
    func filters(_ q: CacheQuery, time: String?) -> (String, [SQLiteArgument]) {
        var clauses: [String] = []
        var arguments: [SQLiteArgument] = []
        if let symbol = q.symbol { clauses.append("symbol = ?"); arguments.append(.text(symbol.uppercased())) }
        if let since = q.since, let time { clauses.append("\(time) >= ?"); arguments.append(.real(since.timeIntervalSince1970)) }
        if let status = q.status { clauses.append("status = ?"); arguments.append(.text(status.rawValue)) }
        let sql = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return (sql, arguments)
    }

    func limitClause(_ q: CacheQuery) -> String { q.limit.map { " LIMIT \($0)" } ?? "" }

    public func positions(_ q: CacheQuery, _ each: (CachedPosition) throws -> Void) throws {
        let (filter, arguments) = filters(q, time: "updated_at")
        try readPlain { connection in
            let r = try SQLiteStatement(
                connection,
                """
                SELECT id, symbol, qty, avg_price, updated_at, (SELECT price FROM marks m WHERE m.symbol = positions.symbol)
                FROM positions\(filter) ORDER BY symbol\(limitClause(q))
                """, arguments)
            while try r.step() {
                try each(
                    CachedPosition(
                        id: r.text(0), symbol: r.text(1), qty: r.int64(2), avgPrice: r.text(3),
                        updatedAt: Date(timeIntervalSince1970: r.double(4)), lastPrice: r.optionalText(5)))
            }
        }
    }

    public func fills(_ q: CacheQuery, _ each: (CachedFill) throws -> Void) throws {
        let (filter, arguments) = filters(q, time: "filled_at")
        try readPlain { connection in
            let r = try SQLiteStatement(
                connection,
                """
                SELECT id, order_id, symbol, side, qty, price, filled_at FROM fills\(filter) ORDER BY filled_at DESC, id\(limitClause(q))
                """, arguments)
            while try r.step() {
                try each(
                    CachedFill(
                        id: r.text(0), orderID: r.text(1), symbol: r.text(2), side: r.text(3), qty: r.int64(4), price: r.text(5),
                        filledAt: Date(timeIntervalSince1970: r.double(6))))
            }
        }
    }

    public func orders(_ q: CacheQuery, _ each: (CachedOrder) throws -> Void) throws {
        let (filter, arguments) = filters(q, time: "updated_at")
        try readPlain { connection in
            let r = try SQLiteStatement(
                connection,
                """
                SELECT id, client_order_id, symbol, side, qty, type, limit_price, tif, status, filled_qty, avg_fill_price, reject_code,
                mode, not_after, created_at, updated_at FROM orders\(filter) ORDER BY updated_at DESC, id\(limitClause(q))
                """, arguments)
            while try r.step() {
                try each(
                    CachedOrder(
                        id: r.text(0), clientOrderID: r.text(1), symbol: r.text(2), side: r.text(3), qty: r.int64(4), type: r.text(5),
                        limitPrice: r.optionalText(6), tif: r.text(7), status: r.text(8), filledQty: r.int64(9),
                        avgFillPrice: r.optionalText(10), rejectCode: r.optionalText(11), mode: r.text(12),
                        notAfter: r.optionalDouble(13).map { Date(timeIntervalSince1970: $0) },
                        createdAt: Date(timeIntervalSince1970: r.double(14)), updatedAt: Date(timeIntervalSince1970: r.double(15))))
            }
        }
    }

    public func portfolio() throws -> CachedPortfolio? {
        try readPlain { connection in
            let r = try SQLiteStatement(
                connection,
                """
                SELECT account_id, as_of, mode, cash, market_value, equity, buying_power, unrealized_pnl, positions_count FROM portfolio WHERE id = 1
                """)
            guard try r.step() else { return nil }
            return CachedPortfolio(
                accountID: r.text(0), asOf: Date(timeIntervalSince1970: r.double(1)), mode: r.text(2), cash: r.text(3),
                marketValue: r.text(4), equity: r.text(5), buyingPower: r.text(6), unrealizedPnl: r.text(7),
                positionsCount: Int(r.int64(8)))
        }
    }
}
