// SPDX-License-Identifier: GPL-2.0-or-later
/* creds.c - a network sink's secrets, from a root-only file (creds.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "creds.h"
#include "fsperm.h"
#include "util.h"

/* Strip blanks at both ends of s in place. */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Wipe the secrets and free them. */
void creds_free(struct creds *c)
{
	char **all[] = { &c->user, &c->password, &c->query };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (*all[i])
			explicit_bzero(*all[i], strlen(*all[i]));
		free(*all[i]);
		*all[i] = NULL;
	}
	for (size_t i = 0; i < c->n_headers; i++) {
		explicit_bzero(c->headers[i], strlen(c->headers[i]));
		free(c->headers[i]);
		c->headers[i] = NULL;
	}
	c->n_headers = 0;
}

/* Open path for reading if it is root's regular file that only root may
 * read or change; its folders are checked by the caller. */
static int open_private(const char *option, const char *path, char *err,
			size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0) {
		int e = errno;

		util_seterr(err, errlen, "%s = \"%s\": %s%s", option, path,
			    e == ELOOP ? "is a symbolic link (name the file itself)" :
			    strerror(e), e == EACCES ? " (the agent reads it as root)" : "");
		return -e;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		util_seterr(err, errlen, "%s = \"%s\": not a regular file",
			    option, path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_uid != 0 || (st.st_mode & 077)) {
		util_seterr(err, errlen, "%s = \"%s\": owner uid %u, mode %04o: credentials must be root's and neither readable nor writable by group or others (chown root; chmod 600)",
			    option, path, (unsigned)st.st_uid,
			    (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Store one "key = value" of line lineno into c. */
static int take(const char *path, int lineno, const char *key, char *val,
		struct creds *c, char *err, size_t errlen)
{
	char **dst = NULL;

	for (const char *q = val; *q; q++)
		if ((unsigned char)*q < ' ' || *q == 0x7f) {
			util_seterr(err, errlen, "%s:%d: %s: a control character in the value",
				    path, lineno, key);
			return -EINVAL;
		}
	if (!strcmp(key, "user")) {
		dst = &c->user;
	} else if (!strcmp(key, "password")) {
		dst = &c->password;
	} else if (!strcmp(key, "query")) {
		if (*val == '?')
			val++;
		if (!*val || strpbrk(val, " #")) {
			util_seterr(err, errlen, "%s:%d: query: expected name=value[&...] without spaces or '#'",
				    path, lineno);
			return -EINVAL;
		}
		dst = &c->query;
	} else if (!strcmp(key, "header")) {
		const char *colon = strchr(val, ':');
		const char *blank = strpbrk(val, " \t");

		if (!colon || colon == val || (blank && blank < colon)) {
			util_seterr(err, errlen, "%s:%d: header: expected \"Name: value\"",
				    path, lineno);
			return -EINVAL;
		}
		if (c->n_headers == CREDS_MAX_HEADERS) {
			util_seterr(err, errlen, "%s:%d: header: at most %d headers",
				    path, lineno, CREDS_MAX_HEADERS);
			return -EINVAL;
		}
		dst = &c->headers[c->n_headers++];
	} else {
		util_seterr(err, errlen, "%s:%d: unknown key '%s' (user, password, header, query)",
			    path, lineno, key);
		return -EINVAL;
	}
	if (*dst) {
		explicit_bzero(*dst, strlen(*dst));
		free(*dst);
	}
	*dst = strdup(val);
	return *dst ? 0 : -ENOMEM;
}

/* Parse the text of a credentials file into c. */
static int parse(const char *path, char *buf, struct creds *c, char *err,
		 size_t errlen)
{
	char *line, *save = NULL;
	int lineno = 0, e;

	/* line by line, empty ones counted too */
	for (line = buf; line; line = save) {
		char *eq, *key;

		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			util_seterr(err, errlen, "%s:%d: expected key = value",
				    path, lineno);
			return -EINVAL;
		}
		*eq = '\0';
		e = take(path, lineno, trim(key), trim(eq + 1), c, err, errlen);
		if (e)
			return e;
	}
	if (c->password && !c->user) {
		util_seterr(err, errlen, "%s: a password without 'user = NAME'",
			    path);
		return -EINVAL;
	}
	return 0;
}

/* Read the credentials file path (see creds.h). */
int creds_load(const char *option, const char *path, struct creds *c,
	       char *err, size_t errlen)
{
	char dir[PATH_MAX], *buf = NULL, *slash;
	ssize_t n;
	int fd, e;

	memset(c, 0, sizeof(*c));
	if (util_strlcpy(dir, path, sizeof(dir)) >= sizeof(dir) ||
	    path[0] != '/') {
		util_seterr(err, errlen, "%s = \"%s\": not an absolute path",
			    option, path);
		return -EINVAL;
	}
	slash = strrchr(dir, '/');
	slash[slash == dir] = '\0';
	e = fsperm_check_dir(option, dir, err, errlen);
	if (e)
		return e;
	fd = open_private(option, path, err, errlen);
	if (fd < 0)
		return fd;
	buf = malloc(CREDS_MAX_BYTES + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, buf, CREDS_MAX_BYTES + 1);
	e = n < 0 ? -errno : 0;
	close(fd);
	if (e) {
		util_seterr(err, errlen, "%s: %s", path, strerror(-e));
	} else if (n > CREDS_MAX_BYTES) {
		util_seterr(err, errlen, "%s: longer than %d bytes", path,
			    CREDS_MAX_BYTES);
		e = -EFBIG;
	} else {
		buf[n] = '\0';
		e = parse(path, buf, c, err, errlen);
	}
	explicit_bzero(buf, CREDS_MAX_BYTES + 1);
	free(buf);
	if (e)
		creds_free(c);
	return e;
}

/* Check every sink's credentials file of cfg. */
int creds_check_config(const struct jt_config *cfg, char *err,
		       size_t errlen)
{
	for (size_t i = 0; i < cfg->n_sinks; i++) {
		const struct jt_sink_config *s = &cfg->sinks[i];
		char option[96];
		struct creds c;
		int e;

		if (!s->credentials_file || !*s->credentials_file)
			continue;
		snprintf(option, sizeof(option), "sink \"%s\" (line %d): credentials_file",
			 s->name, s->line);
		e = creds_load(option, s->credentials_file, &c, err, errlen);
		if (e)
			return e;
		creds_free(&c);
	}
	return 0;
}
