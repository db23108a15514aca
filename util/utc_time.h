/*
 * utc_time.h - a UTC time as profdb prints it, 2026-11-21T08:12:03Z, fast.
 */
#ifndef PROFSVC_UTC_TIME_H
#define PROFSVC_UTC_TIME_H

#include <stddef.h>
#include <stdint.h>

/* us: microseconds since the epoch, from 1970 to the end of 9999.  Writes
 * the 20 characters and a NUL to buf (len >= 21) and returns 0; -1 (buf
 * untouched) for anything else, which the caller formats another way. */
int utc_format_fast(int64_t us, char *buf, size_t len);

#endif
