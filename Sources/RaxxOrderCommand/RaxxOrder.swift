import ArgumentParser
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxStore

/// `raxx-order`: paper order entry.
public struct RaxxOrder: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-order",
        abstract: "Enter paper-trading orders.",
        discussion: """
        Orders need the network and are never queued for later: offline, nothing is sent and the exit \
        status is 69. Live trading is refused: orders are paper only. Every order is journalled before \
        it is sent, so a lost reply is looked up (and a still-pending order cancelled) on the next run. \
        Resting orders can be put under the server's dead man's switch (place --watch, watch, place \
        --cancel-after with heartbeat): when the connection is lost the server cancels them, and the next \
        run of any raxx-order verb says which were cancelled and when.
        """,
        version: RaxxVersion.current,
        subcommands: [Place.self, Watch.self, List.self, Show.self, Cancel.self, Reconcile.self, Heartbeat.self, Disarm.self]
    )

    public init() {}
}

/// A raxx-order verb.
protocol RaxxOrderVerb: StoreCommand {}

extension RaxxOrderVerb {
    public static var tool: String { "raxx-order" }
}

/// The results table every verb that sends orders prints on a terminal.
let resultColumns: [Table.Column] = [.init("Line", .right), .init("Client order ID"), .init("Symbol"), .init("Side"), .init("Qty", .right),
                                     .init("Result"), .init("Status"), .init("Order ID"), .init("Error")]

let orderColumns: [Table.Column] = [.init("Order ID"), .init("Symbol"), .init("Side"), .init("Qty", .right), .init("Type"),
                                    .init("Limit", .right), .init("Status"), .init("Filled", .right), .init("Avg fill", .right),
                                    .init("Client order ID")]

func orderRow(_ o: Components.Schemas.Order) -> [String] {
    [o.id, o.symbol, o.side.rawValue, "\(o.qty)", o._type.rawValue, o.limitPrice ?? "-", o.status.rawValue, "\(o.filledQty)",
     o.avgFillPrice ?? "-", o.clientOrderId]
}
