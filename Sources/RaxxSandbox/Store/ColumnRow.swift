import GRDB
import GRDBSQLite

/// The row a statement is on, read in place by column index, for the sandbox's two hot readers:
/// the sync page writer (`SyncPageJSON`, through `eachRow`) and the erasure's step through the
/// audit trail (`DSRStore.pseudonymiseAudit`, through `allRows`). Each fetch through GRDB's `Row`
/// first builds a dictionary of the statement's lowercased column names (about 11,000
/// instructions for 18 columns, even when no row comes back); nothing here looks a column up by
/// name. Everything else reads through GRDB (`Row` by column name, the records of Records.swift).
struct ColumnRow {
    let sqliteStatement: SQLiteStatement

    var count: Int { Int(sqlite3_column_count(sqliteStatement)) }

    func decode<T: DatabaseValueConvertible & StatementColumnConvertible>(_ type: T.Type = T.self, atIndex index: Int) throws -> T {
        guard index >= 0, index < count, let value = T.fromStatement(sqliteStatement, atUncheckedIndex: CInt(index)) else {
            throw mismatch(T.self, at: index)
        }
        return value
    }

    private func mismatch(_ type: Any.Type, at index: Int) -> DatabaseError {
        let what =
            index >= 0 && index < count
            ? "\(DatabaseValue(sqliteStatement: sqliteStatement, index: CInt(index))) in column \(index) "
                + "(\(String(cString: sqlite3_column_name(sqliteStatement, CInt(index)))))"
            : "no column \(index) (the row has \(count))"
        return DatabaseError(
            resultCode: .SQLITE_MISMATCH, message: "could not read \(type) from \(what)",
            sql: String(cString: sqlite3_sql(sqliteStatement)))
    }
}

extension Statement {
    /// Runs the statement with `arguments` and hands each of its rows, in place, to `body`, until
    /// there are no more or `body` answers false. The row is only valid during the call.
    func eachRow(arguments: StatementArguments, _ body: (ColumnRow) throws -> Bool) throws {
        try setArguments(arguments)
        let s = sqliteStatement
        defer { sqlite3_reset(s) }
        let row = ColumnRow(sqliteStatement: s)
        while true {
            let code = sqlite3_step(s)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(s))),
                    sql: String(cString: sqlite3_sql(s)))
            }
            guard try body(row) else { return }
        }
    }

    /// Every row of the statement with `arguments`, each read by `read`.
    func allRows<T>(arguments: StatementArguments, _ read: (ColumnRow) throws -> T) throws -> [T] {
        var all: [T] = []
        try eachRow(arguments: arguments) { row in
            all.append(try read(row))
            return true
        }
        return all
    }
}
