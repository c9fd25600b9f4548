/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.h - a network sink's secrets, kept out of jobtrace.conf.
 *
 * jobtrace.conf is read by every user's `jobtrace` (the CLI finds the
 * socket and the store in it), so it holds no secret: a sink's
 * `credentials_file` names a file of its own, root's and readable by root
 * only, in a folder only root can change (/etc/jobtrace/credentials.d/,
 * say), with "key = value" lines (# comments allowed):
 *
 *   user = NAME            HTTP basic authentication (with password)
 *   password = SECRET
 *   header = Name: value   a request header (Authorization: Bearer ...),
 *                          as many as needed
 *   query = token=SECRET   appended to the URL's query string
 *
 * The agent reads it at start and at each reload and refuses a file or a
 * folder above it that another user could read or change (exit status 2,
 * or the running configuration kept); the sinks read it again when they
 * connect.  The CLI reads it only for `--source clickhouse`, never for
 * anything else, so a user's `jobtrace status` does not need it.
 */
#ifndef JOBTRACE_CREDS_H
#define JOBTRACE_CREDS_H

#include <stddef.h>

struct jt_config;

#define CREDS_MAX_BYTES 16384		/* the file's size, at most */
#define CREDS_MAX_HEADERS 16

struct creds {
	char *user;
	char *password;
	char *query;			/* "token=...", no '?' */
	char *headers[CREDS_MAX_HEADERS];
	size_t n_headers;
};

/*
 * Read the credentials file path (option names it in messages, as
 * "OPTION = \"PATH\"").  Refused: a link, not a regular file, not root's,
 * any permission for group or others, a folder above that is not root's
 * or that group or others may write (fsperm_check_dir()), a line that is
 * not "key = value" of the keys above (named FILE:LINE), a password
 * without a user.  Returns 0, or -errno with err saying why; c is empty
 * then.
 */
int creds_load(const char *option, const char *path, struct creds *c,
	       char *err, size_t errlen);
/* Wipe the secrets and free them; accepts a zeroed struct. */
void creds_free(struct creds *c);
/*
 * Check every sink's credentials file of cfg as creds_load() does (the
 * agent at start and reload).  Returns 0, or -EPERM (a file or folder
 * others may read or change), -EINVAL (a bad line) or -errno with err
 * naming the sink, the file and what is wrong.
 */
int creds_check_config(const struct jt_config *cfg, char *err,
		       size_t errlen);

#endif
