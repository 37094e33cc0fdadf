#include <sqlite3.h>

/// `sqlite3_db_config` for the options that take an int (on, off or -1 to ask) and report
/// the setting: the function is variadic, which Swift cannot call.
static inline int serialdb_db_config_flag(sqlite3 *db, int op, int value, int *setting) {
    return sqlite3_db_config(db, op, value, setting);
}
