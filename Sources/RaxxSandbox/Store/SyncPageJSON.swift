import Foundation
import GRDB
import GRDBSQLite
import RaxxAPI
import RaxxCore
import RaxxDomain
import RaxxWire

/// A page of delta sync written as the spec's `SyncPage` JSON straight from SQLite's rows: the
/// change log read by an index range (account, seq) and joined to each change's row, each value
/// appended as bytes. No Codable value is made per change, so a page costs about what reading its
/// rows does. The JSON is what the generated types encode (absent optionals left out, dates in
/// RFC 3339, money as decimal strings), without the whitespace; its keys are sorted, but for the
/// page's `changes`, which come last; a stored value outside its enum is an error, as in the
/// records. `SyncPageJSONTests` holds it to the generated decoding.
enum SyncPageJSON {
    /// Appends the page's JSON to `out`; answers the page's cursor (the last change's sequence
    /// number, or `from` when there is none) and whether more changes follow.
    @discardableResult
    static func write(
        _ db: Database, account: String, after from: Int64, limit: Int, reset: Bool, asOf: Date, total: Int64? = nil,
        to out: inout [UInt8]
    ) throws -> (cursor: Int64, hasMore: Bool) {
        // The page's own fields go first and its changes last, so that a client learns where the
        // next page starts without reading the changes: the changes are written first, here, and
        // the fields put in front of them once the last change has told where the page ends.
        let pageStart = out.count
        out.append(UInt8(ascii: "["))
        var count = 0, cursor = from, hasMore = false
        try db.cachedStatement(sql: sql).eachRow(arguments: [account, from, limit + 1]) { row in
            if count == limit { hasMore = true; return false }
            if count > 0 { out.append(UInt8(ascii: ",")) }
            count += 1
            let s = row.sqliteStatement
            cursor = sqlite3_column_int64(s, 0)
            try change(s, to: &out)
            return true
        }
        out += [UInt8(ascii: "]"), UInt8(ascii: "}")]
        var fields = Keys.pageStart
        RFC3339.append(asOf, to: &fields)
        fields += Keys.cursor
        RFC3339.appendDigits(cursor, to: &fields)
        fields += hasMore ? Keys.hasMoreTrue : Keys.hasMoreFalse
        fields += reset ? Keys.resetTrue : Keys.resetFalse
        if let total {
            fields += Keys.total
            RFC3339.appendDigits(total, to: &fields)
        }
        fields += Keys.changes
        out.insert(contentsOf: fields, at: pageStart)
        return (cursor, hasMore)
    }

    // Columns: 0 seq, 1 entity, 2 entity_id, 3 op, then the position (4-8), the fill (9-15) and
    // the order (16-31), each NULL unless the change is an upsert of that entity whose row exists.
    static let sql = """
        SELECT c.seq, c.entity, c.entity_id, c.op,
               p.id, p.symbol, p.qty, p.avg_price_ticks, p.updated_at,
               f.id, f.order_id, f.symbol, f.side, f.qty, f.price_ticks, f.filled_at,
               o.id, o.client_order_id, o.symbol, o.side, o.qty, o.type, o.limit_price_ticks, o.tif, o.status, o.filled_qty,
               o.avg_fill_price_ticks, o.reject_code, o.mode, o.not_after, o.created_at, o.updated_at
        FROM change_log c
        LEFT JOIN positions p ON c.entity = \(Components.Schemas.SyncEntity.position.sql) AND c.op = \(Components.Schemas.SyncChange.OpPayload.upsert.sql)
        AND p.id = c.entity_id
        LEFT JOIN fills f ON c.entity = \(Components.Schemas.SyncEntity.fill.sql) AND c.op = \(Components.Schemas.SyncChange.OpPayload.upsert.sql)
        AND f.id = c.entity_id
        LEFT JOIN orders o ON c.entity = \(Components.Schemas.SyncEntity.order.sql) AND c.op = \(Components.Schemas.SyncChange.OpPayload.upsert.sql)
        AND o.id = c.entity_id
        WHERE c.account_id = ? AND c.seq > ? ORDER BY c.seq LIMIT ?
        """

    /// One `SyncChange`: keys entity, fill, id, op, order, position, seq.
    private static func change(_ s: OpaquePointer, to out: inout [UInt8]) throws {
        out += Keys.entity
        let entity = try Vocabulary.entity.pick(s, 1, of: "change_log")
        out += Vocabulary.entity.quoted[entity]
        let kind: Int32 =
            switch entity {
            case Vocabulary.fillEntity: 9
            case Vocabulary.orderEntity: 16
            default: 4
            }
        // An upsert whose row is gone (deleted in the same instant) reads as a tombstone.
        let present = sqlite3_column_type(s, kind) != SQLITE_NULL
        if present, kind == 9 {
            out += Keys.fill
            try fill(s, to: &out)
        }
        out += Keys.id
        text(s, 2, to: &out)
        out += present ? Keys.opUpsert : Keys.opDelete
        if present, kind == 16 {
            out += Keys.order
            try order(s, to: &out)
        }
        if present, kind == 4 {
            out += Keys.position
            position(s, to: &out)
        }
        out += Keys.seq
        RFC3339.appendDigits(sqlite3_column_int64(s, 0), to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// avg_price, id, qty, symbol, updated_at.
    private static func position(_ s: OpaquePointer, to out: inout [UInt8]) {
        out += Keys.avgPrice; money(s, 7, to: &out)
        out += Keys.positionID; text(s, 4, to: &out)
        out += Keys.positionQty; RFC3339.appendDigits(sqlite3_column_int64(s, 6), to: &out)
        out += Keys.positionSymbol; text(s, 5, to: &out)
        out += Keys.positionUpdatedAt; date(s, 8, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// filled_at, id, order_id, price, qty, side, symbol.
    private static func fill(_ s: OpaquePointer, to out: inout [UInt8]) throws {
        out += Keys.filledAt; date(s, 15, to: &out)
        out += Keys.fillID; text(s, 9, to: &out)
        out += Keys.orderID; text(s, 10, to: &out)
        out += Keys.price; money(s, 14, to: &out)
        out += Keys.fillQty; RFC3339.appendDigits(sqlite3_column_int64(s, 13), to: &out)
        out += Keys.fillSide; out += Vocabulary.side.quoted[try Vocabulary.side.pick(s, 12, of: "fills")]
        out += Keys.fillSymbol; text(s, 11, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// avg_fill_price?, client_order_id, created_at, filled_qty, id, limit_price?, mode, not_after?,
    /// qty, reject_code?, side, status, symbol, tif, type, updated_at.
    private static func order(_ s: OpaquePointer, to out: inout [UInt8]) throws {
        out.append(UInt8(ascii: "{"))
        if sqlite3_column_type(s, 26) != SQLITE_NULL {
            out += Keys.avgFillPrice; money(s, 26, to: &out); out.append(UInt8(ascii: ","))
        }
        out += Keys.clientOrderID; text(s, 17, to: &out)
        out += Keys.createdAt; date(s, 30, to: &out)
        out += Keys.filledQty; RFC3339.appendDigits(sqlite3_column_int64(s, 25), to: &out)
        out += Keys.orderKeyID; text(s, 16, to: &out)
        if sqlite3_column_type(s, 22) != SQLITE_NULL { out += Keys.limitPrice; money(s, 22, to: &out) }
        out += Keys.mode; out += Vocabulary.mode.quoted[try Vocabulary.mode.pick(s, 28, of: "orders")]
        if sqlite3_column_type(s, 29) != SQLITE_NULL { out += Keys.notAfter; date(s, 29, to: &out) }
        out += Keys.qty; RFC3339.appendDigits(sqlite3_column_int64(s, 20), to: &out)
        if sqlite3_column_type(s, 27) != SQLITE_NULL { out += Keys.rejectCode; text(s, 27, to: &out) }
        out += Keys.side; out += Vocabulary.side.quoted[try Vocabulary.side.pick(s, 19, of: "orders")]
        out += Keys.status; out += Vocabulary.status.quoted[try Vocabulary.status.pick(s, 24, of: "orders")]
        out += Keys.symbol; text(s, 18, to: &out)
        out += Keys.tif; out += Vocabulary.tif.quoted[try Vocabulary.tif.pick(s, 23, of: "orders")]
        out += Keys.type; out += Vocabulary.type.quoted[try Vocabulary.type.pick(s, 21, of: "orders")]
        out += Keys.updatedAt; date(s, 31, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    // MARK: Values

    private static func text(_ s: OpaquePointer, _ column: Int32, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if let p = sqlite3_column_text(s, column) {
            appendEscaped(UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(s, column))), to: &out)
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func money(_ s: OpaquePointer, _ column: Int32, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        Money.append(ticks: sqlite3_column_int64(s, column), to: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func date(_ s: OpaquePointer, _ column: Int32, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        RFC3339.append(Date(timeIntervalSince1970: sqlite3_column_double(s, column)), to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// A JSON string's contents (JSONEscaping's rules). Text that is not valid UTF-8 is repaired as a
    /// Swift String would repair it (U+FFFD), as the generated encoder would have received it.
    static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var ascii = true
        for b in bytes where b >= 0x80 { ascii = false; break }
        if !ascii, String(validating: bytes, as: UTF8.self) == nil {
            var repaired = String(decoding: bytes, as: UTF8.self)
            repaired.withUTF8 { JSONEscaping.append($0, to: &out) }
            return
        }
        JSONEscaping.append(bytes, to: &out)
    }

    /// Each enum's wire values (from the generated types); a stored value outside them is an
    /// error (`UnknownStoredValue`), as in the records.
    struct Vocabulary {
        /// Each value, quoted, as it goes on the wire.
        let quoted: [[UInt8]]
        private let raw: [[UInt8]]
        /// The error for a value outside the enum.
        private let unknown: @Sendable (_ table: String, _ column: String, _ value: String) -> UnknownStoredValue

        init<E: StoredVocabulary>(_ type: E.Type) {
            let values = E.allCases.map(\.rawValue)
            raw = values.map { Array($0.utf8) }
            quoted = values.map { Array("\"\($0)\"".utf8) }
            unknown = { UnknownStoredValue(E.self, table: $0, column: $1, value: $2) }
        }

        /// The index of the column's value, or an error naming `table`, the column and the value.
        func pick(_ s: OpaquePointer, _ column: Int32, of table: String) throws -> Int {
            guard let p = sqlite3_column_text(s, column) else {
                throw unknown(table, String(cString: sqlite3_column_name(s, column)), "NULL")
            }
            let bytes = UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(s, column)))
            for (i, value) in raw.enumerated() where value.count == bytes.count && value.elementsEqual(bytes) { return i }
            throw unknown(table, String(cString: sqlite3_column_name(s, column)), String(decoding: bytes, as: UTF8.self))
        }

        static let entity = Vocabulary(Components.Schemas.SyncEntity.self)
        static let fillEntity = Components.Schemas.SyncEntity.allCases.firstIndex(of: .fill)!
        static let orderEntity = Components.Schemas.SyncEntity.allCases.firstIndex(of: .order)!
        static let side = Vocabulary(Components.Schemas.Side.self)
        static let type = Vocabulary(Components.Schemas.OrderType.self)
        static let tif = Vocabulary(Components.Schemas.TimeInForce.self)
        static let status = Vocabulary(Components.Schemas.OrderStatus.self)
        static let mode = Vocabulary(Components.Schemas.TradingMode.self)
    }

    /// The fixed pieces of the JSON, from the wire's table of keys: the page's fields in key order,
    /// then its changes; each change's keys in order.
    enum Keys {
        typealias K = WireKeys
        static let pageStart = Array("{".utf8) + K.fragment(K.Page.asOf, first: true) + Array("\"".utf8)
        static let cursor = Array("\"".utf8) + K.fragment(K.Page.cursor)
        static let changes = K.fragment(K.Page.changes)
        static let hasMoreTrue = K.fragment(K.Page.hasMore) + Array("true".utf8)
        static let hasMoreFalse = K.fragment(K.Page.hasMore) + Array("false".utf8)
        static let resetTrue = K.fragment(K.Page.reset) + Array("true".utf8)
        static let resetFalse = K.fragment(K.Page.reset) + Array("false".utf8)
        static let total = K.fragment(K.Page.total)
        static let entity = Array("{".utf8) + K.fragment(K.Change.entity, first: true)
        static let fill = K.fragment(K.Change.fill) + Array("{".utf8)
        static let id = K.fragment(K.Change.id)
        static let opUpsert = K.fragment(K.Change.op) + quoted(Components.Schemas.SyncChange.OpPayload.upsert.rawValue)
        static let opDelete = K.fragment(K.Change.op) + quoted(Components.Schemas.SyncChange.OpPayload.delete.rawValue)
        static let order = K.fragment(K.Change.order)
        static let position = K.fragment(K.Change.position) + Array("{".utf8)
        static let seq = K.fragment(K.Change.seq)
        static let avgPrice = K.fragment(K.Position.avgPrice, first: true)
        static let positionID = K.fragment(K.Position.id)
        static let positionQty = K.fragment(K.Position.qty)
        static let positionSymbol = K.fragment(K.Position.symbol)
        static let positionUpdatedAt = K.fragment(K.Position.updatedAt)
        static let filledAt = K.fragment(K.Fill.filledAt, first: true)
        static let fillID = K.fragment(K.Fill.id)
        static let orderID = K.fragment(K.Fill.orderID)
        static let price = K.fragment(K.Fill.price)
        static let fillQty = K.fragment(K.Fill.qty)
        static let fillSide = K.fragment(K.Fill.side)
        static let fillSymbol = K.fragment(K.Fill.symbol)
        static let avgFillPrice = K.fragment(K.Order.avgFillPrice, first: true)
        static let clientOrderID = K.fragment(K.Order.clientOrderID, first: true)
        static let createdAt = K.fragment(K.Order.createdAt)
        static let filledQty = K.fragment(K.Order.filledQty)
        static let orderKeyID = K.fragment(K.Order.id)
        static let limitPrice = K.fragment(K.Order.limitPrice)
        static let mode = K.fragment(K.Order.mode)
        static let notAfter = K.fragment(K.Order.notAfter)
        static let qty = K.fragment(K.Order.qty)
        static let rejectCode = K.fragment(K.Order.rejectCode)
        static let side = K.fragment(K.Order.side)
        static let status = K.fragment(K.Order.status)
        static let symbol = K.fragment(K.Order.symbol)
        static let tif = K.fragment(K.Order.tif)
        static let type = K.fragment(K.Order.type)
        static let updatedAt = K.fragment(K.Order.updatedAt)

        static func quoted(_ value: String) -> [UInt8] { Array("\"\(value)\"".utf8) }
    }
}
