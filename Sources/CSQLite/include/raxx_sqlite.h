#ifndef RAXX_SQLITE_H
#define RAXX_SQLITE_H
// SQLite's process-wide configuration, set once, before anything opens a database: the one place
// sqlite3_config is called (it is variadic, which Swift cannot call).
//
// Memory statistics are off. With them on, every sqlite3_malloc and sqlite3_free takes a global
// mutex and updates the counters that sqlite3_memory_used and sqlite3_status read, which nothing
// here reads: an offline read made about 1,400 of those calls, and a refresh or the sandbox makes
// them per row. SQLite's documentation recommends the same (SQLITE_DEFAULT_MEMSTATUS=0).
//
// No initial bulk allocation for a connection's page cache (SQLITE_CONFIG_PAGECACHE with no buffer
// and no pages). By default each connection's first page takes memory for 20 at once, and writes a
// header into every one of them: with the cache's 16 KiB pages, 330 KiB mapped and 20 pages of it
// faulted in, where an offline read uses two or three. An offline read faulted 18 pages fewer.

/// What sqlite3_config answered when the process started: SQLITE_OK when it took every setting,
/// else the first refusal (SQLITE_MISUSE had SQLite been initialised already).
int raxx_sqlite_configured(void);

#endif
