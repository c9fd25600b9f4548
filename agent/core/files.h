/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * files.h - the files one process opened, as its record lists them.
 *
 * The kernel tells of each open of a regular file or folder (its path, as
 * the call gave it, resolved by the caller) and of each close (the bytes
 * read and written through it, its size then, whether it still had a
 * name).  struct files_raw keeps them per file (device and inode) while
 * the process runs.  At its end, files_raw_paths() gives the distinct
 * paths for the rules to decide once each (rules_files()), and
 * files_build() keeps what they kept: a hashed or extension-only path
 * can stand for several files, which are merged; the busiest files are
 * listed up to the cap, the others counted in files_rest.  No I/O here.
 */
#ifndef JOBTRACE_FILES_H
#define JOBTRACE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc.h"

/* What the file rules (rules_files()) decide of a path a process opened. */
enum rules_file_verdict {
	RULES_FILE_KEEP,	/* the path as it is */
	RULES_FILE_DROP,	/* not listed: counted in files_rest */
	RULES_FILE_HASH,	/* "sha256:" and the path's SHA-256 in hex */
	RULES_FILE_EXT,		/* "*" and its extension (".fq.gz") only */
};

/* One file (device, inode) a process opened: f.path is malloc'd and
 * absolute, NULL when not known. */
struct files_ent {
	uint64_t dev, ino;		/* st_dev, st_ino */
	struct jt_file f;
	bool open_at_end;		/* its last close was the process's end:
					 * f.deleted is the kernel's then */
	signed char verdict;		/* the rules' on f.path for progress
					 * (procfiles.h), -1: not asked */
};

/* One of its fds that is open now (for progress). */
struct files_fd {
	int fd;
	uint32_t ent;			/* index in files_raw.v */
	uint32_t oflags;		/* the open's O_* flags */
};

/* The files of one running process (zeroed: none). */
struct files_raw {
	struct files_ent *v;
	size_t n, cap;
	struct files_fd *fds;
	size_t nfds, capfds;
	struct jt_files_count lost;	/* closes whose open was not told */
};

/* What a close (or the process's end) tells of one open of a file. */
struct files_close {
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t size_bytes;
	bool size_known;
	bool deleted;
	bool mmap;
	bool at_end;		/* still open at the process's end */
};

/* JT_FF_* of an open's O_* flags (dir: the file is a folder). */
uint32_t files_oflags(uint32_t oflags, bool dir);
/*
 * An open of file (dev, ino) at fd: path (absolute, or NULL when not
 * known; the first one known is kept), ff (JT_FF_*), oflags (O_*); opens
 * 1, or 0 for an fd it had whose open was not seen (inherited, dup'd).
 * 0 or -ENOMEM.
 */
int files_raw_open(struct files_raw *fr, int fd, uint64_t dev, uint64_t ino,
		   const char *path, uint32_t ff, uint32_t oflags,
		   unsigned opens);
/* The path fr knows for file (dev, ino), NULL when none. */
const char *files_raw_path(const struct files_raw *fr, uint64_t dev,
			   uint64_t ino);
/* Its close at fd (or the process's end): c's bytes added to the file;
 * a file never opened here is counted as lost. */
void files_raw_close(struct files_raw *fr, int fd, uint64_t dev, uint64_t ino,
		     const struct files_close *c);
/* Free what fr holds (fr itself is the caller's); accepts NULL. */
void files_raw_free(struct files_raw *fr);

/*
 * The distinct known paths of fr (pointers into it) into paths (room for
 * fr->n), and for each file the index of its path in idx (room for
 * fr->n; UINT32_MAX: no path).  Returns how many paths.
 */
size_t files_raw_paths(const struct files_raw *fr, const char **paths,
		       uint32_t *idx);

/*
 * The record's files of fr: verdict[idx[i]] is the rules' verdict on the
 * path of file i (files_raw_paths()), cap the most listed; nonreg and
 * lost are the kernel's counts (may be NULL).  out is filled (free it
 * with files_free).  0 or -ENOMEM.
 */
int files_build(const struct files_raw *fr, const uint32_t *idx,
		const enum rules_file_verdict *verdict, unsigned cap,
		const struct jt_files_count *nonreg,
		const struct jt_files_count *lost, struct jt_files *out);
/* Merge file f (its path kept as path) into fs: one entry per path. */
int files_add(struct jt_files *fs, const char *path, const struct jt_file *f);
/* Sort fs by bytes read and written (most first) and count all past cap
 * in its rest. */
void files_cap(struct jt_files *fs, unsigned cap);
/* Free what fs holds and zero it; accepts NULL. */
void files_free(struct jt_files *fs);

/* What a path is kept as: the path, "sha256:HEX" or "*.EXT", into out
 * (size len); false for RULES_FILE_DROP or a path that does not fit. */
bool files_kept_path(const char *path, enum rules_file_verdict v, char *out,
		     size_t len);

#endif
