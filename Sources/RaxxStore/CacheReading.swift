import Foundation
import RaxxCore
import RaxxWire

/// What every read of the cache shares: opening it without creating it, and saying how old its
/// data is.
public struct CacheReading: Sendable {
    public let store: CacheStore
    public let state: SyncState
    /// When the data was last brought up to date.
    public let asOf: Date

    public static let neverFilled = RaxxError(code: .noCachedData, message: "No cached data yet — run raxx-cache refresh while online")

    /// Opens the cache of `stores`; with `accountID` (the account signed in to this server), a cache
    /// filled for another account reads as empty: it is never shown as this one's.
    public init(_ stores: any LocalStores, accountID: String? = nil) throws(RaxxError) {
        guard let store = try stores.existingCache() else { throw Self.neverFilled }
        let state: SyncState
        do { state = try store.syncState() } catch { throw CacheStore.readFailure(error, stores.cacheLocation) }
        guard let asOf = state.lastSuccessAt, state.rebuilding != .live else { throw Self.neverFilled }
        if let accountID, let cached = state.accountID, cached != accountID {
            throw RaxxError(code: .noCachedData, message: "No cached data for this account yet — run raxx-cache refresh while online")
        }
        self.store = store
        self.state = state
        self.asOf = asOf
    }

    public func age(now: Date) -> RaxxDuration {
        RaxxDuration(seconds: max(now.timeIntervalSince(asOf), 0))
    }

    /// The staleness disclosure for stderr: after a failed refresh always, otherwise once the data
    /// is older than the freshness window; nil when there is nothing to say.
    /// `time` says when, as every sentence does (`CommandContext.peopleMoment`).
    public func disclosure(now: Date, freshness: RaxxDuration, time: (Date) -> String) -> String? {
        if state.lastRefreshFailedOffline { return "No connection — data last updated at \(time(asOf))" }
        if age(now: now) > freshness { return "Data last updated at \(time(asOf))" }
        return nil
    }

    /// Exit 3 (after the data was printed) when it is older than `maxAge`.
    public func enforce(maxAge: RaxxDuration?, now: Date) throws(RaxxError) {
        guard let maxAge, age(now: now) > maxAge else { return }
        // Both durations exact, in one form: "1m12s old, older than --max-age 1m".
        throw RaxxError(
            code: .stale, message: "The cached data is \(age(now: now)) old, older than --max-age \(maxAge).",
            hint: "Refresh it while online: raxx-cache refresh")
    }
}

extension CacheStore {
    /// A read that SQLite refused, as the error a person sees.
    static func readFailure(_ error: any Error, _ location: String) -> RaxxError {
        if let e = error as? RaxxError { return e }
        return RaxxError(
            code: .cacheUnreadable, message: "The cache at \(location) cannot be read: \(error).",
            hint: CacheStore.refillHint)
    }
}
