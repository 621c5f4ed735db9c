import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxClient
import RaxxCore
import RaxxDomain

extension RaxxOrder {
    /// `raxx-order cancel ID` or `cancel --all`.
    public struct Cancel: RaxxOrderVerb {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract: "Cancel an open order, or every open order.",
            discussion: connectivity.helpLine
        )

        @Argument(help: ArgumentHelp("The order's id.", valueName: "id"))
        var id: String?
        @Flag(help: "Cancel every open or partially filled order.")
        var all = false
        @OptionGroup public var global: GlobalOptions

        public init() {}

        public func validate() throws {
            guard (id != nil) != all else { throw ValidationError("Give an order id, or --all.") }
        }

        public func run(_ context: CommandContext) async throws {
            let api = try context.signedInAPI()
            await context.tellSwitchCancellations(api: api)
            var ids: [String] = id.map { [$0] } ?? []
            if all {
                for status in OrderStatus.resting {
                    ids += try await api.listOrders(query: .init(status: status, limit: 1000)).checked().ok.body.json.orders.map(\.id)
                }
            }
            var cancelled: [Components.Schemas.Order] = []
            for id in ids {
                cancelled.append(try await api.cancelOrder(path: .init(orderId: id)).checked().ok.body.json)
            }
            try context.emit(cancelled, columns: orderColumns, row: { orderRow($0, time: context.peopleTime) })
            if all && cancelled.isEmpty && context.format == .text { context.say("No open orders.") }
        }
    }
}
