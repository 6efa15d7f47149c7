// libmicrohttpd from Debian (libmicrohttpd-dev). Only the gate's HTTP binding imports this module.
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
