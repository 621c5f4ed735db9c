import Foundation
import GRDB
import RaxxDomain
import RaxxSandbox
import Testing

@Suite struct MarketTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18

    @Test func pricesAreDeterministicUnderASeed() throws {
        let a = Market(seed: 7), b = Market(seed: 7), c = Market(seed: 8)
        let aapl = try #require(a.instrument("AAPL"))
        #expect(a.priceTicks(aapl, at: now) == b.priceTicks(aapl, at: now))
        #expect(a.priceTicks(aapl, at: now) != c.priceTicks(aapl, at: now))
        let price = try #require(a.priceTicks(aapl, at: now))
        #expect(price > 100 * Money.ticksPerUnit && price < 400 * Money.ticksPerUnit)
        #expect(price % 100 == 0)  // whole cents
    }

    @Test func knowsTheCoreUnderlyingsAndOptionsOnThem() throws {
        let market = Market()
        for symbol in ["AAPL", "MSFT", "SPY"] { #expect(market.instrument(symbol) != nil) }
        #expect(market.instrument("ZZZZ") == nil)
        let option = try #require(market.instrument("AAPL261218C00190000"))
        #expect(option.symbol == "AAPL261218C00190000")
        #expect(option.multiplier == 100)
        #expect(market.instrument("AAPL  261218P00190000")?.symbol == "AAPL261218P00190000")  // OCC's padded form
        #expect(market.instrument("ZZZZ261218C00190000") == nil)
        #expect(market.instrument("AAPL261318C00190000") == nil)  // month 13
    }

    @Test func listsMonthlyContractsOnTheStrikeGridOnly() throws {
        let market = Market()
        #expect(market.instrument("AAPL261218C00192500") != nil)  // 192.50: AAPL's strikes are 2.50 apart
        #expect(market.instrument("AAPL261218C00190001") == nil)  // off the grid
        #expect(market.instrument("AAPL261218C00191000") == nil)
        #expect(market.instrument("AAPL261217C00190000") == nil)  // a Thursday
        #expect(market.instrument("AAPL261211C00190000") == nil)  // a Friday, but the second of the month
        #expect(market.instrument("AAPL261218C99999000") == nil)  // far from the price
        #expect(market.instrument("AAPL261218C00090000") == nil)
        #expect(market.instrument("AAPL270115P00190000") != nil)  // 15 January 2027, a third Friday
        // Every contract of a chain is listed, whatever the spot did meanwhile.
        for u in market.underlyings {
            for days in stride(from: 0, to: 400, by: 37) {
                let chain = market.optionChain(u, from: now.addingTimeInterval(Double(days) * 86_400))
                #expect(chain.count > 500, "\(u.symbol)")
                #expect(chain.allSatisfy(market.lists))
            }
        }
    }

    @Test func optionPricesBehave() throws {
        let market = Market()
        let chain = market.optionChain(market.underlyings[0], from: now, expiries: 1, strikesEachSide: 2)
        #expect(chain.count == 10)
        let calls = chain.filter { $0.right == .call }.sorted { $0.strikeThousandths < $1.strikeThousandths }
        let prices = calls.map { market.priceTicks(.option($0), at: now)! }
        #expect(prices == prices.sorted(by: >))  // higher strike, cheaper call
        let expired = OptionContract(occ: "AAPL200117C00100000")!
        #expect(market.priceTicks(.option(expired), at: now) == nil)
    }

    @Test func expiriesAreThirdFridays() throws {
        let market = Market()
        for contract in market.optionChain(market.underlyings[2], from: now, expiries: 6, strikesEachSide: 0) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            #expect(calendar.component(.weekday, from: contract.expiry.start) == 6)
            #expect((15...21).contains(contract.expiry.day))
        }
    }
}

@Suite struct SeederTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func seedsPositionsOrdersFillsAndTheChangeLog() throws {
        let db = try SandboxDatabase(path: ":memory:")
        let summary = try Seeder(database: db, market: Market()).seed(email: "trader@example.com", positions: 40, fills: 400, now: now)
        #expect(summary.created_account)
        #expect(summary.positions == 40 && summary.fills == 400)
        try db.writer.read { db in
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM positions") == 40)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fills") == 400)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM orders") == summary.orders)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change_log") == 40 + 400 + summary.orders)
            // Seeded history moves cash (SeededHistoryTests checks by how much); the account keeps
            // at least its starting cash.
            #expect(try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts") == Money.ticks(parsing: summary.cash))
            #expect(try Int64.fetchOne(db, sql: "SELECT cash_ticks FROM accounts") ?? 0 >= 100_000 * 10_000)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM passkeys") == 0)
            // Every fill belongs to an order of the same symbol, and order quantities add up.
            #expect(
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) FROM orders o WHERE o.qty != (SELECT SUM(qty) FROM fills f WHERE f.order_id = o.id)
                        """) == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM fills f JOIN orders o ON o.id = f.order_id WHERE o.symbol != f.symbol") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM positions WHERE symbol GLOB '*[0-9]C[0-9]*' OR symbol GLOB '*[0-9]P[0-9]*'") == 30)
            let actions = try String.fetchAll(db, sql: "SELECT action FROM audit_events ORDER BY seq")
            #expect(actions == ["account.created", "sandbox.seeded"])
        }
    }

    /// Seeded history is written as an account writes it, in time order across instruments, with
    /// IDs that sort by their row's time: an account's rows then sit together in every index (an
    /// erasure of a million fills touched most of each index once per chunk when they did not).
    @Test func seededHistoryIsWrittenInTimeOrderWithTimeOrderedIDs() throws {
        let db = try SandboxDatabase(path: ":memory:")
        _ = try Seeder(database: db, market: Market()).seed(email: "trader@example.com", positions: 30, fills: 900, now: now)
        /// The milliseconds an ID's 9 base-36 digits after `xxx_` say.
        func milliseconds(_ id: String) -> Int64? {
            let body = id.dropFirst(4)
            guard id.count == 24, id.dropLast(20).hasSuffix("_"),
                body.allSatisfy({ ("0"..."9").contains($0) || ("a"..."z").contains($0) })
            else { return nil }
            return Int64(body.prefix(9), radix: 36)
        }
        try db.writer.read { db in
            let orders = try Row.fetchAll(db, sql: "SELECT id, created_at FROM orders ORDER BY rowid")
            #expect(orders.count > 300)
            var previous = ""
            for order in orders {
                let id: String = order["id"], created: Double = order["created_at"]
                #expect(milliseconds(id) == Int64(created * 1000), "\(id)")
                #expect(id.prefix(13) >= previous.prefix(13), "\(previous) then \(id)")
                previous = id
            }
            // A fill is written with its order; another order may open while its legs (1.5 s
            // apart, at most three) are still to come.
            let fills = try Row.fetchAll(db, sql: "SELECT id, filled_at FROM fills ORDER BY rowid")
            var latest = 0.0
            for fill in fills {
                let id: String = fill["id"], at: Double = fill["filled_at"]
                #expect(milliseconds(id) == Int64(at * 1000), "\(id)")
                #expect(at >= latest - 3.0, "\(id) at \(at) after \(latest)")
                latest = max(latest, at)
            }
        }
    }

    @Test func seedingAgainReusesTheAccount() throws {
        let db = try SandboxDatabase(path: ":memory:")
        let seeder = Seeder(database: db, market: Market())
        let first = try seeder.seed(email: "t@example.com", positions: 5, fills: 10, now: now)
        let second = try seeder.seed(email: "T@example.com", positions: 5, fills: 10, now: now)
        #expect(!second.created_account)
        #expect(first.account_id == second.account_id)
        #expect(try db.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM positions") } == 5)
    }

    @Test func refusesMorePositionsThanTheMarketLists() throws {
        let db = try SandboxDatabase(path: ":memory:")
        #expect(throws: Seeder.SeedError.self) {
            try Seeder(database: db, market: Market()).seed(email: "t@example.com", positions: 1_000_000, fills: 0, now: now)
        }
        #expect(try db.writer.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM users") } == 0)
    }
}
