// libsqlite3 for the device's stores (runs, SOS alerts), through Sources/SQLite only.
#ifndef PACER_CSQLITE_SHIM_H
#define PACER_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro over a cast of -1, which Swift cannot import: SQLite copies the
// bytes bound with it before the call returns.
static inline sqlite3_destructor_type pacer_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}
#endif
