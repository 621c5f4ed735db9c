import CSQLite
import GRDB
import GRDBSQLite
import Testing

/// SQLite's process-wide configuration (CSQLite) is in place before anything opens a database.
@Suite struct SQLiteConfigurationTests {
    /// sqlite3_config took every setting (memory statistics off, no bulk page cache): it ran
    /// before SQLite was initialised.
    @Test func itRanBeforeSQLiteStarted() {
        #expect(raxx_sqlite_configured() == SQLITE_OK)
    }

    /// Memory statistics are off: with a connection open and a statement run, SQLite counts no
    /// memory in use (with them on, every allocation is counted, under a global mutex).
    @Test func memoryStatisticsAreOff() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (x TEXT); INSERT INTO t VALUES (zeroblob(100000))")
            #expect(sqlite3_memory_used() == 0)
        }
    }
}
