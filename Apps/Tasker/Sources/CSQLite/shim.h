#ifndef TASKER_CSQLITE_SHIM_H
#define TASKER_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_db_config is variadic, which Swift cannot call: turns the
/// connection's triggers on (1) or off (0) and writes the setting now in
/// force to `now`.
static inline int tasker_sqlite3_enable_triggers(sqlite3 *db, int on, int *now) {
  return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, on, now);
}
#endif
