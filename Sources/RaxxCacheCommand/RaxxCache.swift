import ArgumentParser
import RaxxCLI
import RaxxCore
import RaxxStore

/// `raxx-cache`: the read-only offline cache.
public struct RaxxCache: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-cache",
        abstract: "Keep a read-only local cache of portfolio, positions, fills and orders.",
        discussion: """
        Every read works offline and says how old its data is; only refresh and verify touch the network. \
        From cron: */5 * * * * raxx-cache refresh --quiet
        """,
        version: RaxxVersion.current,
        subcommands: [Refresh.self, Show.self, Status.self, Verify.self, Purge.self]
    )

    public init() {}
}

/// A raxx-cache verb.
protocol RaxxCacheVerb: StoreCommand {}

extension RaxxCacheVerb {
    public static var tool: String { "raxx-cache" }
}
