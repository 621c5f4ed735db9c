#include "raxx_sqlite.h"
#include <sqlite3.h>

static int configured = -1;

// Before main: no database can have been opened yet, so SQLite is not initialised and takes the
// configuration (sqlite3_config only works before sqlite3_initialize).
__attribute__((constructor)) static void raxx_sqlite_configure(void) {
    configured = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    if (configured == SQLITE_OK) {
        // No page buffer of SQLite's own and no initial bulk allocation: each connection's page
        // cache takes a page's memory when it first needs one.
        configured = sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    }
}

int raxx_sqlite_configured(void) { return configured; }
