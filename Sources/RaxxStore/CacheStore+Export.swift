import Foundation
import GRDBSQLite
import RaxxCore
import RaxxDomain
import RaxxWire

/// JSON Lines straight from SQLite's rows into an output buffer: `raxx-cache show --json` prints
/// every row it reads (a million fills, say), so this path makes no Swift value per row.
extension CacheStore {
    public enum Exported: Sendable { case positions, fills, orders }

    /// `option`: the column holds a symbol, written as its option's parts (`OptionJSON`), or not
    /// at all when it names no option. A position's `averagePrice`, `lastPrice` (optional) and
    /// `heldQuantity` are written as text and an integer, and are what its valuation is made of;
    /// `marketValue`, `unrealizedPnl` and `unrealizedPercent` are that valuation (`Valuation`),
    /// written when it has one, and their column is a NULL that keeps the select's columns in
    /// line with the keys.
    enum Kind {
        case text, optionalText, integer, date, optionalDate, option
        case averagePrice, lastPrice, heldQuantity, marketValue, unrealizedPnl, unrealizedPercent
    }

    /// (JSON key, column) in key order, the keys the wire's (the cache keeps each entity as it came);
    /// `as_of` goes first.
    static func layout(_ what: Exported) -> (sql: String, columns: [(String, Kind)]) {
        func k(_ key: StaticString) -> String { key.description }
        typealias P = WireKeys.Position
        typealias F = WireKeys.Fill
        typealias O = WireKeys.Order
        switch what {
        case .positions:
            return (
                """
                SELECT avg_price, id, (SELECT price FROM marks m WHERE m.symbol = positions.symbol), NULL, symbol, qty, symbol, NULL, NULL,
                updated_at FROM positions
                """,
                [
                    (k(P.avgPrice), .averagePrice), (k(P.id), .text), ("last_price", .lastPrice), ("market_value", .marketValue),
                    ("option", .option), (k(P.qty), .heldQuantity), (k(P.symbol), .text), ("unrealized_pnl", .unrealizedPnl),
                    ("unrealized_pnl_percent", .unrealizedPercent), (k(P.updatedAt), .date),
                ]
            )
        case .fills:
            return (
                "SELECT filled_at, id, symbol, order_id, price, qty, side, symbol FROM fills",
                [
                    (k(F.filledAt), .date), (k(F.id), .text), ("option", .option), (k(F.orderID), .text), (k(F.price), .text),
                    (k(F.qty), .integer), (k(F.side), .text), (k(F.symbol), .text),
                ]
            )
        case .orders:
            return (
                """
                SELECT avg_fill_price, client_order_id, created_at, filled_qty, id, limit_price, mode, not_after, symbol, qty, reject_code,
                side, status, symbol, tif, type, updated_at FROM orders
                """,
                [
                    (k(O.avgFillPrice), .optionalText), (k(O.clientOrderID), .text), (k(O.createdAt), .date), (k(O.filledQty), .integer),
                    (k(O.id), .text), (k(O.limitPrice), .optionalText), (k(O.mode), .text), (k(O.notAfter), .optionalDate),
                    ("option", .option), (k(O.qty), .integer), (k(O.rejectCode), .optionalText), (k(O.side), .text), (k(O.status), .text),
                    (k(O.symbol), .text), (k(O.tif), .text), (k(O.type), .text), (k(O.updatedAt), .date),
                ]
            )
        }
    }

    /// Writes one JSON object per row (keys sorted, `as_of` with each) to `sink`, in chunks.
    public func exportJSONLines(_ what: Exported, _ q: CacheQuery, asOf: Date, sink: (UnsafeRawBufferPointer) -> Void) throws {
        let (select, columns) = Self.layout(what)
        let (filter, arguments) = filters(q, time: what == .fills ? "filled_at" : "updated_at")
        let order =
            switch what {
            case .positions: " ORDER BY symbol"
            case .fills: " ORDER BY filled_at DESC, id"
            case .orders: " ORDER BY updated_at DESC, id"
            }
        let prefix = Array("{\"as_of\":\"\(RFC3339.string(from: asOf))\"".utf8)
        let keys = columns.map { Array(",\"\($0.0)\":".utf8) }
        let kinds = columns.map(\.1)
        func column(_ kind: Kind) -> Int32? { kinds.firstIndex(of: kind).map(Int32.init) }
        let symbolColumn = column(.option)
        let valuedFrom = column(.averagePrice).flatMap { a in column(.lastPrice).flatMap { l in column(.heldQuantity).map { (a, l, $0) } } }
        try readPlain { connection in
            let statement = try SQLiteStatement(connection, select + filter + order + limitClause(q), arguments)
            let handle = statement.handle
            var out: [UInt8] = []
            out.reserveCapacity(80 << 10)
            func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
                sqlite3_column_text(handle, column).map { UnsafeBufferPointer(start: $0, count: Int(sqlite3_column_bytes(handle, column))) }
            }
            while true {
                guard try statement.step() else { break }
                // OCC symbols are 16 to 21 characters: shorter ones (tickers) are not parsed.
                let contract = symbolColumn.flatMap { c -> OptionContract? in
                    guard let text = bytes(c), text.count >= 16 else { return nil }
                    return OptionContract(occUTF8: text)
                }
                let valuation = valuedFrom.flatMap { (average, last, qty) -> Valuation? in
                    guard let averagePrice = bytes(average), let price = bytes(last) else { return nil }
                    let multiplier = contract.map { InstrumentSymbol.option($0).multiplier } ?? 1
                    return Valuation(qty: sqlite3_column_int64(handle, qty), averagePrice: averagePrice, price: price, multiplier: multiplier)
                }
                out += prefix
                for i in kinds.indices {
                    let kind = kinds[i], c = Int32(i)
                    switch kind {
                    case .optionalText, .optionalDate, .lastPrice: if sqlite3_column_type(handle, c) == SQLITE_NULL { continue }
                    case .option: if contract == nil { continue }
                    case .marketValue, .unrealizedPnl: if valuation == nil { continue }
                    case .unrealizedPercent: if valuation?.percent?.isFinite != true { continue }
                    case .text, .integer, .date, .averagePrice, .heldQuantity: break
                    }
                    out += keys[i]
                    switch kind {
                    case .text, .optionalText, .averagePrice, .lastPrice:
                        out.append(0x22)
                        if let text = bytes(c) { JSONEscaping.append(text, to: &out) }
                        out.append(0x22)
                    case .integer, .heldQuantity:
                        RFC3339.appendDigits(sqlite3_column_int64(handle, c), to: &out)
                    case .date, .optionalDate:
                        out.append(0x22)
                        RFC3339.append(Date(timeIntervalSince1970: sqlite3_column_double(handle, c)), to: &out)
                        out.append(0x22)
                    case .option:
                        if let contract { OptionJSON.append(contract, to: &out) }
                    case .marketValue, .unrealizedPnl:
                        guard let valuation else { break }
                        out.append(0x22)
                        Money.append(centsOf: kind == .marketValue ? valuation.marketValueTicks : valuation.unrealizedTicks, to: &out)
                        out.append(0x22)
                    case .unrealizedPercent:
                        if let percent = valuation?.percent { JSONLineWriter.append(percent, decimals: 2, to: &out) }
                    }
                }
                out += [0x7D, 0x0A]
                if out.count >= 64 << 10 {
                    out.withUnsafeBytes(sink)
                    out.removeAll(keepingCapacity: true)
                }
            }
            if !out.isEmpty { out.withUnsafeBytes(sink) }
        }
    }
}
