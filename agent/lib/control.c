// SPDX-License-Identifier: GPL-2.0-or-later
/* control.c - the agent's Unix control socket: server and client. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
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
	mode_t mask;

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
	/* the mode comes with the node bind makes: no chmod of a path that
	 * could be swapped for a link in between */
	mask = umask(0111);
	err = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(mask);
	if (err)
		goto fail_err;
	/* a burst of clients waits in the queue, not in connect() */
	if (listen(fd, SOMAXCONN))
		goto fail;
	return fd;
fail:
	err = -errno;
fail_err:
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

/* Connect to the agent at path and send one request line, our side then
 * shut for writing: the connected socket (non-blocking), or -errno. */
int control_open(const char *path, const char *request, int timeout_ms)
{
	struct sockaddr_un sa;
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
			goto fail;
		err = wait_fd(fd, POLLOUT, timeout_ms);
		if (err)
			goto fail;
	}
	while (off < len + 1) {
		const char *src = off < len ? request + off : "\n";
		size_t want = off < len ? len - off : 1;

		err = wait_fd(fd, POLLOUT, timeout_ms);
		if (err)
			goto fail;
		n = send(fd, src, want, MSG_NOSIGNAL);
		if (n < 0) {
			err = -errno;
			if (err == -EAGAIN || err == -EINTR)
				continue;
			/* refused before our request arrived: the agent's
			 * line saying why may wait to be read */
			if (err == -EPIPE || err == -ECONNRESET)
				break;
			goto fail;
		}
		off += n;
	}
	shutdown(fd, SHUT_WR);
	return fd;
fail:
	close(fd);
	return err;
}

/* Send one request and copy the whole reply to out. */
int control_request(const char *path, const char *request, int timeout_ms,
		    FILE *out)
{
	char buf[4096];
	int fd = control_open(path, request, timeout_ms), err;
	ssize_t n;

	if (fd < 0)
		return fd;
	for (size_t got = 0;; ) {
		err = wait_fd(fd, POLLIN, timeout_ms);
		if (err)
			goto out;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			err = -errno;
			if (err == -EAGAIN || err == -EINTR)
				continue;
			/* a reset after a whole reply (the agent closed
			 * without reading all we sent) ends it */
			if (err == -ECONNRESET && got)
				break;
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
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

/* Is a request line complete in l?  (see control.h) */
int control_line_take(struct control_line *l, bool eof)
{
	char *nl = memchr(l->buf, '\n', l->len);

	if (nl)
		*nl = '\0';
	else if (l->len >= sizeof(l->buf) - 1)
		return -EMSGSIZE;
	else if (!eof)
		return 0;
	else if (!l->len)
		return -ENODATA;
	else
		l->buf[l->len] = '\0';
	l->buf[strcspn(l->buf, "\r")] = '\0';
	return 1;
}

/* Read the peer of a connected Unix socket. */
int control_peer_get(int fd, struct control_peer *p)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);

	memset(p, 0, sizeof(*p));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l))
		return -errno;
	p->uid = cr.uid;
	p->gid = cr.gid;
	p->pid = cr.pid;
	l = sizeof(p->groups);
	/* more groups than fit (ERANGE): the primary group still counts */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &l) == 0)
		p->ngroups = l / sizeof(gid_t);
	return 0;
}

/* Is the peer in group gid, primary or supplementary? */
bool control_peer_in(const struct control_peer *p, gid_t gid)
{
	if (p->gid == gid)
		return true;
	for (size_t i = 0; i < p->ngroups; i++)
		if (p->groups[i] == gid)
			return true;
	return false;
}

/* Where a new peer goes in the table (see control.h). */
enum control_admit control_admit(const struct control_conn *conns,
				 size_t cap, const struct control_limits *lim,
				 uid_t uid, bool privileged, size_t *slot)
{
	size_t free_slot = SIZE_MAX, oldest_unpriv = SIZE_MAX, oldest = SIZE_MAX;
	unsigned mine = 0, unpriv = 0;

	for (size_t i = 0; i < cap; i++) {
		const struct control_conn *c = &conns[i];

		if (c->fd < 0) {
			if (free_slot == SIZE_MAX)
				free_slot = i;
			continue;
		}
		if (!c->privileged) {
			unpriv++;
			mine += c->peer.uid == uid;
			if (oldest_unpriv == SIZE_MAX ||
			    c->since_ns < conns[oldest_unpriv].since_ns)
				oldest_unpriv = i;
		}
		if (oldest == SIZE_MAX || c->since_ns < conns[oldest].since_ns)
			oldest = i;
	}
	if (!privileged && mine >= lim->per_user)
		return CONTROL_FULL_USER;
	if (!privileged && unpriv >= lim->total)
		return CONTROL_FULL;
	if (free_slot != SIZE_MAX) {
		*slot = free_slot;
		return CONTROL_ADMIT;
	}
	/* the reserve is taken too: only a privileged peer gets in */
	if (!privileged || oldest == SIZE_MAX)
		return CONTROL_FULL;
	*slot = oldest_unpriv != SIZE_MAX ? oldest_unpriv : oldest;
	return CONTROL_EVICT;
}

#define ACCEPT_BATCH 256		/* then the ring buffer gets its turn */
#define ACCEPT_PAUSE_NS 100000000ull	/* out of fds: retry after this */
#define REFUSAL_LOG_NS 10000000000ull	/* one log line per 10 s at most */
#define LISTENER UINT64_MAX		/* epoll data of the listening fd */

struct control_server {
	int lfd, epfd;
	struct control_ops ops;
	struct control_limits lim;
	struct control_conn *conns;
	size_t cap;			/* lim.total + CONTROL_RESERVE, grows */
	size_t nopen;			/* slots in use: none, nothing to expire */
	uint64_t paused_until_ns;	/* out of fds: listener out of the set */
	uint64_t refused;		/* since the last log line */
	uint64_t refusal_logged_ns;
};

/* Epoll data naming slot i in its current use. */
static uint64_t conn_key(const struct control_server *s, size_t i)
{
	return (uint64_t)s->conns[i].gen << 32 | i;
}

/* Best effort: one line to a peer that is about to be closed. */
static void say(int fd, const char *line)
{
	char sink[CONTROL_LINE_MAX];

	if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return;
	/* a request left unread would turn the close into a reset that
	 * hides this line from the client */
	(void)!recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
}

/* Free a slot; the fd is the caller's (closed or handed over). */
static void release(struct control_server *s, struct control_conn *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->in.len = 0;
	c->writing = false;
	c->fd = -1;
	c->gen++;
	s->nopen--;
}

/* Close a connection, first telling the peer why when line is set. */
static void conn_close(struct control_server *s, struct control_conn *c,
		       const char *line)
{
	int fd = c->fd;

	if (line)
		say(fd, line);
	release(s, c);
	close(fd);
}

/* Hand c's fd over without closing it (see control.h). */
int control_server_take(struct control_server *s, struct control_conn *c)
{
	int fd = c->fd;

	release(s, c);
	return fd;
}

/* Refuse a new peer: its error line, then close; logged at most once per
 * REFUSAL_LOG_NS. */
static void refuse(struct control_server *s, int fd, uid_t uid,
		   const char *line, const char *why)
{
	uint64_t now = util_now_ns(CLOCK_MONOTONIC);

	say(fd, line);
	close(fd);
	s->refused++;
	if (s->refusal_logged_ns &&
	    now - s->refusal_logged_ns < REFUSAL_LOG_NS)
		return;
	log_warn("control: connection of uid %u refused: %s (%llu refused since the last such line)",
		 (unsigned)uid, why, (unsigned long long)s->refused);
	s->refused = 0;
	s->refusal_logged_ns = now;
}

/* Give a fresh connection a slot, or refuse it with one error line. */
static void admit(struct control_server *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct control_peer peer;
	struct control_conn *c;
	char line[160];
	size_t slot;
	bool priv;

	if (control_peer_get(fd, &peer)) {
		close(fd);
		return;
	}
	priv = s->ops.privileged(s->ops.ctx, &peer);
	switch (control_admit(s->conns, s->cap, &s->lim, peer.uid, priv,
			      &slot)) {
	case CONTROL_FULL_USER:
		snprintf(line, sizeof(line),
			 "error too many connections from uid %u (agent.max_connections_per_user = %u)\n",
			 (unsigned)peer.uid, s->lim.per_user);
		refuse(s, fd, peer.uid, line,
		       "agent.max_connections_per_user reached");
		return;
	case CONTROL_FULL:
		snprintf(line, sizeof(line),
			 "error too many connections (agent.max_connections = %u for users without control rights)\n",
			 s->lim.total);
		refuse(s, fd, peer.uid, line, "agent.max_connections reached");
		return;
	case CONTROL_EVICT:
		log_debug("control: uid %u's connection closed for privileged uid %u",
			  (unsigned)s->conns[slot].peer.uid, (unsigned)peer.uid);
		conn_close(s, &s->conns[slot],
			   "error too many connections: closed for a privileged client\n");
		break;
	case CONTROL_ADMIT:
		break;
	}
	c = &s->conns[slot];
	c->fd = fd;
	c->peer = peer;
	c->privileged = priv;
	c->since_ns = util_now_ns(CLOCK_MONOTONIC);
	c->deadline_ns = c->since_ns + CONTROL_READ_MS * 1000000ull;
	ev.data.u64 = conn_key(s, slot);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		log_error("control: epoll: %s", strerror(errno));
		c->fd = -1;
		close(fd);
		return;
	}
	s->nopen++;
}

/* Stop accepting for a moment: out of fds, the listener stays readable. */
static void pause_accept(struct control_server *s, int err)
{
	log_warn("control: cannot accept a connection: %s (%zu open); pausing accepts for %llu ms",
		 strerror(err), s->nopen,
		 ACCEPT_PAUSE_NS / 1000000);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->lfd, NULL);
	s->paused_until_ns = util_now_ns(CLOCK_MONOTONIC) + ACCEPT_PAUSE_NS;
}

/* Accept what waits, up to ACCEPT_BATCH (the loop comes back for more). */
static void accept_some(struct control_server *s)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		int fd = accept4(s->lfd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd >= 0) {
			admit(s, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			pause_accept(s, errno);
		return;
	}
}

/* Send what the socket takes of c's reply; close when all is sent. */
static void send_some(struct control_server *s, struct control_conn *c)
{
	struct epoll_event ev = { .events = EPOLLOUT };

	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			ev.data.u64 = conn_key(s, (size_t)(c - s->conns));
			epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
			return;
		}
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	conn_close(s, c, NULL);
}

/* The request line of slot i is complete: have it answered, send it. */
static void handle(struct control_server *s, size_t i)
{
	struct control_conn *c = &s->conns[i];
	uint32_t gen = c->gen;
	char *reply = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&reply, &len);

	if (!out) {
		conn_close(s, c, "error out of memory\n");
		return;
	}
	s->ops.request(s->ops.ctx, s, c, c->in.buf, out);
	fclose(out);
	/* the handler may have grown the table (reload) or taken the fd */
	c = &s->conns[i];
	if (c->fd < 0 || c->gen != gen) {
		free(reply);
		return;
	}
	if (!reply) {
		conn_close(s, c, "error out of memory\n");
		return;
	}
	c->out = reply;
	c->out_len = len;
	c->writing = true;
	c->deadline_ns = util_now_ns(CLOCK_MONOTONIC) +
			 CONTROL_WRITE_MS * 1000000ull;
	send_some(s, c);
}

/* Read what arrived on slot i; handle the request once its line is whole. */
static void read_some(struct control_server *s, size_t i)
{
	struct control_conn *c = &s->conns[i];
	ssize_t n;
	int r;

	do
		n = recv(c->fd, c->in.buf + c->in.len,
			 sizeof(c->in.buf) - 1 - c->in.len, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno != EAGAIN)
			conn_close(s, c, NULL);
		return;
	}
	c->in.len += (size_t)n;
	r = control_line_take(&c->in, n == 0);
	if (r == 0)
		return;
	if (r == -ENODATA) {
		conn_close(s, c, NULL);
		return;
	}
	if (r == -EMSGSIZE) {
		conn_close(s, c, "error request line too long\n");
		return;
	}
	handle(s, i);
}

/* Accept, read, handle and reply to whatever is ready. */
void control_server_dispatch(struct control_server *s)
{
	struct epoll_event evs[64];
	int n = epoll_wait(s->epfd, evs, 64, 0);

	for (int k = 0; k < n; k++) {
		uint64_t key = evs[k].data.u64;
		size_t i = (size_t)(key & 0xffffffffu);

		if (key == LISTENER) {
			accept_some(s);
			continue;
		}
		/* an event for a slot closed (and maybe reused) meanwhile */
		if (i >= s->cap || s->conns[i].fd < 0 ||
		    s->conns[i].gen != (uint32_t)(key >> 32))
			continue;
		if (s->conns[i].writing)
			send_some(s, &s->conns[i]);
		else
			read_some(s, i);
	}
}

/* Watch the listening socket (again). */
static int watch_listener(struct control_server *s)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LISTENER };

	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev))
		return -errno;
	s->paused_until_ns = 0;
	return 0;
}

/* Close the connections past their deadline; resume paused accepts. */
void control_server_expire(struct control_server *s, uint64_t now_ns)
{
	/* every tick: the slots are not walked while none is open */
	for (size_t i = 0; s->nopen && i < s->cap; i++) {
		struct control_conn *c = &s->conns[i];

		if (c->fd < 0 || now_ns < c->deadline_ns)
			continue;
		log_debug("control: uid %u (pid %d): %s timed out",
			  (unsigned)c->peer.uid, (int)c->peer.pid,
			  c->writing ? "reply" : "request line");
		conn_close(s, c, c->writing ? NULL :
			   "error no request line within the time allowed\n");
	}
	if (s->paused_until_ns && now_ns >= s->paused_until_ns)
		watch_listener(s);
}

/* New bounds; the table only grows (open connections keep their slots). */
int control_server_set_limits(struct control_server *s,
			      const struct control_limits *lim)
{
	size_t cap = (size_t)lim->total + CONTROL_RESERVE;

	if (cap > s->cap) {
		struct control_conn *t = realloc(s->conns, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + s->cap, 0, (cap - s->cap) * sizeof(*t));
		for (size_t i = s->cap; i < cap; i++)
			t[i].fd = -1;
		s->conns = t;
		s->cap = cap;
	}
	s->lim = *lim;
	return 0;
}

/* A server over the listening socket lfd (owned from now on). */
int control_server_new(int lfd, const struct control_limits *lim,
		       const struct control_ops *ops,
		       struct control_server **out)
{
	struct control_server *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s) {
		close(lfd);
		return -ENOMEM;
	}
	s->lfd = lfd;
	s->ops = *ops;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		err = -errno;
		goto fail;
	}
	err = control_server_set_limits(s, lim);
	if (!err)
		err = watch_listener(s);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	log_error("control socket: %s", strerror(-err));
	control_server_free(s);
	return err;
}

/* The fd to watch for readability: the server's own epoll set. */
int control_server_fd(const struct control_server *s)
{
	return s->epfd;
}

/* Close every connection and the listening socket; accepts NULL. */
void control_server_free(struct control_server *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		if (s->conns[i].fd >= 0)
			conn_close(s, &s->conns[i], NULL);
	if (s->epfd >= 0)
		close(s->epfd);
	close(s->lfd);
	free(s->conns);
	free(s);
}
