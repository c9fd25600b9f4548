// SPDX-License-Identifier: GPL-2.0-or-later
/* sha256.c - SHA-256 of a byte string as hex (libcrypto's). */
#include <errno.h>
#include <stdio.h>

#include <openssl/evp.h>

#include "sha256.h"

/* SHA-256 of data[0..len) as hex into hex (see sha256.h). */
int sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1])
{
	unsigned char md[32];
	unsigned int mdlen = 0, i;

	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen != 32)
		return -EIO;
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}
