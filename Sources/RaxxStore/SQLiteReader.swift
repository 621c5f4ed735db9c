import Foundation
import GRDB
import GRDBSQLite

/// A plain SQLite connection for the cache's offline reads (`raxx-cache status|show`, `raxx-order
/// list --cached`): these run often, in prompts and scripts, and answer in a few milliseconds, so
/// they skip what a GRDB queue costs to set up and tear down (its dispatch queue, whose disposal
/// starts a thread, function and collation tables, the migrator's check through the schema). It
/// opens an existing file read-write, as GRDB would (so that the last connection to close still
/// checkpoints the WAL, which it leaves in place, empty), and only ever runs SELECTs.
final class SQLiteReadConnection: @unchecked Sendable {
    let handle: OpaquePointer
    /// One read transaction at a time on the connection (a store may be shared between tasks).
    private let lock = NSLock()

    /// Opens the database at `path`, which must exist and be named without any link on the way
    /// (`SQLITE_OPEN_NOFOLLOW`: SQLite refuses one anywhere in it, SQLITE_CANTOPEN_SYMLINK; see
    /// `PrivateFolders.resolved`); SQLite's failures as GRDB's `DatabaseError`.
    init(path: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) }
            sqlite3_close_v2(handle)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message)
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        // The -wal and -shm stay when this connection is the last to close (checkpointed, and the
        // log cut to nothing: a persistent log keeps its size unless a limit says otherwise): a
        // read that found none made them, and removing them again is a file-system change at the
        // end of every read (about 0.2 ms of a 4 ms raxx-cache status); the next read finds them.
        // A writable store's close still removes them.
        var persist: Int32 = 1
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
        sqlite3_exec(handle, "PRAGMA journal_size_limit = 0", nil, nil, nil)
        // As the writable store: wait out a refresh's commit rather than fail.
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit { sqlite3_close_v2(handle) }

    /// `body` in one read transaction: its statements see one state of the file.
    func read<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        try SQLiteStatement(handle, "BEGIN").run()
        do {
            let result = try body(handle)
            try SQLiteStatement(handle, "COMMIT").run()
            return result
        } catch {
            sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }
}

/// A value bound to a statement's `?`.
enum SQLiteArgument: Sendable, Equatable {
    case text(String)
    case real(Double)
}

/// A prepared statement on a plain connection (this module's or a GRDB `Database`'s
/// `sqliteConnection`): bound, stepped, read by column index, finalized when it goes.
struct SQLiteStatement: ~Copyable {
    let handle: OpaquePointer
    private let connection: OpaquePointer
    private let sql: String

    init(_ connection: OpaquePointer, _ sql: String, _ arguments: [SQLiteArgument] = []) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw Self.failure(code, connection, sql)
        }
        for (i, argument) in arguments.enumerated() {
            let index = Int32(i + 1)
            let bound =
                switch argument {
                case .text(let text): sqlite3_bind_text(handle, index, text, -1, sqliteTransient)
                case .real(let value): sqlite3_bind_double(handle, index, value)
                }
            guard bound == SQLITE_OK else {
                let error = Self.failure(bound, connection, sql)
                sqlite3_finalize(handle)
                throw error
            }
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// The next row: true when there is one, false when done.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw failure(code)
    }

    /// Steps through every row (a statement that answers none, or whose rows do not matter).
    func run() throws { while try step() {} }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    private func failure(_ code: Int32) -> DatabaseError { Self.failure(code, connection, sql) }

    private static func failure(_ code: Int32, _ connection: OpaquePointer, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}

/// One run of a GRDB cached statement, its values bound straight to SQLite: for a write made again
/// and again (the journal's, once an order), without the `StatementArguments` of each run (an array
/// of boxed values, checked against the statement, then bound one by one).
struct BoundRun {
    let statement: Statement
    private var index: Int32 = 0
    /// The first value SQLite refused (too big, out of memory), thrown by `run` before it steps.
    private var refused: Int32 = SQLITE_OK

    init(_ statement: Statement) { self.statement = statement }

    /// The next parameter: a text (copied by SQLite), or NULL.
    mutating func text(_ value: String?) {
        index += 1
        guard let value else { bound(sqlite3_bind_null(statement.sqliteStatement, index)); return }
        bound(sqlite3_bind_text(statement.sqliteStatement, index, value, -1, sqliteTransient))
    }

    mutating func real(_ value: Double) {
        index += 1
        bound(sqlite3_bind_double(statement.sqliteStatement, index, value))
    }

    private mutating func bound(_ code: Int32) {
        if refused == SQLITE_OK { refused = code }
    }

    /// Steps the statement through, then resets it and clears its values.
    func run(_ db: Database) throws {
        precondition(index == sqlite3_bind_parameter_count(statement.sqliteStatement), "one value for each of the statement's parameters")
        let code = refused == SQLITE_OK ? sqlite3_step(statement.sqliteStatement) : refused
        sqlite3_reset(statement.sqliteStatement)
        sqlite3_clear_bindings(statement.sqliteStatement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                sql: statement.sql)
        }
    }
}

/// SQLite copies a bound text before the call returns (SQLITE_TRANSIENT, a macro Swift cannot import).
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
