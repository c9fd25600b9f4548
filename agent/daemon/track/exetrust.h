/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * exetrust.h - is a program's name root's choice?  The rules' p.exe_system.
 *
 * System noise is excluded by the program's name (telegraf, journald, sshd),
 * and a user can give any file any name.  A name is root's when the file it
 * names is root's: a regular file owned by root, in folders owned by root up
 * to the root, none of them writable by others (nor by a group other than
 * root's) but for sticky folders above the file's own (/tmp: others cannot
 * rename root's entries), on a mount that honours setuid bits.  The kernel side decides it
 * for the file an exec runs (JT_EF_EXE_ROOT, events.h); this module binds
 * that to the name exec was given, and checks in user space what the kernel
 * cannot see: a #! script, whose file the kernel has swapped for its
 * interpreter's by the time the exec is reported, and a process found
 * already running.
 */
#ifndef JOBTRACE_EXETRUST_H
#define JOBTRACE_EXETRUST_H

#include <stdbool.h>

#include "proc.h"

/*
 * Is name (the kernel's name of the file run) the last part of path (the
 * path given to exec), and path free of "." and ".." parts (which could
 * make another folder's name seem to hold the file)?
 */
bool exetrust_named(const char *path, const char *name);
/*
 * Does the absolute path, resolved inside the folder rootfd (a process's
 * root) without following a last link, name a file that is root's, in
 * folders that are root's (see above)?  False for anything else, errors
 * included.
 */
bool exetrust_path(int rootfd, const char *path);
/*
 * The check for a process marked JT_PS_EXE_CHECK: its exe as it sees it
 * (/proc/PID/root), or, once it is gone, as the agent sees it unless it ran
 * in a container.  Not root's when it runs in mounts of its own outside a
 * container (unshare -m): a user who mounted a file over root's path there
 * may have unmounted it since the exec.  A process marked JT_PS_EXE_SYSTEM
 * is root's without looking; any other is not.
 */
bool exetrust_proc(const struct jt_proc *p);

#endif
