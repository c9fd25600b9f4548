/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sha256.h - SHA-256 of a byte string as hex (libcrypto's): the paths the
 * file rules hash ("sha256:HEX" in a record instead of the path) and the
 * rule bundles' files and MANIFEST.
 */
#ifndef JOBTRACE_SHA256_H
#define JOBTRACE_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* The SHA-256 of data[0..len) as 64 lowercase hex digits and a NUL into
 * hex: 0, or -EIO when libcrypto fails. */
int sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);

#endif
