// SPDX-License-Identifier: GPL-2.0-or-later
/* exetrust.c - is a program's name root's choice?  (see exetrust.h) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events.h"
#include "exetrust.h"
#include "jobtie.h"
#include "util.h"

/* Is name the last part of path, with no "." or ".." part in path? */
bool exetrust_named(const char *path, const char *name)
{
	const char *s = path;

	if (!*name || strcmp(util_basename(path), name))
		return false;
	while (*s) {
		size_t n = strcspn(s, "/");

		if ((n == 1 && s[0] == '.') || (n == 2 && !strncmp(s, "..", 2)))
			return false;
		s += n;
		s += *s == '/';
	}
	return true;
}

/* Is st root's, of type fmt (the kernel side's inode_root(): with sticky,
 * a sticky folder may be writable by all)? */
static bool stat_root(const struct stat *st, mode_t fmt, bool sticky)
{
	if ((st->st_mode & S_IFMT) != fmt || st->st_uid != 0)
		return false;
	if (sticky && (st->st_mode & S_ISVTX))
		return true;
	if (st->st_mode & S_IWOTH)
		return false;
	return !(st->st_mode & S_IWGRP) || st->st_gid == 0;
}

/* openat2 inside rootfd (no wrapper in glibc 2.36); -1 with errno. */
static int open_in(int rootfd, const char *path, uint64_t flags)
{
	struct open_how how = {
		.flags = flags | O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

/* Are the folder dfd and every folder above it root's?  Closes dfd. */
static bool folders_root(int dfd)
{
	struct stat st, up_st;
	bool ok = false;

	if (fstat(dfd, &st))
		goto out;
	for (int i = 0; i <= JT_EXE_DEPTH; i++) {
		int up;

		/* the file's own folder never sticky (see the kernel side) */
		if (!stat_root(&st, S_IFDIR, i > 0))
			goto out;
		up = openat(dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0)
			goto out;
		close(dfd);
		dfd = up;
		if (fstat(dfd, &up_st))
			goto out;
		if (up_st.st_dev == st.st_dev && up_st.st_ino == st.st_ino) {
			ok = true;	/* ".." of the root is the root */
			goto out;
		}
		st = up_st;
	}
out:
	close(dfd);
	return ok;
}

/* Does path, inside rootfd, name a root's file in root's folders? */
bool exetrust_path(int rootfd, const char *path)
{
	char dir[JT_FILENAME_LEN];
	struct stat st, in_dir;
	struct statvfs vfs;
	const char *base = util_basename(path);
	int fd, dfd;
	bool ok;

	if (path[0] != '/' || !exetrust_named(path, base) ||
	    (size_t)(base - path) >= sizeof(dir))
		return false;
	fd = open_in(rootfd, path, O_NOFOLLOW);
	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && stat_root(&st, S_IFREG, false) &&
	     !fstatvfs(fd, &vfs) && !(vfs.f_flag & ST_NOSUID);
	close(fd);
	if (!ok)
		return false;
	memcpy(dir, path, (size_t)(base - path));
	dir[base - path] = '\0';
	dfd = open_in(rootfd, dir, O_DIRECTORY);
	if (dfd < 0)
		return false;
	/* the folder that holds it, not one a change made meanwhile */
	if (fstatat(dfd, base, &in_dir, AT_SYMLINK_NOFOLLOW) ||
	    in_dir.st_dev != st.st_dev || in_dir.st_ino != st.st_ino) {
		close(dfd);
		return false;
	}
	return folders_root(dfd);
}

/* Does the folder pfd (/proc/PID) name a process in the agent's own mount
 * namespace? */
static bool own_mounts(int pfd)
{
	struct stat mine, its;

	return !stat("/proc/self/ns/mnt", &mine) &&
	       !fstatat(pfd, "ns/mnt", &its, 0) && mine.st_dev == its.st_dev &&
	       mine.st_ino == its.st_ino;
}

/*
 * The root folder of the live process p, -1 when it is gone, -2 when it
 * runs in mounts of its own outside a container (unshare: its user may
 * have changed what the path named since the exec).
 */
static int proc_root(const struct jt_proc *p)
{
	char path[64], buf[1024];
	uint64_t ticks, t;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int pfd, sfd, rfd = -1;

	snprintf(path, sizeof(path), "/proc/%" PRIu32, p->pid);
	pfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	/* pfd stays this process's even if the pid is reused now */
	sfd = openat(pfd, "stat", O_RDONLY | O_CLOEXEC);
	n = sfd < 0 ? -1 : read(sfd, buf, sizeof(buf) - 1);
	if (sfd >= 0)
		close(sfd);
	if (n > 0 && hz > 0) {
		buf[n] = '\0';
		t = p->start_ns / (1000000000ull / (uint64_t)hz);
		if (!jobtie_parse_stat(buf, &ticks) && t + 1 >= ticks &&
		    t <= ticks + 1)
			rfd = !p->container[0] && !own_mounts(pfd) ? -2 :
			      openat(pfd, "root", O_PATH | O_DIRECTORY |
				     O_CLOEXEC);
	}
	close(pfd);
	return rfd;
}

/* p.exe_system for the rules (see exetrust.h). */
bool exetrust_proc(const struct jt_proc *p)
{
	int rfd;
	bool ok;

	if (p->state & JT_PS_EXE_SYSTEM)
		return true;
	if (!(p->state & JT_PS_EXE_CHECK) || !p->exe ||
	    (p->state & JT_PS_EXE_TRUNC))
		return false;
	rfd = proc_root(p);
	/* gone: the agent's own view holds only outside containers */
	if (rfd == -1 && !p->container[0])
		rfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return false;
	ok = exetrust_path(rfd, p->exe);
	close(rfd);
	return ok;
}
