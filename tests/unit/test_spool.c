// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_spool.c - the durable spool: order and integrity of what readers
 * get back, acknowledged positions across reopen, torn tails cut, space
 * released only after every sink acknowledged, and the size limit's drops
 * counted exactly.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include "test_files.h"

#include "log.h"
#include "spool.h"

static char dir[64];

/* A fresh spool directory per test. */
static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/jt-spool-test.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

/* Remove the directory and everything in it. */
static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Record number i: distinct text of a length that varies with i. */
static size_t make_rec(uint64_t i, char *buf, size_t len)
{
	int n = snprintf(buf, len, "{\"type\":\"process\",\"id\":\"r%llu\",\"pad\":\"",
			 (unsigned long long)i);

	for (uint64_t k = 0; k < i % 97 && (size_t)n < len - 3; k++)
		buf[n++] = 'a' + (char)(k % 26);
	buf[n++] = '"';
	buf[n++] = '}';
	return (size_t)n;
}

static struct spool *open_spool(const char *const *names, size_t n,
				uint64_t max, uint64_t seg)
{
	struct spool_opts o = { .dir = dir, .max_bytes = max,
				.segment_bytes = seg };
	struct spool *s = NULL;
	char err[256];

	assert_int_equal(spool_open(&o, names, n, &s, err, sizeof(err)), 0);
	return s;
}

static void append_range(struct spool *s, uint64_t from, uint64_t to)
{
	char buf[256];

	for (uint64_t i = from; i < to; i++)
		assert_int_equal(spool_append(s, buf, make_rec(i, buf,
							       sizeof(buf))), 0);
}

/* Reader check: records come back in order, byte for byte. */
struct expect {
	uint64_t next;		/* record number expected next */
	uint64_t got;
	uint64_t stop_after;	/* refuse once this many were taken */
};

static int check_cb(void *arg, const char *rec, size_t len)
{
	struct expect *e = arg;
	char buf[256];
	size_t n = make_rec(e->next, buf, sizeof(buf));

	if (e->stop_after && e->got >= e->stop_after)
		return 1;
	assert_int_equal(len, n);
	assert_memory_equal(rec, buf, n);
	e->next++;
	e->got++;
	return 0;
}

/* Read everything visible to reader r, checking it starts at rec number. */
static uint64_t read_all(struct spool_reader *r, uint64_t from)
{
	struct expect e = { .next = from };
	uint64_t first;
	int n;

	while ((n = spool_read(r, 1000, 1 << 20, check_cb, &e, &first)) > 0)
		;
	assert_true(n >= 0);
	return e.got;
}

static unsigned count_segments(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".seg"))
			n++;
	closedir(d);
	return n;
}

/* Appended records are invisible until synced, then read back in order. */
static void test_sync_visibility_and_order(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 20, 128 << 10);
	struct spool_reader *r;
	struct spool_stats st;

	(void)state;
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	append_range(s, 0, 100);
	assert_int_equal(read_all(r, 0), 0);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(read_all(r, 0), 100);
	/* a rotation syncs what it closes: those become visible too */
	append_range(s, 100, 5000);
	assert_true(read_all(r, 100) < 4900);
	assert_int_equal(spool_sync(s), 0);
	spool_reader_rewind(r);
	assert_int_equal(read_all(r, 0), 5000);
	spool_get_stats(s, &st);
	assert_int_equal(st.next_seq, 5000);
	assert_int_equal(st.durable_seq, 5000);
	assert_true(st.segments > 1);	/* 128 KiB segments rotated */
	spool_reader_close(r);
	spool_close(s);
}

/* A sink resumes at its acknowledged position after a reopen. */
static void test_ack_survives_reopen(void **state)
{
	const char *names[] = { "a", "b" };
	struct spool *s = open_spool(names, 2, 64 << 20, 64 << 10);
	struct spool_reader *r;
	struct spool_sink_stats ks;

	(void)state;
	append_range(s, 0, 3000);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(spool_ack(s, 0, 1234), 0);
	assert_int_equal(spool_ack(s, 1, 2999), 0);
	assert_int_equal(spool_ack(s, 1, 10), 0);	/* never goes back */
	spool_close(s);

	s = open_spool(names, 2, 64 << 20, 64 << 10);
	spool_get_sink_stats(s, 0, &ks);
	assert_int_equal(ks.ack_seq, 1234);
	spool_get_sink_stats(s, 1, &ks);
	assert_int_equal(ks.ack_seq, 2999);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(read_all(r, 1234), 3000 - 1234);
	spool_reader_close(r);
	/* numbering continues */
	append_range(s, 3000, 3100);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(spool_reader_open(s, 1, &r), 0);
	assert_int_equal(read_all(r, 2999), 101);
	spool_reader_close(r);
	spool_close(s);
}

/*
 * An ack file with a negative or malformed count is not read as 2^64-1:
 * the counter starts from 0, a bad ack from the oldest record, and the
 * message names the file and line.
 */
static void test_ack_file_strict(void **state)
{
	const char *names[] = { "a", "b" };
	struct spool *s = open_spool(names, 2, 64 << 20, 64 << 10);
	struct spool_sink_stats ks;
	char want[160];

	(void)state;
	append_range(s, 0, 100);
	spool_close(s);
	test_write_file(dir, "a.ack", "ack 40\ndropped -1\ncorrupt 7\n");
	test_write_file(dir, "b.ack", "ack -1\n\ndropped 3\ncorrupt 12x\n");

	s = open_spool(names, 2, 64 << 20, 64 << 10);
	spool_get_sink_stats(s, 0, &ks);
	assert_int_equal(ks.ack_seq, 40);
	assert_int_equal(ks.dropped, 0);
	assert_int_equal(ks.corrupt, 7);
	spool_get_sink_stats(s, 1, &ks);
	assert_int_equal(ks.ack_seq, 0);
	assert_int_equal(ks.dropped, 3);
	assert_int_equal(ks.corrupt, 0);
	/* the last message: b.ack's fourth line (the third is empty), by
	 * its key and length, not its bytes */
	snprintf(want, sizeof(want), "spool %s/b.ack:4: corrupt line of 11 bytes", dir);
	assert_non_null(strstr(log_last_error(), want));
	spool_close(s);

	/* what the agent wrote back reads cleanly */
	s = open_spool(names, 2, 64 << 20, 64 << 10);
	spool_get_sink_stats(s, 0, &ks);
	assert_int_equal(ks.dropped, 0);
	assert_int_equal(ks.corrupt, 7);
	spool_close(s);

	/* a bad line undoes a good one before it, as the message says */
	test_write_file(dir, "a.ack", "ack 50\ncorrupt 5\nack 5x\ncorrupt -5\n");
	s = open_spool(names, 2, 64 << 20, 64 << 10);
	spool_get_sink_stats(s, 0, &ks);
	assert_int_equal(ks.ack_seq, 0);
	assert_int_equal(ks.corrupt, 0);
	spool_close(s);
}

/*
 * An .ack is never read through a link, nor from a FIFO (which would
 * block), and nothing of what a bad file holds reaches the log: a line
 * of /etc/shadow behind a link, a secret on a line that does not read.
 * Each is counted; the sink reads again from the oldest record.
 */
/* Open the spool of names; sink number sink acknowledged ack, one .ack
 * was not read (ack_bad), and the last error has want and no "CANARY". */
static void expect_ack(const char *const *names, unsigned sink, uint64_t ack,
		       const char *want)
{
	struct spool *s = open_spool(names, 2, 64 << 20, 64 << 10);
	struct spool_sink_stats ks;
	struct spool_stats st;

	spool_get_sink_stats(s, sink, &ks);
	assert_int_equal(ks.ack_seq, ack);
	spool_get_stats(s, &st);
	assert_int_equal(st.ack_bad, 1);
	assert_non_null(strstr(log_last_error(), want));
	assert_null(strstr(log_last_error(), "CANARY"));
	spool_close(s);
}

static void test_ack_not_followed(void **state)
{
	const char *names[] = { "a", "b" };
	struct spool *s = open_spool(names, 2, 64 << 20, 64 << 10);
	char path[128], *text;

	(void)state;
	append_range(s, 0, 100);
	spool_close(s);
	test_write_file(dir, "shadow", "ack 40\nroot:$6$CANARY-HASH:19000:0:99999:7:::\n");
	snprintf(path, sizeof(path), "%s/a.ack", dir);
	unlink(path);
	assert_int_equal(symlink("shadow", path), 0);
	/* not the link's 40: from the oldest */
	expect_ack(names, 0, 0, "a.ack: not a regular file");
	/* the agent's own file replaced the link, not what it pointed to */
	snprintf(path, sizeof(path), "%s/shadow", dir);
	text = test_read_file(path, NULL);
	assert_non_null(strstr(text, "CANARY"));
	free(text);

	/* the good line holds */
	test_write_file(dir, "b.ack", "ack 40\npassword=CANARY-2 is not a count\n");
	expect_ack(names, 1, 40, "b.ack:2: a line of 32 bytes");

	/* a FIFO does not block the open */
	snprintf(path, sizeof(path), "%s/a.ack", dir);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_ack(names, 0, 0, "a.ack: not a regular file");
}

/*
 * A folder where the next segment goes does not stop the spool from
 * opening: it is moved aside (and a folder with a segment's name is not
 * read), counted.
 */
static void test_folder_for_segment(void **state)
{
	const char *names[] = { "a" };
	struct spool_reader *r;
	struct spool_stats st;
	struct spool *s;
	char path[128];
	struct stat sb;

	(void)state;
	snprintf(path, sizeof(path), "%s/%016x.seg", dir, 0);
	assert_int_equal(mkdir(path, 0700), 0);
	test_write_file(path, "inside", "x");
	s = open_spool(names, 1, 64 << 20, 1 << 20);
	spool_get_stats(s, &st);
	assert_int_equal(st.foreign, 2);	/* seen, then moved */
	snprintf(path, sizeof(path), "%s/%016x.seg.foreign/inside", dir, 0);
	assert_int_equal(stat(path, &sb), 0);	/* kept, aside */
	append_range(s, 0, 100);
	spool_close(s);

	/* the next segment's name, on an open spool with records */
	snprintf(path, sizeof(path), "%s/%016x.seg", dir, 100);
	assert_int_equal(mkdir(path, 0700), 0);
	s = open_spool(names, 1, 64 << 20, 1 << 20);
	spool_get_stats(s, &st);
	assert_int_equal(st.foreign, 2);
	assert_int_equal(st.next_seq, 100);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(read_all(r, 0), 100);
	spool_reader_close(r);
	spool_close(s);
}

/*
 * A sink whose store was lost goes back to the oldest record the spool
 * still has: the acknowledged ones in the segments not yet released.
 */
static void test_reread(void **state)
{
	const char *names[] = { "a", "b" };
	struct spool *s = open_spool(names, 2, 64 << 20, 64 << 10);
	struct spool_sink_stats ks;
	struct spool_reader *r;
	struct spool_stats st;

	(void)state;
	append_range(s, 0, 3000);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(spool_ack(s, 0, 3000), 0);
	assert_int_equal(spool_ack(s, 1, 3000), 0);
	assert_true(spool_maintain(s) > 0);
	spool_get_stats(s, &st);
	assert_true(st.first_seq > 0 && st.first_seq < 3000);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(read_all(r, 3000), 0);
	assert_int_equal(spool_reread(s, 0), 3000 - st.first_seq);
	assert_int_equal(spool_reread(s, 0), 0);
	spool_get_sink_stats(s, 0, &ks);
	assert_int_equal(ks.ack_seq, st.first_seq);
	spool_get_sink_stats(s, 1, &ks);
	assert_int_equal(ks.ack_seq, 3000);	/* the other sink stays */
	spool_reader_rewind(r);
	assert_int_equal(read_all(r, st.first_seq), 3000 - st.first_seq);
	spool_reader_close(r);
	spool_close(s);

	/* persisted: a restart reads them again too */
	s = open_spool(names, 2, 64 << 20, 64 << 10);
	spool_get_sink_stats(s, 0, &ks);
	assert_int_equal(ks.ack_seq, st.first_seq);
	spool_close(s);
}

/* A rewind after a failed batch returns the same records again. */
static void test_rewind(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 20, 64 << 10);
	struct spool_reader *r;
	struct expect e = { 0 };
	uint64_t first;

	(void)state;
	append_range(s, 0, 500);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(spool_read(r, 200, 1 << 20, check_cb, &e, &first),
			 200);
	assert_int_equal(first, 0);
	spool_ack(s, 0, 100);
	spool_reader_rewind(r);
	assert_int_equal(read_all(r, 100), 400);
	/* a callback that refuses stops before the record */
	spool_reader_rewind(r);
	e = (struct expect){ .next = 100, .stop_after = 7 };
	assert_int_equal(spool_read(r, 1000, 1 << 20, check_cb, &e, &first),
			 7);
	assert_int_equal(first, 100);
	assert_int_equal(read_all(r, 107), 393);
	spool_reader_close(r);
	spool_close(s);
}

/* The newest segment file of the spool directory. */
static void last_segment(char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char best[64] = "";

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".seg") && strcmp(e->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
	closedir(d);
	assert_true(best[0]);
	snprintf(out, len, "%s/%s", dir, best);
}

/* A torn tail (half a frame, or garbage) is cut; the rest stays. */
static void test_torn_tail_cut(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 20, 16 << 20);
	struct spool_reader *r;
	struct spool_stats st;
	char path[128], junk[300];
	struct stat sb;
	int fd;

	(void)state;
	append_range(s, 0, 1000);
	spool_close(s);

	/* a write torn in the middle of record 1000's frame */
	last_segment(path, sizeof(path));
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	memset(junk, 'x', sizeof(junk));
	junk[0] = 100;	/* length 100 ... */
	junk[1] = junk[2] = junk[3] = 0;
	assert_int_equal(write(fd, junk, 50), 50);	/* ... half there */
	close(fd);
	assert_int_equal(stat(path, &sb), 0);

	s = open_spool(names, 1, 64 << 20, 16 << 20);
	spool_get_stats(s, &st);
	assert_int_equal(st.next_seq, 1000);
	assert_int_equal(st.tail_cut_bytes, 50);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(read_all(r, 0), 1000);
	append_range(s, 1000, 1100);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(read_all(r, 1000), 100);
	spool_reader_close(r);
	spool_close(s);
}

/* A flipped byte inside the last frames: cut at the first bad frame. */
static void test_bad_checksum_cut(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 20, 16 << 20);
	struct spool_reader *r;
	struct spool_stats st;
	char path[128], c;
	struct stat sb;
	int fd;

	(void)state;
	append_range(s, 0, 100);
	spool_close(s);
	last_segment(path, sizeof(path));
	assert_int_equal(stat(path, &sb), 0);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	/* inside the payload of the last record (its pad is ~98 bytes) */
	assert_int_equal(pread(fd, &c, 1, sb.st_size - 20), 1);
	c ^= 0x20;
	assert_int_equal(pwrite(fd, &c, 1, sb.st_size - 20), 1);
	close(fd);

	s = open_spool(names, 1, 64 << 20, 16 << 20);
	spool_get_stats(s, &st);
	assert_int_equal(st.next_seq, 99);	/* record 99 was the bad one */
	assert_true(st.tail_cut_bytes > 0);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(read_all(r, 0), 99);
	spool_reader_close(r);
	spool_close(s);
}

/* Space is released only when every sink acknowledged a segment. */
static void test_release_needs_every_ack(void **state)
{
	const char *names[] = { "a", "b" };
	struct spool *s = open_spool(names, 2, 64 << 20, 64 << 10);
	struct spool_stats st;
	unsigned before;

	(void)state;
	append_range(s, 0, 4000);
	assert_int_equal(spool_sync(s), 0);
	before = count_segments();
	assert_true(before > 3);
	spool_ack(s, 0, 4000);
	assert_int_equal(spool_maintain(s), 0);
	assert_int_equal(count_segments(), before);
	spool_ack(s, 1, 2000);
	assert_true(spool_maintain(s) > 0);
	spool_get_stats(s, &st);
	assert_true(st.first_seq <= 2000);
	assert_true(count_segments() < before);
	spool_ack(s, 1, 4000);
	spool_maintain(s);
	assert_int_equal(count_segments(), 1);	/* the active one */
	spool_close(s);
}

/* The size limit drops the oldest records and counts them per sink. */
static void test_size_limit_counts_drops(void **state)
{
	const char *names[] = { "down", "up" };
	struct spool *s = open_spool(names, 2, 64 << 10, 16 << 10);
	struct spool_sink_stats down, up;
	struct spool_reader *r;
	struct spool_stats st;
	uint64_t readable;

	(void)state;
	/* "up" keeps acknowledging, "down" never does */
	for (uint64_t i = 0; i < 20000; i += 100) {
		append_range(s, i, i + 100);
		assert_int_equal(spool_sync(s), 0);
		spool_ack(s, 1, i + 100);
	}
	spool_get_stats(s, &st);
	assert_true(st.bytes <= 64 << 10);
	spool_get_sink_stats(s, 0, &down);
	spool_get_sink_stats(s, 1, &up);
	assert_int_equal(up.dropped, 0);
	assert_true(down.dropped > 0);
	assert_int_equal(down.ack_seq, down.dropped);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	readable = read_all(r, down.ack_seq);
	/* every record is either still readable or counted as dropped */
	assert_int_equal(readable + down.dropped, 20000);
	spool_reader_close(r);
	spool_close(s);

	/* the count persists */
	s = open_spool(names, 2, 64 << 10, 16 << 10);
	spool_get_sink_stats(s, 0, &down);
	assert_int_equal(down.dropped, 20000 - readable);
	spool_close(s);
}

/* A reader that was mid-way when its records were dropped moves on. */
static void test_reader_follows_drops(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 10, 16 << 10);
	struct spool_reader *r;
	struct spool_sink_stats k;
	struct expect e = { 0 };
	uint64_t first;

	(void)state;
	append_range(s, 0, 50);
	assert_int_equal(spool_sync(s), 0);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(spool_read(r, 10, 1 << 20, check_cb, &e, &first), 10);
	append_range(s, 50, 5000);
	assert_int_equal(spool_sync(s), 0);
	spool_get_sink_stats(s, 0, &k);
	assert_true(k.ack_seq > 10);
	assert_int_equal(read_all(r, k.ack_seq), 5000 - k.ack_seq);
	spool_reader_close(r);
	spool_close(s);
}

/* Files that are not segments, and oversize records, are refused. */
static void test_refusals(void **state)
{
	const char *names[] = { "a" };
	struct spool *s;
	struct spool_stats st;
	char path[128];
	char *big;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/00000000000000ff.seg", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not a segment at all", 20), 20);
	close(fd);
	s = open_spool(names, 1, 64 << 20, 1 << 20);
	assert_int_equal(access(path, F_OK), -1);
	big = calloc(1, SPOOL_MAX_RECORD + 1);
	assert_non_null(big);
	assert_int_equal(spool_append(s, big, SPOOL_MAX_RECORD + 1), -E2BIG);
	assert_int_equal(spool_append(s, big, 0), -E2BIG);
	free(big);
	spool_get_stats(s, &st);
	assert_int_equal(st.refused, 2);
	assert_int_equal(st.next_seq, 0);
	spool_close(s);
}

/*
 * Only the names the spool writes (16 lowercase hex digits) are segments:
 * a copy of one under "0x..." or in capitals, whose header is as good,
 * is not read a second time, nor counted in the spool's size.
 */
static void test_segment_names(void **state)
{
	const char *names[] = { "a" };
	const char *const copies[] = { "0x00000000000000.seg",
				       " 000000000000000.seg",
				       "+000000000000000.seg" };
	struct spool *s = open_spool(names, 1, 64 << 20, 1 << 20);
	struct spool_reader *r;
	struct spool_stats st;
	char path[128], cmd[512];
	struct stat sb;

	(void)state;
	append_range(s, 0, 100);
	spool_close(s);
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, copies[i]);
		snprintf(cmd, sizeof(cmd), "cp '%s/%016x.seg' '%s'", dir, 0,
			 path);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(path, sizeof(path), "%s/%016x.seg", dir, 0);
	assert_int_equal(stat(path, &sb), 0);
	s = open_spool(names, 1, 64 << 20, 1 << 20);
	spool_get_stats(s, &st);
	assert_int_equal(st.segments, 2);	/* the old one and a new one */
	assert_int_equal(st.bytes, (uint64_t)sb.st_size + 16);
	assert_int_equal(st.next_seq, 100);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	assert_int_equal(read_all(r, 0), 100);
	spool_reader_close(r);
	spool_close(s);
}

/* Read callback that only counts. */
static int count_cb(void *arg, const char *rec, size_t len)
{
	(void)rec;
	(void)len;
	(*(uint64_t *)arg)++;
	return 0;
}

/* A bad frame inside an older segment (bit rot): the reader skips to the
 * next segment and counts what it skipped, once; the acknowledged
 * position does not move until the sink stores a batch. */
static void test_corrupt_older_segment(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 20, 16 << 10);
	struct spool_reader *r;
	struct spool_sink_stats k;
	char path[128];
	uint64_t got = 0, first;
	int fd, n;

	(void)state;
	append_range(s, 0, 1000);
	assert_int_equal(spool_sync(s), 0);
	/* the first segment holds records 0..N-1; damage record 10 */
	snprintf(path, sizeof(path), "%s/%016x.seg", dir, 0);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	{
		off_t off = 16;
		uint32_t len;

		for (int i = 0; i < 10; i++) {
			assert_int_equal(pread(fd, &len, 4, off), 4);
			off += 8 + len;
		}
		assert_int_equal(pwrite(fd, "\xff", 1, off + 9), 1);
	}
	close(fd);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	while ((n = spool_read(r, 100000, 64 << 20, count_cb, &got,
			       &first)) > 0)
		;
	spool_get_sink_stats(s, 0, &k);
	assert_true(k.corrupt > 0);
	assert_int_equal(got + k.corrupt, 1000);
	assert_int_equal(k.ack_seq, 0);		/* nothing stored yet */
	/* a rewind reads the same records again and counts nothing twice */
	spool_reader_rewind(r);
	got = 0;
	while ((n = spool_read(r, 100000, 64 << 20, count_cb, &got,
			       &first)) > 0)
		;
	spool_get_sink_stats(s, 0, &k);
	assert_int_equal(got + k.corrupt, 1000);
	spool_reader_close(r);
	spool_close(s);
}

/*
 * Records the spool cannot write (the file size limit, as a stand-in for
 * a full disk) are counted lost, each once, against what spool_append
 * returned; each failed attempt to write the buffer is one write error;
 * what was appended before and after reads back, nothing else.
 */
static void test_write_failure_counts(void **state)
{
	const char *names[] = { "a" };
	struct spool *s = open_spool(names, 1, 64 << 20, 64 << 10);
	struct rlimit old, lim;
	struct spool_reader *r;
	struct spool_stats st;
	uint64_t ok = 0, failed = 0, got = 0, first;
	char buf[256];
	int n;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 8 << 10;	/* a segment's first write fails */
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		int e = spool_append(s, buf, make_rec(i, buf, sizeof(buf)));

		if (e == 0) {
			ok++;
		} else {
			assert_int_equal(e, -EFBIG);
			failed++;
		}
	}
	spool_get_stats(s, &st);
	assert_true(failed > 0 && ok > 0);
	assert_int_equal(st.lost, failed);
	assert_int_equal(st.lost_disk_full, 0);
	assert_int_equal(st.error, EFBIG);
	/* one rotation tried, so one write of the buffer, per lost record */
	assert_int_equal(st.write_errors, failed);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);

	append_range(s, 1000, 1100);
	assert_int_equal(spool_sync(s), 0);
	spool_get_stats(s, &st);
	assert_int_equal(st.lost, failed);
	assert_int_equal(st.error, 0);
	assert_int_equal(st.appended, ok + 100);
	assert_int_equal(spool_reader_open(s, 0, &r), 0);
	while ((n = spool_read(r, 100000, 64 << 20, count_cb, &got,
			       &first)) > 0)
		;
	assert_int_equal(got, ok + 100);
	spool_reader_close(r);
	spool_close(s);
}

/* The checksum is CRC-32C: the standard check value, and in pieces. */
static void test_crc32c(void **state)
{
	(void)state;
	assert_int_equal(spool_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(spool_crc32c(spool_crc32c(0, "1234", 4), "56789", 5),
			 0xe3069283u);
	assert_int_equal(spool_crc32c(0, "", 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sync_visibility_and_order,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_survives_reopen,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rewind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_file_strict, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_tail_cut, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_checksum_cut, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_needs_every_ack,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_size_limit_counts_drops,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_follows_drops,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segment_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_ack_not_followed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_folder_for_segment, setup,
						teardown),
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test_setup_teardown(test_corrupt_older_segment,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_failure_counts,
						setup, teardown),
	};

	log_init("test_spool", 0, LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
