import RaxxCLI
import RaxxCore
import RaxxStore

/// A verb of a tool that keeps local stores (raxx-cache, raxx-order): its live world has the cache
/// and the order journal on disk.
public protocol StoreCommand: RaxxCommand {}

extension StoreCommand {
    public static func liveServices(_ configuration: RaxxConfiguration) -> [Provided] { [Provided(FileStores(configuration), as: (any LocalStores).self)] }
}

extension CommandContext {
    /// The cache and journal stores of this tool's world.
    public var stores: any LocalStores {
        get throws(RaxxError) { try service() }
    }

    /// Opens this server's cache for reading (exit 3 when it was never filled, or filled for another
    /// account than the one signed in here).
    public func cacheReading() throws(RaxxError) -> CacheReading {
        try CacheReading(try stores, accountID: try keystore.load()[origin].session?.accountID)
    }

    /// Says on stderr how old the cached data is, when that needs saying.
    public func disclose(_ cache: CacheReading) {
        if let line = cache.disclosure(now: clock(), freshness: configuration.cacheFreshness) { say(line) }
    }
}
