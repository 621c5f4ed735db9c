import Foundation
import RaxxCore

#if canImport(Glibc)
import Glibc
#endif

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
    /// raxx-notify's alerts and watch cursor, created when missing.
    func alerts() throws(RaxxError) -> AlertStore
    /// Takes one of the stores' locks, waiting up to `wait` (nil: not at all, exit 75 when busy).
    func lock(_ lock: StoreLock, wait: RaxxDuration?) async throws -> any HeldLock
    /// Moves a damaged cache out of the way (kept beside it for a person to look at); answers where
    /// it went. The keystore and the journal are never touched.
    func setDamagedCacheAside() throws(RaxxError) -> String
    /// Free space on the cache's file system, in bytes (nil when unknown).
    func freeBytes() -> Int64?
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

/// The stores on disk, one set per server (by origin): the cache in the cache folder, the journal
/// (beside the keystore) in the state folder, each in a folder named for the server
/// (`api.raxx.app`, `http_127.0.0.1_8080`), with their lock files beside them. What was fetched
/// from one server is never shown or settled as another's, and switching back finds the first
/// server's cache as it was.
public struct FileStores: LocalStores {
    public let cacheFile: URL
    public let journalFile: URL
    let cacheDirectory: URL
    let stateDirectory: URL
    /// The paths, as text: the offline reads use these (see RaxxConfiguration.stateDirectoryPath).
    let cacheDirectoryPath: String
    let cacheFilePath: String

    public init(_ configuration: RaxxConfiguration) {
        let key = configuration.endpoint.storageKey
        cacheDirectoryPath = RaxxConfiguration.joined(configuration.cacheDirectoryPath, key)
        let stateDirectoryPath = RaxxConfiguration.joined(configuration.stateDirectoryPath, key)
        cacheFilePath = RaxxConfiguration.joined(cacheDirectoryPath, "cache.sqlite")
        cacheDirectory = URL(fileURLWithPath: cacheDirectoryPath, isDirectory: true)
        stateDirectory = URL(fileURLWithPath: stateDirectoryPath, isDirectory: true)
        cacheFile = URL(fileURLWithPath: cacheFilePath, isDirectory: false)
        journalFile = URL(fileURLWithPath: RaxxConfiguration.joined(stateDirectoryPath, "orders.sqlite"), isDirectory: false)
    }

    public var cacheLocation: String { cacheFilePath }

    public func existingCache() throws(RaxxError) -> CacheStore? { try CacheStore.openExisting(path: cacheFilePath) }
    public func cache() throws(RaxxError) -> CacheStore { try CacheStore.open(at: cacheFile) }
    public func journal() throws(RaxxError) -> OrderJournal { try OrderJournal.open(at: journalFile) }
    public func alerts() throws(RaxxError) -> AlertStore { try AlertStore.open(at: stateDirectory.appendingPathComponent("alerts.sqlite")) }

    public func setDamagedCacheAside() throws(RaxxError) -> String {
        let stamp = RFC3339.string(from: Date()).replacingOccurrences(of: ":", with: "")
        let aside = cacheFilePath + ".damaged-" + stamp
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: cacheFilePath + suffix) {
            guard rename(cacheFilePath + suffix, aside + suffix) == 0 else {
                throw RaxxError.failure(code: "cache_unwritable",
                                        "Could not move the damaged cache aside: \(String(cString: strerror(errno))).",
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
        let (directory, name) = switch lock {
        case .refresh: (cacheDirectory, "refresh.lock")
        case .orders: (stateDirectory, "orders.lock")
        }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return try await FileLock.acquire(path: directory.appendingPathComponent(name).path, wait: wait, busy: lock.busy(wait: wait))
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
