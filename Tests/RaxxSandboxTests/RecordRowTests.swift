import Foundation
import GRDB
import PropertyBased
import RaxxAPI
import RaxxDomain
import RaxxTestSupport
import Testing

@testable import RaxxSandbox

/// The records read column by column (`init(row:)`) held to GRDB's Codable row decoder, which read
/// them before: the same record from the same row, or the same refusal (a NULL where a value must
/// be, a value no case of its enum has), on generated rows: every enum case and values no case has,
/// NULLs, whole numbers in REAL columns.
@Suite struct RecordRowTests {
    /// A record read through its Codable conformance, as FetchableRecord's default does.
    struct ViaCodable<Record: SandboxRecord>: Decodable, FetchableRecord {
        static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
        let record: Record
        init(from decoder: any Decoder) throws { record = try Record(from: decoder) }
    }

    static func bothWays<Record: SandboxRecord>(_ row: Row, _: Record.Type) -> (direct: String, codable: String) {
        let direct = Result { try Record(row: row) }.map { "\($0)" }
        let codable = Result { try ViaCodable<Record>(row: row).record }.map { "\($0)" }
        func text(_ r: Result<String, any Error>) -> String { (try? r.get()) ?? "refused" }
        return (text(direct), text(codable))
    }

    struct Values {
        var random: ModelRandom

        mutating func text(nullable: Bool = false) -> DatabaseValue {
            if nullable, random.int(0...3) == 0 { return .null }
            if random.int(0...20) == 0 { return .null }
            return random.text(0...12).databaseValue
        }

        mutating func word<E: CaseIterable & RawRepresentable<String>>(_: E.Type) -> DatabaseValue {
            if random.int(0...20) == 0 { return .null }
            return (random.int(0...5) == 0 ? random.pick(["", "bogus", "BUY"]) : random.pick(Array(E.allCases)).rawValue).databaseValue
        }

        mutating func integer(nullable: Bool = false) -> DatabaseValue {
            if (nullable && random.bool()) || random.int(0...20) == 0 { return .null }
            return random.int64().databaseValue
        }

        mutating func real(nullable: Bool = false) -> DatabaseValue {
            if (nullable && random.bool()) || random.int(0...20) == 0 { return .null }
            return random.bool()
                ? Int64(random.int(0...2_000_000_000)).databaseValue
                : (Double(random.int(0...2_000_000_000)) + Double(random.int(0...999)) / 1000).databaseValue
        }
    }

    @Test func ordersReadTheSameBothWays() async throws {
        await propertyCheck(count: 2_000, input: Gen.uint64()) { seed in
            var v = Values(random: ModelRandom(seed))
            let row: Row = [
                "id": v.text(), "account_id": v.text(), "client_order_id": v.text(), "symbol": v.text(),
                "side": v.word(OrderSide.self), "qty": v.integer(), "type": v.word(OrderType.self),
                "limit_price_ticks": v.integer(nullable: true), "tif": v.word(TimeInForce.self), "status": v.word(OrderStatus.self),
                "filled_qty": v.integer(), "avg_fill_price_ticks": v.integer(nullable: true), "reject_code": v.text(nullable: true),
                "mode": v.word(Components.Schemas.TradingMode.self), "not_after": v.real(nullable: true),
                "created_at": v.real(), "updated_at": v.real(),
            ]
            let read = Self.bothWays(row, OrderRecord.self)
            #expect(read.direct == read.codable, "\(row)")
        }
    }

    @Test func positionsReadTheSameBothWays() async throws {
        await propertyCheck(count: 1_000, input: Gen.uint64()) { seed in
            var v = Values(random: ModelRandom(seed))
            let row: Row = ["id": v.text(), "symbol": v.text(), "qty": v.integer(), "avg_price_ticks": v.integer(), "updated_at": v.real()]
            let read = Self.bothWays(row, PositionRecord.self)
            #expect(read.direct == read.codable, "\(row)")
        }
    }

    /// Rows as the database holds them, selected as the ledger selects them; one with a status no
    /// case has ('renamed') is refused both ways, naming where it is, never read as a default.
    @Test func storedRowsReadTheSameBothWays() throws {
        let db = try DatabaseQueue()
        try db.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE orders (id TEXT, account_id TEXT, client_order_id TEXT, symbol TEXT, side TEXT, qty INTEGER, type TEXT,
                        limit_price_ticks INTEGER, tif TEXT, status TEXT, filled_qty INTEGER, avg_fill_price_ticks INTEGER, reject_code TEXT,
                        mode TEXT, not_after REAL, created_at REAL, updated_at REAL);
                    INSERT INTO orders VALUES ('ord_1', 'acc_1', 'c-1', 'AAPL', 'buy', 10, 'limit', 19025, 'day', 'filled', 10, 19020, NULL,
                        'paper', NULL, 1795000000.25, 1795000001);
                    INSERT INTO orders VALUES ('ord_2', 'acc_1', 'c-2', 'AAPL260116C00200000', 'sell', 1, 'market', NULL, 'gtc', 'renamed',
                        0, NULL, 'insufficient_buying_power', 'live', 1795000100, 1795000000, 1795000000);
                    """)
            let rows = try Row.fetchAll(db, sql: "SELECT \(OrderRecord.columns) FROM orders")
            for row in rows {
                let read = Self.bothWays(row, OrderRecord.self)
                #expect(read.direct == read.codable && (read.direct != "refused") == (row["id"] == "ord_1"), "\(row)")
            }
            let refused = #expect(throws: UnknownStoredValue.self) { try OrderRecord(row: rows[1]) }
            #expect(
                refused?.description == "orders.status holds 'renamed', which is not one of OrderStatus's values ("
                    + OrderStatus.allCases.map(\.rawValue).joined(separator: ", ") + ")")
        }
    }

    // MARK: Read in place

    static let orderTable = """
        CREATE TABLE orders (id TEXT, account_id TEXT, client_order_id TEXT, symbol TEXT, side TEXT, qty INTEGER, type TEXT,
            limit_price_ticks INTEGER, tif TEXT, status TEXT, filled_qty INTEGER, avg_fill_price_ticks INTEGER, reject_code TEXT,
            mode TEXT, not_after REAL, created_at REAL, updated_at REAL)
        """

    /// A record read from a stored row through GRDB's `Row` and from the statement's row in place
    /// (`ColumnRow`, as the write path reads it): the same record, or both refused.
    static func rowAndInPlace<Record>(_ db: Database, _ sql: String, _ read: (any ColumnDecoding) throws -> Record) throws -> (row: String, inPlace: String) {
        func text(_ r: Result<Record?, any Error>) -> String { (try? r.get()).map { "\($0.map { "\($0)" } ?? "none")" } ?? "refused" }
        let viaRow = Result { try Row.fetchOne(db, sql: sql).map(read) }
        let inPlace = Result { try db.makeStatement(sql: sql).firstRow(arguments: []) { try read($0) } }
        return (text(viaRow), text(inPlace))
    }

    @Test func ordersReadTheSameInPlace() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in try db.execute(sql: Self.orderTable) }
        await propertyCheck(count: 500, input: Gen.uint64()) { seed in
            var v = Values(random: ModelRandom(seed))
            let values: [DatabaseValue] = [
                v.text(), v.text(), v.text(), v.text(), v.word(OrderSide.self), v.integer(), v.word(OrderType.self),
                v.integer(nullable: true), v.word(TimeInForce.self), v.word(OrderStatus.self), v.integer(), v.integer(nullable: true),
                v.text(nullable: true), v.word(Components.Schemas.TradingMode.self), v.real(nullable: true), v.real(), v.real(),
            ]
            let read = try? await queue.write { db in
                try db.execute(sql: "DELETE FROM orders")
                try db.execute(
                    sql: "INSERT INTO orders VALUES (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))",
                    arguments: StatementArguments(values))
                return try Self.rowAndInPlace(db, "SELECT \(OrderRecord.columns) FROM orders") { try OrderRecord(columns: $0) }
            }
            #expect(read != nil && read?.row == read?.inPlace, "\(values)")
        }
    }

    @Test func positionsReadTheSameInPlace() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE positions (id TEXT, account_id TEXT, symbol TEXT, qty INTEGER, avg_price_ticks INTEGER, updated_at REAL)")
        }
        await propertyCheck(count: 500, input: Gen.uint64()) { seed in
            var v = Values(random: ModelRandom(seed))
            let values: [DatabaseValue] = [v.text(), v.text(), v.text(), v.integer(), v.integer(), v.real()]
            let read = try? await queue.write { db in
                try db.execute(sql: "DELETE FROM positions")
                try db.execute(sql: "INSERT INTO positions VALUES (?, ?, ?, ?, ?, ?)", arguments: StatementArguments(values))
                return try Self.rowAndInPlace(db, "SELECT \(PositionRecord.columns) FROM positions") { try PositionRecord(columns: $0) }
            }
            #expect(read != nil && read?.row == read?.inPlace, "\(values)")
        }
    }

    /// What cannot be read is an error naming the column, never a crash: a NULL where a value must
    /// be, text that is no date, a column the row does not have. (Text read as a number is SQLite's
    /// conversion, as through a `Row`.)
    @Test func unreadableColumnsAreErrorsInPlace() throws {
        let queue = try DatabaseQueue()
        try queue.read { db in
            let statement = try db.makeStatement(sql: "SELECT NULL AS qty, 'ten' AS price, 'filled' AS status")
            for (what, read) in [
                ("qty", { (row: ColumnRow) in _ = try row.decode(Int64.self, atIndex: 0) }),
                ("price", { (row: ColumnRow) in _ = try row.decode(Date.self, atIndex: 1) }),
                ("no column 3", { (row: ColumnRow) in _ = try row.decode(String.self, atIndex: 3) }),
                ("no column -1", { (row: ColumnRow) in _ = try row.decode(OrderStatus.self, atIndex: -1) }),
            ] {
                let error = #expect(throws: DatabaseError.self, "\(what)") { try statement.firstRow(arguments: [], read) }
                #expect(error?.message?.contains(what) == true, "\(String(describing: error))")
            }
            // Read as they are: a NULL as nil, a stored word as its case.
            let fine = try statement.firstRow(arguments: []) { row in
                (try row.decode(Int64?.self, atIndex: 0), try row.decode(String.self, atIndex: 1), try row.decode(OrderStatus.self, atIndex: 2))
            }
            #expect(fine?.0 == nil && fine?.1 == "ten" && fine?.2 == .filled)
            // A record read from a query that selects fewer than its columns is refused, not read past.
            let short = #expect(throws: DatabaseError.self) { try statement.firstRow(arguments: []) { try OrderRecord(columns: $0) } }
            #expect(short?.message?.contains("not the 17 of OrderRecord.columns") == true, "\(String(describing: short))")
            // Through a GRDB `Row` too: `init(row:)` is the same positional reader, not GRDB's Codable one.
            let shortRow = try #require(try Row.fetchOne(statement))
            let viaRow = #expect(throws: DatabaseError.self) { try OrderRecord(row: shortRow) }
            #expect(viaRow?.message?.contains("not the 17 of OrderRecord.columns") == true, "\(String(describing: viaRow))")
            let positionViaRow = #expect(throws: DatabaseError.self) { try PositionRecord(row: shortRow) }
            #expect(positionViaRow?.message?.contains("not the 5 of PositionRecord.columns") == true, "\(String(describing: positionViaRow))")
            // A statement with no row answers nil, and the statement is ready to run again.
            #expect(try db.makeStatement(sql: "SELECT 1 WHERE 0").firstRow(arguments: []) { _ in 1 } == nil)
            #expect(try statement.allRows(arguments: []) { try $0.decode(String.self, atIndex: 2) } == ["filled"])
        }
    }
}
