#ifndef TASKER_CSQLITE_SHIM_H
#define TASKER_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
