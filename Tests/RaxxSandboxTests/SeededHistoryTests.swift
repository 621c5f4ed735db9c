import Foundation
import GRDB
import RaxxDomain
import Testing

@testable import RaxxSandbox

/// Seeded histories are ones the paper engine could have made: cash, positions and fills agree.
@Suite struct SeededHistoryTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let market = Market()

    struct Fill { var symbol: String, buy: Bool, qty: Int64, price: Int64, at: Double, orderID: String }

    func fills(_ db: SandboxDatabase) throws -> [Fill] {
        try db.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT symbol, side, qty, price_ticks, filled_at, order_id FROM fills ORDER BY filled_at, rowid").map {
                Fill(symbol: $0[0], buy: ($0[1] as String) == "buy", qty: $0[2], price: $0[3], at: $0[4], orderID: $0[5])
            }
        }
    }

    @Test func cashPositionsAndFillsAgreeByTheEnginesRules() throws {
        let db = try SandboxDatabase(path: ":memory:")
        let summary = try Seeder(database: db, market: market).seed(email: "t@example.com", positions: 60, fills: 6_000, now: now)
        let deposit = try #require(Money.ticks(parsing: summary.deposit))
        let fills = try fills(db)
        #expect(fills.count == 6_000)
        // Cash: starting cash and the deposit, less every buy, plus every sell (× the multiplier),
        // never below zero at any fill in time order (at one instant, payments first), and the
        // deposit no larger than that needs.
        var flows: [(at: Double, cash: Int64)] = []
        var replayed: [String: (qty: Int64, average: Int64)] = [:]
        for f in fills {
            let multiplier = try #require(market.instrument(f.symbol)).multiplier
            flows.append((f.at, f.buy ? -f.qty * f.price * multiplier : f.qty * f.price * multiplier))
            let held = replayed[f.symbol] ?? (0, 0)
            // A paper account sells only what it holds.
            #expect(f.buy || held.qty >= f.qty)
            replayed[f.symbol] = PaperEngine.position(held: held.qty, average: held.average, buy: f.buy, qty: f.qty, price: f.price)
        }
        flows.sort { $0.at != $1.at ? $0.at < $1.at : $0.cash < $1.cash }
        var cash = Accounts.startingCashTicks + deposit, lowest = cash
        for flow in flows {
            cash += flow.cash
            lowest = min(lowest, cash)
        }
        #expect(lowest >= 0)
        // The deposit is the least that keeps cash from going below zero and leaves the account
        // at least its starting cash.
        #expect(cash >= Accounts.startingCashTicks)
        #expect(deposit == 0 || lowest == 0 || cash == Accounts.startingCashTicks)
        #expect(summary.cash == Money.string(ticks: cash))
        let (stored, positions) = try db.writer.read { db in
            (
                try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts") ?? -1,
                try Row.fetchAll(db, sql: "SELECT symbol, qty, avg_price_ticks FROM positions").map { ($0[0] as String, $0[1] as Int64, $0[2] as Int64) }
            )
        }
        #expect(stored == cash)
        // Every position is what its fills make it, long, at a positive average price.
        #expect(positions.count == 60)
        for (symbol, qty, average) in positions {
            let fromFills = try #require(replayed[symbol])
            #expect(qty == fromFills.qty && average == fromFills.average)
            #expect(qty > 0 && average > 0)
        }
        #expect(Set(replayed.keys) == Set(positions.map(\.0)))
        // Orders: each fill at or inside its order's limit, the order's average its fills' average.
        let bad = try db.writer.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM orders o WHERE o.limit_price_ticks IS NOT NULL AND EXISTS (SELECT 1 FROM fills f WHERE f.order_id = o.id AND
                    (CASE o.side WHEN 'buy' THEN f.price_ticks > o.limit_price_ticks ELSE f.price_ticks < o.limit_price_ticks END))
                    """)
        }
        #expect(bad == 0)
        for f in fills.prefix(200) {
            let (average, legs) = try db.writer.read { db in
                (
                    try Int64.fetchOne(db, sql: "SELECT avg_fill_price_ticks FROM orders WHERE id = ?", arguments: [f.orderID]),
                    try Row.fetchAll(db, sql: "SELECT qty, price_ticks FROM fills WHERE order_id = ? ORDER BY filled_at", arguments: [f.orderID])
                )
            }
            var expected: Int64? = nil, filled: Int64 = 0
            for leg in legs {
                let qty: Int64 = leg[0], price: Int64 = leg[1]
                expected = PaperEngine.orderAverage(expected, filled: filled, qty: qty, price: price)
                filled += qty
            }
            #expect(average == expected)
        }
    }

    @Test func theSameInputSeedsTheSameHistory() throws {
        func seeded() throws -> (Seeder.Summary, [[DatabaseValue]], Int64) {
            let db = try SandboxDatabase(path: ":memory:")
            let summary = try Seeder(database: db, market: market).seed(email: "t@example.com", positions: 25, fills: 500, now: now)
            return try db.writer.read { db in
                (
                    summary,
                    try Row.fetchAll(db, sql: "SELECT id, order_id, symbol, side, qty, price_ticks, filled_at FROM fills ORDER BY id").map {
                        Array($0.databaseValues)
                    },
                    try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts") ?? 0
                )
            }
        }
        let (a, fillsA, cashA) = try seeded()
        let (b, fillsB, cashB) = try seeded()
        #expect(fillsA == fillsB && cashA == cashB)
        #expect(a.orders == b.orders && a.deposit == b.deposit)
    }

    @Test func seedingAgainContinuesTheSameBook() throws {
        let db = try SandboxDatabase(path: ":memory:")
        let seeder = Seeder(database: db, market: market)
        let first = try seeder.seed(email: "t@example.com", positions: 8, fills: 80, now: now)
        let second = try seeder.seed(email: "t@example.com", positions: 8, fills: 80, now: now)
        let deposits = try #require(Money.ticks(parsing: first.deposit)) + (try #require(Money.ticks(parsing: second.deposit)))
        let fills = try fills(db)
        #expect(fills.count == 160)
        var cash = Accounts.startingCashTicks + deposits
        var held: [String: Int64] = [:]
        for f in fills {
            cash += (f.buy ? -1 : 1) * f.qty * f.price * (try #require(market.instrument(f.symbol))).multiplier
            held[f.symbol, default: 0] += f.buy ? f.qty : -f.qty
        }
        try db.writer.read { db in
            #expect(try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts") == cash)
            for row in try Row.fetchAll(db, sql: "SELECT symbol, qty FROM positions") {
                #expect(held[row[0] as String] == row[1] as Int64)
            }
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM positions") == 8)
        }
    }

    @Test func progressCountsRowsUpToTheTotal() throws {
        let db = try SandboxDatabase(path: ":memory:")
        let heard = Heard()
        _ = try Seeder(database: db, market: market).seed(email: "t@example.com", positions: 30, fills: 3_000, now: now) { done, total in
            heard.calls.append((done, total))
        }
        #expect(!heard.calls.isEmpty)
        #expect(heard.calls.allSatisfy { $0.1 == 3_030 })
        #expect(zip(heard.calls, heard.calls.dropFirst()).allSatisfy { $0.0 < $1.0 })
        #expect(heard.calls.last?.0 == 3_030)
    }

    @Test func aPositionIsBuiltByItsFills() throws {
        let db = try SandboxDatabase(path: ":memory:")
        let fewer = try Seeder(database: db, market: market).seed(email: "t@example.com", positions: 5, fills: 3, now: now)
        let none = try Seeder(database: db, market: market).seed(email: "u@example.com", positions: 6, fills: 0, now: now)
        #expect(fewer.positions == 3 && none.positions == 0)
        #expect(try db.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM positions") } == 3)
    }

    final class Heard { var calls: [(Int, Int)] = [] }
}
