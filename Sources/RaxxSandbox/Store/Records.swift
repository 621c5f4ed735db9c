import Foundation
import GRDB
import RaxxAPI
import RaxxDomain

// The sandbox's main tables as Codable records, in GRDB's record style: a column is read by its
// name, through the record's coding keys (snake_case in the database, camelCase here), and
// each row's API view is made in one place. The spec's vocabulary reads as its enums
// (Vocabulary+Database.swift): an unknown value in a row is an error, not a default. Times are
// Unix seconds (REAL). The sync page writer (SyncPageJSON) reads the same columns by statement,
// for speed; `SyncPageJSONTests` holds its pages to these records.

/// What a record shares: its columns are named in snake_case.
protocol SandboxRecord: Codable, FetchableRecord, TableRecord, Sendable {}

extension SandboxRecord {
    static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
}

private func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

/// A record read column by column, by position: its columns first in the row, in `columnNames`'
/// order, through GRDB's `Row` or the row a statement is on (`ColumnRow`), which skips what a
/// `Row` costs to make. GRDB's Codable row decoder was a fifth of an order's time on the writer
/// (every placement reads its order back), and its lookup by name, which lowercases every name it
/// compares, 8 % of the sandbox's work on an order. `RecordRowTests` holds the ways to each other.
protocol PositionalRecord: SandboxRecord {
    static var columnNames: [String] { get }
    /// Reads the fields from `row`, which has `columnNames`' count of columns at least.
    init(checkedColumns row: some ColumnDecoding) throws
}

extension PositionalRecord {
    init(row: Row) throws { try self.init(columns: row) }

    /// The value of the enum `E` in column `index`, or an error naming the table, the column and
    /// the value when it is not one of `E`'s.
    static func stored<E: StoredVocabulary>(_ type: E.Type, _ row: some ColumnDecoding, atIndex index: Int) throws -> E {
        try E.stored(row.decode(String?.self, atIndex: index), table: databaseTableName, column: columnNames[index])
    }

    /// Read from `columns`, its columns first in `columnNames`' order.
    init(columns row: some ColumnDecoding) throws {
        try row.requireColumns(Self.columnNames.count, of: Self.self)
        try self.init(checkedColumns: row)
    }
}

/// A row of `orders`: the columns `columns` selects, in its order, first in the row.
struct OrderRecord: PositionalRecord {
    static let databaseTableName = "orders"
    static let columnNames = [
        "id", "account_id", "client_order_id", "symbol", "side", "qty", "type", "limit_price_ticks", "tif", "status", "filled_qty",
        "avg_fill_price_ticks", "reject_code", "mode", "not_after", "created_at", "updated_at",
    ]
    static let columns = columnNames.joined(separator: ", ")
    /// `columns`, each of `table`'s (a query that joins another table).
    static func columns(of table: String) -> String { columnNames.map { table + "." + $0 }.joined(separator: ", ") }

    var id: String
    var accountId: String
    var clientOrderId: String
    var symbol: String
    var side: OrderSide
    var qty: Int64
    var type: OrderType
    var limitPriceTicks: Int64?
    var tif: TimeInForce
    var status: OrderStatus
    var filledQty: Int64
    var avgFillPriceTicks: Int64?
    var rejectCode: String?
    var mode: Components.Schemas.TradingMode
    var notAfter: Double?
    var createdAt: Double
    var updatedAt: Double

    init(checkedColumns row: some ColumnDecoding) throws {
        id = try row.decode(String.self, atIndex: 0)
        accountId = try row.decode(String.self, atIndex: 1)
        clientOrderId = try row.decode(String.self, atIndex: 2)
        symbol = try row.decode(String.self, atIndex: 3)
        side = try Self.stored(OrderSide.self, row, atIndex: 4)
        qty = try row.decode(Int64.self, atIndex: 5)
        type = try Self.stored(OrderType.self, row, atIndex: 6)
        limitPriceTicks = try row.decode(Int64?.self, atIndex: 7)
        tif = try Self.stored(TimeInForce.self, row, atIndex: 8)
        status = try Self.stored(OrderStatus.self, row, atIndex: 9)
        filledQty = try row.decode(Int64.self, atIndex: 10)
        avgFillPriceTicks = try row.decode(Int64?.self, atIndex: 11)
        rejectCode = try row.decode(String?.self, atIndex: 12)
        mode = try Self.stored(Components.Schemas.TradingMode.self, row, atIndex: 13)
        notAfter = try row.decode(Double?.self, atIndex: 14)
        createdAt = try row.decode(Double.self, atIndex: 15)
        updatedAt = try row.decode(Double.self, atIndex: 16)
    }

    /// The order as the API shows it.
    var api: Components.Schemas.Order {
        Components.Schemas.Order(
            id: id, clientOrderId: clientOrderId, symbol: symbol, side: side, qty: qty, _type: type,
            limitPrice: limitPriceTicks.map { Money.string(ticks: $0) }, tif: tif, status: status, filledQty: filledQty,
            avgFillPrice: avgFillPriceTicks.map { Money.string(ticks: $0) }, rejectCode: rejectCode, mode: mode,
            notAfter: notAfter.map(date), createdAt: date(createdAt), updatedAt: date(updatedAt))
    }

    /// The order as the paper engine works it, for its account's user.
    func state(userID: String) -> OrderState {
        OrderState(
            id: id, account: accountId, userID: userID, symbol: symbol, side: side, qty: qty, type: type, limit: limitPriceTicks,
            tif: tif, status: status, filled: filledQty, averageFill: avgFillPriceTicks, createdAt: createdAt)
    }
}

/// A row of `positions`: the columns `columns` selects.
struct PositionRecord: PositionalRecord {
    static let databaseTableName = "positions"
    static let columnNames = ["id", "symbol", "qty", "avg_price_ticks", "updated_at"]
    static let columns = columnNames.joined(separator: ", ")
    var id: String
    var symbol: String
    var qty: Int64
    var avgPriceTicks: Int64
    var updatedAt: Double

    init(checkedColumns row: some ColumnDecoding) throws {
        id = try row.decode(String.self, atIndex: 0)
        symbol = try row.decode(String.self, atIndex: 1)
        qty = try row.decode(Int64.self, atIndex: 2)
        avgPriceTicks = try row.decode(Int64.self, atIndex: 3)
        updatedAt = try row.decode(Double.self, atIndex: 4)
    }

    var api: Components.Schemas.Position {
        .init(id: id, symbol: symbol, qty: qty, avgPrice: Money.string(ticks: avgPriceTicks), updatedAt: date(updatedAt))
    }

    var holding: Holding { Holding(id: id, symbol: symbol, qty: qty, averagePrice: avgPriceTicks) }
}

/// A row of `fills`: the columns `columns` selects.
struct FillRecord: SandboxRecord {
    static let databaseTableName = "fills"
    static let columns = "id, order_id, symbol, side, qty, price_ticks, filled_at"
    var id: String
    var orderId: String
    var symbol: String
    var side: OrderSide
    var qty: Int64
    var priceTicks: Int64
    var filledAt: Double

    var api: Components.Schemas.Fill {
        .init(id: id, orderId: orderId, symbol: symbol, side: side, qty: qty, price: Money.string(ticks: priceTicks), filledAt: date(filledAt))
    }
}

/// A row of `device_tokens`: the columns `columns` selects. The API shows the token's last 8
/// characters only.
struct DeviceRecord: SandboxRecord {
    static let databaseTableName = "device_tokens"
    static let columns = "id, token, environment, label, alerts, created_at"
    var id: String
    var token: String
    var environment: Components.Schemas.Device.EnvironmentPayload
    var label: String?
    /// The event types the device opted into, comma-separated.
    var alerts: String
    var createdAt: Double

    var api: Components.Schemas.Device {
        Components.Schemas.Device(
            id: id, environment: environment, tokenSuffix: String(token.suffix(8)), label: label,
            alerts: alerts.split(separator: ",").compactMap { Components.Schemas.EventType(rawValue: String($0)) },
            createdAt: date(createdAt))
    }
}

/// A row of `dsr_requests` (the columns the API and the state machine read; `SELECT *` suits).
struct DSRRequestRecord: SandboxRecord {
    static let databaseTableName = "dsr_requests"
    var id: String
    var kind: Components.Schemas.DSRKind
    var subject: String
    var ticket: String
    var status: Components.Schemas.DSRStatus
    var openedBy: String
    var receivedAt: Double
    var dueOn: String
    var extended: Bool
    var extensionReason: String?
    var verifiedBy: String?
    var verificationMethod: String?
    var verifiedAt: Double?
    var closedReason: String?
    var planHash: String?
    var createdAt: Double
    var updatedAt: Double
    var completedAt: Double?

    var state: DSRState {
        DSRState(
            id: id, kind: kind, status: status, subject: subject, ticket: ticket, receivedAt: date(receivedAt), dueOn: dueOn,
            extended: extended, planHash: planHash)
    }

    /// The request as the API shows it on `now`'s day (`overdue`).
    func api(now: Date) -> Components.Schemas.DSRRequest {
        let open = ![.completed, .cancelled, .refused].contains(status)
        let overdue = open && (CalendarDay(parsing: dueOn).map { DSRDeadline.isOverdue(dueOn: $0, today: CalendarDay(now)) } ?? false)
        return Components.Schemas.DSRRequest(
            id: id, kind: kind, subject: subject, ticket: ticket, status: status, receivedAt: date(receivedAt), dueOn: dueOn,
            extended: extended, extensionReason: extensionReason, overdue: overdue, openedBy: openedBy, verifiedBy: verifiedBy,
            verificationMethod: verificationMethod, verifiedAt: verifiedAt.map(date), closedReason: closedReason, planHash: planHash,
            createdAt: date(createdAt), updatedAt: date(updatedAt), completedAt: completedAt.map(date))
    }
}
