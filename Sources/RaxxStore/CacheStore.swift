import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import RaxxAPI
import RaxxCore

/// raxx-cache's local copy of the account's portfolio, positions, fills and orders: SQLite (WAL).
/// Commands only read it; the sync engine writes pages and sync state, and purge (and the
/// retention policy after a refresh) evicts history. Migrations are append-only.
public final class CacheStore: Sendable {
    let writer: any DatabaseWriter
    public let url: URL?

    /// Opens (creating it and its folder) the cache at `url`.
    public static func open(at url: URL) throws(RaxxError) -> CacheStore {
        do {
            return try CacheStore(writer: try openPool(at: url), url: url)
        } catch {
            throw unreadable(error, url)
        }
    }

    /// Opens the cache for reading, or answers nil when there is none yet (creating nothing).
    public static func openExisting(at url: URL) throws(RaxxError) -> CacheStore? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            var config = Configuration()
            config.busyMode = .timeout(10)
            return try CacheStore(writer: DatabaseQueue(path: url.path, configuration: config), url: url)
        } catch {
            throw unreadable(error, url)
        }
    }

    /// Why a cache could not be opened, as a person needs to hear it.
    static func unreadable(_ error: any Error, _ url: URL) -> RaxxError {
        if let known = storeError(error, url) as? RaxxError { return known }
        return RaxxError.failure(code: "cache_unreadable", "The cache at \(url.path) cannot be opened: \(error).",
                                 hint: "Remove it with raxx-cache purge --all, then refresh.")
    }

    /// What SQLite's failures mean for a cache: a damaged file (it is only a cache: refresh sets it
    /// aside and rebuilds it), or a full disk (the transaction rolled back; the cache is as it was).
    static func storeError(_ error: any Error, _ url: URL?) -> any Error {
        guard let e = error as? DatabaseError else { return error }
        let path = url?.path ?? "(memory)"
        switch e.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return RaxxError.failure(code: "cache_damaged", "The cache at \(path) is damaged and cannot be read.",
                                     hint: "raxx-cache refresh sets the damaged file aside and rebuilds the cache "
                                         + "(the keystore and the order journal are separate files and stay as they are).")
        case .SQLITE_FULL:
            return RaxxError.failure(code: "disk_full", "There is no space left on the disk for the cache at \(path); it was left as it was.",
                                     hint: "Free some space, or drop old history with raxx-cache purge --older-than 90d, then refresh again.")
        default:
            return error
        }
    }

    /// A read transaction, its failures as the error a person sees.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.read(body) } catch { throw Self.storeError(error, url) }
    }

    /// A write transaction, its failures as the error a person sees.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.write(body) } catch { throw Self.storeError(error, url) }
    }

    /// An in-memory cache, for tests.
    public static func inMemory() throws -> CacheStore {
        try CacheStore(writer: DatabaseQueue(), url: nil)
    }

    init(writer: any DatabaseWriter, url: URL?) throws {
        self.writer = writer
        self.url = url
        try Self.migrator.migrate(writer)
    }

    static let entityColumns = [
        "positions": "id TEXT PRIMARY KEY, symbol TEXT NOT NULL, qty INTEGER NOT NULL, avg_price TEXT NOT NULL, updated_at REAL NOT NULL",
        "fills": "id TEXT PRIMARY KEY, order_id TEXT NOT NULL, symbol TEXT NOT NULL, side TEXT NOT NULL, qty INTEGER NOT NULL, price TEXT NOT NULL, filled_at REAL NOT NULL",
        "orders": """
            id TEXT PRIMARY KEY, client_order_id TEXT NOT NULL, symbol TEXT NOT NULL, side TEXT NOT NULL, qty INTEGER NOT NULL,
            type TEXT NOT NULL, limit_price TEXT, tif TEXT NOT NULL, status TEXT NOT NULL, filled_qty INTEGER NOT NULL,
            avg_fill_price TEXT, reject_code TEXT, mode TEXT NOT NULL, not_after REAL, created_at REAL NOT NULL, updated_at REAL NOT NULL
            """,
    ]

    /// The entity columns of a rebuild's log: the same names and types, without keys or NOT NULL
    /// (a tombstone is an id alone; `symbol`, never null in a row, is null in a tombstone).
    static func stagedColumns(_ columns: String) -> String {
        columns.replacingOccurrences(of: " PRIMARY KEY", with: "").replacingOccurrences(of: " NOT NULL", with: "")
    }

    /// The entity tables' column names, in their order.
    static let entityColumnNames: [String: String] = entityColumns.mapValues { columns in
        columns.split(separator: ",").map { $0.split(whereSeparator: { $0 == " " || $0 == "\n" })[0] }.joined(separator: ", ")
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: synced entities, rebuild shadows, portfolio, sync state") { db in
            for (table, columns) in entityColumns.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "CREATE TABLE \(table) (\(columns))")
                // A reset rebuilds here, out of readers' sight, and swaps in one transaction.
                try db.execute(sql: "CREATE TABLE rebuild_\(table) (\(columns))")
            }
            try db.execute(sql: """
                CREATE INDEX positions_symbol ON positions(symbol);
                CREATE INDEX fills_time ON fills(filled_at);
                CREATE INDEX fills_symbol ON fills(symbol, filled_at);
                CREATE INDEX orders_status ON orders(status, updated_at);
                CREATE INDEX orders_symbol ON orders(symbol, updated_at);
                CREATE TABLE portfolio (
                    id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, as_of REAL NOT NULL, mode TEXT NOT NULL,
                    cash TEXT NOT NULL, market_value TEXT NOT NULL, equity TEXT NOT NULL, buying_power TEXT NOT NULL,
                    unrealized_pnl TEXT NOT NULL, positions_count INTEGER NOT NULL
                );
                CREATE TABLE sync_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    account_id TEXT,
                    cursor INTEGER NOT NULL DEFAULT 0,
                    rebuilding INTEGER NOT NULL DEFAULT 0,      -- 0 no, 1 into the live tables (first fill), 2 into the shadows
                    rebuild_cursor INTEGER NOT NULL DEFAULT 0,
                    last_success_at REAL,
                    last_attempt_at REAL,
                    last_error_kind TEXT,
                    last_error_at REAL,
                    last_error_message TEXT,
                    connectivity TEXT NOT NULL DEFAULT 'unknown',
                    connectivity_at REAL,
                    evicted_before REAL
                );
                INSERT INTO sync_state (id) VALUES (1);
                """)
        }
        migrator.registerMigration("v2: rebuilds staged in keyless logs, keyed and indexed once at the end") { db in
            // A rebuild's pages are appended here as they come (an upsert as its row, a tombstone as
            // its id alone) and applied to the live tables in id order when the rebuild ends: keyed
            // tables filled page by page took their index entries at random places (ids are random),
            // rewriting most of each index's pages on every commit. A rebuild under way keeps its rows.
            for (table, columns) in entityColumns.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "CREATE TABLE rebuild_\(table)_log (\(stagedColumns(columns)))")
                try db.execute(sql: "INSERT INTO rebuild_\(table)_log SELECT * FROM rebuild_\(table)")
                try db.execute(sql: "DROP TABLE rebuild_\(table)")
                try db.execute(sql: "ALTER TABLE rebuild_\(table)_log RENAME TO rebuild_\(table)")
            }
        }
        return migrator
    }
}

/// Opens (creating it and its private folder) a WAL database with synchronous=NORMAL: a crash
/// loses at most the last commits, never consistency. The file is the owner's alone (0600, and
/// SQLite gives its -wal and -shm the same mode): it holds a person's trading data.
func openPool(at url: URL) throws -> DatabasePool {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                            attributes: [.posixPermissions: 0o700])
    // Made here first when new (an empty file is an empty database), so that it is never another
    // mode for a moment: only when new (O_EXCL), because closing a descriptor of a file drops every
    // POSIX lock this process holds on it, SQLite's included, when this process has it open already.
    // One made by an earlier version is brought to 0600 by its path, never opened here.
    let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if fd >= 0 { close(fd) }
    for suffix in ["", "-wal", "-shm"] { _ = chmod(url.path + suffix, 0o600) }
    var config = Configuration()
    config.busyMode = .timeout(10)
    config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
    return try DatabasePool(path: url.path, configuration: config)
}

/// Where the sync stands, and what the last attempt saw.
public struct SyncState: Sendable, Equatable {
    /// A rebuild under way: of an empty cache (`live`: readers see "no data yet" until it ends) or
    /// of a filled one (`shadow`: readers see the old copy until it ends). Either way its pages are
    /// staged in the rebuild's logs and applied to the live tables at the end (`finishRebuild`).
    public enum Rebuild: Int, Sendable { case none = 0, live = 1, shadow = 2 }

    public var accountID: String?
    public var cursor: Int64
    public var rebuilding: Rebuild
    public var rebuildCursor: Int64
    public var lastSuccessAt: Date?
    public var lastAttemptAt: Date?
    public var lastErrorKind: String?
    public var lastErrorAt: Date?
    public var lastErrorMessage: String?
    public var connectivity: Connectivity
    public var connectivityAt: Date?
    public var evictedBefore: Date?

    /// The last attempt failed for want of a connection (after the last success).
    public var lastRefreshFailedOffline: Bool {
        guard let kind = lastErrorKind, let at = lastErrorAt, kind.hasPrefix("offline") else { return false }
        // The server answered since (verify, say): there is a connection, only no newer data.
        if connectivity == .online, let seen = connectivityAt, seen > at { return false }
        return lastSuccessAt.map { at > $0 } ?? true
    }
}

extension CacheStore {
    public func syncState() throws -> SyncState {
        try read { db in try Self.syncState(db) }
    }

    static func syncState(_ db: Database) throws -> SyncState {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM sync_state WHERE id = 1") else {
            // The migration writes this row; a file without it was not written by us, or was damaged.
            throw RaxxError.failure(code: "cache_damaged", "The cache has no sync state: it is damaged or was not written by raxx-cache.",
                                    hint: "Empty it and fill it again: raxx-cache purge --all, then raxx-cache refresh.")
        }
        func date(_ column: String) -> Date? { (row[column] as Double?).map { Date(timeIntervalSince1970: $0) } }
        return SyncState(
            accountID: row["account_id"], cursor: row["cursor"], rebuilding: .init(rawValue: row["rebuilding"]) ?? .none,
            rebuildCursor: row["rebuild_cursor"], lastSuccessAt: date("last_success_at"), lastAttemptAt: date("last_attempt_at"),
            lastErrorKind: row["last_error_kind"], lastErrorAt: date("last_error_at"), lastErrorMessage: row["last_error_message"],
            connectivity: Connectivity(rawValue: row["connectivity"]) ?? .unknown, connectivityAt: date("connectivity_at"),
            evictedBefore: date("evicted_before"))
    }

    /// Row counts of the live tables.
    public func counts() throws -> [String: Int] {
        try read { db in
            var result: [String: Int] = [:]
            for table in ["positions", "fills", "orders", "portfolio"] {
                result[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table)") ?? 0
            }
            return result
        }
    }

    /// The cache file's size on disk (with its WAL), in bytes.
    public var fileSize: Int64 {
        guard let url else { return 0 }
        // lstat, as FileManager's attributes read them, without building their dictionary.
        return [url.path, url.path + "-wal", url.path + "-shm"].reduce(Int64(0)) { total, path in
            var info = stat()
            return total + (lstat(path, &info) == 0 ? Int64(info.st_size) : 0)
        }
    }
}
