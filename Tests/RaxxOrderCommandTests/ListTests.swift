import Foundation
import RaxxAPI
import RaxxCore
import RaxxOrderCommand
import RaxxTestSupport
import Testing

/// `raxx-order list` in-process: from the server, or from the cache with --cached.
@Suite struct ListTests {
    @Test func asksTheServerPageByPage() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stores = MemoryStores()
        world.api.onListOrders { input in
            #expect(input.query.status == .open)
            if input.query.before == nil {
                return .ok(.init(body: .json(.init(orders: [Fixtures.order(id: "o2", status: .open)], nextBefore: "o2"))))
            }
            return .ok(.init(body: .json(.init(orders: [Fixtures.order(id: "o1", status: .open)]))))
        }
        #expect(try await world.run(RaxxOrder.List.self, ["--status", "open"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["id"] as? String } == ["o2", "o1"])
        #expect(world.api.operations == ["listOrders", "listOrders"])
    }

    /// `raxx-order list` was 121 columns, so at 80 every row took two lines: on a terminal the
    /// table fits its width, the least needed columns gone and long ids shortened; JSON keeps all.
    @Test func theTableFitsTheTerminalAndJSONKeepsEverything() async throws {
        let id = "ord_0mx5h82gt4y0tccsfi23xyz", client = "raxx-0f8e2c1d-aaaa-bbbb-cccc-000000000001"
        func world(terminal: Bool) -> TestWorld {
            let world = TestWorld()
            world.clock = TestClock(Fixtures.now)
            world.keystore = Fixtures.signedIn()
            world.stores = MemoryStores()
            world.stdoutIsTTY = terminal
            world.terminalColumns = 80
            world.environment["NO_COLOR"] = "1"  // the width counted is what shows
            world.api.onListOrders { _ in
                .ok(
                    .init(
                        body: .json(
                            .init(orders: [
                                Fixtures.order(
                                    id: id, clientOrderID: client, symbol: "AAPL261218C00190000", type: .limit,
                                    limitPrice: "3.5", status: .partiallyFilled, filled: 3)
                            ]))))
            }
            return world
        }
        let narrow = world(terminal: true)
        #expect(try await narrow.run(RaxxOrder.List.self, []) == .ok)
        let lines = narrow.stdout.contents.split(separator: "\n")
        #expect(lines.count == 2 && lines.allSatisfy { $0.count <= 80 }, "\(narrow.stdout.contents)")
        for title in ["ORDER ID", "UPDATED", "SYMBOL", "SIDE", "QTY", "STATUS"] { #expect(lines[0].contains(title), "\(lines[0])") }
        #expect(lines[1].contains("just now  AAPL 18 Dec 26 190 C ×100  buy"), "an option reads as one: \(lines[1])")
        #expect(!lines[0].contains("CLIENT ORDER ID"))
        let piped = world(terminal: false)
        #expect(try await piped.run(RaxxOrder.List.self, []) == .ok)
        #expect(piped.jsonLines.first?["id"] as? String == id && piped.jsonLines.first?["client_order_id"] as? String == client)
    }

    /// 2,500 orders, 1,000 a page: the default shows 100 and says there are more; --limit up to
    /// 10,000; --all pages to the end.
    @Test func allPagesToTheEndAndALimitSaysThereAreMore() async throws {
        let total = 2_500
        func world() -> TestWorld {
            let world = TestWorld()
            world.clock = TestClock(Fixtures.now)
            world.keystore = Fixtures.signedIn()
            world.stores = MemoryStores()
            world.api.onListOrders { input in
                let start = input.query.before.flatMap { Int($0.dropFirst()) } ?? total
                let count = min(input.query.limit ?? 100, start)
                let orders = (0..<count).map { Fixtures.order(id: "o\(start - $0)", status: .open) }
                return .ok(.init(body: .json(.init(orders: orders, nextBefore: start - count > 0 ? "o\(start - count)" : nil))))
            }
            return world
        }
        let every = world()
        #expect(try await every.run(RaxxOrder.List.self, ["--all", "--format", "json"]) == .ok)
        #expect(every.jsonLines.count == total && every.jsonLines.last?["id"] as? String == "o1")
        #expect(every.api.operations.count == 3 && every.stderr.contents.isEmpty)
        let some = world()
        #expect(try await some.run(RaxxOrder.List.self, ["--format", "json"]) == .ok)
        #expect(some.jsonLines.count == 100)
        #expect(some.stderr.contents.contains("Showing the newest 100 orders; there are more: --all lists every one"))
        #expect(throws: (any Error).self) { try RaxxOrder.List.parse(["--all", "--limit", "5"]) }
    }

    /// On a terminal: statuses in colour (not with NO_COLOR), and a table longer than the screen
    /// through the pager (less -FRX, or $PAGER; not with --no-pager, never into a pipe).
    @Test func aTerminalGetsColourAndALongTableThePager() async throws {
        func world(_ environment: [String: String] = [:], tty: Bool = true) -> TestWorld {
            let world = TestWorld()
            world.clock = TestClock(Fixtures.now)
            world.keystore = Fixtures.signedIn()
            world.stores = MemoryStores()
            world.stdoutIsTTY = tty
            world.terminalRows = 10
            world.environment.merge(environment) { _, new in new }
            world.api.onListOrders { _ in
                .ok(.init(body: .json(.init(orders: (1...20).map { Fixtures.order(id: "o\($0)", status: $0 == 1 ? .filled : .open) }))))
            }
            return world
        }
        let paged = world()
        #expect(try await paged.run(RaxxOrder.List.self) == .ok)
        #expect(paged.paged.count == 1 && paged.paged.first?.command == "less -FRX")
        #expect(paged.paged.first?.text.contains("\u{1B}[32mfilled\u{1B}[0m") == true)
        #expect(paged.paged.first?.text.contains("\u{1B}[33mopen\u{1B}[0m") == true)
        #expect(paged.stdout.contents.isEmpty)

        let plain = world(["NO_COLOR": "1", "PAGER": "more"])
        #expect(try await plain.run(RaxxOrder.List.self) == .ok)
        #expect(plain.paged.first?.command == "more" && plain.paged.first?.text.contains("\u{1B}[") == false)

        for (environment, arguments) in [([:], ["--no-pager"]), (["PAGER": "cat"], []), (["RAXX_PAGER": ""], [])] {
            let unpaged = world(environment)
            #expect(try await unpaged.run(RaxxOrder.List.self, arguments) == .ok)
            #expect(unpaged.paged.isEmpty && unpaged.stdout.contents.contains("filled"), "\(environment) \(arguments)")
        }
        // Into a pipe (as text): neither colour nor pager.
        let piped = world(tty: false)
        #expect(try await piped.run(RaxxOrder.List.self, ["--format", "text"]) == .ok)
        #expect(piped.paged.isEmpty && !piped.stdout.contents.contains("\u{1B}["))
        // A short table is not paged.
        let short = world()
        short.terminalRows = 50
        #expect(try await short.run(RaxxOrder.List.self) == .ok)
        #expect(short.paged.isEmpty && short.stdout.contents.contains("\u{1B}[32mfilled"))
    }

    @Test func cachedReadsTheCacheOnlyAndSaysHowOld() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(2 * 86400))
        world.stores = MemoryStores(cache: try Fixtures.filledCache())
        world.keystore = MemoryKeystore()  // reads check whose cache it is, offline
        #expect(try await world.run(RaxxOrder.List.self, ["--cached"]) == .ok)
        #expect(world.jsonLines.first?["as_of"] as? String == "2026-11-21T10:00:00Z")
        #expect(world.stderr.contents.contains("Data last updated at Nov 21 10:00"), "\(world.stderr.contents)")
        #expect(world.api.calls.isEmpty)
    }

    @Test func anUnknownStatusIsAUsageError() {
        #expect(throws: (any Error).self) { try RaxxOrder.List.parse(["--status", "done"]) }
        #expect(throws: (any Error).self) { try RaxxOrder.List.parse(["--limit", "0"]) }
    }
}
