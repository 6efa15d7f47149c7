#ifndef TASKKEY_CSODIUM_SHIM_H
#define TASKKEY_CSODIUM_SHIM_H
#include <sodium.h>
#endif
