import Foundation
import RaxxCore
import RaxxStore

/// The local stores in memory: a cache (absent until the test creates or fills one), a journal, and
/// in-process locks with the same busy errors as the lock files.
public final class MemoryStores: LocalStores, @unchecked Sendable {
    private let lock = NSLock()
    private var cacheStore: CacheStore?
    private var journalStore: OrderJournal?
    private var alertStore: AlertStore?
    private var held: Set<StoreLock> = []

    /// Free space the stores report (nil: unknown).
    public var free: Int64?

    public init(cache: CacheStore? = nil, freeBytes: Int64? = nil) {
        cacheStore = cache
        free = freeBytes
    }

    public func freeBytes() -> Int64? { free }

    /// The same stores whatever the account (tests of one account; the account folders are
    /// tested on disk, end to end).
    public func forAccount(_ resolve: @escaping @Sendable () throws(RaxxError) -> String?) -> any LocalStores { self }

    public func setDamagedCacheAside() throws(RaxxError) -> String {
        lock.withLock { cacheStore = nil }
        return "memory:cache.damaged"
    }

    public var cacheLocation: String { "memory:cache" }

    public func existingCache() throws(RaxxError) -> CacheStore? { lock.withLock { cacheStore } }

    public func cache() throws(RaxxError) -> CacheStore { try lazily(\.cacheStore, "cache") { try CacheStore.inMemory() } }

    public func journal() throws(RaxxError) -> OrderJournal { try lazily(\.journalStore, "journal") { try OrderJournal.inMemory() } }

    /// The store in `slot`, made in memory the first time it is asked for.
    private func lazily<Store>(_ slot: ReferenceWritableKeyPath<MemoryStores, Store?>, _ what: String,
                               _ make: () throws -> Store) throws(RaxxError) -> Store {
        if let existing = lock.withLock({ self[keyPath: slot] }) { return existing }
        do {
            let created = try make()
            lock.withLock { self[keyPath: slot] = created }
            return created
        } catch {
            throw RaxxError.failure(code: "internal", "Could not create an in-memory \(what): \(error)")
        }
    }

    public func alerts() throws(RaxxError) -> AlertStore { try lazily(\.alertStore, "alert store") { try AlertStore.inMemory() } }

    /// Holds `kind` as another process would (for busy-lock tests).
    public func hold(_ kind: StoreLock) { _ = lock.withLock { held.insert(kind) } }

    public func lock(_ kind: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock {
        let taken = lock.withLock { held.insert(kind).inserted }
        guard taken else { throw kind.busy(wait: wait) }
        return Held { [weak self] in _ = self?.lock.withLock { self?.held.remove(kind) } }
    }

    final class Held: HeldLock, @unchecked Sendable {
        private var onRelease: (() -> Void)?
        init(_ onRelease: @escaping () -> Void) { self.onRelease = onRelease }
        func release() {
            onRelease?()
            onRelease = nil
        }
        deinit { release() }
    }
}
