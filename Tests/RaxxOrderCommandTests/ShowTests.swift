import Foundation
import RaxxAPI
import RaxxCore
import RaxxOrderCommand
import RaxxTestSupport
import Testing

/// `raxx-order show` in-process.
@Suite struct ShowTests {
    @Test func showsTheServersOrder() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onGetOrder { input in .ok(.init(body: .json(Fixtures.order(id: input.path.orderId)))) }
        #expect(try await world.run(RaxxOrder.Show.self, ["ord-7"]) == .ok)
        #expect(world.jsonLines.first?["id"] as? String == "ord-7")
    }

    /// On a terminal one order reads as a record, a field a line, as raxx-dsr show's does (it was
    /// a table one row high, wider than the terminal).
    @Test func anOrderOnATerminalReadsAsFieldAndValue() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stdoutIsTTY = true
        world.environment["NO_COLOR"] = "1"
        world.api.onGetOrder { input in .ok(.init(body: .json(Fixtures.order(id: input.path.orderId, status: .open)))) }
        #expect(try await world.run(RaxxOrder.Show.self, ["ord-7"]) == .ok)
        let lines = world.stdout.contents.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("FIELD") == true && lines.first?.contains("VALUE") == true, "\(world.stdout.contents)")
        #expect(lines.contains { $0.hasPrefix("Order ID") && $0.hasSuffix("ord-7") })
        #expect(lines.contains { $0.hasPrefix("Status") && $0.hasSuffix("open") })
        #expect(lines.contains { $0.hasPrefix("Updated") && $0.contains("10:00") }, "a detail says the time, not how long ago")
        #expect(lines.count == 1 + 11, "the header and the list's eleven fields")
    }

    @Test func anUnknownOrderIsTheServersWord() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.api.onGetOrder { _ in .default(statusCode: 404, Fixtures.problem(404, code: "not_found", title: "No such order.")) }
        #expect(try await world.run(RaxxOrder.Show.self, ["nope", "--format", "text"]) == .failure)
        #expect(world.stderr.contents == "raxx-order: No such order.\n")
    }

    @Test func cachedFindsItOffline() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.stores = MemoryStores(cache: try Fixtures.filledCache())
        world.keystore = MemoryKeystore()  // reads check whose cache it is, offline
        #expect(try await world.run(RaxxOrder.Show.self, ["ord-1", "--cached"]) == .ok)
        #expect(world.jsonLines.first?["client_order_id"] as? String == "c-1")
        #expect(try await world.run(RaxxOrder.Show.self, ["ord-9", "--cached"]) == .failure)
        #expect(world.api.calls.isEmpty)
    }

    @Test func aServersControlCharactersNeverReachTheTerminal() async throws {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        world.stdoutIsTTY = true
        world.api.onGetOrder { _ in .ok(.init(body: .json(Fixtures.order(id: "ord-\u{1B}[2J\u{1B}]0;pwned\u{07}1", symbol: "AAPL\r\u{9B}31m")))) }
        #expect(try await world.run(RaxxOrder.Show.self, ["x"]) == .ok)
        #expect(world.stdout.contents.contains("ord-[2J]0;pwned1"))
        // The only escapes are the table's own colours of statuses (SGR 31/32/33 and 0).
        let ours = world.stdout.contents.replacingOccurrences(of: "\u{1B}\\[(3[123]|0)m", with: "", options: .regularExpression)
        #expect(!ours.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" })
        world.api.onGetOrder { _ in .default(statusCode: 404, Fixtures.problem(404, code: "not_found", title: "No order \u{1B}[31mx")) }
        #expect(try await world.run(RaxxOrder.Show.self, ["x"]) == .failure)
        #expect(world.stderr.contents == "raxx-order: No order [31mx\n")
    }

    @Test func withCachedItIsOfflineCapable() throws {
        #expect(try RaxxOrder.Show.parse(["x", "--cached"]).requirement == .offlineCapable)
        #expect(try RaxxOrder.Show.parse(["x"]).requirement == .networkRequired)
        #expect(try RaxxOrder.List.parse(["--cached"]).requirement == .offlineCapable)
        #expect(try RaxxOrder.List.parse([]).requirement == .networkRequired)
    }
}
