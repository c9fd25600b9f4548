// SPDX-License-Identifier: GPL-2.0-or-later
/* control.c - the agent's Unix control socket (server setup and client). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "log.h"
#include "util.h"

/* Fill a sockaddr_un for path; -ENAMETOOLONG if it does not fit. */
static int addr_of(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	util_strlcpy(sa->sun_path, path, sizeof(sa->sun_path));
	return 0;
}

/* Create, bind and listen; refuses if another agent answers on path. */
int control_listen(const char *path)
{
	struct sockaddr_un sa;
	int fd = -1, err, probe;

	err = addr_of(path, &sa);
	if (err) {
		log_error("control socket path too long: %s", path);
		return err;
	}
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			log_error("another jobtraced is already listening on %s",
				  path);
			return -EADDRINUSE;
		}
		close(probe);
	}
	unlink(path);	/* a stale socket from a crashed agent */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	if (chmod(path, 0666))
		goto fail;
	if (listen(fd, 64))
		goto fail;
	return fd;
fail:
	err = -errno;
	log_error("control socket %s: %s", path, strerror(-err));
	if (fd >= 0)
		close(fd);
	return err;
}

/* Wait for fd to become ready for events within the deadline. */
static int wait_fd(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/* Send one request and copy the whole reply to out. */
int control_request(const char *path, const char *request, int timeout_ms,
		    FILE *out)
{
	struct sockaddr_un sa;
	char buf[4096];
	int fd, err;
	ssize_t n;
	size_t len = strlen(request), off = 0;

	err = addr_of(path, &sa);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (err != -EINPROGRESS && err != -EAGAIN)
			goto out;
		err = wait_fd(fd, POLLOUT, timeout_ms);
		if (err)
			goto out;
	}
	while (off < len + 1) {
		const char *src = off < len ? request + off : "\n";
		size_t want = off < len ? len - off : 1;

		err = wait_fd(fd, POLLOUT, timeout_ms);
		if (err)
			goto out;
		n = send(fd, src, want, MSG_NOSIGNAL);
		if (n < 0) {
			err = -errno;
			if (err == -EAGAIN || err == -EINTR)
				continue;
			goto out;
		}
		off += n;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		err = wait_fd(fd, POLLIN, timeout_ms);
		if (err)
			goto out;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			err = -errno;
			if (err == -EAGAIN || err == -EINTR)
				continue;
			goto out;
		}
		if (n == 0)
			break;
		fwrite(buf, 1, n, out);
	}
	err = 0;
out:
	close(fd);
	return err;
}

/* Is s a word of [a-z_-] of 1..32 bytes? */
static bool is_word(const char *s, bool dash)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || s[n] == '_' ||
		      (dash && s[n] == '-')))
			return false;
	return n >= 1 && n <= 32;
}

/* Split a request line in place. */
int control_parse(char *line, struct control_req *req, const char **why)
{
	char *save = NULL, *tok;

	memset(req, 0, sizeof(*req));
	*why = NULL;
	tok = strtok_r(line, "\t", &save);
	if (!tok || !is_word(tok, true)) {
		*why = "malformed request: expected a command word";
		return -EINVAL;
	}
	req->cmd = tok;
	while ((tok = strtok_r(NULL, "\t", &save))) {
		char *eq = strchr(tok, '=');

		if (req->n == CONTROL_MAX_FIELDS) {
			*why = "too many fields";
			return -EINVAL;
		}
		if (!eq) {
			*why = "malformed field: expected key=value";
			return -EINVAL;
		}
		*eq = '\0';
		if (!is_word(tok, false)) {
			*why = "malformed field name";
			return -EINVAL;
		}
		if (strlen(eq + 1) > CONTROL_MAX_VALUE) {
			*why = "field value too long";
			return -EINVAL;
		}
		for (const unsigned char *c = (unsigned char *)eq + 1; *c; c++) {
			if (*c < 0x20 || *c == 0x7f) {
				*why = "control character in a field value";
				return -EINVAL;
			}
		}
		if (control_get(req, tok)) {
			*why = "a field is given twice";
			return -EINVAL;
		}
		req->f[req->n].key = tok;
		req->f[req->n].val = eq + 1;
		req->n++;
	}
	return 0;
}

/* The value of key, or NULL. */
const char *control_get(const struct control_req *req, const char *key)
{
	for (size_t i = 0; i < req->n; i++)
		if (!strcmp(req->f[i].key, key))
			return req->f[i].val;
	return NULL;
}
