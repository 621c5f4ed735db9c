import Foundation
import RaxxCore
import RaxxWire

#if canImport(Glibc)
    import Glibc
#endif

/// The local databases a command may open — the cache, the order journal, the alerts — and the locks that
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
    /// raxx-notify's alerts and watch cursor, created when missing.
    func alerts() throws(RaxxError) -> AlertStore
    /// Takes one of the stores' locks, waiting up to `wait` (nil: not at all, exit 75 when busy).
    func lock(_ lock: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock
    /// Moves a damaged cache out of the way (kept beside it for a person to look at); answers where
    /// it went. The keystore and the journal are never touched.
    func setDamagedCacheAside() throws(RaxxError) -> String
    /// Free space on the cache's file system, in bytes (nil when unknown).
    func freeBytes() -> Int64?
    /// These stores for the account `resolve` answers (asked once, when a store first needs it):
    /// each account's data is kept apart from every other's (see `FileStores`).
    func forAccount(_ resolve: @escaping @Sendable () throws(RaxxError) -> String?) -> any LocalStores
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
            return RaxxError(code: .refreshRunning, message: "Another refresh is running.", hint: hint)
        case .orders:
            return RaxxError(code: .busy, message: "Another raxx-order is placing or reconciling orders.", hint: hint)
        }
    }
}

/// The stores on disk, one set per server (by origin) and account: the cache in the cache folder,
/// the journal and the alerts (beside the keystore) in the state folder, each in the account's
/// folder within the server's (`api.raxx.app/accounts/<account>`, see `AccountFolders`), with
/// their lock files beside them. What was fetched from one server, or for one account, is never
/// shown or settled as another's, and switching back finds the first one's stores as they were.
///
/// Every folder and file of theirs is made, opened, locked and checked under `PrivateFolders`' rule.
///
/// The account is the one a context resolves (`forAccount`): the signed-in one, or the last one
/// signed in here. Asked before any account signed in, a read finds nothing and a write is
/// refused (exit 4).
public struct FileStores: LocalStores {
    let folders: AccountFolders
    let privateFolders: PrivateFolders
    let origin: String
    private let account: ResolvedAccount

    public init(_ configuration: RaxxConfiguration) {
        self.init(
            folders: AccountFolders(configuration), privateFolders: PrivateFolders(configuration),
            origin: configuration.endpoint.origin
        ) { () throws(RaxxError) in nil }
    }

    init(
        folders: AccountFolders, privateFolders: PrivateFolders, origin: String,
        account: @escaping @Sendable () throws(RaxxError) -> String?
    ) {
        self.folders = folders
        self.privateFolders = privateFolders
        self.origin = origin
        self.account = ResolvedAccount(account)
    }

    public func forAccount(_ resolve: @escaping @Sendable () throws(RaxxError) -> String?) -> any LocalStores {
        FileStores(folders: folders, privateFolders: privateFolders, origin: origin, account: resolve)
    }

    /// The account's cache folder (the server's, before any account signed in: for messages).
    var cacheDirectoryPath: String { ((try? account.value()) ?? nil).map(folders.cachePath) ?? folders.cacheServerPath }
    var cacheFilePath: String { RaxxConfiguration.joined(cacheDirectoryPath, "cache.sqlite") }

    /// The account's folders, or exit 4 when no account signed in here yet.
    private func accountPaths() throws(RaxxError) -> (state: String, cache: String) {
        guard let id = try account.value() else {
            throw RaxxError(code: .signInRequired, message: "Not signed in to \(origin): raxx-auth login")
        }
        return (folders.statePath(id), folders.cachePath(id))
    }

    public var cacheLocation: String { cacheFilePath }

    public func existingCache() throws(RaxxError) -> CacheStore? {
        guard try account.value() != nil else { return nil }
        return try CacheStore.openExisting(path: cacheFilePath, in: privateFolders)
    }

    public func cache() throws(RaxxError) -> CacheStore {
        try CacheStore.open(
            at: URL(fileURLWithPath: RaxxConfiguration.joined(try accountPaths().cache, "cache.sqlite"), isDirectory: false),
            in: privateFolders)
    }

    public func journal() throws(RaxxError) -> OrderJournal {
        try OrderJournal.open(
            at: URL(fileURLWithPath: RaxxConfiguration.joined(try accountPaths().state, "orders.sqlite"), isDirectory: false),
            in: privateFolders)
    }

    public func alerts() throws(RaxxError) -> AlertStore {
        try AlertStore.open(
            at: URL(fileURLWithPath: RaxxConfiguration.joined(try accountPaths().state, "alerts.sqlite"), isDirectory: false),
            in: privateFolders)
    }

    public func setDamagedCacheAside() throws(RaxxError) -> String {
        let cacheFilePath = self.cacheFilePath
        let stamp = RFC3339.string(from: Date()).replacingOccurrences(of: ":", with: "")
        let aside = cacheFilePath + ".damaged-" + stamp
        // rename(2) moves a link itself, never what it points to; the folder is checked first.
        try privateFolders.folder(cacheDirectoryPath, create: false)
        for suffix in ["", "-wal", "-shm"] where access(cacheFilePath + suffix, F_OK) == 0 {
            guard rename(cacheFilePath + suffix, aside + suffix) == 0 else {
                throw RaxxError(
                    code: .cacheUnwritable, message: "Could not move the damaged cache aside: \(String(cString: strerror(errno))).",
                    hint: "Remove \(cacheFilePath) and its -wal and -shm by hand, then refresh.")
            }
        }
        return aside
    }

    public func freeBytes() -> Int64? {
        // The cache's folder, or the nearest one that exists yet.
        var directory = cacheDirectoryPath
        var info = stat()
        while stat(directory, &info) != 0, directory != "/", let slash = directory.lastIndex(of: "/") {
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
        }
        var stats = statvfs()
        guard statvfs(directory, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    public func lock(_ lock: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock {
        let paths = try accountPaths()
        let (directory, name) =
            switch lock {
            case .refresh: (paths.cache, "refresh.lock")
            case .orders: (paths.state, "orders.lock")
            }
        return try await FileLock.acquire(
            path: RaxxConfiguration.joined(directory, name), in: privateFolders, wait: wait,
            busy: lock.busy(wait: wait))
    }
}

/// An account resolved once, when a store first needs it.
final class ResolvedAccount: @unchecked Sendable {
    private let lock = NSLock()
    private let resolve: @Sendable () throws(RaxxError) -> String?
    private var resolved: String??

    init(_ resolve: @escaping @Sendable () throws(RaxxError) -> String?) { self.resolve = resolve }

    func value() throws(RaxxError) -> String? {
        lock.lock()
        defer { lock.unlock() }
        if let resolved { return resolved }
        let value = try resolve()
        resolved = .some(value)
        return value
    }
}

/// The cache's limits in force: its retention and size cap, halved while the disk it lives on is
/// low on space (under 500 MB free), as the offline strategy's storage policy says.
public struct StorageLimits: Sendable, Equatable {
    public var retention: RaxxDuration
    public var sizeCap: Int64
    /// The disk is low on space: the limits are half the configured ones.
    public var halved: Bool

    public static let lowSpace: Int64 = 500_000_000

    public init(retention: RaxxDuration, sizeCap: Int64, freeBytes: Int64?) {
        halved = freeBytes.map { $0 < Self.lowSpace } ?? false
        self.retention = halved ? RaxxDuration(milliseconds: retention.milliseconds / 2) : retention
        self.sizeCap = halved ? sizeCap / 2 : sizeCap
    }
}
