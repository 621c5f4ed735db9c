import Foundation
import RaxxCore

/// The local databases a command may open — the cache and the order journal — and the locks that
/// keep two processes from writing them at once. `FileStores` is the live set, in the cache and
/// state folders; tests give in-memory ones. Commands reach these only through their context.
public protocol LocalStores: Sendable {
    /// Where the cache lives, for messages and `raxx-cache status`.
    var cacheLocation: String { get }
    /// The cache for reading, or nil when none was ever filled (nothing is created).
    func existingCache() throws(RaxxError) -> CacheStore?
    /// The cache for writing, created when missing.
    func cache() throws(RaxxError) -> CacheStore
    /// The order journal, created when missing.
    func journal() throws(RaxxError) -> OrderJournal
    /// Takes one of the stores' locks, waiting up to `wait` (nil: not at all, exit 75 when busy).
    func lock(_ lock: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock
}

/// The stores' locks, each with the error a person sees when it is busy.
public enum StoreLock: Sendable, Hashable {
    /// One refresh (or purge) writes the cache at a time.
    case refresh
    /// One raxx-order places or settles orders at a time (so one never cancels the other's order
    /// in flight); held for the whole run.
    case orders

    /// The error when the lock stays busy past `wait`.
    public func busy(wait: RaxxDuration?) -> RaxxError {
        let hint = wait.map { "It did not finish within \($0)." } ?? "Try again when it is done."
        switch self {
        case .refresh:
            return RaxxError(code: "refresh_running", message: "Another refresh is running.", hint: hint, status: .temporary)
        case .orders:
            return RaxxError(code: "busy", message: "Another raxx-order is placing or reconciling orders.", hint: hint, status: .temporary)
        }
    }
}

/// The stores on disk: the cache in the cache folder, the journal (beside the keystore) in the
/// state folder, and their lock files beside them.
public struct FileStores: LocalStores {
    public let cacheFile: URL
    public let journalFile: URL
    let cacheDirectory: URL
    let stateDirectory: URL

    public init(_ configuration: RaxxConfiguration) {
        cacheFile = configuration.cacheFile
        journalFile = configuration.stateDirectory.appendingPathComponent("orders.sqlite")
        cacheDirectory = configuration.cacheDirectory
        stateDirectory = configuration.stateDirectory
    }

    public var cacheLocation: String { cacheFile.path }

    public func existingCache() throws(RaxxError) -> CacheStore? { try CacheStore.openExisting(at: cacheFile) }
    public func cache() throws(RaxxError) -> CacheStore { try CacheStore.open(at: cacheFile) }
    public func journal() throws(RaxxError) -> OrderJournal { try OrderJournal.open(at: journalFile) }

    public func lock(_ lock: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock {
        let (directory, name) = switch lock {
        case .refresh: (cacheDirectory, "refresh.lock")
        case .orders: (stateDirectory, "orders.lock")
        }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try await FileLock.acquire(path: directory.appendingPathComponent(name).path, wait: wait, busy: lock.busy(wait: wait))
    }
}
