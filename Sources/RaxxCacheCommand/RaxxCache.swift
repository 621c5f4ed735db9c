import ArgumentParser
import RaxxCLI
import RaxxCore
import RaxxStore

/// `raxx-cache`: the read-only offline cache.
public struct RaxxCache: AsyncParsableCommand, HasExamples {
    public static let configuration = CommandConfiguration(
        commandName: "raxx-cache",
        abstract: "Keep a read-only local cache of portfolio, positions, fills and orders.",
        discussion: Example.discussion(
            """
            Every read works offline and says how old its data is; only refresh and verify touch the network. \
            From cron: */5 * * * * raxx-cache refresh --quiet
            """, examples),
        version: RaxxVersion.line(tool: "raxx-cache"),
        subcommands: [Refresh.self, Show.self, Status.self, Verify.self, Purge.self, Version.self]
    )

    public init() {}

    /// The allocator's arenas: one, shared by every thread. A refresh fills each sync page's buffer
    /// (a megabyte or two) on the transfer's thread and frees it on the writer's; with an arena per
    /// thread those buffers had to be mapped and unmapped page by page (a third of a second of
    /// page faults and unmapping in a refresh of 1.5 million changes), or freed ones waited in
    /// other threads' arenas (a peak 4 to 7 MiB higher). Medians of 4 alternating first fills of
    /// that refresh: 4.53 s against 4.78 s (0.53 s of system time against 0.93 s), the peak
    /// 45.6 MiB against 45.0 MiB.
    public static let arenas: ProcessMemory.Arenas = .shared

    /// What --help and the man page show under EXAMPLES (each is parsed by the tests).
    public static let examples: [Example] = [
        Example("Pull what changed since the last refresh", "raxx-cache refresh"),
        Example("From cron: mail only what needs a person", "raxx-cache refresh --quiet --no-wait"),
        Example("Positions from the cache, offline", "raxx-cache show positions"),
        Example("The five biggest positions, with jq", "raxx-cache show positions | jq -s 'sort_by(-.qty) | .[:5]'"),
        Example("AAPL's fills of the last week", "raxx-cache show fills --symbol AAPL --since 7d"),
        Example("Fail (exit 3) rather than use data older than 15 minutes", "raxx-cache show portfolio --max-age 15m"),
        Example("How old the cache is, and its limits", "raxx-cache status"),
    ]
}

/// A raxx-cache verb.
protocol RaxxCacheVerb: StoreCommand {}

extension RaxxCacheVerb {
    public static var tool: String { "raxx-cache" }
}

extension RaxxCache {
    /// `raxx-cache version`.
    public struct Version: VersionVerb {
        public static let configuration = versionConfiguration
        public static let tool = "raxx-cache"
        @OptionGroup public var global: GlobalOptions
        public init() {}
    }
}
