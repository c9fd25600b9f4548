/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsperm.h - the folders and files the agent keeps (state, spool, store,
 * control socket) are root's and only root can change what is in them or
 * where they lead.  Messages name the option and the path that is wrong.
 */
#ifndef JOBTRACE_FSPERM_H
#define JOBTRACE_FSPERM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Check the folder path and every folder above it, both as written and as
 * its links resolve: each is owned by root (or the agent's own user) and
 * not writable by group or others.  A folder above may be writable by all
 * when it is sticky (/tmp: nobody else can rename or remove root's entries
 * in it); the folder itself may not, sticky or not.  A link on the way must
 * be root's.  Parts that do not exist yet are not checked.  Returns 0,
 * -EPERM with err naming option, path, owner and mode, or -errno.
 */
int fsperm_check_dir(const char *option, const char *path, char *err,
		     size_t errlen);
/*
 * fsperm_check_dir() on what exists of path, mkdir -p path (missing folders
 * get mode), then fsperm_check_dir() again; with narrow, a mode wider than
 * mode is narrowed to it (logged).  Nothing is made under a folder that
 * is refused.
 */
int fsperm_make_dir(const char *option, const char *path, mode_t mode,
		    bool narrow, char *err, size_t errlen);
/*
 * Create the file path with mode 0600 without following a link, or narrow
 * an existing one (and its SQLite -wal, -shm, -journal) to 0600, logged.
 * Refuses a link, a non-regular file and a file that is not root's.
 */
int fsperm_private_file(const char *option, const char *path, char *err,
			size_t errlen);

#endif
