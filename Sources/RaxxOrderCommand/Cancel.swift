import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxHTTP

extension RaxxOrder {
    /// `raxx-order cancel ID` or `cancel --all`.
    public struct Cancel: RaxxCommand {
        public static let connectivity = ConnectivityRequirement.networkRequired
        public static let tool = "raxx-order"
        public static let configuration = CommandConfiguration(
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
            let client = try context.authenticatedClient()
            var ids: [String] = id.map { [$0] } ?? []
            if all {
                for status in [Components.Schemas.OrderStatus.open, .partiallyFilled] {
                    switch try await client.listOrders(query: .init(status: status, limit: 1000)) {
                    case .ok(let ok): ids += try ok.body.json.orders.map(\.id)
                    case .default(_, let problem): throw try problem.raxxError
                    }
                }
            }
            var cancelled: [Components.Schemas.Order] = []
            for id in ids {
                switch try await client.cancelOrder(path: .init(orderId: id)) {
                case .ok(let ok): cancelled.append(try ok.body.json)
                case .default(_, let problem): throw try problem.raxxError
                }
            }
            try context.emit(cancelled, columns: orderColumns(), row: orderRow)
            if all && cancelled.isEmpty && context.format == .text { context.say("No open orders.") }
        }
    }
}
