import ArgumentParser
import Foundation
import RaxxAPI
import RaxxCLI
import RaxxCore
import RaxxOrders
import RaxxStore

/// `raxx-order`: paper order entry.
public struct RaxxOrder: AsyncParsableCommand, HasExamples {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-order",
        abstract: "Enter paper-trading orders.",
        discussion: Example.discussion(
            """
            Orders need the network and are never queued for later: offline, nothing is sent and the exit \
            status is 69. Live trading is refused: orders are paper only. Every order is journalled before \
            it is sent, so a lost reply is looked up (and a still-pending order cancelled) on the next run. \
            Resting orders can be put under the server's dead man's switch (place --watch, watch, place \
            --cancel-after with heartbeat): when the connection is lost the server cancels them, and the next \
            run of any raxx-order verb says which were cancelled and when.
            """, examples),
        version: RaxxVersion.line(tool: "raxx-order"),
        subcommands: [Place.self, Watch.self, List.self, Show.self, Cancel.self, Reconcile.self, Heartbeat.self, Disarm.self, Version.self]
    )

    public init() {}

    /// What --help and the man page show under EXAMPLES (each is parsed by the tests).
    public static let examples: [Example] = [
        Example("Check an order with the server, placing nothing", "raxx-order place --symbol AAPL --side buy --qty 10 --dry-run"),
        Example("Place a limit order", "raxx-order place --symbol AAPL --side buy --qty 10 --type limit --limit-price 189.50"),
        Example(
            "Place every order of a JSON Lines file; keep what did not go through", #"raxx-order place < orders.jsonl | jq -c 'select(.result != "placed")'"#),
        Example("Watch a resting order live; the server cancels it if the connection drops", "raxx-order watch ord_01HZX3"),
        Example("Orders that are still open", "raxx-order list --status open"),
        Example("Cancel every open order", "raxx-order cancel --all"),
        Example("From cron: keep a 3-minute dead man's switch armed", "raxx-order heartbeat --cancel-after 3m"),
    ]
}

/// A raxx-order verb.
protocol RaxxOrderVerb: StoreCommand {}

extension RaxxOrderVerb {
    public static var tool: String { "raxx-order" }
}

/// The results table every verb that sends orders prints on a terminal.
/// (On a narrow terminal the result, the order and its error stay longest; ids are shortened first.)
let resultColumns: [Table.Column] = [
    .init("Line", .right, importance: 5), .init("Client order ID", importance: 1, elidable: true),
    .init("Symbol", importance: 10), .init("Side", importance: 9), .init("Qty", .right, importance: 8),
    .init("Result", importance: 11), .init("Status", importance: 7), .init("Fill price", .right, importance: 6),
    .init("Order ID", importance: 2, elidable: true), .init("Error", importance: 4),
]

func resultRow(_ r: PlacementResult) -> [String] {
    [
        "\(r.line)", r.client_order_id, PeopleText.instrument(r.symbol), r.side.rawValue, "\(r.qty)", r.outcome.rawValue, r.status?.rawValue ?? "-",
        r.avg_fill_price.map { PeopleText.price($0, of: r.symbol) } ?? "-", r.order_id ?? "-", r.error_code ?? "-",
    ]
}

/// (On a narrow terminal the order's id, symbol, side, quantity, status and time stay longest.)
let orderColumns: [Table.Column] = [
    .init("Order ID", importance: 11, elidable: true), .init("Updated", importance: 6), .init("Symbol", importance: 10),
    .init("Side", importance: 9), .init("Qty", .right, importance: 8), .init("Type", importance: 2),
    .init("Limit", .right, importance: 4), .init("Status", importance: 7), .init("Filled", .right, importance: 5),
    .init("Avg fill", .right, importance: 3), .init("Client order ID", importance: 1, elidable: true),
]

/// An order's row under `orderColumns`, its time as `time` writes it for people.
func orderRow(_ o: Components.Schemas.Order, time: (Date) -> String) -> [String] {
    [
        o.id, time(o.updatedAt), PeopleText.instrument(o.symbol), o.side.rawValue, "\(o.qty)", o._type.rawValue,
        o.limitPrice.map { PeopleText.price($0, of: o.symbol) } ?? "-",
        o.status.rawValue, "\(o.filledQty)", o.avgFillPrice.map { PeopleText.price($0, of: o.symbol) } ?? "-", o.clientOrderId,
    ]
}

extension RaxxOrder {
    /// `raxx-order version`.
    public struct Version: VersionVerb {
        public static let configuration = versionConfiguration
        public static let tool = "raxx-order"
        @OptionGroup public var global: GlobalOptions
        public init() {}
    }
}
