import ArgumentParser
import RaxxCLI
import RaxxCore

/// `raxx-cache`: Keep a read-only local cache of portfolio, positions, fills and orders.
public struct RaxxCache: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-cache",
        abstract: "Keep a read-only local cache of portfolio, positions, fills and orders.",
        discussion: """
        Every read works offline and says how old its data is; only refresh touches the network.
        """,
        version: RaxxVersion.current
    )

    public init() {}
}
