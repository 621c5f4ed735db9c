import Foundation
import GRDB
import RaxxAPI
import RaxxCore
import RaxxSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// raxx-cache's local copy of the account's portfolio, positions, fills and orders: SQLite (WAL).
/// Commands only read it; the sync engine writes pages and sync state, and purge (and the
/// retention policy after a refresh) evicts history. Migrations are append-only.
public final class CacheStore: @unchecked Sendable {
    /// How the file is open: a cache opened for reading starts on a plain connection (the offline
    /// reads); the first write, or read through GRDB, opens a GRDB queue instead (migrating the
    /// file first). A writable cache (`open(at:)`) and an in-memory one are GRDB's from the start.
    private enum Connection {
        case plain(SQLiteReadConnection)
        case grdb(any DatabaseWriter)
    }

    private let lock = NSLock()
    private var connection: Connection

    /// What a person does about a cache that cannot be read: it holds nothing the server does not.
    static let refillHint = "Empty it and fill it again: raxx-cache purge --all, then raxx-cache refresh."
    /// The file's path (see RaxxConfiguration.stateDirectoryPath); nil in memory.
    private let path: String?
    /// The file, made from `path` when asked: an offline read never needs it.
    public var url: URL? { path.map { URL(fileURLWithPath: $0, isDirectory: false) } }

    /// The page size of a cache made new (one made before keeps its own: a WAL database's page
    /// size is fixed). Filling a cache of a million rows, 16 KiB pages took a third less time
    /// than SQLite's 4 KiB ones, in writes and system calls, and built its indexes faster; a read
    /// of a few rows reads a page or two either way.
    static let pageSize = 16384

    /// The thread the cache's long work blocks (a refresh's pages and index build, a checksum over
    /// every row), never one of the concurrency runtime's threads (two on these machines): such
    /// work runs in `thread.run { … }`. A read of a few rows blocks for less than a hop would cost.
    public static let thread = DedicatedThread(name: "raxx-cache")

    /// Opens (creating it and its folder) the cache at `url`, under `folders`' rule.
    public static func open(at url: URL, in folders: PrivateFolders) throws(RaxxError) -> CacheStore {
        do {
            return try CacheStore(writer: try openPool(at: url, pageSize: Self.pageSize, in: folders), url: url)
        } catch {
            throw unreadable(error, url)
        }
    }

    /// Opens the cache for reading, or answers nil when there is none yet (creating nothing).
    public static func openExisting(at url: URL, in folders: PrivateFolders) throws(RaxxError) -> CacheStore? {
        try openExisting(path: url.path, in: folders)
    }

    /// As `openExisting(at:in:)`, for the file at `path`.
    public static func openExisting(path: String, in folders: PrivateFolders) throws(RaxxError) -> CacheStore? {
        // Its folders checked, and no link at its names (refused, exit 77); lstat(2), as
        // FileManager's fileExists would ask it, without making the FileManager.
        var info = stat()
        guard try folders.file(path, create: false), lstat(path, &info) == 0 else { return nil }
        for suffix in sqliteCompanions { try PrivateFolders.refuseLink(atFile: path + suffix) }
        // A file that every migration has reached is read as it is; any other (an older version's,
        // a damaged one) goes through GRDB, which migrates it or says what is wrong. The plain
        // connection opens it by a path without any link, refusing one (SQLITE_OPEN_NOFOLLOW).
        if let plain = try? SQLiteReadConnection(path: try folders.resolved(path)), (try? plain.read(isMigrated)) == true {
            return CacheStore(plain: plain, path: path)
        }
        let url = URL(fileURLWithPath: path, isDirectory: false)
        do {
            return try CacheStore(writer: openQueue(at: url), url: url)
        } catch {
            throw unreadable(error, url)
        }
    }

    static func openQueue(at url: URL) throws -> DatabaseQueue {
        var config = Configuration()
        config.busyMode = .timeout(10)
        return try DatabaseQueue(path: url.path, configuration: config)
    }

    /// Every migration this version knows has been applied, and no other.
    static func isMigrated(_ connection: OpaquePointer) throws -> Bool {
        let applied = try SQLiteStatement(connection, "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        var identifiers: [String] = []
        while try applied.step() { identifiers.append(applied.text(0)) }
        return identifiers == migrationIdentifiers
    }

    /// The migrator's migrations, sorted, as its table lists them (a test holds the two to each
    /// other): the offline reads check a file against this list without building the migrator.
    static let migrationIdentifiers = [
        "v1: synced entities, rebuild shadows, portfolio, sync state",
        "v2: rebuilds staged in keyless logs, keyed and indexed once at the end",
        "v3: indexes set aside while a first rebuild fills the live tables",
        "v4: the prices the portfolio was valued at",
    ]

    /// Why a cache could not be opened, as a person needs to hear it.
    static func unreadable(_ error: any Error, _ url: URL) -> RaxxError {
        if let known = storeError(error, url) as? RaxxError { return known }
        return RaxxError(
            code: .cacheUnreadable, message: "The cache at \(url.path) cannot be opened: \(error).",
            hint: "Remove it with raxx-cache purge --all, then refresh.")
    }

    /// What SQLite's failures mean for a cache: a damaged file (it is only a cache: refresh sets it
    /// aside and rebuilds it), or a full disk (the transaction rolled back; the cache is as it was).
    static func storeError(_ error: any Error, _ url: URL?) -> any Error {
        guard let e = error as? DatabaseError else { return error }
        let path = url?.path ?? "(memory)"
        switch e.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return RaxxError(
                code: .cacheDamaged, message: "The cache at \(path) is damaged and cannot be read.",
                hint: "raxx-cache refresh sets the damaged file aside and rebuilds the cache "
                    + "(the keystore and the order journal are separate files and stay as they are).")
        case .SQLITE_FULL:
            return RaxxError(
                code: .diskFull, message: "There is no space left on the disk for the cache at \(path); it was left as it was.",
                hint: "Free some space, or drop old history with raxx-cache purge --older-than 90d, then refresh again.")
        default:
            return error
        }
    }

    /// The GRDB connection, opened (and the file migrated) the first time something needs it.
    var writer: any DatabaseWriter {
        get throws {
            try lock.withLock {
                switch connection {
                case .grdb(let writer):
                    return writer
                case .plain:
                    guard let url else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "a plain connection without a file") }
                    // As openExisting says it when the file cannot be opened through GRDB.
                    do {
                        let writer = try Self.openQueue(at: url)
                        try Self.migrator.migrate(writer)
                        connection = .grdb(writer)
                        return writer
                    } catch {
                        throw Self.unreadable(error, url)
                    }
                }
            }
        }
    }

    /// The file is open on the plain connection (nothing has needed GRDB yet).
    var isPlain: Bool {
        lock.withLock { if case .plain = connection { true } else { false } }
    }

    /// A read transaction through GRDB, its failures as the error a person sees.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.read(body) } catch { throw Self.storeError(error, url) }
    }

    /// A read transaction on the plain connection (or GRDB's, once that is open), its failures as
    /// the error a person sees.
    func readPlain<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        do {
            switch lock.withLock({ connection }) {
            case .plain(let plain):
                return try plain.read(body)
            case .grdb(let writer):
                return try writer.read { db in try body(try Self.handle(db)) }
            }
        } catch {
            throw Self.storeError(error, url)
        }
    }

    /// A GRDB database's own SQLite connection, for the statements written for the plain one.
    static func handle(_ db: Database) throws -> OpaquePointer {
        guard let handle = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database is closed") }
        return handle
    }

    /// A write transaction, its failures as the error a person sees.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.write(body) } catch { throw Self.storeError(error, url) }
    }

    /// As `write`, with the transaction's statement journals in memory: a statement that writes
    /// many rows keeps the pages it changes there, to undo it alone if it fails half-way, and
    /// past 64 KiB (four 16 KiB pages) SQLite moves them to a temporary file for the rest of the
    /// transaction, written again for every statement. For the writes of a sync page, whose
    /// statements each change a few pages: a full refresh wrote 2.6 GB to that file. Not for a
    /// statement that rewrites a whole table (a rebuild's end), whose journal could be the table.
    func writeJournallingInMemory<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try writer.writeWithoutTransaction { db in
                // Outside the transaction: SQLite reads the setting as the transaction begins.
                try db.execute(sql: "PRAGMA temp_store = MEMORY")
                defer { try? db.execute(sql: "PRAGMA temp_store = DEFAULT") }
                var result: Result<T, any Error> = .failure(CancellationError())
                try db.inTransaction {
                    result = .success(try body(db))
                    return .commit
                }
                return try result.get()
            }
        } catch {
            throw Self.storeError(error, url)
        }
    }

    /// An in-memory cache, for tests.
    public static func inMemory() throws -> CacheStore {
        try CacheStore(writer: DatabaseQueue(), url: nil)
    }

    init(writer: any DatabaseWriter, url: URL?) throws {
        connection = .grdb(writer)
        path = url?.path
        try Self.migrator.migrate(writer)
    }

    private init(plain: SQLiteReadConnection, path: String) {
        connection = .plain(plain)
        self.path = path
    }

    static let entityColumns = [
        "positions": "id TEXT PRIMARY KEY, symbol TEXT NOT NULL, qty INTEGER NOT NULL, avg_price TEXT NOT NULL, updated_at REAL NOT NULL",
        "fills":
            """
        id TEXT PRIMARY KEY, order_id TEXT NOT NULL, symbol TEXT NOT NULL, side TEXT NOT NULL, qty INTEGER NOT NULL, price TEXT NOT \
        NULL, filled_at REAL NOT NULL
        """,
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
            try db.execute(
                sql: """
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
            // its id alone) and applied to the live tables in the log's order when the rebuild ends: keyed
            // tables filled page by page took their index entries at random places (ids are random),
            // rewriting most of each index's pages on every commit. A rebuild under way keeps its rows.
            for (table, columns) in entityColumns.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "CREATE TABLE rebuild_\(table)_log (\(stagedColumns(columns)))")
                try db.execute(sql: "INSERT INTO rebuild_\(table)_log SELECT * FROM rebuild_\(table)")
                try db.execute(sql: "DROP TABLE rebuild_\(table)")
                try db.execute(sql: "ALTER TABLE rebuild_\(table)_log RENAME TO rebuild_\(table)")
            }
        }
        // A migration that changes an index of positions, fills or orders must first build the ones a
        // first fill under way set aside (`restoreIndexes`): otherwise the fill's end builds them again
        // as they were.
        migrator.registerMigration("v3: indexes set aside while a first rebuild fills the live tables") { db in
            // A rebuild of an empty cache writes its pages to the live tables themselves (readers
            // see "no data yet" until it ends), keyed by id but without their other indexes, which
            // wait here and are built once, each in one sorted pass, when it ends.
            try db.execute(sql: "CREATE TABLE rebuild_set_aside_indexes (name TEXT PRIMARY KEY, sql TEXT NOT NULL)")
            // A first fill under way staged its pages in the logs: they are applied to the live
            // tables, where it carries on.
            if try Bool.fetchOne(db, sql: "SELECT rebuilding = 1 FROM sync_state WHERE id = 1") == true {
                for table in entityColumns.keys.sorted() { try applyLog(db, table) }
            }
        }
        migrator.registerMigration("v4: the prices the portfolio was valued at") { db in
            // One per symbol held, replaced with each portfolio snapshot: positions are valued at them.
            try db.execute(sql: "CREATE TABLE marks (symbol TEXT PRIMARY KEY, price TEXT NOT NULL) WITHOUT ROWID")
        }
        return migrator
    }
}

/// The files SQLite keeps beside a database, by their suffixes: none of them may be a link.
let sqliteCompanions = ["-wal", "-shm", "-journal"]

/// Opens (creating it and its private folder, under `folders`' rule) a WAL database with
/// synchronous=NORMAL: a crash loses at most the last commits, never consistency. The file is the
/// owner's alone (0600, and SQLite gives its -wal and -shm the same mode): it holds a person's
/// trading data. GRDB (7.10) has no way to pass SQLite's open flags, so `SQLITE_OPEN_NOFOLLOW`
/// cannot be: instead the folders on the way are checked and no link is let stand at the
/// database's names right before it opens them (in folders the rule holds, no one else can plant
/// one afterwards). A database made
/// new has pages of `pageSize` bytes when given (SQLite's default otherwise). The log is
/// checkpointed as often as SQLite would, but off the writer (`WALCheckpointer`): a full refresh's
/// writer stopped for every checkpoint to copy and sync 16 MiB, twenty times a refresh, while the
/// pages waited (median of 9 alternating first fills of 1.5 million changes: 4.77 s, 4.60 s off
/// the writer); each order's journal write made a hundredth of one.
func openPool(at url: URL, pageSize: Int? = nil, in folders: PrivateFolders) throws -> DatabasePool {
    try folders.file(url.path)
    // Made here first when new (an empty file is an empty database), so that it is never another
    // mode for a moment: only when new (O_EXCL), because closing a descriptor of a file drops every
    // POSIX lock this process holds on it, SQLite's included, when this process has it open already.
    // One made by an earlier version is brought to 0600 by its path (never through a link), never
    // opened here.
    let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    if fd >= 0 {
        _ = fchmod(fd, 0o600)
        close(fd)
    }
    for suffix in [""] + sqliteCompanions { try PrivateFolders.narrow(url.path + suffix) }
    var config = Configuration()
    config.busyMode = .timeout(10)
    // Kept alive by the configuration as long as the pool's connections.
    let checkpointer = WALCheckpointer(path: url.path, threshold: WALCheckpointer.sqliteDefaultThreshold)
    config.prepareDatabase { db in
        checkpointer.install(on: db)
        // Before WAL mode is set (GRDB sets it after this): an empty database takes the size then.
        if let pageSize { try db.execute(sql: "PRAGMA page_size = \(pageSize)") }
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    return try DatabasePool(path: url.path, configuration: config)
}

/// Where the sync stands, and what the last attempt saw.
public struct SyncState: Sendable, Equatable {
    /// A rebuild under way: of a cache never filled (`live`: its pages go to the live tables as they
    /// come, and readers see "no data yet" until it ends) or of a filled one (`shadow`: its pages
    /// are staged in the rebuild's logs and applied at the end, and readers see the old copy until
    /// then). See `beginRebuild` and `finishRebuild`.
    public enum Rebuild: Int, Sendable, CaseIterable { case none = 0, live = 1, shadow = 2 }

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
        try readPlain { try Self.syncState($0) }
    }

    static func syncState(_ db: Database) throws -> SyncState {
        try syncState(try handle(db))
    }

    static func syncState(_ connection: OpaquePointer) throws -> SyncState {
        let row = try SQLiteStatement(
            connection,
            """
            SELECT account_id, cursor, rebuilding, rebuild_cursor, last_success_at, last_attempt_at, last_error_kind, last_error_at,
            last_error_message, connectivity, connectivity_at, evicted_before FROM sync_state WHERE id = 1
            """)
        guard try row.step() else {
            // The migration writes this row; a file without it was not written by us, or was damaged.
            throw RaxxError(
                code: .cacheDamaged, message: "The cache has no sync state: it is damaged or was not written by raxx-cache.",
                hint: CacheStore.refillHint)
        }
        func date(_ column: Int32) -> Date? { row.optionalDouble(column).map { Date(timeIntervalSince1970: $0) } }
        return try SyncState(
            accountID: row.optionalText(0), cursor: row.int64(1),
            rebuilding: storedCase(Int(row.int64(2)), table: "sync_state", column: "rebuilding", code: .cacheDamaged, hint: CacheStore.refillHint),
            rebuildCursor: row.int64(3), lastSuccessAt: date(4), lastAttemptAt: date(5),
            lastErrorKind: row.optionalText(6), lastErrorAt: date(7), lastErrorMessage: row.optionalText(8),
            connectivity: storedCase(row.text(9), table: "sync_state", column: "connectivity", code: .cacheDamaged, hint: CacheStore.refillHint),
            connectivityAt: date(10),
            evictedBefore: date(11))
    }

    /// Row counts of the live tables.
    public func counts() throws -> [String: Int] {
        Dictionary(uniqueKeysWithValues: zip(Self.liveTables, try counts(of: Self.liveTables)))
    }

    /// Row counts of `tables`, in their order, read in one transaction (no dictionary: `raxx-cache
    /// status` makes none, each a generic type the runtime instantiates at its first use).
    public func counts(of tables: [String]) throws -> [Int] {
        guard !tables.isEmpty else { return [] }
        for table in tables where !Self.liveTables.contains(table) {
            throw RaxxError(code: .internal, message: "The cache has no table \(table) to count.")
        }
        return try readPlain { connection in
            // One statement for them all: each statement prepared is a parse and a plan.
            var sql = "SELECT "
            for index in tables.indices {
                if index > 0 { sql += ", " }
                sql += "(SELECT COUNT(*) FROM " + tables[index] + ")"
            }
            let counts = try SQLiteStatement(connection, sql)
            guard try counts.step() else { return tables.map { _ in 0 } }
            return tables.indices.map { Int(counts.int64(Int32($0))) }
        }
    }

    /// The live tables, as `raxx-cache status` lists them.
    /// (Written out, not built from `entityTables`: the status read uses it, and needs nothing built.)
    public static let liveTables = ["portfolio", "positions", "fills", "orders"]

    /// The cache file's size on disk (with its WAL), in bytes.
    public var fileSize: Int64 {
        guard let path else { return 0 }
        // lstat, as FileManager's attributes read them, without building their dictionary.
        return [path, path + "-wal", path + "-shm"].reduce(Int64(0)) { total, path in
            var info = stat()
            return total + (lstat(path, &info) == 0 ? Int64(info.st_size) : 0)
        }
    }
}
