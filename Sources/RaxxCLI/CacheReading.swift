import Foundation
import RaxxCore
import RaxxStore

/// What every read of the cache shares: opening it without creating it, and saying how old its
/// data is.
public struct CacheReading {
    public let store: CacheStore
    public let state: SyncState
    /// When the data was last brought up to date.
    public let asOf: Date

    public static let neverFilled = RaxxError(code: "no_cached_data", message: "No cached data yet — run raxx-cache refresh while online",
                                       status: .stale)

    public init(_ context: CommandContext) throws {
        guard let store = try CacheStore.openExisting(at: context.configuration.cacheFile) else { throw Self.neverFilled }
        let state = try store.syncState()
        guard let asOf = state.lastSuccessAt, state.rebuilding != .live else { throw Self.neverFilled }
        self.store = store
        self.state = state
        self.asOf = asOf
    }

    public func age(_ context: CommandContext) -> RaxxDuration {
        RaxxDuration(seconds: max(context.clock().timeIntervalSince(asOf), 0))
    }

    /// The staleness disclosure, on stderr: after a failed refresh always, otherwise once the data
    /// is older than the freshness window.
    public func disclose(_ context: CommandContext) {
        let when = RFC3339.string(from: asOf)
        if state.lastRefreshFailedOffline {
            context.say("No connection — data last updated at \(when)")
        } else if age(context) > context.configuration.cacheFreshness {
            context.say("Data last updated at \(when) (\(age(context).humanAge) ago)")
        }
    }

    /// Exit 3 (after the data was printed) when it is older than `maxAge`.
    public func enforce(maxAge: RaxxDuration?, _ context: CommandContext) throws {
        guard let maxAge, age(context) > maxAge else { return }
        throw RaxxError(code: "stale", message: "The cached data is \(age(context).humanAge) old, older than --max-age \(maxAge).",
                        hint: "Refresh it while online: raxx-cache refresh", status: .stale)
    }
}

/// `--since`: an RFC 3339 time, or a duration back from now (`2h`, `7d`).
public struct SinceArgument {
    public static func parse(_ text: String?, now: Date) throws -> Date? {
        guard let text else { return nil }
        if let d = RFC3339.date(from: text) { return d }
        if let ago = RaxxDuration(parsing: text) { return now.addingTimeInterval(-ago.seconds) }
        throw RaxxError.usage("--since takes an RFC 3339 time (2026-11-21T09:30:00Z) or a duration back from now (2h, 7d), not \(text).")
    }
}
