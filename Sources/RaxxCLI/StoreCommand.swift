import RaxxCore
import RaxxStore

/// A verb of a tool that keeps local stores (raxx-cache, raxx-order): its live world has the cache
/// and the order journal on disk.
public protocol StoreCommand: RaxxCommand {}

extension StoreCommand {
    public static func liveServices(_ configuration: RaxxConfiguration) -> [Provided] { [Provided(FileStores(configuration), as: (any LocalStores).self)] }
}

extension CommandContext {
    /// The stores of this tool's world, for the account signed in here (or the last one signed in;
    /// see `localAccount()`), resolved when a store is first opened.
    public var stores: any LocalStores {
        get throws(RaxxError) {
            let context = self
            return try service((any LocalStores).self).forAccount { () throws(RaxxError) in try context.localAccount() }
        }
    }

    /// Opens this account's cache for reading (exit 3 when it was never filled, or filled for
    /// another account than the one signed in here).
    public func cacheReading() throws(RaxxError) -> CacheReading {
        let account = try localAccount()
        return try CacheReading(try service((any LocalStores).self).forAccount { account }, accountID: account)
    }

    /// Says on stderr how old the cached data is, when that needs saying.
    public func disclose(_ cache: CacheReading) {
        // With --quiet the age is told by the JSON's as_of and, past --max-age, by exit 3: a cron
        // job reading every five minutes does not mail "No connection" each time.
        guard !quiet else { return }
        if let line = cache.disclosure(now: clock(), freshness: configuration.cacheFreshness, time: peopleMoment) { warn(line) }
    }
}
