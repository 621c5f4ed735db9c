import Foundation
import RaxxAPI
import RaxxCore
import RaxxOrderCommand
import RaxxTestSupport
import Testing

/// `raxx-order cancel` in-process.
@Suite struct CancelTests {
    func world() -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now)
        world.keystore = Fixtures.signedIn()
        return world
    }

    @Test func cancelsOneOrder() async throws {
        let world = world()
        world.api.onCancelOrder { input in .ok(.init(body: .json(Fixtures.order(id: input.path.orderId, status: .cancelled)))) }
        #expect(try await world.run(RaxxOrder.Cancel.self, ["ord-3"]) == .ok)
        #expect(world.jsonLines.first?["status"] as? String == "cancelled")
    }

    @Test func allCancelsEveryRestingOrder() async throws {
        let world = world()
        world.api.onListOrders { input in
            let id = input.query.status == .open ? "open-1" : "part-1"
            return .ok(.init(body: .json(.init(orders: [Fixtures.order(id: id, status: input.query.status ?? .open)]))))
        }
        world.api.onCancelOrder { input in .ok(.init(body: .json(Fixtures.order(id: input.path.orderId, status: .cancelled)))) }
        #expect(try await world.run(RaxxOrder.Cancel.self, ["--all"]) == .ok)
        #expect(world.jsonLines.compactMap { $0["id"] as? String } == ["open-1", "part-1"])
    }

    @Test func aFinalOrderCannotBeCancelled() async throws {
        let world = world()
        world.api.onCancelOrder { _ in .default(statusCode: 409, Fixtures.problem(409, code: "order_final", title: "The order is already filled.")) }
        #expect(try await world.run(RaxxOrder.Cancel.self, ["ord-3", "--format", "text"]) == .failure)
        #expect(world.stderr.contents == "raxx-order: The order is already filled.\n")
    }

    @Test func anIdOrAllButNotBoth() {
        #expect(throws: (any Error).self) { try RaxxOrder.Cancel.parse([]) }
        #expect(throws: (any Error).self) { try RaxxOrder.Cancel.parse(["x", "--all"]) }
    }
}
