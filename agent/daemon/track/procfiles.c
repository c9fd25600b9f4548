// SPDX-License-Identifier: GPL-2.0-or-later
/* procfiles.c - a tracked process's file events and /proc (procfiles.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "classify.h"
#include "procfiles.h"
#include "util.h"

#define AT_FDCWD_ (-100)
#define DELETED_SUFFIX " (deleted)"

/* The kernel's dev_t as stat(2)'s st_dev. */
uint64_t procfiles_dev(uint64_t kdev)
{
	return makedev((unsigned)(kdev >> 20), (unsigned)(kdev & 0xfffff));
}

/* The target of /proc/PID/WHAT into buf (len): 0 or -errno. */
static int proc_link(uint32_t pid, const char *what, char *buf, size_t len)
{
	char link[64];
	ssize_t n;
	size_t sl = sizeof(DELETED_SUFFIX) - 1;

	snprintf(link, sizeof(link), "/proc/%u/%s", pid, what);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (buf[0] != '/')
		return -EINVAL;		/* pipe:[...], anon_inode:... */
	/* an unlinked file's link says so after its path */
	if ((size_t)n > sl && !strcmp(buf + n - sl, DELETED_SUFFIX))
		buf[n - sl] = '\0';
	return 0;
}

/*
 * The absolute path of an open (e) into out (len): the call's own when
 * absolute, else joined to the folder it was relative to.  0 or -errno
 * (not known).
 */
static int resolve(const struct jt_ev_fopen *e, char *out, size_t len)
{
	char what[32];
	const char *rel = e->path;
	size_t n;

	if (!e->path_len) {
		/* an fd it had: its link names the file */
		snprintf(what, sizeof(what), "fd/%d", e->fd);
		return proc_link(e->hdr.pid, what, out, len);
	}
	if (rel[0] == '/')
		return util_strlcpy(out, rel, len) < len ? 0 : -ENAMETOOLONG;
	if (e->dirfd == AT_FDCWD_)
		snprintf(what, sizeof(what), "cwd");
	else
		snprintf(what, sizeof(what), "fd/%d", e->dirfd);
	if (proc_link(e->hdr.pid, what, out, len))
		return -ENOENT;
	while (rel[0] == '.' && rel[1] == '/')
		rel += 2;
	n = strlen(out);
	if (!strcmp(rel, "."))
		return 0;
	if ((size_t)snprintf(out + n, len - n, "%s%s",
			     n > 1 ? "/" : "", rel) >= len - n)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The name of a file p's parent has at the same fd (JT_FS_NAME_PARENT, at
 * p's exec or its end) into out (len): the parent's open of it told it;
 * else the parent's fd link, when that still is the file (the kernel's
 * parent at p's end is the one p forked from unless p was reparented:
 * then neither may name it, and the path is not known).
 * PROCFILES_NAMED_PARENT, PROCFILES_NAMED_PARENT_FD or -errno.
 */
static int from_parent(const struct jt_proc *p, const struct jt_proc *parent,
		       uint64_t dev, const struct jt_ev_fopen *e, char *out,
		       size_t len)
{
	const char *known = parent ? files_raw_path(parent->fraw, dev, e->ino)
				   : NULL;
	char what[32];
	struct stat st;

	if (known)
		return util_strlcpy(out, known, len) < len
			       ? PROCFILES_NAMED_PARENT : -ENAMETOOLONG;
	/* its open not told yet (a pass made the parent's slot as the exec
	 * read it), or the parent not tracked by the agent */
	snprintf(what, sizeof(what), "fd/%d", e->fd);
	if (proc_link(p->ppid, what, out, len) ||
	    stat(out, &st) || st.st_dev != dev || st.st_ino != e->ino)
		return -ENOENT;
	return PROCFILES_NAMED_PARENT_FD;
}

/* A file p opened. */
int procfiles_open(struct jt_proc *p, const struct jt_proc *parent,
		   const struct jt_ev_fopen *e)
{
	uint64_t dev = procfiles_dev(e->dev);
	char path[JT_PATH_MAX];
	int named = -ENOENT, r;

	if (!p->fraw && !(p->fraw = calloc(1, sizeof(*p->fraw))))
		return -ENOMEM;
	if (e->flags & JT_FS_NAME_PARENT)
		named = from_parent(p, parent, dev, e, path, sizeof(path));
	if (named < 0)
		named = resolve(e, path, sizeof(path)) ? PROCFILES_UNNAMED
						       : PROCFILES_NAMED_OWN;
	r = files_raw_open(p->fraw, e->fd, dev, e->ino,
			   named != PROCFILES_UNNAMED ? path : NULL,
			   files_oflags(e->oflags, e->kind == JT_FK_DIR),
			   e->oflags, e->flags & JT_FS_INHERITED ? 0 : 1);
	return r < 0 ? r : named;
}

/* ... closed, or had open at its end. */
void procfiles_close(struct jt_proc *p, const struct jt_ev_fclose *e)
{
	struct files_close c = {
		.read_bytes = e->read_bytes, .write_bytes = e->write_bytes,
		.size_bytes = e->size, .size_known = e->flags & JT_FS_SIZE,
		.deleted = e->flags & JT_FS_DELETED,
		.mmap = e->flags & JT_FS_MMAP,
		.at_end = e->flags & JT_FS_AT_EXIT,
	};

	if (!p->fraw && !(p->fraw = calloc(1, sizeof(*p->fraw))))
		return;
	files_raw_close(p->fraw, e->fd, procfiles_dev(e->dev), e->ino, &c);
}

/* The kernel's counts of an exit event as the record's. */
static void counts_of(const struct jt_fcount *k, struct jt_files_count *c)
{
	c->count = k->a;
	c->opens = k->b;
	c->read_bytes = k->read_bytes;
	c->write_bytes = k->write_bytes;
}

/* The rules' verdict on each distinct path of fr, into *idx and *v. */
static int decide(const struct files_raw *fr, struct jt_proc *p,
		  struct rules *r, const struct proc_table *t, uint32_t **idx,
		  enum rules_file_verdict **v)
{
	size_t n = fr->n ? fr->n : 1, np;
	const char **paths = malloc(n * sizeof(*paths));
	struct rules_input in;

	*idx = malloc(n * sizeof(**idx));
	*v = malloc(n * sizeof(**v));
	if (!paths || !*idx || !*v) {
		free(paths);
		return -ENOMEM;
	}
	np = files_raw_paths(fr, paths, *idx);
	classify_input(t, p, &in);
	if (r)
		rules_files(r, &in, paths, np, *v);
	else
		for (size_t i = 0; i < np; i++)
			(*v)[i] = RULES_FILE_DROP;
	free(paths);
	return 0;
}

/*
 * Whether path is gone, as the agent sees it: no such file, and its
 * nearest folder that exists is on dev, the file's file system (else the
 * path may be a mount the agent does not see, such as a job's own /tmp).
 */
static bool path_gone(const char *path, uint64_t dev)
{
	char dir[JT_PATH_MAX];
	struct stat st;
	char *slash;

	if (!lstat(path, &st) || errno != ENOENT ||
	    util_strlcpy(dir, path, sizeof(dir)) >= sizeof(dir))
		return false;
	while ((slash = strrchr(dir, '/'))) {
		slash[slash == dir] = '\0';	/* "/x": "/" */
		if (!stat(dir, &st))
			return st.st_dev == dev;
		if (errno != ENOENT || slash == dir)
			return false;
	}
	return false;
}

/*
 * Mark deleted the files p wrote whose path is gone at its end: a scratch
 * file closed and then unlinked (by p or by another process before p
 * ended) is a temporary file too, not only one deleted while open.  A
 * path that names a file again (replaced, renamed over) is not gone.  A
 * file p had open at its end is deleted when the kernel saw no name left
 * then, whatever its path says: renamed while open is not deleted.  A
 * process in a container (another view of paths) is left as the kernel
 * saw it; so is a path the rules drop (idx, v: decide()'s).  Written is
 * created, truncated or given bytes: an fd open for writing that p did
 * not use (a job's log every tool inherits) costs no lstat.
 */
static void gone_at_end(struct jt_proc *p, const uint32_t *idx,
			const enum rules_file_verdict *v)
{
	const uint32_t wrote = JT_FF_CREATE | JT_FF_TRUNCATE;
	struct files_raw *fr = p->fraw;

	if (!fr || p->container[0])
		return;
	for (size_t i = 0; i < fr->n; i++) {
		struct files_ent *e = &fr->v[i];

		if (!e->f.path || idx[i] == UINT32_MAX ||
		    v[idx[i]] == RULES_FILE_DROP || e->f.deleted ||
		    e->open_at_end ||
		    (e->f.flags & JT_FF_DIRECTORY) ||
		    (!(e->f.flags & wrote) && !e->f.write_bytes))
			continue;
		e->f.deleted = path_gone(e->f.path, e->dev);
	}
}

/* p has ended: its record's files. */
int procfiles_finish(struct jt_proc *p, const struct jt_ev_exit *e,
		     struct rules *r, const struct proc_table *t, unsigned cap)
{
	static const struct files_raw none;
	const struct files_raw *fr = p->fraw ? p->fraw : &none;
	struct jt_files_count nonreg = { 0 }, lost = { 0 };
	enum rules_file_verdict *v = NULL;
	uint32_t *idx = NULL;
	int err;

	procfiles_free(p);
	if (e) {
		counts_of(&e->nonreg, &nonreg);
		counts_of(&e->lost, &lost);
	}
	p->files = calloc(1, sizeof(*p->files));
	err = p->files ? decide(fr, p, r, t, &idx, &v) : -ENOMEM;
	if (!err)
		gone_at_end(p, idx, v);
	if (!err)
		err = files_build(fr, idx, v, cap, &nonreg, &lost, p->files);
	free(idx);
	free(v);
	if (err)
		procfiles_free(p);
	return err;
}

/* Free p->files. */
void procfiles_free(struct jt_proc *p)
{
	files_free(p->files);
	free(p->files);
	p->files = NULL;
}

/* pos of /proc/PID/fdinfo/FD, or -1. */
static int64_t fd_pos(uint32_t pid, int fd)
{
	char path[64], line[128];
	long long pos = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/fdinfo/%d", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pos: %lld", &pos) == 1)
			break;
	fclose(f);
	return pos;
}

/* A candidate for progress: an fd open for reading only on a regular
 * file, still the file it opened. */
struct input {
	int fd;
	uint32_t ent;
	uint64_t size;
};

/* Largest first. */
static int by_size(const void *a, const void *b)
{
	const struct input *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* The inputs of p now (stat of /proc/PID/fd/N), into in; how many. */
static size_t inputs(const struct jt_proc *p, struct input *in, size_t max)
{
	const struct files_raw *fr = p->fraw;
	size_t n = 0;

	for (size_t i = 0; i < fr->nfds && n < max; i++) {
		const struct files_fd *d = &fr->fds[i];
		const struct files_ent *e = &fr->v[d->ent];
		char path[64];
		struct stat st;

		if ((d->oflags & O_ACCMODE) != O_RDONLY ||
		    (e->f.flags & JT_FF_DIRECTORY) || !e->f.path)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/fd/%d", p->pid, d->fd);
		if (stat(path, &st) || !S_ISREG(st.st_mode) ||
		    st.st_ino != e->ino || st.st_dev != e->dev)
			continue;
		in[n++] = (struct input){ d->fd, d->ent, (uint64_t)st.st_size };
	}
	return n;
}

#define PROGRESS_INPUTS 64

/*
 * Whether p's progress found at the pass before still holds at pass gen:
 * since then p used no CPU and read nothing (no read, lseek, open or
 * close moved an offset or changed its files), and no child of p was
 * alive at that pass or so far in this one (a child reads through the
 * open files it shares).  Fifty idle processes holding a file open cost
 * the agent a stat and an fdinfo read each a pass (perf: fd_pos 13 % of
 * its CPU at 1 s samples).  What is kept is kept whole: the size too, so
 * a file that grows while its reader waits shows the size of the pass
 * that last looked, until the reader moves again.
 */
static bool progress_holds(const struct jt_proc *p, unsigned gen)
{
	return p->progress.gen && p->progress.gen + 1 == gen &&
	       p->progress.child_gen + 1 < gen &&
	       p->c.cpu_user_s == p->prev.cpu_user_s &&
	       p->c.cpu_sys_s == p->prev.cpu_sys_s &&
	       p->c.rchar == p->prev.rchar;
}

/* p's progress at sample pass gen. */
void procfiles_progress(struct jt_proc *p, struct rules *r,
			const struct proc_table *t, unsigned gen)
{
	struct input in[PROGRESS_INPUTS];
	struct rules_input ri;
	size_t n;

	if (progress_holds(p, gen)) {
		p->progress.gen = gen;
		return;
	}
	p->progress.gen = gen;
	p->progress.set = false;
	if (!p->fraw || !p->fraw->nfds)
		return;
	n = inputs(p, in, PROGRESS_INPUTS);
	qsort(in, n, sizeof(*in), by_size);
	classify_input(t, p, &ri);	/* built once, asked only when needed */
	for (size_t i = 0; i < n; i++) {
		struct files_ent *e = &p->fraw->v[in[i].ent];
		const char *path = e->f.path;
		enum rules_file_verdict v = RULES_FILE_DROP;
		int64_t pos;

		/* asked once a file (until the process ends) */
		if (e->verdict < 0 && r)
			rules_files(r, &ri, &path, 1, &v);
		if (e->verdict < 0)
			e->verdict = (signed char)v;
		v = (enum rules_file_verdict)e->verdict;
		if (!files_kept_path(path, v, p->progress.path,
				     sizeof(p->progress.path)))
			continue;
		pos = fd_pos(p->pid, in[i].fd);
		if (pos < 0)
			continue;
		p->progress.offset_bytes = (uint64_t)pos;
		p->progress.size_bytes = in[i].size;
		p->progress.set = true;
		return;
	}
}

/* "read 62% of sample.fq.gz (3.1 of 5.0 GiB)". */
void procfiles_progress_text(const struct jt_progress *pg, char *buf,
			     size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double scale = 1, pct;
	unsigned u = 0;
	char name[sizeof(pg->path)];

	util_strlcpy(name, util_basename(pg->path), sizeof(name));
	if (!*name)
		util_strlcpy(name, pg->path, sizeof(name));

	while (u < 4 && pg->size_bytes >= scale * 1024)
		scale *= 1024, u++;
	pct = pg->size_bytes ? 100.0 * pg->offset_bytes / pg->size_bytes : 0;
	snprintf(buf, len, "read %.0f%% of %s (%.1f of %.1f %s)", pct,
		 util_printable(name),
		 pg->offset_bytes / scale, pg->size_bytes / scale, units[u]);
}
