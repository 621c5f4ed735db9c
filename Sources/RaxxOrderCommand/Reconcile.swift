import ArgumentParser
import Foundation
import RaxxCLI
import RaxxCore
import RaxxOrders
import RaxxStore

extension RaxxOrder {
    /// `raxx-order reconcile`: settle orders whose replies were lost.
    public struct Reconcile: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "reconcile",
            abstract: "Look up orders whose outcome is unknown, and settle them.",
            discussion: """
                For every journalled order whose reply was lost: still pending on the server, it is cancelled \
                (an order placed late can do harm) and you are told; filled, it is reported; absent, it is \
                marked as never placed. Every run of raxx-order place does this first. 
                """ + connectivity.helpLine
        )

        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func run(_ context: CommandContext) async throws {
            let stores = try context.stores
            let lock = try await stores.lock(.orders, wait: .seconds(60))
            defer { lock.release() }
            let session = try context.storedSession()
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            let desk = OrderDesk(
                client: api, journal: try stores.journal(), accountID: session.accountID,
                clock: context.clock, serverClock: context.world.serverNow, deadline: .seconds(10))
            let settled = try await desk.reconcile(moment: context.peopleMoment)
            try context.emit(settled, columns: [.init("Client order ID"), .init("Outcome"), .init("Order ID"), .init("Note")]) {
                [$0.client_order_id, $0.outcome.name, $0.order_id ?? "-", $0.message]
            }
            if settled.isEmpty && context.format == .text { context.say("Nothing to reconcile.") }
        }
    }
}
