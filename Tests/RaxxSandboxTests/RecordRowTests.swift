import Foundation
import GRDB
import PropertyBased
import RaxxAPI
import RaxxDomain
@testable import RaxxSandbox
import RaxxTestSupport
import Testing

/// The records read column by column (`init(row:)`) held to GRDB's Codable row decoder, which read
/// them before: the same record from the same row, or the same refusal (a NULL where a value must
/// be), on generated rows: every enum case and values no case has (read as the stored fallback),
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
            return random.bool() ? Int64(random.int(0...2_000_000_000)).databaseValue
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

    /// Rows as the database holds them, selected as the ledger selects them.
    @Test func storedRowsReadTheSameBothWays() throws {
        let db = try DatabaseQueue()
        try db.write { db in
            try db.execute(sql: """
                CREATE TABLE orders (id TEXT, account_id TEXT, client_order_id TEXT, symbol TEXT, side TEXT, qty INTEGER, type TEXT,
                    limit_price_ticks INTEGER, tif TEXT, status TEXT, filled_qty INTEGER, avg_fill_price_ticks INTEGER, reject_code TEXT,
                    mode TEXT, not_after REAL, created_at REAL, updated_at REAL);
                INSERT INTO orders VALUES ('ord_1', 'acc_1', 'c-1', 'AAPL', 'buy', 10, 'limit', 19025, 'day', 'filled', 10, 19020, NULL,
                    'paper', NULL, 1795000000.25, 1795000001);
                INSERT INTO orders VALUES ('ord_2', 'acc_1', 'c-2', 'AAPL260116C00200000', 'sell', 1, 'market', NULL, 'gtc', 'renamed',
                    0, NULL, 'insufficient_buying_power', 'live', 1795000100, 1795000000, 1795000000);
                """)
            for row in try Row.fetchAll(db, sql: "SELECT \(OrderRecord.columns) FROM orders") {
                let read = Self.bothWays(row, OrderRecord.self)
                #expect(read.direct == read.codable && read.direct != "refused", "\(row)")
            }
        }
    }
}
