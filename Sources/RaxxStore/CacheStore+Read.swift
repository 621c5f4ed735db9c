import Foundation
import GRDB
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
}

extension CacheStore {
    func filters(_ q: CacheQuery, time: String?) -> (String, StatementArguments) {
        var clauses: [String] = []
        var arguments: StatementArguments = []
        if let symbol = q.symbol { clauses.append("symbol = ?"); arguments += [symbol.uppercased()] }
        if let since = q.since, let time { clauses.append("\(time) >= ?"); arguments += [since.timeIntervalSince1970] }
        if let status = q.status { clauses.append("status = ?"); arguments += [status.rawValue] }
        let sql = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        return (sql, arguments)
    }

    func limitClause(_ q: CacheQuery) -> String { q.limit.map { " LIMIT \($0)" } ?? "" }

    public func positions(_ q: CacheQuery, _ each: (CachedPosition) throws -> Void) throws {
        let (filter, arguments) = filters(q, time: "updated_at")
        try read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT id, symbol, qty, avg_price, updated_at FROM positions\(filter) ORDER BY symbol\(limitClause(q))",
                                           arguments: arguments)
            while let r = try rows.next() {
                try each(CachedPosition(id: r[0], symbol: r[1], qty: r[2], avgPrice: r[3], updatedAt: Date(timeIntervalSince1970: r[4])))
            }
        }
    }

    public func fills(_ q: CacheQuery, _ each: (CachedFill) throws -> Void) throws {
        let (filter, arguments) = filters(q, time: "filled_at")
        try read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, order_id, symbol, side, qty, price, filled_at FROM fills\(filter) ORDER BY filled_at DESC, id\(limitClause(q))
                """, arguments: arguments)
            while let r = try rows.next() {
                try each(CachedFill(id: r[0], orderID: r[1], symbol: r[2], side: r[3], qty: r[4], price: r[5],
                                    filledAt: Date(timeIntervalSince1970: r[6])))
            }
        }
    }

    public func orders(_ q: CacheQuery, _ each: (CachedOrder) throws -> Void) throws {
        let (filter, arguments) = filters(q, time: "updated_at")
        try read { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, client_order_id, symbol, side, qty, type, limit_price, tif, status, filled_qty, avg_fill_price, reject_code,
                mode, not_after, created_at, updated_at FROM orders\(filter) ORDER BY updated_at DESC, id\(limitClause(q))
                """, arguments: arguments)
            while let r = try rows.next() {
                let notAfter: Double? = r[13]
                try each(CachedOrder(id: r[0], clientOrderID: r[1], symbol: r[2], side: r[3], qty: r[4], type: r[5], limitPrice: r[6],
                                     tif: r[7], status: r[8], filledQty: r[9], avgFillPrice: r[10], rejectCode: r[11], mode: r[12],
                                     notAfter: notAfter.map { Date(timeIntervalSince1970: $0) },
                                     createdAt: Date(timeIntervalSince1970: r[14]), updatedAt: Date(timeIntervalSince1970: r[15])))
            }
        }
    }

    public func portfolio() throws -> CachedPortfolio? {
        try read { db in
            guard let r = try Row.fetchOne(db, sql: """
                SELECT account_id, as_of, mode, cash, market_value, equity, buying_power, unrealized_pnl, positions_count FROM portfolio WHERE id = 1
                """) else { return nil }
            return CachedPortfolio(accountID: r[0], asOf: Date(timeIntervalSince1970: r[1]), mode: r[2], cash: r[3], marketValue: r[4],
                                   equity: r[5], buyingPower: r[6], unrealizedPnl: r[7], positionsCount: r[8])
        }
    }
}
