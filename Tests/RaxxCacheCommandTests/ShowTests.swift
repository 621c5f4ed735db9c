import Foundation
import RaxxCacheCommand
import RaxxCore
import RaxxStore
import RaxxTestSupport
import RaxxVault
import Testing

/// `raxx-cache show` in-process: the cache only, never the network, with its age disclosed.
@Suite struct ShowTests {
    func world(now: Date, cache: CacheStore?) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(now)
        world.stores = MemoryStores(cache: cache)
        world.keystore = MemoryKeystore()  // reads check whose cache it is, offline
        return world
    }

    @Test func positionsAsJSONLinesWithAsOf() async throws {
        let world = world(now: Fixtures.now.addingTimeInterval(60), cache: try Fixtures.filledCache())
        #expect(try await world.run(RaxxCache.Show.self, ["positions"]) == .ok)
        let lines = world.jsonLines
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0["as_of"] as? String == "2026-11-21T10:00:00Z" })
        #expect(Set(lines.compactMap { $0["symbol"] as? String }) == ["AAPL", "AAPL261218C00190000"])
        #expect(world.stderr.contents.isEmpty)  // fresh: nothing to disclose
        #expect(world.api.calls.isEmpty)
    }

    /// A trader reads what each position is worth and has made, options as options; JSON keeps
    /// the OCC symbol, with its parts, and money to the cent.
    @Test func positionsShowTheirValueAndPnL() async throws {
        let world = world(now: Fixtures.now.addingTimeInterval(60), cache: try Fixtures.filledCache())
        world.terminalColumns = 120
        #expect(try await world.run(RaxxCache.Show.self, ["positions", "--format", "text"]) == .ok)
        #expect(
            world.stdout.contents == """
                SYMBOL                     QTY  AVG PRICE    LAST  MARKET VALUE     UNREALIZED P&L  UPDATED
                AAPL                        10     187.25  190.00      1,900.00    +27.50 (+1.5 %)  1m ago
                AAPL 18 Dec 26 190 C ×100    2       3.50    4.25        850.00  +150.00 (+21.4 %)  1m ago

                """, "\(world.stdout.contents)")
        let json = TestWorld()
        json.clock = world.clock; json.stores = world.stores; json.keystore = world.keystore
        #expect(try await json.run(RaxxCache.Show.self, ["positions"]) == .ok)
        let option = try #require(json.jsonLines.first { $0["symbol"] as? String == "AAPL261218C00190000" })
        #expect(option["last_price"] as? String == "4.25" && option["market_value"] as? String == "850.00")
        #expect(option["unrealized_pnl"] as? String == "150.00" && option["unrealized_pnl_percent"] as? Double == 21.43)
        let parts = try #require(option["option"] as? [String: Any])
        #expect(parts["underlying"] as? String == "AAPL" && parts["expiry"] as? String == "2026-12-18" && parts["right"] as? String == "call")
        #expect(parts["strike"] as? String == "190.00" && parts["multiplier"] as? Int == 100)
        #expect(json.jsonLines.first { $0["symbol"] as? String == "AAPL" }?["option"] == nil)
    }

    @Test func thePortfolioSaysItsPnLSignedWithItsShareAndJSONMoneyToTheCent() async throws {
        let store = try Fixtures.filledCache()
        var p = Fixtures.portfolio()
        p.unrealizedPnl = "-1.093"
        p.marketValue = "1000.0"
        try store.savePortfolio(p)
        let world = world(now: Fixtures.now.addingTimeInterval(60), cache: store)
        world.terminalColumns = 120
        #expect(try await world.run(RaxxCache.Show.self, ["portfolio", "--format", "text"]) == .ok)
        #expect(world.stdout.contents.contains("-1.09 (-0.1 %)"), "\(world.stdout.contents)")
        let json = TestWorld()
        json.clock = world.clock; json.stores = world.stores; json.keystore = world.keystore
        #expect(try await json.run(RaxxCache.Show.self, ["portfolio"]) == .ok)
        let line = try #require(json.jsonLines.first)
        #expect(line["unrealized_pnl"] as? String == "-1.09" && line["market_value"] as? String == "1000.00")
        #expect(line["unrealized_pnl_percent"] as? Double == -0.11)
    }

    /// `show positions > full-disk.jsonl` in a cron job: the data never arrived, so it fails (1),
    /// saying why on stderr, rather than exiting 0 with nothing written.
    @Test func anOutputThatCouldNotBeWrittenFails() async throws {
        let world = world(now: Fixtures.now.addingTimeInterval(60), cache: try Fixtures.filledCache())
        world.stdout.failure = "No space left on device"
        #expect(try await world.run(RaxxCache.Show.self, ["positions"]) == .failure)
        #expect(world.stderr.contents.hasPrefix("raxx-cache: Could not write"), "into a pipe, an error is text: \(world.stderr.contents)")
        #expect(world.stderr.contents.contains("Could not write to standard output: No space left on device."))
    }

    @Test func oldDataSaysItsAgeAndMaxAgeExits3AfterPrinting() async throws {
        let world = world(now: Fixtures.now.addingTimeInterval(3 * 3600), cache: try Fixtures.filledCache())
        #expect(try await world.run(RaxxCache.Show.self, ["orders", "--max-age", "1h", "--format", "text"]) == .stale)
        #expect(world.stdout.contents.contains("ord-1") == false)  // the table shows client order ids, not server ids
        #expect(world.stdout.contents.contains("c-1"))
        #expect(world.stderr.contents.contains("Data last updated at 10:00 (3h ago)"), "\(world.stderr.contents)")
        // Durations exact, in one form (it read "3 hours old, older than --max-age 1h").
        #expect(world.stderr.contents.contains("The cached data is 3h old, older than --max-age 1h."), "\(world.stderr.contents)")
    }

    /// A cron job reading every five minutes with --quiet: the age is told by the JSON's as_of and
    /// by exit 3, nothing on stderr (it printed "Data last updated…" and the --max-age error).
    @Test func quietSaysTheAgeByExit3AndAsOfAlone() async throws {
        let world = world(now: Fixtures.now.addingTimeInterval(3 * 3600), cache: try Fixtures.filledCache())
        #expect(try await world.run(RaxxCache.Show.self, ["positions", "--max-age", "1h", "--quiet"]) == .stale)
        #expect(world.stderr.contents.isEmpty, "\(world.stderr.contents)")
        #expect(world.jsonLines.count == 2 && world.jsonLines.allSatisfy { $0["as_of"] as? String == "2026-11-21T10:00:00Z" })
    }

    @Test func aMistakenSinceIsAUsageErrorEvenOnAnEmptyCache() async throws {
        let world = world(now: Fixtures.now, cache: nil)
        #expect(try await world.run(RaxxCache.Show.self, ["fills", "--since", "2x"]) == .usage)
        #expect(world.stderr.contents.contains("--since takes an RFC 3339 time"))
        #expect(world.stdout.contents.isEmpty)
    }

    /// No row matches: nothing on stdout, as every other list (it printed the table's header).
    @Test func aTableWithNoRowsPrintsNothing() async throws {
        for what in [["fills", "--symbol", "NVDA"], ["positions", "--symbol", "NVDA"], ["orders", "--symbol", "NVDA"]] {
            for terminal in [false, true] {
                let world = world(now: Fixtures.now.addingTimeInterval(60), cache: try Fixtures.filledCache())
                world.stderrIsTTY = terminal
                #expect(try await world.run(RaxxCache.Show.self, what + ["--format", "text"]) == .ok)
                #expect(world.stdout.contents.isEmpty, "\(what): \(world.stdout.contents)")
                #expect(world.stderr.contents == (terminal ? "Nothing to show.\n" : ""), "\(what)")
            }
        }
    }

    @Test func anEmptyCacheExits3() async throws {
        let world = world(now: Fixtures.now, cache: nil)
        #expect(try await world.run(RaxxCache.Show.self, ["portfolio", "--format", "text"]) == .stale)
        #expect(world.stderr.contents == "raxx-cache: No cached data yet — run raxx-cache refresh while online\n")
    }

    @Test func statusFiltersApplyToOrdersOnly() throws {
        #expect(throws: (any Error).self) { try RaxxCache.Show.parse(["positions", "--status", "open"]) }
        #expect(throws: (any Error).self) { try RaxxCache.Show.parse(["orders", "--status", "resting"]) }
        #expect(throws: (any Error).self) { try RaxxCache.Show.parse(["orders", "--max-age", "soon"]) }
        _ = try RaxxCache.Show.parse(["orders", "--status", "partially_filled", "--max-age", "90s"])
    }

    @Test func anotherAccountsCacheIsNeverShown() async throws {
        let world = world(now: Fixtures.now, cache: try Fixtures.filledCache())
        var other = Fixtures.session()
        other.accountID = "acc-2"
        world.keystore = Fixtures.keystore(session: other)
        #expect(try await world.run(RaxxCache.Show.self, ["positions", "--format", "text"]) == .stale)
        #expect(world.stderr.contents == "raxx-cache: No cached data for this account yet — run raxx-cache refresh while online\n")
        #expect(world.stdout.contents.isEmpty)
    }
}
