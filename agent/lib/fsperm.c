// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsperm.c - root-only folders and files for the agent's state.
 *
 * A folder another user can write to lets that user plant what the agent
 * then trusts: a link the store follows, a socket that answers the hooks.
 * Owner and mode are checked on every folder from the root down, as the
 * path is written (a link is as safe as the folder it sits in and its
 * owner) and as it resolves (the folders the files really land in).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsperm.h"
#include "log.h"
#include "util.h"

/* Name of uid for messages ("?" when unknown). */
static const char *user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	return pw ? pw->pw_name : "?";
}

/* Is one folder (or link) on the way acceptable?  self: the folder itself. */
static int check_one(const char *option, const char *path, const char *p,
		     const struct stat *st, bool self, char *err,
		     size_t errlen)
{
	const char *why = NULL;
	unsigned mode = st->st_mode & 07777;

	if (st->st_uid != 0 && st->st_uid != geteuid())
		why = "is owned by another user than root";
	else if (S_ISLNK(st->st_mode))
		return 0;
	else if (!S_ISDIR(st->st_mode))
		why = "is not a folder";
	else if ((mode & (S_IWGRP | S_IWOTH)) &&
		 (self || !(mode & S_ISVTX)))
		why = (mode & S_IWGRP) && (mode & S_IWOTH) ?
		      "is writable by group and others" :
		      (mode & S_IWGRP) ? "is writable by its group" :
		      "is writable by others";
	if (!why)
		return 0;
	util_seterr(err, errlen,
		    "%s = \"%s\": %s%s %s (owner uid %u (%s), mode %04o): the agent's folders and every folder above them must be root's and writable by root only",
		    option, path, S_ISLNK(st->st_mode) ? "the link " : "", p,
		    why, (unsigned)st->st_uid, user_name(st->st_uid), mode);
	return -EPERM;
}

/*
 * Check "/" and every prefix of p with lstat, from the root down; the last
 * one is the folder itself when self_last.  Stops at the first part that
 * does not exist; the longest existing prefix goes to last.
 */
static int check_chain(const char *option, const char *path, const char *p,
		       bool self_last, char *last, size_t lastlen, char *err,
		       size_t errlen)
{
	char buf[PATH_MAX];
	size_t n = util_strlcpy(buf, p, sizeof(buf));
	struct stat st;
	int rc;

	if (n >= sizeof(buf) || buf[0] != '/')
		return -EINVAL;
	if (lstat("/", &st))
		return -errno;
	rc = check_one(option, path, "/", &st, n == 1 && self_last, err,
		       errlen);
	if (rc)
		return rc;
	util_strlcpy(last, "/", lastlen);
	for (size_t i = 2; i <= n; i++) {
		char saved = buf[i];

		if (i < n && saved != '/')
			continue;
		buf[i] = '\0';
		if (lstat(buf, &st)) {
			if (errno == ENOENT)
				return 0;
			rc = -errno;
			util_seterr(err, errlen, "%s = \"%s\": %s: %s", option,
				    path, buf, strerror(-rc));
			return rc;
		}
		rc = check_one(option, path, buf, &st, i == n && self_last,
			       err, errlen);
		if (rc)
			return rc;
		util_strlcpy(last, buf, lastlen);
		buf[i] = saved;
	}
	return 0;
}

/* Check the folder path and every folder above it (see fsperm.h). */
int fsperm_check_dir(const char *option, const char *path, char *err,
		     size_t errlen)
{
	char last[PATH_MAX], real[PATH_MAX], unused[PATH_MAX];
	int rc;

	rc = check_chain(option, path, path, true, last, sizeof(last), err,
			 errlen);
	if (rc)
		return rc;
	if (!realpath(last, real)) {
		rc = -errno;
		util_seterr(err, errlen, "%s = \"%s\": %s: %s", option, path,
			    last, strerror(-rc));
		return rc;
	}
	if (!strcmp(real, last))
		return 0;
	/* where the links lead: the end is the folder itself only when the
	 * whole path exists */
	return check_chain(option, path, real, !strcmp(last, path), unused,
			   sizeof(unused), err, errlen);
}

/* mkdir -p, check, and narrow (see fsperm.h). */
int fsperm_make_dir(const char *option, const char *path, mode_t mode,
		    bool narrow, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	/* what exists is checked first: nothing is made in another's folder */
	rc = fsperm_check_dir(option, path, err, errlen);
	if (rc)
		return rc;
	rc = util_mkdir_p(path, mode);
	if (rc) {
		util_seterr(err, errlen, "%s = \"%s\": cannot create it: %s",
			    option, path, strerror(-rc));
		return rc;
	}
	rc = fsperm_check_dir(option, path, err, errlen);
	if (rc || !narrow)
		return rc;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		util_seterr(err, errlen, "%s = \"%s\": %s", option, path,
			    strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if ((st.st_mode & 07777 & ~mode) && fchmod(fd, mode) == 0)
		log_warn("%s = \"%s\" had mode %04o: narrowed to %04o (the store and the spool are root's only)",
			 option, path, (unsigned)(st.st_mode & 07777),
			 (unsigned)mode);
	close(fd);
	return 0;
}

/* Narrow one open file to 0600 when it is wider; checks type and owner. */
static int narrow_file(const char *option, const char *path, int fd,
		       char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		int rc = -errno;

		util_seterr(err, errlen, "%s = \"%s\": %s", option, path,
			    strerror(-rc));
		return rc;
	}
	if (!S_ISREG(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid())) {
		util_seterr(err, errlen,
			    "%s: %s is %s (owner uid %u (%s), mode %04o): the store must be a file of root's",
			    option, path,
			    S_ISREG(st.st_mode) ? "owned by another user than root" :
			    "not a regular file", (unsigned)st.st_uid,
			    user_name(st.st_uid),
			    (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if ((st.st_mode & 077) && fchmod(fd, 0600) == 0)
		log_warn("%s: %s had mode %04o: narrowed to 0600 (the store is root's only)",
			 option, path, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* Create or narrow a root-only file (see fsperm.h). */
int fsperm_private_file(const char *option, const char *path, char *err,
			size_t errlen)
{
	static const char *const sidecars[] = { "-wal", "-shm", "-journal" };
	char side[PATH_MAX + 16];
	int fd, rc;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		rc = -errno;
		util_seterr(err, errlen, "%s: %s: %s", option, path,
			    rc == -ELOOP ? "is a symbolic link; the store must be a file of root's" :
			    strerror(-rc));
		return rc == -ELOOP ? -EPERM : rc;
	}
	rc = narrow_file(option, path, fd, err, errlen);
	close(fd);
	/* SQLite gives its side files the mode of the database when it
	 * creates them; older ones keep what they had */
	for (size_t i = 0; !rc && i < sizeof(sidecars) / sizeof(*sidecars);
	     i++) {
		snprintf(side, sizeof(side), "%s%s", path, sidecars[i]);
		fd = open(side, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			util_seterr(err, errlen, "%s: %s: %s", option, side,
				    errno == ELOOP ? "is a symbolic link" :
				    strerror(errno));
			return -EPERM;
		}
		rc = narrow_file(option, side, fd, err, errlen);
		close(fd);
	}
	return rc;
}
