#ifndef TASKKEY_COPENSSL_SHIM_H
#define TASKKEY_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#endif
