import Foundation
import RaxxCore
import RaxxStore

extension Fixtures {
    /// An in-memory cache filled as a first refresh at `at` would fill it (`syncPage` and `portfolio`).
    public static func filledCache(at: Date = now) throws -> CacheStore {
        let store = try CacheStore.inMemory()
        try store.recordAttempt(at: at)
        try store.beginRebuild(accountID: accountID)
        try store.apply(syncPage(at: at))
        try store.finishRebuild(accountID: accountID)
        try store.savePortfolio(portfolio(at: at))
        try store.recordSuccess(at: at)
        return store
    }
}
