import ArgumentParser
import RaxxCLI
import RaxxCore

/// `raxx-order`: Enter paper-trading orders.
public struct RaxxOrder: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-order",
        abstract: "Enter paper-trading orders.",
        discussion: """
        Orders need the network and are never queued for later. Live trading is refused: orders are paper only.
        """,
        version: RaxxVersion.current
    )

    public init() {}
}
