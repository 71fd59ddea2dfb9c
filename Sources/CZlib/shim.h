#ifndef BEACONBRIDGE_CZLIB_SHIM_H
#define BEACONBRIDGE_CZLIB_SHIM_H
// zlib (Debian zlib1g-dev; libz.so.1 is on every Raspberry Pi OS image): raw DEFLATE and CRC-32 for the entries of
// a Secure DFU package's .zip (SecureDFU). Only what Swift cannot import is wrapped here.
#include <zlib.h>

/// inflateInit2(stream, -15): an inflate stream for raw DEFLATE (RFC 1951: no zlib or gzip header or trailer),
/// with the largest window (32 KiB). inflateInit2 is a macro that passes zlib's version and sizeof(z_stream).
static inline int bb_inflate_init_raw(z_streamp stream) { return inflateInit2(stream, -15); }
#endif
