import Foundation
import RaxxAPI
import RaxxCore
import RaxxOrderCommand
import RaxxStore
import RaxxTestSupport
import Testing

/// `raxx-order reconcile` in-process: settles what the journal left unknown.
@Suite struct ReconcileTests {
    func world(_ stores: MemoryStores) -> TestWorld {
        let world = TestWorld()
        world.clock = TestClock(Fixtures.now.addingTimeInterval(60))
        world.keystore = Fixtures.signedIn()
        world.stores = stores
        return world
    }

    func journalled(_ stores: MemoryStores, _ ids: [String]) throws {
        let journal = try stores.journal()
        for id in ids {
            try journal.recordSending(clientOrderID: id, accountID: Fixtures.accountID, request: #"{"not_after":"2026-11-21T10:00:10Z"}"#, at: Fixtures.now)
            try journal.record(id, .unknown, at: Fixtures.now)
        }
    }

    @Test func aPendingOrderIsCancelledAFilledOneReportedAMissingOneNotPlaced() async throws {
        let stores = MemoryStores()
        try journalled(stores, ["pending-1", "filled-1", "lost-1"])
        let world = world(stores)
        world.api.onListOrders { input in
            switch input.query.clientOrderId {
            case "pending-1": .ok(.init(body: .json(.init(orders: [Fixtures.order(id: "o-p", clientOrderID: "pending-1", status: .open)]))))
            case "filled-1": .ok(.init(body: .json(.init(orders: [Fixtures.order(id: "o-f", clientOrderID: "filled-1", status: .filled)]))))
            default: .ok(.init(body: .json(.init(orders: []))))
            }
        }
        world.api.onCancelOrder { input in
            #expect(input.path.orderId == "o-p")
            return .ok(.init(body: .json(Fixtures.order(id: "o-p", clientOrderID: "pending-1", status: .cancelled))))
        }
        #expect(try await world.run(RaxxOrder.Reconcile.self) == .ok)
        let outcomes = Dictionary(uniqueKeysWithValues: world.jsonLines.map { ($0["client_order_id"] as? String ?? "", $0["outcome"] as? String ?? "") })
        #expect(outcomes == ["pending-1": "cancelled", "filled-1": "filled", "lost-1": "not_placed"])
        #expect(try stores.journal().unresolved(accountID: Fixtures.accountID).isEmpty)
    }

    @Test func nothingToReconcileSaysSo() async throws {
        let world = world(MemoryStores())
        #expect(try await world.run(RaxxOrder.Reconcile.self, ["--format", "text"]) == .ok)
        #expect(world.stderr.contents == "Nothing to reconcile.\n")
        #expect(world.api.calls.isEmpty)
    }

    @Test func anotherRunHoldingTheJournalExits75() async throws {
        let stores = MemoryStores()
        stores.hold(.orders)
        let world = world(stores)
        // The lock waits up to a minute in real runs; the in-memory one answers at once.
        #expect(try await world.run(RaxxOrder.Reconcile.self, ["--json"]) == .temporary)
        #expect(world.stderr.contents.contains(#""code":"busy""#))
    }
}
