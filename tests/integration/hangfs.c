// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hangfs.c - a FUSE file system of one file whose reads (or whose opens
 * after the first) never return, for test_smklog_stuck.sh: what a user
 * who mounts a FUSE file system can do to any process that reads their
 * file.  The request is taken from /dev/fuse and never answered, so the
 * reader waits in the kernel for ever (not even SIGKILL ends the wait)
 * until this server ends or the mount is aborted.
 *
 *   hangfs MOUNTPOINT NAME UID read|open
 *
 * The file NAME (mode 0644, owner UID, 64 KiB of a Snakemake job log)
 * is in the mount's root.  read: every read hangs.  open: the first open
 * succeeds (the owner's), every later one hangs; reads answer.  Mounted
 * with allow_other (root mounts it), single-threaded: a hung request
 * holds nothing, every other request is answered.  Prints "ready" once
 * mounted, then "open PID" and "read PID" for each open and read of the
 * file (the kernel's word for who asked); runs until killed (SIGTERM
 * unmounts).
 */
#define FUSE_USE_VERSION 34

#include <errno.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_INO 2
#define FILE_SIZE 65536

static const char *name;
static uid_t owner;
static int hang_read;		/* else: hang every open but the first */
static unsigned opens;
static char text[FILE_SIZE];

/* The attributes of inode ino into st; 0 or -ENOENT. */
static int attr_of(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (ino != FILE_INO)
		return -ENOENT;
	st->st_mode = S_IFREG | 0644;
	st->st_nlink = 1;
	st->st_uid = owner;
	st->st_size = FILE_SIZE;
	return 0;
}

/* Print what req asks and who asks it. */
static void seen(fuse_req_t req, const char *what)
{
	printf("%s %d\n", what, (int)fuse_req_ctx(req)->pid);
	fflush(stdout);
}

/* LOOKUP: only the one file. */
static void on_lookup(fuse_req_t req, fuse_ino_t parent, const char *n)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	if (parent != FUSE_ROOT_ID || strcmp(n, name)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = FILE_INO;
	e.attr_timeout = 3600;
	e.entry_timeout = 3600;
	attr_of(FILE_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

/* GETATTR. */
static void on_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (attr_of(ino, &st))
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_attr(req, &st, 3600);
}

/* OPEN: direct I/O, so that every read comes here. */
static void on_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FILE_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	seen(req, "open");
	if (!hang_read && ++opens > 1)
		return;		/* never answered */
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

/* READ: never answered, or the log's text. */
static void on_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	seen(req, "read");
	if (hang_read)
		return;		/* never answered */
	if (off >= FILE_SIZE)
		size = 0;
	else if (size > (size_t)(FILE_SIZE - off))
		size = (size_t)(FILE_SIZE - off);
	fuse_reply_buf(req, text + (off < FILE_SIZE ? off : 0), size);
}

/* RELEASE, FLUSH: nothing to do. */
static void on_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

/* Serve MOUNTPOINT until killed. */
int main(int argc, char **argv)
{
	static const struct fuse_lowlevel_ops ops = {
		.lookup = on_lookup,
		.getattr = on_getattr,
		.open = on_open,
		.read = on_read,
		.release = on_release,
		.flush = on_release,
	};
	char *fargv[] = { argv[0], "-o", "allow_other", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se;
	size_t len = 0;
	int rc;

	if (argc != 5 || (strcmp(argv[4], "read") && strcmp(argv[4], "open"))) {
		fprintf(stderr, "usage: hangfs MOUNTPOINT NAME UID read|open\n");
		return 2;
	}
	name = argv[2];
	owner = (uid_t)atoi(argv[3]);
	hang_read = !strcmp(argv[4], "read");
	/* a job header: read, it would name the job */
	while (len + 80 < sizeof(text))
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"rule hang:\n    output: out/h.txt\n"
					"    jobid: %zu\n\n", len);
	memset(text + len, '\n', sizeof(text) - len);
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_set_signal_handlers(se) ||
	    fuse_session_mount(se, argv[1])) {
		fprintf(stderr, "hangfs: cannot mount %s\n", argv[1]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	rc = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return rc ? 1 : 0;
}
