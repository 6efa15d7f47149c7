#ifndef TASKKEY_CZLIB_SHIM_H
#define TASKKEY_CZLIB_SHIM_H
#include <zlib.h>
#endif
