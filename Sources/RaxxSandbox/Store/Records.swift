import Foundation
import GRDB
import RaxxAPI
import RaxxDomain

// The sandbox's main tables as Codable records, in GRDB's record style: a column is read by its
// name (snake_case in the database, camelCase here), and each row's API view is made in one
// place. The order and position records name their columns in a `Columns` enum and read them
// through it (`init(row:)`); the others read through their coding keys. The spec's vocabulary
// reads as its enums (Vocabulary+Database.swift): an unknown value in a row is an error, not a
// default. Times are Unix seconds (REAL). The sync page writer (SyncPageJSON) reads the same
// columns by statement, for speed; `SyncPageJSONTests` holds its pages to these records.

/// What a record shares: its columns are named in snake_case.
protocol SandboxRecord: Codable, FetchableRecord, TableRecord, Sendable {}

extension SandboxRecord {
    static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }

    /// The value of the enum `E` in `row`'s `column`, or an error naming the table, the column and
    /// the value when it is not one of `E`'s (NULL included).
    static func stored<E: StoredVocabulary>(_ row: Row, _ column: some ColumnExpression) throws -> E {
        // A column the row lacks is GRDB's error, as for the record's other columns (read as a
        // `String?`, it would be NULL).
        guard row.hasColumn(column.name) else { return try row.decode(E.self, forColumn: column) }
        return try E.stored(row.decode(String?.self, forColumn: column), table: databaseTableName, column: column.name)
    }
}

private func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

/// A row of `orders`: the columns `columns` selects (and the query interface, `databaseSelection`).
struct OrderRecord: SandboxRecord {
    static let databaseTableName = "orders"

    /// The columns the record reads, in the order `columns` selects them.
    enum Columns: String, ColumnExpression, CaseIterable {
        case id
        case accountId = "account_id"
        case clientOrderId = "client_order_id"
        case symbol, side, qty, type
        case limitPriceTicks = "limit_price_ticks"
        case tif, status
        case filledQty = "filled_qty"
        case avgFillPriceTicks = "avg_fill_price_ticks"
        case rejectCode = "reject_code"
        case mode
        case notAfter = "not_after"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    static var databaseSelection: [any SQLSelectable] { Columns.allCases }
    static let columns = Columns.allCases.map(\.name).joined(separator: ", ")
    /// `columns`, each of `table`'s and named as itself (a query that joins another table).
    static func columns(of table: String) -> String { Columns.allCases.map { "\(table).\($0.name) AS \($0.name)" }.joined(separator: ", ") }

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

    init(row: Row) throws {
        id = try row.decode(String.self, forColumn: Columns.id)
        accountId = try row.decode(String.self, forColumn: Columns.accountId)
        clientOrderId = try row.decode(String.self, forColumn: Columns.clientOrderId)
        symbol = try row.decode(String.self, forColumn: Columns.symbol)
        side = try Self.stored(row, Columns.side)
        qty = try row.decode(Int64.self, forColumn: Columns.qty)
        type = try Self.stored(row, Columns.type)
        limitPriceTicks = try row.decode(Int64?.self, forColumn: Columns.limitPriceTicks)
        tif = try Self.stored(row, Columns.tif)
        status = try Self.stored(row, Columns.status)
        filledQty = try row.decode(Int64.self, forColumn: Columns.filledQty)
        avgFillPriceTicks = try row.decode(Int64?.self, forColumn: Columns.avgFillPriceTicks)
        rejectCode = try row.decode(String?.self, forColumn: Columns.rejectCode)
        mode = try Self.stored(row, Columns.mode)
        notAfter = try row.decode(Double?.self, forColumn: Columns.notAfter)
        createdAt = try row.decode(Double.self, forColumn: Columns.createdAt)
        updatedAt = try row.decode(Double.self, forColumn: Columns.updatedAt)
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

/// A row of `positions`: the columns `columns` selects (and the query interface, `databaseSelection`).
struct PositionRecord: SandboxRecord {
    static let databaseTableName = "positions"

    /// The columns the record reads, in the order `columns` selects them.
    enum Columns: String, ColumnExpression, CaseIterable {
        case id, symbol, qty
        case avgPriceTicks = "avg_price_ticks"
        case updatedAt = "updated_at"
    }

    static var databaseSelection: [any SQLSelectable] { Columns.allCases }
    static let columns = Columns.allCases.map(\.name).joined(separator: ", ")

    var id: String
    var symbol: String
    var qty: Int64
    var avgPriceTicks: Int64
    var updatedAt: Double

    init(row: Row) throws {
        id = try row.decode(String.self, forColumn: Columns.id)
        symbol = try row.decode(String.self, forColumn: Columns.symbol)
        qty = try row.decode(Int64.self, forColumn: Columns.qty)
        avgPriceTicks = try row.decode(Int64.self, forColumn: Columns.avgPriceTicks)
        updatedAt = try row.decode(Double.self, forColumn: Columns.updatedAt)
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
        get throws {
            try Components.Schemas.Device(
                id: id, environment: environment, tokenSuffix: String(token.suffix(8)), label: label,
                alerts: alerts.split(separator: ",").map { try .stored(String($0), table: "device_tokens", column: "alerts") },
                createdAt: date(createdAt))
        }
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
