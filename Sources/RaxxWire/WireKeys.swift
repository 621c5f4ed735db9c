/// The JSON keys of the spec's objects that the fast paths write and read by hand: one table,
/// shared by the sandbox's page writer (which builds its fixed pieces from it) and the client's
/// readers (which match keys against it). Each list is the generated type's own `CodingKeys`, in
/// the order the generated encoder sorts them; `WireKeysTests` holds each list to the generated
/// model, so a field the spec adds or renames fails there before a reader misses it.
///
/// The keys are `StaticString`s so that a reader matches one with a `case` and a memcmp, with no
/// global to look up for each of the millions of keys a refresh reads.
public enum WireKeys {
    /// `SyncPage`.
    public enum Page {
        public static let asOf: StaticString = "as_of"
        public static let changes: StaticString = "changes"
        public static let cursor: StaticString = "cursor"
        public static let hasMore: StaticString = "has_more"
        public static let reset: StaticString = "reset"
        public static let total: StaticString = "total"
        public static let all = [asOf, changes, cursor, hasMore, reset, total]
    }

    /// `SyncChange`.
    public enum Change {
        public static let entity: StaticString = "entity"
        public static let fill: StaticString = "fill"
        public static let id: StaticString = "id"
        public static let op: StaticString = "op"
        public static let order: StaticString = "order"
        public static let position: StaticString = "position"
        public static let seq: StaticString = "seq"
        public static let all = [entity, fill, id, op, order, position, seq]
    }

    /// `Position`.
    public enum Position {
        public static let avgPrice: StaticString = "avg_price"
        public static let id: StaticString = "id"
        public static let qty: StaticString = "qty"
        public static let symbol: StaticString = "symbol"
        public static let updatedAt: StaticString = "updated_at"
        public static let all = [avgPrice, id, qty, symbol, updatedAt]
    }

    /// `Fill`.
    public enum Fill {
        public static let filledAt: StaticString = "filled_at"
        public static let id: StaticString = "id"
        public static let orderID: StaticString = "order_id"
        public static let price: StaticString = "price"
        public static let qty: StaticString = "qty"
        public static let side: StaticString = "side"
        public static let symbol: StaticString = "symbol"
        public static let all = [filledAt, id, orderID, price, qty, side, symbol]
    }

    /// `Order`.
    public enum Order {
        public static let avgFillPrice: StaticString = "avg_fill_price"
        public static let clientOrderID: StaticString = "client_order_id"
        public static let createdAt: StaticString = "created_at"
        public static let filledQty: StaticString = "filled_qty"
        public static let id: StaticString = "id"
        public static let limitPrice: StaticString = "limit_price"
        public static let mode: StaticString = "mode"
        public static let notAfter: StaticString = "not_after"
        public static let qty: StaticString = "qty"
        public static let rejectCode: StaticString = "reject_code"
        public static let side: StaticString = "side"
        public static let status: StaticString = "status"
        public static let symbol: StaticString = "symbol"
        public static let tif: StaticString = "tif"
        public static let type: StaticString = "type"
        public static let updatedAt: StaticString = "updated_at"
        public static let all = [
            avgFillPrice, clientOrderID, createdAt, filledQty, id, limitPrice, mode, notAfter, qty, rejectCode,
            side, status, symbol, tif, type, updatedAt,
        ]
    }

    /// `Portfolio`.
    public enum Portfolio {
        public static let accountID: StaticString = "account_id"
        public static let asOf: StaticString = "as_of"
        public static let buyingPower: StaticString = "buying_power"
        public static let cash: StaticString = "cash"
        public static let equity: StaticString = "equity"
        public static let marketValue: StaticString = "market_value"
        public static let marks: StaticString = "marks"
        public static let mode: StaticString = "mode"
        public static let positionsCount: StaticString = "positions_count"
        public static let unrealizedPnl: StaticString = "unrealized_pnl"
        public static let all = [accountID, asOf, buyingPower, cash, equity, marketValue, marks, mode, positionsCount, unrealizedPnl]
    }

    /// `Mark`.
    public enum Mark {
        public static let price: StaticString = "price"
        public static let symbol: StaticString = "symbol"
        public static let all = [price, symbol]
    }

    /// The values of `SyncChange`'s `entity` and `op`, which the reader matches as it matches keys.
    public enum Values {
        public static let position: StaticString = "position"
        public static let fill: StaticString = "fill"
        public static let order: StaticString = "order"
        public static let entities = [position, fill, order]
        public static let upsert: StaticString = "upsert"
        public static let delete: StaticString = "delete"
        public static let ops = [upsert, delete]
    }

    /// A key's bytes, as a writer puts them: `"key":`, after a comma unless it is the first.
    public static func fragment(_ key: StaticString, first: Bool = false) -> [UInt8] {
        (first ? [] : [UInt8(ascii: ",")]) + [UInt8(ascii: "\"")] + Array(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            + [UInt8(ascii: "\""), UInt8(ascii: ":")]
    }
}
