// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * files.c - the files one process opened: per file while it runs, then
 * the record's list after the rules (see files.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "sha256.h"
#include "util.h"

#define EXT_MAX 32		/* a longer "extension" is no extension */

/* JT_FF_* of an open's O_* flags. */
uint32_t files_oflags(uint32_t oflags, bool dir)
{
	uint32_t ff = 0;

	switch (oflags & O_ACCMODE) {
	case O_RDONLY:
		ff |= JT_FF_READ;
		break;
	case O_WRONLY:
		ff |= JT_FF_WRITE;
		break;
	default:
		ff |= JT_FF_READ | JT_FF_WRITE;
		break;
	}
	if (oflags & O_CREAT)
		ff |= JT_FF_CREATE;
	if (oflags & O_APPEND)
		ff |= JT_FF_APPEND;
	if (oflags & O_TRUNC)
		ff |= JT_FF_TRUNCATE;
	if (dir || (oflags & O_DIRECTORY))
		ff |= JT_FF_DIRECTORY;
	if (oflags & O_DIRECT)
		ff |= JT_FF_DIRECT;
	return ff;
}

/* Grow an array of n of size to hold one more; 0 or -ENOMEM. */
static int grow(void **v, size_t n, size_t *cap, size_t size)
{
	size_t c = *cap ? *cap * 2 : 8;
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, c * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* The file (dev, ino) of fr, or NULL. */
static struct files_ent *find(const struct files_raw *fr, uint64_t dev,
			      uint64_t ino)
{
	/* newest first: a file is mostly closed soon after it is opened */
	for (size_t i = fr->n; i-- > 0;)
		if (fr->v[i].ino == ino && fr->v[i].dev == dev)
			return &fr->v[i];
	return NULL;
}

/* Forget fd as open (a close, or its reuse). */
static void fd_gone(struct files_raw *fr, int fd)
{
	for (size_t i = 0; i < fr->nfds; i++)
		if (fr->fds[i].fd == fd) {
			fr->fds[i] = fr->fds[--fr->nfds];
			return;
		}
}

/* An open of file (dev, ino) at fd. */
int files_raw_open(struct files_raw *fr, int fd, uint64_t dev, uint64_t ino,
		   const char *path, uint32_t ff, uint32_t oflags,
		   unsigned opens)
{
	struct files_ent *e = find(fr, dev, ino);

	if (!e) {
		if (grow((void **)&fr->v, fr->n, &fr->cap, sizeof(*fr->v)))
			return -ENOMEM;
		e = &fr->v[fr->n++];
		memset(e, 0, sizeof(*e));
		e->dev = dev;
		e->ino = ino;
		e->verdict = -1;
	}
	if (!e->f.path && path && !(e->f.path = strdup(path)))
		return -ENOMEM;
	e->f.flags |= ff;
	e->f.opens += opens;
	fd_gone(fr, fd);
	if (grow((void **)&fr->fds, fr->nfds, &fr->capfds, sizeof(*fr->fds)))
		return -ENOMEM;
	fr->fds[fr->nfds++] = (struct files_fd){ fd, (uint32_t)(e - fr->v),
						 oflags };
	return 0;
}

/* The path fr knows for (dev, ino). */
const char *files_raw_path(const struct files_raw *fr, uint64_t dev,
			   uint64_t ino)
{
	const struct files_ent *e = fr ? find(fr, dev, ino) : NULL;

	return e ? e->f.path : NULL;
}

/* Its close at fd, or the process's end. */
void files_raw_close(struct files_raw *fr, int fd, uint64_t dev, uint64_t ino,
		     const struct files_close *c)
{
	struct files_ent *e = find(fr, dev, ino);

	fd_gone(fr, fd);
	if (!e) {
		fr->lost.count++;
		fr->lost.opens++;
		fr->lost.read_bytes += c->read_bytes;
		fr->lost.write_bytes += c->write_bytes;
		return;
	}
	e->f.read_bytes += c->read_bytes;
	e->f.write_bytes += c->write_bytes;
	if (c->size_known) {
		e->f.size_bytes = c->size_bytes;
		e->f.size_known = true;
	}
	e->f.mmap |= c->mmap;
	e->f.deleted = c->deleted;
	e->open_at_end = c->at_end;
}

/* Free what fr holds. */
void files_raw_free(struct files_raw *fr)
{
	if (!fr)
		return;
	for (size_t i = 0; i < fr->n; i++)
		free(fr->v[i].f.path);
	free(fr->v);
	free(fr->fds);
	memset(fr, 0, sizeof(*fr));
}

/* Order of file indices by their paths (qsort_r's context is the files). */
static int by_path(const void *a, const void *b, void *ctx)
{
	const struct files_ent *v = ctx;

	return strcmp(v[*(const uint32_t *)a].f.path,
		      v[*(const uint32_t *)b].f.path);
}

/* The distinct known paths of fr, and each file's index among them. */
size_t files_raw_paths(const struct files_raw *fr, const char **paths,
		       uint32_t *idx)
{
	uint32_t *order = malloc((fr->n ? fr->n : 1) * sizeof(*order));
	size_t n = 0, k = 0;

	for (size_t i = 0; i < fr->n; i++)
		idx[i] = UINT32_MAX;
	if (!order) {
		/* no room to sort: every file its own path, decided alone */
		for (size_t i = 0; i < fr->n; i++)
			if (fr->v[i].f.path) {
				idx[i] = (uint32_t)n;
				paths[n++] = fr->v[i].f.path;
			}
		return n;
	}
	for (size_t i = 0; i < fr->n; i++)
		if (fr->v[i].f.path)
			order[k++] = (uint32_t)i;
	qsort_r(order, k, sizeof(*order), by_path, fr->v);
	for (size_t i = 0; i < k; i++) {
		const char *p = fr->v[order[i]].f.path;

		if (!n || strcmp(paths[n - 1], p))
			paths[n++] = p;
		idx[order[i]] = (uint32_t)(n - 1);
	}
	free(order);
	return n;
}

/* What a path is kept as, into out. */
bool files_kept_path(const char *path, enum rules_file_verdict v, char *out,
		     size_t len)
{
	const char *base = util_basename(path), *dot;
	char hex[SHA256_HEX_LEN + 1];

	switch (v) {
	case RULES_FILE_KEEP:
		return util_strlcpy(out, path, len) < len;
	case RULES_FILE_HASH:
		return !sha256_hex(path, strlen(path), hex) &&
		       (size_t)snprintf(out, len, "sha256:%s", hex) < len;
	case RULES_FILE_EXT:
		/* from the first dot of the name that does not start it */
		dot = *base ? strchr(base + 1, '.') : NULL;
		if (!dot || strlen(dot) > EXT_MAX)
			dot = "";
		return (size_t)snprintf(out, len, "*%s", dot) < len;
	default:
		return false;
	}
}

/* Count one file in a rest. */
static void rest_add(struct jt_files_count *r, const struct jt_file *f)
{
	r->count++;
	r->opens += f->opens;
	r->read_bytes += f->read_bytes;
	r->write_bytes += f->write_bytes;
}

/* Add a count to another. */
static void count_add(struct jt_files_count *to,
		      const struct jt_files_count *c)
{
	if (!c)
		return;
	to->count += c->count;
	to->opens += c->opens;
	to->read_bytes += c->read_bytes;
	to->write_bytes += c->write_bytes;
}

/* Merge file f, kept as path, into fs. */
int files_add(struct jt_files *fs, const char *path, const struct jt_file *f)
{
	struct jt_file *e = NULL;

	for (size_t i = 0; i < fs->n && !e; i++)
		if (!strcmp(fs->v[i].path, path))
			e = &fs->v[i];
	if (e) {
		/* several files stand under one kept path: their sums, and
		 * deleted only when every one was */
		e->flags |= f->flags;
		e->opens += f->opens;
		e->read_bytes += f->read_bytes;
		e->write_bytes += f->write_bytes;
		e->size_bytes += f->size_known ? f->size_bytes : 0;
		e->size_known |= f->size_known;
		e->mmap |= f->mmap;
		e->deleted &= f->deleted;
		return 0;
	}
	if (grow((void **)&fs->v, fs->n, &fs->cap, sizeof(*fs->v)))
		return -ENOMEM;
	e = &fs->v[fs->n];
	*e = *f;
	if (!f->size_known)
		e->size_bytes = 0;
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	fs->n++;
	return 0;
}

/* Busiest first: bytes read and written, then opens, then the path. */
static int by_bytes(const void *a, const void *b)
{
	const struct jt_file *x = a, *y = b;
	uint64_t bx = x->read_bytes + x->write_bytes;
	uint64_t by = y->read_bytes + y->write_bytes;

	if (bx != by)
		return bx > by ? -1 : 1;
	if (x->opens != y->opens)
		return x->opens > y->opens ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Sort by bytes and count all past cap in the rest. */
void files_cap(struct jt_files *fs, unsigned cap)
{
	if (fs->n > 1)
		qsort(fs->v, fs->n, sizeof(*fs->v), by_bytes);
	while (fs->n > cap) {
		struct jt_file *f = &fs->v[--fs->n];

		rest_add(&fs->rest, f);
		free(f->path);
	}
}

/* The record's files of fr after the rules' verdicts. */
int files_build(const struct files_raw *fr, const uint32_t *idx,
		const enum rules_file_verdict *verdict, unsigned cap,
		const struct jt_files_count *nonreg,
		const struct jt_files_count *lost, struct jt_files *out)
{
	char kept[JT_PATH_MAX];
	int err = 0;

	memset(out, 0, sizeof(*out));
	count_add(&out->rest, lost);
	count_add(&out->rest, &fr->lost);
	if (nonreg)
		out->nonreg = *nonreg;
	for (size_t i = 0; i < fr->n && !err; i++) {
		const struct jt_file *f = &fr->v[i].f;

		if (idx[i] == UINT32_MAX || !f->path ||
		    !files_kept_path(f->path, verdict[idx[i]], kept,
				     sizeof(kept)))
			rest_add(&out->rest, f);
		else
			err = files_add(out, kept, f);
	}
	if (err) {
		files_free(out);
		return err;
	}
	files_cap(out, cap);
	return 0;
}

/* Free what fs holds and zero it. */
void files_free(struct jt_files *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].path);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}
