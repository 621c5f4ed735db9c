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
        world.keystore = MemoryKeystore() // reads check whose cache it is, offline
        return world
    }

    @Test func positionsAsJSONLinesWithAsOf() async throws {
        let world = world(now: Fixtures.now.addingTimeInterval(60), cache: try Fixtures.filledCache())
        #expect(try await world.run(RaxxCache.Show.self, ["positions"]) == .ok)
        let lines = world.jsonLines
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0["as_of"] as? String == "2026-11-21T10:00:00Z" })
        #expect(Set(lines.compactMap { $0["symbol"] as? String }) == ["AAPL", "AAPL261218C00190000"])
        #expect(world.stderr.contents.isEmpty) // fresh: nothing to disclose
        #expect(world.api.calls.isEmpty)
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
        #expect(world.stdout.contents.contains("ord-1") == false) // the table shows client order ids, not server ids
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
