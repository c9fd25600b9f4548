/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulebundle.h - a rules bundle: the .lua files of a rules folder in one
 * POSIX ustar tar that a fleet fetches, checks and loads (doc/rules-bundle.md).
 *
 * The tar holds, in this order:
 *   MANIFEST            text, first member
 *   NAME.lua ...        the rule files, top level only, names
 *                       [A-Za-z0-9][A-Za-z0-9_.-]* ending in .lua
 *   MANIFEST.sig        optional: the raw 64-byte Ed25519 signature of the
 *                       MANIFEST bytes
 * and MANIFEST is
 *   jobtrace-rules-bundle 1
 *   version <printable, no spaces, <= 64 characters>
 *   file <sha256-hex> <size> <NAME.lua>      one line per file, by name
 * The bundle's id (its "sha256" everywhere: status, host records, the
 * fleet store) is the SHA-256 of the MANIFEST bytes: it names every file's
 * content, so two bundles with the same id hold the same rules.
 *
 * Only regular files; no links, devices, folders, paths, pax or GNU
 * extension headers; at most RULEBUNDLE_MAX_BYTES and RULEBUNDLE_MAX_FILES.
 * Keys are PEM files (an Ed25519 private key to sign, its public key to
 * verify).  Every function returns 0 or -errno and, on failure, writes into
 * err what failed, naming the bundle member and the MANIFEST line.
 */
#ifndef JOBTRACE_RULEBUNDLE_H
#define JOBTRACE_RULEBUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

#define RULEBUNDLE_MAX_BYTES (4u << 20)	/* the whole tar */
#define RULEBUNDLE_MAX_FILES 256
#define RULEBUNDLE_NAME_MAX 100		/* ustar's name field, NUL included */
#define RULEBUNDLE_VERSION_MAX 64
#define RULEBUNDLE_SIG_LEN 64
#define RULEBUNDLE_MAGIC "jobtrace-rules-bundle 1"

/* One rule file of an opened bundle. */
struct rulebundle_file {
	char name[RULEBUNDLE_NAME_MAX];
	char sha256[65];
	unsigned char *data;		/* malloc'd, size bytes */
	size_t size;
};

/* An opened, checked bundle. */
struct rulebundle {
	char version[RULEBUNDLE_VERSION_MAX + 1];
	char sha256[65];		/* of MANIFEST: the bundle's id */
	bool is_signed;			/* holds a MANIFEST.sig (verified if
					 * a key was given) */
	unsigned nfiles;
	struct rulebundle_file *files;	/* by name */
	char *manifest;			/* the MANIFEST bytes, NUL-terminated */
	size_t manifest_len;
};

/*
 * Make a bundle of every *.lua of dir (the files rules_load_dir loads) with
 * version, signed with the Ed25519 key in the PEM file seckey_pem when not
 * NULL, into tar_out (appended).  The tar is the same for the same files:
 * no times, owners or modes of the folder go in.
 */
int rulebundle_make(const char *dir, const char *version,
		    const char *seckey_pem, struct jbuf *tar_out, char *err,
		    size_t errlen);
/*
 * Parse and check the bundle of len bytes at tar into *out: the tar's
 * members, the MANIFEST, each file's size and SHA-256, no file missing or
 * extra, the limits, and, when pubkey_pem (a PEM file's path) is not NULL,
 * the signature: an unsigned or wrongly signed bundle is then refused.
 * Free *out with rulebundle_free (also after a failure).
 */
int rulebundle_open(const void *tar, size_t len, const char *pubkey_pem,
		    struct rulebundle *out, char *err, size_t errlen);
/*
 * Write the bundle's rule files into dest_dir, which must not exist: it is
 * made 0700, the files 0600 with O_EXCL|O_NOFOLLOW and synced.  On failure
 * what was written is removed.
 */
int rulebundle_extract(const struct rulebundle *b, const char *dest_dir,
		       char *err, size_t errlen);
/* Release what a bundle holds; accepts NULL and a zeroed or failed one. */
void rulebundle_free(struct rulebundle *b);
/* True when name is a rule file name a bundle may hold. */
bool rulebundle_name_ok(const char *name);
#endif
