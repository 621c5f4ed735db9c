import Foundation
import RaxxCore
import RaxxStore
import Synchronization

/// The local stores in memory: a cache (absent until the test creates or fills one), a journal, and
/// in-process locks with the same busy errors as the lock files.
public final class MemoryStores: LocalStores, Sendable {
    private let state: Mutex<State>

    private struct State {
        var cacheStore: CacheStore?
        var journalStore: OrderJournal?
        var alertStore: AlertStore?
        var held: Set<StoreLock> = []
        var free: Int64?
    }

    /// Free space the stores report (nil: unknown).
    public var free: Int64? {
        get { state.withLock { $0.free } }
        set { state.withLock { $0.free = newValue } }
    }

    public init(cache: CacheStore? = nil, freeBytes: Int64? = nil) {
        state = Mutex(State(cacheStore: cache, free: freeBytes))
    }

    public func freeBytes() -> Int64? { free }

    /// The same stores whatever the account (tests of one account; the account folders are
    /// tested on disk, end to end).
    public func forAccount(_ resolve: @escaping @Sendable () throws(RaxxError) -> String?) -> any LocalStores { self }

    public func setDamagedCacheAside() throws(RaxxError) -> String {
        state.withLock { $0.cacheStore = nil }
        return "memory:cache.damaged"
    }

    public var cacheLocation: String { "memory:cache" }

    public func existingCache() throws(RaxxError) -> CacheStore? { state.withLock { $0.cacheStore } }

    public func cache() throws(RaxxError) -> CacheStore { try lazily(\.cacheStore, "cache") { try CacheStore.inMemory() } }

    public func journal() throws(RaxxError) -> OrderJournal { try lazily(\.journalStore, "journal") { try OrderJournal.inMemory() } }

    /// The store in `slot`, made in memory the first time it is asked for.
    private func lazily<Store: Sendable>(
        _ slot: WritableKeyPath<State, Store?>, _ what: String,
        _ make: () throws -> Store
    ) throws(RaxxError) -> Store {
        if let existing = state.withLock({ $0[keyPath: slot] }) { return existing }
        do {
            let created = try make()
            state.withLock { $0[keyPath: slot] = created }
            return created
        } catch {
            throw RaxxError(code: .internal, message: "Could not create an in-memory \(what): \(error)")
        }
    }

    public func alerts() throws(RaxxError) -> AlertStore { try lazily(\.alertStore, "alert store") { try AlertStore.inMemory() } }

    /// Holds `kind` as another process would (for busy-lock tests).
    public func hold(_ kind: StoreLock) { _ = state.withLock { $0.held.insert(kind) } }

    public func lock(_ kind: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock {
        let taken = state.withLock { $0.held.insert(kind).inserted }
        guard taken else { throw kind.busy(wait: wait) }
        return Held { [weak self] in
            guard let self else { return }
            _ = self.state.withLock { $0.held.remove(kind) }
        }
    }

    // @unchecked: holds a closure that is not @Sendable, run and dropped once by `release()`.
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
