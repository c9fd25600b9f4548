// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * netio BYTES - send BYTES over a real TCP connection on loopback and
 * receive them in the same process: a thread accepts on 127.0.0.1 port 0
 * (the kernel picks a free port) and reads until end of stream, while the
 * main thread connects and writes.  A socketpair would not go through the
 * TCP send/receive paths a tracer hooks, hence the real socket.  Prints
 *   pid=P tx_bytes=T rx_bytes=R
 * and exits 1 unless both equal BYTES.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (64 * 1024)

struct receiver {
	int listen_fd;
	unsigned long long got;
	int err;
};

/* Receiver thread: accept one connection and count bytes until EOF. */
static void *receive(void *arg)
{
	struct receiver *r = arg;
	static char buf[CHUNK];
	int fd;

	fd = accept(r->listen_fd, NULL, NULL);
	if (fd < 0) {
		r->err = errno;
		return NULL;
	}
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->err = errno;
			break;
		}
		if (n == 0)
			break;
		r->got += n;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t salen = sizeof(sa);
	struct receiver r = { .listen_fd = -1 };
	unsigned long long want, sent = 0;
	pthread_t tid;
	char *end;
	int fd, err;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: netio BYTES [DELAY_MS]\n");
		return 2;
	}
	/* an optional pause first, e.g. to let a tracer classify us */
	if (argc == 3)
		usleep(1000 * atoi(argv[2]));
	errno = 0;
	want = strtoull(argv[1], &end, 10);
	if (errno || *end || !*argv[1] || *argv[1] == '-') {
		fprintf(stderr, "netio: bad BYTES '%s'\n", argv[1]);
		return 2;
	}
	memset(buf, 0x3c, sizeof(buf));

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (r.listen_fd < 0 ||
	    bind(r.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(r.listen_fd, 1) < 0 ||
	    getsockname(r.listen_fd, (struct sockaddr *)&sa, &salen) < 0) {
		perror("netio: listen socket");
		return 1;
	}
	err = pthread_create(&tid, NULL, receive, &r);
	if (err) {
		fprintf(stderr, "netio: pthread_create: %s\n", strerror(err));
		return 1;
	}

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("netio: connect");
		return 1;
	}
	while (sent < want) {
		size_t n = want - sent < CHUNK ? want - sent : CHUNK;
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			perror("netio: send");
			return 1;
		}
		sent += w;
	}
	shutdown(fd, SHUT_WR);
	pthread_join(tid, NULL);
	close(fd);
	close(r.listen_fd);
	if (r.err)
		fprintf(stderr, "netio: receive: %s\n", strerror(r.err));

	printf("pid=%d tx_bytes=%llu rx_bytes=%llu\n", (int)getpid(), sent,
	       r.got);
	return sent == want && r.got == want ? 0 : 1;
}
