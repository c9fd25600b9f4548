/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sha256.h - SHA-256 (FIPS 180-4) of a byte string, for the paths the
 * file rules hash ("sha256:HEX" in a record instead of the path).
 */
#ifndef JOBTRACE_SHA256_H
#define JOBTRACE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64

/* The SHA-256 of data[0..len) into out. */
void sha256(const void *data, size_t len, uint8_t out[32]);
/* ... as 64 lowercase hex digits and a NUL into hex. */
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);

#endif
