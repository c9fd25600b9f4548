// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memwait FILE SECONDS - read FILE from start to end (each 1 MiB twice),
 * again and again until SECONDS have passed (one pass at least), then print this process's memory waits as delay accounting
 * keeps them, asked over netlink (TASKSTATS_CMD_GET, as the kernel's
 * tools/accounting/getdelays.c does), and its wall time:
 *   pid=P reclaim_s=R thrashing_s=T swapin_s=S compact_s=C wall_s=W
 * In a memory cgroup whose limit is below FILE's size, the page cache is
 * reclaimed and faulted back on every pass (FILE's cached pages are
 * dropped first: read again, they are charged to this process's cgroup).  The integration test compares
 * these with what the agent recorded.  Exit 0, 1 on an error, 2 on usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#define BUF_SIZE (1 << 20)

/* A generic netlink request: header, family header, room for attributes. */
struct req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[256];
};

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Send a request of cmd to family with one attribute; 0 or -errno. */
static int send_req(int fd, __u16 family, __u8 cmd, __u16 type,
		    const void *data, size_t len)
{
	struct req r = { 0 };
	struct nlattr *na = (struct nlattr *)r.attrs;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };

	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = family;
	r.n.nlmsg_flags = NLM_F_REQUEST;
	r.n.nlmsg_pid = getpid();
	r.g.cmd = cmd;
	r.g.version = 1;
	na->nla_type = type;
	na->nla_len = NLA_HDRLEN + len;
	memcpy((char *)na + NLA_HDRLEN, data, len);
	r.n.nlmsg_len += NLA_ALIGN(na->nla_len);
	if (sendto(fd, &r, r.n.nlmsg_len, 0, (struct sockaddr *)&to,
		   sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* The first attribute of type in [a, end), else NULL. */
static struct nlattr *find_attr(struct nlattr *a, char *end, __u16 type)
{
	while ((char *)a + NLA_HDRLEN <= end && a->nla_len >= NLA_HDRLEN) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

/* Receive one reply into buf; its attributes' start and end. */
static int recv_reply(int fd, char *buf, size_t size, struct nlattr **a,
		      char **end)
{
	struct nlmsghdr *n = (struct nlmsghdr *)buf;
	ssize_t got = recv(fd, buf, size, 0);

	if (got < 0)
		return -errno;
	if (!NLMSG_OK(n, (size_t)got))
		return -EBADMSG;
	if (n->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(n))->error;
	*a = (struct nlattr *)((char *)NLMSG_DATA(n) + GENL_HDRLEN);
	*end = buf + n->nlmsg_len;
	return 0;
}

/* This process's taskstats into *ts; 0 or -errno. */
static int taskstats_self(struct taskstats *ts)
{
	char buf[4096], *end;
	struct nlattr *a, *in;
	__u32 pid = getpid();
	__u16 family;
	size_t len;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	err = send_req(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
		       CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
		       sizeof(TASKSTATS_GENL_NAME));
	if (!err)
		err = recv_reply(fd, buf, sizeof(buf), &a, &end);
	if (!err && !(a = find_attr(a, end, CTRL_ATTR_FAMILY_ID)))
		err = -ENOENT;
	if (err)
		goto out;
	family = *(__u16 *)((char *)a + NLA_HDRLEN);
	err = send_req(fd, family, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_PID,
		       &pid, sizeof(pid));
	if (!err)
		err = recv_reply(fd, buf, sizeof(buf), &a, &end);
	if (!err && !(a = find_attr(a, end, TASKSTATS_TYPE_AGGR_PID)))
		err = -ENOENT;
	if (err)
		goto out;
	in = find_attr((struct nlattr *)((char *)a + NLA_HDRLEN),
		       (char *)a + a->nla_len, TASKSTATS_TYPE_STATS);
	if (!in) {
		err = -ENOENT;
		goto out;
	}
	len = (size_t)in->nla_len - NLA_HDRLEN;
	memset(ts, 0, sizeof(*ts));
	memcpy(ts, (char *)in + NLA_HDRLEN, len < sizeof(*ts) ? len : sizeof(*ts));
out:
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	struct taskstats ts;
	double wall0 = wall_now();
	char *buf;
	double seconds;
	int fd, err;

	if (argc != 3 || (seconds = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: memwait FILE SECONDS\n");
		return 2;
	}
	buf = malloc(BUF_SIZE);
	fd = open(argv[1], O_RDONLY);
	if (!buf || fd < 0) {
		fprintf(stderr, "memwait: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	/* pages cached before (written back first: dirty ones stay) are
	 * dropped, so that this process's cgroup is charged for them */
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	do {
		ssize_t n;

		off_t off = 0;

		/* each chunk read twice: its pages become active, the
		 * working set, so that their refaults count as thrashing */
		while ((n = pread(fd, buf, BUF_SIZE, off)) > 0 &&
		       (n = pread(fd, buf, BUF_SIZE, off)) > 0)
			off += n;
		if (n < 0) {
			fprintf(stderr, "memwait: read: %s\n", strerror(errno));
			return 1;
		}
	} while (wall_now() - wall0 < seconds);
	close(fd);
	err = taskstats_self(&ts);
	if (err) {
		fprintf(stderr, "memwait: taskstats: %s\n", strerror(-err));
		return 1;
	}
	printf("pid=%d reclaim_s=%.6f thrashing_s=%.6f swapin_s=%.6f"
	       " compact_s=%.6f wall_s=%.6f\n", (int)getpid(),
	       ts.freepages_delay_total / 1e9, ts.thrashing_delay_total / 1e9,
	       ts.swapin_delay_total / 1e9, ts.compact_delay_total / 1e9,
	       wall_now() - wall0);
	free(buf);
	return 0;
}
