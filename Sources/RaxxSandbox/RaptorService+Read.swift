import Foundation
import GRDB
import RaxxAPI
import RaxxCore

/// The read models: the portfolio snapshot, delta sync over the change log, and the checksum
/// summary that lets a copy verify itself.
extension RaptorService {
    // MARK: Rows as API models

    static func position(_ row: Row) -> Components.Schemas.Position {
        .init(id: row["id"], symbol: row["symbol"], qty: row["qty"], avgPrice: Money.string(ticks: row["avg_price_ticks"]),
              updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    static func fill(_ row: Row) -> Components.Schemas.Fill {
        .init(id: row["id"], orderId: row["order_id"], symbol: row["symbol"], side: .init(rawValue: row["side"]) ?? .buy,
              qty: row["qty"], price: Money.string(ticks: row["price_ticks"]), filledAt: Date(timeIntervalSince1970: row["filled_at"]))
    }

    static func order(_ row: Row) -> Components.Schemas.Order {
        let id: String = row["id"], clientOrderID: String = row["client_order_id"], symbol: String = row["symbol"]
        let side: String = row["side"], type: String = row["type"], tif: String = row["tif"], status: String = row["status"]
        let mode: String = row["mode"], qty: Int64 = row["qty"], filled: Int64 = row["filled_qty"], reject: String? = row["reject_code"]
        let limit: Int64? = row["limit_price_ticks"], average: Int64? = row["avg_fill_price_ticks"], notAfter: Double? = row["not_after"]
        let created: Double = row["created_at"], updated: Double = row["updated_at"]
        return Components.Schemas.Order(
            id: id, clientOrderId: clientOrderID, symbol: symbol, side: Components.Schemas.Side(rawValue: side) ?? .buy, qty: qty,
            _type: Components.Schemas.OrderType(rawValue: type) ?? .market, limitPrice: limit.map { Money.string(ticks: $0) },
            tif: Components.Schemas.TimeInForce(rawValue: tif) ?? .day, status: Components.Schemas.OrderStatus(rawValue: status) ?? .pending,
            filledQty: filled, avgFillPrice: average.map { Money.string(ticks: $0) }, rejectCode: reject,
            mode: Components.Schemas.TradingMode(rawValue: mode) ?? .paper, notAfter: notAfter.map { Date(timeIntervalSince1970: $0) },
            createdAt: Date(timeIntervalSince1970: created), updatedAt: Date(timeIntervalSince1970: updated))
    }

    static let positionColumns = "id, symbol, qty, avg_price_ticks, updated_at"
    static let fillColumns = "id, order_id, symbol, side, qty, price_ticks, filled_at"
    static let orderColumns = """
        id, client_order_id, symbol, side, qty, type, limit_price_ticks, tif, status, filled_qty, avg_fill_price_ticks,
        reject_code, mode, not_after, created_at, updated_at
        """

    // MARK: Portfolio

    public func getPortfolio(_ input: Operations.GetPortfolio.Input) async throws -> Operations.GetPortfolio.Output {
        let caller = try await authenticate()
        let now = clock()
        let (cash, mode, holdings) = try await database.writer.read { db -> (Int64, String, [(String, Int64, Int64)]) in
            let account = try Row.fetchOne(db, sql: "SELECT cash_ticks, mode FROM accounts WHERE id = ?", arguments: [caller.accountID])
            let holdings = try Row.fetchAll(db, sql: "SELECT symbol, qty, avg_price_ticks FROM positions WHERE account_id = ?",
                                            arguments: [caller.accountID]).map { ($0["symbol"] as String, $0["qty"] as Int64, $0["avg_price_ticks"] as Int64) }
            return (account?["cash_ticks"] ?? 0, account?["mode"] ?? "paper", holdings)
        }
        var marketValue: Int64 = 0, unrealized: Int64 = 0
        let prices = market.snapshot(at: now)
        for (symbol, qty, average) in holdings {
            guard let instrument = market.instrument(symbol) else { continue }
            // An expired option is worth nothing.
            let price = prices.priceTicks(instrument) ?? 0
            marketValue += qty * price * instrument.multiplier
            unrealized += qty * (price - average) * instrument.multiplier
        }
        return .ok(.init(body: .json(.init(
            accountId: caller.accountID, asOf: now, mode: .init(rawValue: mode) ?? .paper, cash: Money.string(ticks: cash),
            marketValue: Money.string(ticks: marketValue), equity: Money.string(ticks: cash + marketValue),
            buyingPower: Money.string(ticks: max(cash, 0)), unrealizedPnl: Money.string(ticks: unrealized),
            positionsCount: holdings.count))))
    }

    // MARK: Delta sync

    public func getSyncChanges(_ input: Operations.GetSyncChanges.Input) async throws -> Operations.GetSyncChanges.Output {
        let caller = try await authenticate()
        let cursor = input.query.cursor ?? 0
        guard cursor >= 0 else { throw ProblemError(400, code: "cursor_invalid", title: "The cursor must not be negative.") }
        let limit = min(max(input.query.limit ?? 1000, 1), 10_000)
        let rebuilding = input.query.rebuild ?? false
        let now = clock()
        let retention = configuration.changeRetention.seconds
        let page = try await database.writer.write { db -> Components.Schemas.SyncPage in
            try engine.sweep(db, account: caller.accountID, now: now)
            try ChangeLog.pruneTombstones(db, before: now.addingTimeInterval(-retention))
            let horizon = try ChangeLog.horizon(db)
            let reset = !rebuilding && cursor > 0 && cursor < horizon
            let from = reset ? 0 : cursor
            let rows = try Row.fetchAll(db, sql: """
                SELECT seq, entity, entity_id, op FROM change_log WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?
                """, arguments: [caller.accountID, from, limit + 1])
            let hasMore = rows.count > limit
            let changes = Array(rows.prefix(limit))
            func ids(_ entity: String) -> [String] {
                changes.filter { $0["entity"] == entity && $0["op"] == "upsert" }.map { $0["entity_id"] }
            }
            func load<T>(_ table: String, _ columns: String, _ ids: [String], _ make: (Row) -> T) throws -> [String: T] {
                guard !ids.isEmpty else { return [:] }
                var result: [String: T] = [:]
                for chunk in stride(from: 0, to: ids.count, by: 5000).map({ Array(ids[$0..<min($0 + 5000, ids.count)]) }) {
                    let marks = databaseQuestionMarks(count: chunk.count)
                    for row in try Row.fetchAll(db, sql: "SELECT \(columns) FROM \(table) WHERE id IN (\(marks))", arguments: StatementArguments(chunk)) {
                        result[row["id"]] = make(row)
                    }
                }
                return result
            }
            let positions = try load("positions", Self.positionColumns, ids("position"), Self.position)
            let fills = try load("fills", Self.fillColumns, ids("fill"), Self.fill)
            let orders = try load("orders", Self.orderColumns, ids("order"), Self.order)
            let out: [Components.Schemas.SyncChange] = changes.map { row in
                let id: String = row["entity_id"], entity: String = row["entity"]
                let entityKind = Components.Schemas.SyncEntity(rawValue: entity) ?? .position
                let position = entity == "position" ? positions[id] : nil
                let fill = entity == "fill" ? fills[id] : nil
                let order = entity == "order" ? orders[id] : nil
                // An upsert whose row is gone (deleted in the same instant) reads as a tombstone.
                let deleted = row["op"] == "delete" || (position == nil && fill == nil && order == nil)
                return .init(seq: row["seq"], entity: entityKind, op: deleted ? Components.Schemas.SyncChange.OpPayload.delete : .upsert, id: id,
                             position: position, fill: fill, order: order)
            }
            return .init(changes: out, cursor: changes.last?["seq"] ?? from, hasMore: hasMore, reset: reset, asOf: now)
        }
        return .ok(.init(body: .json(page)))
    }

    // MARK: Summary

    public func getSyncSummary(_ input: Operations.GetSyncSummary.Input) async throws -> Operations.GetSyncSummary.Output {
        let caller = try await authenticate()
        let since = input.query.since?.timeIntervalSince1970 ?? -Double.greatestFiniteMagnitude
        let now = clock()
        let closed = SyncChecksum.closedOrderStatuses.map { "'\($0)'" }.joined(separator: ", ")
        let summary = try await database.writer.read { db -> Components.Schemas.SyncSummary in
            let cursor = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM change_log WHERE account_id = ?", arguments: [caller.accountID]) ?? 0
            func summarize(_ sql: String, _ arguments: StatementArguments, line: (Row) -> String) throws -> Components.Schemas.EntitySummary {
                var accumulator = SyncChecksum.Accumulator()
                let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try rows.next() { accumulator.add(line(row)) }
                return .init(count: accumulator.count, checksum: accumulator.checksum)
            }
            let positions = try summarize("SELECT id, symbol, qty, avg_price_ticks FROM positions WHERE account_id = ? ORDER BY id",
                                          [caller.accountID]) {
                SyncChecksum.positionLine(id: $0["id"], symbol: $0["symbol"], qty: $0["qty"], avgPrice: Money.string(ticks: $0["avg_price_ticks"]))
            }
            let fills = try summarize("SELECT id, order_id, symbol, side, qty, price_ticks FROM fills WHERE account_id = ? AND filled_at >= ? ORDER BY id",
                                      [caller.accountID, since]) {
                SyncChecksum.fillLine(id: $0["id"], orderID: $0["order_id"], symbol: $0["symbol"], side: $0["side"], qty: $0["qty"],
                                      price: Money.string(ticks: $0["price_ticks"]))
            }
            let orders = try summarize("""
                SELECT id, client_order_id, symbol, side, qty, type, limit_price_ticks, status, filled_qty, avg_fill_price_ticks
                FROM orders WHERE account_id = ? AND (status NOT IN (\(closed)) OR updated_at >= ?) ORDER BY id
                """, [caller.accountID, since]) { row in
                let limit: Int64? = row["limit_price_ticks"], average: Int64? = row["avg_fill_price_ticks"]
                return SyncChecksum.orderLine(id: row["id"], clientOrderID: row["client_order_id"], symbol: row["symbol"], side: row["side"],
                                              qty: row["qty"], type: row["type"], limitPrice: limit.map(Money.string(ticks:)),
                                              status: row["status"], filledQty: row["filled_qty"], avgFillPrice: average.map(Money.string(ticks:)))
            }
            return .init(cursor: cursor, asOf: now, positions: positions, fills: fills, orders: orders)
        }
        return .ok(.init(body: .json(summary)))
    }
}
