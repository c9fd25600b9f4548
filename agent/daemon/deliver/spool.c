// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spool.c - the durable, bounded record spool (see spool.h).
 *
 * Segment file: "JTSPOOL1", u64 first sequence number (little endian),
 * then frames of u32 length, u32 CRC-32C (of the length bytes then the
 * payload), payload; all little endian.  Only the writer appends, always to a segment it
 * created in this run; at open the newest old segment is scanned and cut
 * at the first frame that does not check out (a torn tail).
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "spool.h"
#include "util.h"

#define SEG_MAGIC "JTSPOOL1"
#define SEG_HDR 16
#define FRAME_HDR 8
#define WBUF_SIZE (256u << 10)
#define RBUF_SIZE (256u << 10)
#define MIN_SEGMENT (4u << 10)
/* Sequence numbers stay below this: appends never get there (2^62
 * records), so a segment name or an ack beyond it is damage, whose
 * records would wrap next_seq around to 0. */
#define SEQ_LIMIT (1ull << 62)

struct segment {
	uint64_t first;		/* sequence number of its first record */
	uint64_t bytes;		/* file size (written) */
};

struct sink_pos {
	char *name;
	uint64_t ack;
	uint64_t dropped;
	uint64_t corrupt;
	uint64_t warned_ns;	/* last drop warning (CLOCK_MONOTONIC) */
	uint64_t corrupt_to;	/* bad records counted up to here */
	bool dirty;		/* ack moved; file not rewritten yet */
};

struct spool {
	char *dir;
	uint64_t max_bytes;
	uint64_t segment_bytes;

	pthread_mutex_t lock;	/* segs, sinks, durable, counters */
	struct segment *segs;	/* oldest first; the last is active */
	size_t n_segs, cap_segs;
	struct sink_pos *sinks;
	size_t n_sinks;
	uint64_t durable;	/* records below are synced */
	uint64_t total_bytes;	/* closed segments + active written */

	/* writer */
	int fd;			/* active segment */
	uint64_t next_seq;
	char *wbuf;
	size_t wlen;
	unsigned unsynced;
	bool dir_dirty;		/* a segment was created or removed */
	bool failing;		/* syncs fail */
	bool losing;		/* appends fail: records are lost */
	uint64_t lost_before;	/* stats.lost when the streak began */

	struct spool_stats st;
};

struct spool_reader {
	struct spool *s;
	unsigned idx;
	int fd;
	uint64_t seg_first;	/* segment the fd reads */
	uint64_t seq;		/* next record to return */
	uint64_t off;		/* its file offset */
	char *buf;		/* read-ahead */
	size_t blen, bpos;
	uint64_t buf_off;	/* file offset of buf[0] */
};

/* Build DIR/NAME into out. */
static void path_of(const struct spool *s, const char *name, char *out,
		    size_t len)
{
	snprintf(out, len, "%s/%s", s->dir, name);
}

/* Path of the segment starting at first. */
static void seg_path(const struct spool *s, uint64_t first, char *out,
		     size_t len)
{
	snprintf(out, len, "%s/%016" PRIx64 ".seg", s->dir, first);
}

/* CRC-32C (Castagnoli), bit by byte, for CPUs without the instruction. */
static uint32_t crc32c_sw(uint32_t c, const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	static bool ready;

	if (!ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;

			for (int b = 0; b < 8; b++)
				v = (v >> 1) ^ (0x82f63b78u & -(v & 1));
			table[i] = v;
		}
		ready = true;	/* same values from any thread */
	}
	while (n--)
		c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/* CRC-32C with SSE4.2's crc32 instruction, 8 bytes at a time. */
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t c, const unsigned char *p, size_t n)
{
	uint64_t c64 = c;

	while (n >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c64 = _mm_crc32_u64(c64, v);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}
#endif

/* CRC-32C of n bytes, continuing from crc (0 to start). */
uint32_t spool_crc32c(uint32_t crc, const void *p, size_t n)
{
	uint32_t c = ~crc;

#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc32c_hw(c, p, n);
#endif
	return ~crc32c_sw(c, p, n);
}

/* Checksum of a frame: CRC-32C of its length bytes, then its payload. */
static uint32_t frame_crc(uint32_t len_le, const void *p, size_t n)
{
	return spool_crc32c(spool_crc32c(0, &len_le, sizeof(len_le)), p, n);
}

/* fsync the spool directory (segment created or removed). */
static void sync_dir(struct spool *s)
{
	int fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	s->dir_dirty = false;
}

/* Write all n bytes at the fd's position; 0 or -errno. */
static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read exactly n bytes at off; returns bytes read (short at EOF) or -errno. */
static ssize_t pread_full(int fd, void *p, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)p + got, n - got,
				  (off_t)(off + got));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Append a segment to the list (lock held or single-threaded). */
static int segs_push(struct spool *s, uint64_t first, uint64_t bytes)
{
	if (s->n_segs == s->cap_segs) {
		size_t cap = s->cap_segs ? s->cap_segs * 2 : 16;
		struct segment *v = realloc(s->segs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->segs = v;
		s->cap_segs = cap;
	}
	s->segs[s->n_segs].first = first;
	s->segs[s->n_segs].bytes = bytes;
	s->n_segs++;
	return 0;
}

/* Order segments by first sequence number. */
static int cmp_seg(const void *a, const void *b)
{
	const struct segment *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* A decimal count, digits only (no sign, no space): 0 or -EINVAL. */
static int parse_count(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * Read the regular file path, never through a link (nor block on a FIFO),
 * into buf (len bytes, NUL-terminated).  Returns bytes read, -ENOENT when
 * there is none, -EINVAL for something else than a regular file, -errno.
 */
static ssize_t read_own_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	ssize_t n = 0, r;

	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while ((size_t)n < len - 1) {
		r = read(fd, buf + n, len - 1 - (size_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	return n;
}

/*
 * Read "ack N / dropped N / corrupt N" from DIR/NAME.ack, if present.  A
 * line that is not one of them with a plain count is logged with the
 * file and line (never its bytes: what a link or a mistake put there may
 * be anything) and counted: a bad ack reads the sink's records again from
 * the oldest (sinks de-duplicate by id), a bad counter starts from 0.  A
 * link or anything but a regular file is not read at all (counted).
 */
static void load_ack(struct spool *s, struct sink_pos *k)
{
	static const char *const keys[] = { "ack", "dropped", "corrupt" };
	uint64_t *vals[] = { &k->ack, &k->dropped, &k->corrupt };
	char path[4096], buf[256], *line, *next;
	unsigned lineno = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s.ack", s->dir, k->name);
	k->ack = UINT64_MAX;	/* none: from the oldest record */
	n = read_own_file(path, buf, sizeof(buf));
	if (n == -EINVAL) {
		s->st.ack_bad++;
		log_error("spool %s: not a regular file (a link?): not read; the"
			  " sink reads again from the oldest record (stored"
			  " records are de-duplicated)", path);
	}
	if (n <= 0)
		return;
	for (line = buf; *line; line = next) {
		size_t i, kl = 0;

		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		lineno++;
		if (!*line)
			continue;
		for (i = 0; i < 3; i++) {
			kl = strlen(keys[i]);
			if (!strncmp(line, keys[i], kl) && line[kl] == ' ')
				break;
		}
		if (i < 3 && parse_count(line + kl + 1, vals[i]) == 0)
			continue;
		if (i < 3)	/* even over an earlier line's value */
			*vals[i] = i == 0 ? UINT64_MAX : 0;
		s->st.ack_bad++;
		log_error("spool %s:%u: %s line of %zu bytes is not \"ack|dropped|"
			  "corrupt COUNT\"; %s", path, lineno,
			  i < 3 ? keys[i] : "a", strlen(line),
			  i == 0 ? "the sink reads again from the oldest record"
			  " (stored records are de-duplicated)" :
			  i < 3 ? "that counter starts again from 0" :
			  "line ignored");
	}
	if (k->ack != UINT64_MAX && k->ack >= SEQ_LIMIT) {
		log_error("spool %s: ack %" PRIu64 " is past any sequence number;"
			  " the sink reads again from the oldest record", path,
			  k->ack);
		k->ack = UINT64_MAX;
	}
}

/* Persist one sink's position (lock held): write a new file, rename. */
static int save_ack(struct spool *s, struct sink_pos *k)
{
	char path[4096], tmp[4200], buf[160];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "%s/%s.ack", s->dir, k->name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	n = snprintf(buf, sizeof(buf), "ack %" PRIu64 "\ndropped %" PRIu64
		     "\ncorrupt %" PRIu64 "\n", k->ack, k->dropped,
		     k->corrupt);
	/* a new file of ours, never one found there (a link, a crash's) */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		err = -errno;
		log_error("spool %s: %s", tmp, strerror(-err));
		return err;
	}
	err = write_all(fd, buf, (size_t)n);
	close(fd);
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		log_error("spool %s: %s", path, strerror(-err));
		return err;
	}
	k->dirty = false;
	return 0;
}

/*
 * Check the frames of an old segment from the start; cut the file at the
 * first one that does not check out.  Returns the records it holds.
 */
static int64_t scan_segment(struct spool *s, struct segment *g)
{
	char path[4096];
	uint64_t off = SEG_HDR, n = 0;
	char *buf = NULL;
	size_t cap = 0;
	struct stat sb;
	int fd;

	seg_path(s, g->first, path, sizeof(path));
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		log_error("spool %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	for (;;) {
		uint32_t hdr[2], len;
		ssize_t r = pread_full(fd, hdr, sizeof(hdr), off);

		if (r < (ssize_t)sizeof(hdr))
			break;
		len = le32toh(hdr[0]);
		if (len == 0 || len > SPOOL_MAX_RECORD ||
		    off + FRAME_HDR + len > (uint64_t)sb.st_size)
			break;
		if (cap < len) {
			char *b = realloc(buf, len);

			if (!b)
				break;
			buf = b;
			cap = len;
		}
		if (pread_full(fd, buf, len, off + FRAME_HDR) != (ssize_t)len ||
		    frame_crc(hdr[0], buf, len) != le32toh(hdr[1]))
			break;
		off += FRAME_HDR + len;
		n++;
	}
	if (off < (uint64_t)sb.st_size) {
		uint64_t cut = (uint64_t)sb.st_size - off;

		log_warn("spool %s: torn tail: %" PRIu64 " bytes after record"
			 " %" PRIu64 " do not form a valid record; cut (%" PRIu64
			 " records kept)", path, cut, g->first + n, n);
		s->st.tail_cut_bytes += cut;
		if (ftruncate(fd, (off_t)off) == 0)
			fdatasync(fd);
	}
	close(fd);
	free(buf);
	g->bytes = off;
	return (int64_t)n;
}

/* Check a segment file's header; true when it names first. */
static bool seg_header_ok(const char *path, uint64_t first)
{
	char hdr[SEG_HDR];
	uint64_t v;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return false;
	r = pread_full(fd, hdr, sizeof(hdr), 0);
	close(fd);
	if (r != SEG_HDR || memcmp(hdr, SEG_MAGIC, 8) != 0)
		return false;
	memcpy(&v, hdr + 8, 8);
	return le64toh(v) == first;
}

/* List DIR's segments (sorted), dropping files that are not segments. */
static int list_segments(struct spool *s, char *err, size_t errlen)
{
	DIR *d = opendir(s->dir);
	struct dirent *e;

	if (!d) {
		util_seterr(err, errlen, "spool %s: %s", s->dir,
			    strerror(errno));
		return -errno;
	}
	while ((e = readdir(d))) {
		char path[4096];
		uint64_t first;
		struct stat sb;

		/* only seg_path's names: another spelling of a number (0x,
		 * a sign, capitals) would list one segment twice */
		if (strspn(e->d_name, "0123456789abcdef") != 16 ||
		    strcmp(e->d_name + 16, ".seg") != 0)
			continue;
		first = strtoull(e->d_name, NULL, 16);
		path_of(s, e->d_name, path, sizeof(path));
		if (first >= SEQ_LIMIT) {
			log_warn("spool %s: sequence number out of range;"
				 " ignored", path);
			continue;
		}
		if (lstat(path, &sb) < 0)
			continue;
		if (!S_ISREG(sb.st_mode)) {
			s->st.foreign++;
			log_warn("spool %s: not a regular file where a segment"
				 " goes; ignored", path);
			continue;
		}
		if (!seg_header_ok(path, first)) {
			log_warn("spool %s: not a spool segment (bad header);"
				 " removed", path);
			s->st.tail_cut_bytes += (uint64_t)sb.st_size;
			unlink(path);
			continue;
		}
		if (segs_push(s, first, (uint64_t)sb.st_size)) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	/* an empty spool has no array: qsort's pointer must not be NULL */
	if (s->n_segs > 1)
		qsort(s->segs, s->n_segs, sizeof(*s->segs), cmp_seg);
	return 0;
}

/* Move what is at path, not a segment, to path.foreign[.N]; 0 or -errno. */
static int move_aside(struct spool *s, const char *path)
{
	char to[4200];

	for (int i = 0; i < 100; i++) {
		struct stat sb;

		snprintf(to, sizeof(to), i ? "%s.foreign.%d" : "%s.foreign",
			 path, i);
		if (lstat(to, &sb) == 0)
			continue;
		if (rename(path, to) < 0)
			break;
		s->st.foreign++;
		log_warn("spool %s: not a segment where the next one goes;"
			 " moved to %s", path, to);
		return 0;
	}
	log_error("spool %s: not a segment where the next one goes, and it"
		  " cannot be moved aside: %s", path, strerror(errno));
	return -EEXIST;
}

/* Create a new active segment starting at next_seq (writer). */
static int new_segment(struct spool *s)
{
	char path[4096], hdr[SEG_HDR];
	uint64_t first = htole64(s->next_seq);
	int fd, err;

	seg_path(s, s->next_seq, path, sizeof(path));
	/* a segment of this name cannot hold records (next_seq is past
	 * them): whatever is there goes, and the new file is ours; what
	 * cannot be unlinked (a folder) is moved aside */
	if (unlink(path) < 0 && errno != ENOENT) {
		err = move_aside(s, path);
		if (err)
			return err;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND |
		  O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		log_error("spool %s: %s", path, strerror(-err));
		return err;
	}
	memcpy(hdr, SEG_MAGIC, 8);
	memcpy(hdr + 8, &first, 8);
	err = write_all(fd, hdr, sizeof(hdr));
	if (err) {
		log_error("spool %s: %s", path, strerror(-err));
		close(fd);
		unlink(path);
		return err;
	}
	pthread_mutex_lock(&s->lock);
	err = segs_push(s, s->next_seq, SEG_HDR);
	if (!err)
		s->total_bytes += SEG_HDR;
	pthread_mutex_unlock(&s->lock);
	if (err) {
		close(fd);
		unlink(path);
		return err;
	}
	s->fd = fd;
	s->dir_dirty = true;
	return 0;
}

/* Open (creating) the spool for the named sinks (see spool.h). */
int spool_open(const struct spool_opts *o, const char *const *sinks,
	       size_t n_sinks, struct spool **out, char *err, size_t errlen)
{
	struct spool *s;
	int e;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->fd = -1;
	s->dir = strdup(o->dir);
	s->wbuf = malloc(WBUF_SIZE);
	s->sinks = calloc(n_sinks ? n_sinks : 1, sizeof(*s->sinks));
	if (!s->dir || !s->wbuf || !s->sinks) {
		e = -ENOMEM;
		goto fail;
	}
	s->max_bytes = o->max_bytes;
	/* a few segments fit under the limit, so dropping one frees room */
	s->segment_bytes = o->segment_bytes;
	if (s->segment_bytes > s->max_bytes / 4)
		s->segment_bytes = s->max_bytes / 4;
	if (s->segment_bytes < MIN_SEGMENT)
		s->segment_bytes = MIN_SEGMENT;
	if (s->segment_bytes != o->segment_bytes)
		log_info("spool %s: segments of %" PRIu64 " KiB (%" PRIu64
			 " KiB asked): four must fit in the size limit of %"
			 PRIu64 " KiB", o->dir, s->segment_bytes >> 10,
			 o->segment_bytes >> 10, s->max_bytes >> 10);

	e = util_mkdir_p(s->dir, 0700);
	if (e) {
		util_seterr(err, errlen, "spool %s: %s", s->dir, strerror(-e));
		goto fail;
	}
	e = list_segments(s, err, errlen);
	if (e)
		goto fail;

	/* the newest old segment may end in a torn write */
	s->next_seq = 0;
	if (s->n_segs) {
		struct segment *g = &s->segs[s->n_segs - 1];
		int64_t n = scan_segment(s, g);

		if (n < 0) {
			util_seterr(err, errlen, "spool %s: cannot read the"
				    " last segment", s->dir);
			e = -EIO;
			goto fail;
		}
		s->next_seq = g->first + (uint64_t)n;
		if (n == 0) {
			char path[4096];

			seg_path(s, g->first, path, sizeof(path));
			unlink(path);
			s->n_segs--;
		}
	}
	for (size_t i = 0; i < s->n_segs; i++)
		s->total_bytes += s->segs[i].bytes;

	for (size_t i = 0; i < n_sinks; i++) {
		struct sink_pos *k = &s->sinks[i];

		k->name = strdup(sinks[i]);
		if (!k->name) {
			e = -ENOMEM;
			goto fail;
		}
		s->n_sinks++;
		load_ack(s, k);
		/* sequence numbers never go back, even over an empty spool */
		if (!s->n_segs && k->ack != UINT64_MAX && k->ack > s->next_seq)
			s->next_seq = k->ack;
	}
	for (size_t i = 0; i < s->n_sinks; i++) {
		struct sink_pos *k = &s->sinks[i];
		uint64_t oldest = s->n_segs ? s->segs[0].first : s->next_seq;

		if (k->ack == UINT64_MAX || k->ack < oldest)
			k->ack = oldest;
		if (k->ack > s->next_seq) {
			log_warn("spool %s: sink %s acknowledged up to %" PRIu64
				 " but the spool ends at %" PRIu64, s->dir,
				 k->name, k->ack, s->next_seq);
			k->ack = s->next_seq;
		}
		save_ack(s, k);
	}
	s->durable = s->next_seq;
	e = new_segment(s);
	if (e) {
		util_seterr(err, errlen, "spool %s: cannot create a segment: %s",
			    s->dir, strerror(-e));
		goto fail;
	}
	sync_dir(s);
	*out = s;
	return 0;

fail:
	spool_close(s);
	return e;
}

/* Sync, persist positions and close. */
void spool_close(struct spool *s)
{
	if (!s)
		return;
	if (s->fd >= 0) {
		spool_sync(s);
		close(s->fd);
	}
	for (size_t i = 0; i < s->n_sinks; i++) {
		if (s->sinks[i].dirty)
			save_ack(s, &s->sinks[i]);
		free(s->sinks[i].name);
	}
	free(s->sinks);
	free(s->segs);
	free(s->wbuf);
	free(s->dir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Write the append buffer to the active segment (no sync). */
static int flush_wbuf(struct spool *s)
{
	int err;

	if (!s->wlen)
		return 0;
	err = write_all(s->fd, s->wbuf, s->wlen);
	if (err) {
		/* leave a clean end: a partial frame would read as torn */
		if (ftruncate(s->fd, (off_t)s->segs[s->n_segs - 1].bytes) < 0)
			log_error("spool %s: cannot cut a partial write: %s",
				  s->dir, strerror(errno));
		s->st.write_errors++;
		return err;
	}
	pthread_mutex_lock(&s->lock);
	s->segs[s->n_segs - 1].bytes += s->wlen;
	s->total_bytes += s->wlen;
	pthread_mutex_unlock(&s->lock);
	s->wlen = 0;
	return 0;
}

/* Write and fdatasync; readers see everything appended so far. */
int spool_sync(struct spool *s)
{
	int err;

	if (!s->unsynced && !s->wlen && !s->dir_dirty)
		return 0;
	if (s->fd < 0)
		return -EBADF;	/* spool_append makes a new segment */
	err = flush_wbuf(s);	/* counts its own failure */
	if (!err && fdatasync(s->fd) < 0) {
		err = -errno;
		s->st.write_errors++;
	}
	if (err) {
		if (!s->failing)
			log_error("spool %s: writing records: %s (they stay in"
				  " memory and are retried)", s->dir,
				  strerror(-err));
		s->failing = true;
		s->st.error = -err;
		return err;
	}
	if (s->failing)
		log_info("spool %s: writing again", s->dir);
	s->failing = false;
	if (!s->losing)
		s->st.error = 0;
	if (s->dir_dirty)
		sync_dir(s);
	pthread_mutex_lock(&s->lock);
	s->durable = s->next_seq;
	pthread_mutex_unlock(&s->lock);
	s->unsynced = 0;
	return 0;
}

/* Close the active segment (synced) and start the next one. */
static int rotate(struct spool *s)
{
	int err = spool_sync(s);

	if (err)
		return err;
	close(s->fd);
	s->fd = -1;
	err = new_segment(s);
	if (err)
		s->st.write_errors++;
	return err;
}

/* Remove the oldest segment (lock held); count what sinks had not acked. */
static void drop_oldest(struct spool *s, bool count)
{
	struct segment *g = &s->segs[0];
	uint64_t end = s->segs[1].first;
	char path[4096];

	for (size_t i = 0; i < s->n_sinks; i++) {
		struct sink_pos *k = &s->sinks[i];

		if (k->ack >= end)
			continue;
		if (count) {
			uint64_t now = util_now_ns(CLOCK_MONOTONIC);

			k->dropped += end - (k->ack > g->first ? k->ack :
							       g->first);
			/* the first drop, then a summary every 10 s */
			if (k->warned_ns && now - k->warned_ns < 10000000000ull)
				goto next;
			k->warned_ns = now;
			log_warn("spool %s: size limit (%" PRIu64 " bytes)"
				 " reached; dropped records %" PRIu64 "..%"
				 PRIu64 " that sink %s had not stored (%"
				 PRIu64 " dropped so far)", s->dir,
				 s->max_bytes, k->ack, end - 1, k->name,
				 k->dropped);
		}
next:
		k->ack = end;
		save_ack(s, k);
	}
	seg_path(s, g->first, path, sizeof(path));
	unlink(path);
	s->total_bytes -= g->bytes;
	memmove(s->segs, s->segs + 1, (s->n_segs - 1) * sizeof(*s->segs));
	s->n_segs--;
	s->dir_dirty = true;
}

/* Make room for need more bytes under the size limit. */
static int make_room(struct spool *s, uint64_t need)
{
	int err;

	while (s->total_bytes + s->wlen + need > s->max_bytes) {
		if (s->n_segs < 2) {
			/* only the active segment: close it so it can go */
			if (s->segs[0].bytes + s->wlen <= SEG_HDR)
				return 0;	/* one huge record: let it in */
			err = rotate(s);
			if (err)
				return err;
		}
		pthread_mutex_lock(&s->lock);
		drop_oldest(s, true);
		pthread_mutex_unlock(&s->lock);
	}
	return 0;
}

/*
 * A record could not be written: count it as lost, apart when the
 * filesystem is full, and say so once per streak with the spool's path.
 */
static void record_lost(struct spool *s, int err)
{
	bool full = err == -ENOSPC || err == -EDQUOT;

	pthread_mutex_lock(&s->lock);
	s->st.lost++;
	if (full)
		s->st.lost_disk_full++;
	s->st.error = -err;
	pthread_mutex_unlock(&s->lock);
	if (s->losing)
		return;
	s->losing = true;
	s->lost_before = s->st.lost - 1;
	log_error("spool %s: records are lost: %s%s", s->dir, strerror(-err),
		  full ? " (the filesystem holding the spool is full; counted"
		  " in spool_records_lost_disk_full)" : "");
}

/* Append one record, or return why it could not be (see spool.h). */
static int append(struct spool *s, const void *rec, size_t len)
{
	uint32_t hdr[2];
	size_t need = FRAME_HDR + len;
	uint64_t seg_size;
	int err;

	if (s->fd < 0) {
		/* a rotation could not create the next segment: try again */
		err = new_segment(s);
		if (err)
			return err;
	}
	seg_size = s->segs[s->n_segs - 1].bytes + s->wlen;
	if (seg_size > SEG_HDR && seg_size + need > s->segment_bytes) {
		err = rotate(s);
		if (err)
			return err;
	}
	err = make_room(s, need);
	if (err)
		return err;
	if (s->wlen + need > WBUF_SIZE) {
		err = flush_wbuf(s);
		if (err)
			return err;
	}
	hdr[0] = htole32((uint32_t)len);
	hdr[1] = htole32(frame_crc(hdr[0], rec, len));
	if (need > WBUF_SIZE) {
		err = write_all(s->fd, hdr, sizeof(hdr));
		if (!err)
			err = write_all(s->fd, rec, len);
		if (err) {
			/* no partial frame may stay in front of later ones */
			if (ftruncate(s->fd,
				      (off_t)s->segs[s->n_segs - 1].bytes) < 0)
				log_error("spool %s: cannot cut a partial write:"
					  " %s", s->dir, strerror(errno));
			s->st.write_errors++;
			return err;
		}
		pthread_mutex_lock(&s->lock);
		s->segs[s->n_segs - 1].bytes += need;
		s->total_bytes += need;
		pthread_mutex_unlock(&s->lock);
	} else {
		memcpy(s->wbuf + s->wlen, hdr, sizeof(hdr));
		memcpy(s->wbuf + s->wlen + sizeof(hdr), rec, len);
		s->wlen += need;
	}
	s->next_seq++;
	s->unsynced++;
	s->st.appended++;
	return 0;
}

/* Append one record (buffered until spool_sync). */
int spool_append(struct spool *s, const void *rec, size_t len)
{
	int err;

	if (len == 0 || len > SPOOL_MAX_RECORD) {
		s->st.refused++;
		return -E2BIG;
	}
	err = append(s, rec, len);
	if (err) {
		record_lost(s, err);
		return err;
	}
	if (s->losing) {
		log_info("spool %s: writing again; %" PRIu64 " records were"
			 " lost", s->dir, s->st.lost - s->lost_before);
		s->losing = false;
		if (!s->failing)
			s->st.error = 0;
	}
	return 0;
}

/* Delete segments every sink has acknowledged. */
int spool_maintain(struct spool *s)
{
	int n = 0;

	pthread_mutex_lock(&s->lock);
	while (s->n_segs >= 2) {
		uint64_t end = s->segs[1].first;
		bool done = true;

		for (size_t i = 0; i < s->n_sinks; i++)
			if (s->sinks[i].ack < end)
				done = false;
		if (!done)
			break;
		drop_oldest(s, false);
		n++;
	}
	for (size_t i = 0; i < s->n_sinks; i++)
		if (s->sinks[i].dirty)
			save_ack(s, &s->sinks[i]);
	pthread_mutex_unlock(&s->lock);
	if (n)
		sync_dir(s);
	return n;
}

/* Records appended but not yet synced. */
unsigned spool_unsynced(const struct spool *s)
{
	return s->unsynced;
}

void spool_get_stats(struct spool *s, struct spool_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	st->first_seq = s->n_segs ? s->segs[0].first : s->next_seq;
	st->next_seq = s->next_seq;
	st->durable_seq = s->durable;
	st->bytes = s->total_bytes + s->wlen;
	st->segments = (unsigned)s->n_segs;
	pthread_mutex_unlock(&s->lock);
}

void spool_get_sink_stats(struct spool *s, unsigned sink,
			  struct spool_sink_stats *st)
{
	pthread_mutex_lock(&s->lock);
	st->ack_seq = s->sinks[sink].ack;
	st->dropped = s->sinks[sink].dropped;
	st->corrupt = s->sinks[sink].corrupt;
	pthread_mutex_unlock(&s->lock);
}

size_t spool_sinks(const struct spool *s)
{
	return s->n_sinks;
}

/* The sink stored every record below seq: persist its position. */
int spool_ack(struct spool *s, unsigned sink, uint64_t seq)
{
	struct sink_pos *k = &s->sinks[sink];
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (seq > k->ack) {
		k->ack = seq;
		err = save_ack(s, k);
		if (err)
			k->dirty = true;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Move a sink's acknowledged position back to the oldest record. */
uint64_t spool_reread(struct spool *s, unsigned sink)
{
	struct sink_pos *k = &s->sinks[sink];
	uint64_t oldest, n = 0;

	pthread_mutex_lock(&s->lock);
	oldest = s->n_segs ? s->segs[0].first : s->next_seq;
	if (k->ack > oldest) {
		n = k->ack - oldest;
		k->ack = oldest;
		if (save_ack(s, k))
			k->dirty = true;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* A reader for sink idx. */
int spool_reader_open(struct spool *s, unsigned idx,
		      struct spool_reader **out)
{
	struct spool_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->buf = malloc(RBUF_SIZE);
	if (!r->buf) {
		free(r);
		return -ENOMEM;
	}
	r->s = s;
	r->idx = idx;
	r->fd = -1;
	spool_reader_rewind(r);
	*out = r;
	return 0;
}

void spool_reader_close(struct spool_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r);
}

/* Seek the reader back to the acknowledged position. */
void spool_reader_rewind(struct spool_reader *r)
{
	pthread_mutex_lock(&r->s->lock);
	r->seq = r->s->sinks[r->idx].ack;
	pthread_mutex_unlock(&r->s->lock);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;		/* reopened (and scanned to seq) on read */
}

/* Open the segment holding r->seq and walk its frames up to r->seq;
 * -EBADMSG when the segment ends before r->seq. */
static int reader_seek(struct spool_reader *r)
{
	struct spool *s = r->s;
	uint64_t first = 0, seq;
	char path[4096];
	bool found = false;

	pthread_mutex_lock(&s->lock);
	for (size_t i = s->n_segs; i-- > 0;)
		if (s->segs[i].first <= r->seq) {
			first = s->segs[i].first;
			found = true;
			break;
		}
	if (!found && s->n_segs) {
		/* dropped from under us: continue at the oldest record */
		first = s->segs[0].first;
		r->seq = first;
		found = true;
	}
	pthread_mutex_unlock(&s->lock);
	if (!found)
		return -ENOENT;

	if (r->fd >= 0)
		close(r->fd);
	seg_path(s, first, path, sizeof(path));
	r->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->seg_first = first;
	r->off = SEG_HDR;
	r->blen = r->bpos = 0;
	r->buf_off = SEG_HDR;
	for (seq = first; seq < r->seq; seq++) {
		uint32_t hdr[2];
		ssize_t got = pread_full(r->fd, hdr, sizeof(hdr), r->off);

		if (got < 0)
			return (int)got;
		/* the segment ends before the next one begins: damage */
		if (got != sizeof(hdr))
			return -EBADMSG;
		r->off += FRAME_HDR + le32toh(hdr[0]);
	}
	r->buf_off = r->off;
	return 0;
}

/* Make n bytes at r->off available in r->buf; returns a pointer or NULL. */
static const char *reader_bytes(struct spool_reader *r, size_t n)
{
	ssize_t got;

	if (r->off >= r->buf_off && r->off + n <= r->buf_off + r->blen)
		return r->buf + (r->off - r->buf_off);
	if (n > RBUF_SIZE) {
		/* a record larger than the read-ahead: read it alone */
		char *b = realloc(r->buf, n);

		if (!b)
			return NULL;
		r->buf = b;
	}
	got = pread_full(r->fd, r->buf, n > RBUF_SIZE ? n : RBUF_SIZE,
			 r->off);
	if (got < (ssize_t)n) {
		r->blen = 0;
		return NULL;
	}
	r->buf_off = r->off;
	r->blen = (size_t)got;
	return r->buf;
}

/* The segment after the reader's, when the reader has reached it. */
static bool next_segment(struct spool_reader *r, uint64_t *first)
{
	struct spool *s = r->s;
	bool yes = false;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_segs; i++)
		if (s->segs[i].first > r->seg_first) {
			*first = s->segs[i].first;
			yes = true;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return yes;
}

/*
 * Skip a bad frame and the rest of its segment: count the records skipped
 * (once, even when a rewind reads them again).  The acknowledged position
 * is left alone: it moves past them with the sink's next stored batch.
 */
static void skip_corrupt(struct spool_reader *r, uint64_t next_first)
{
	struct spool *s = r->s;
	struct sink_pos *k = &s->sinks[r->idx];

	pthread_mutex_lock(&s->lock);
	if (next_first > k->corrupt_to) {
		uint64_t from = r->seq > k->corrupt_to ? r->seq : k->corrupt_to;

		k->corrupt += next_first - from;
		k->corrupt_to = next_first;
		log_error("spool %s: bad record %" PRIu64 " in segment %016"
			  PRIx64 ": skipping %" PRIu64 " records to the next"
			  " segment for sink %s", s->dir, r->seq, r->seg_first,
			  next_first - from, k->name);
		k->dirty = true;
	}
	pthread_mutex_unlock(&s->lock);
	r->seq = next_first;
	close(r->fd);
	r->fd = -1;
}

/* Read synced records after the reader's position (see spool.h). */
int spool_read(struct spool_reader *r, size_t max_records, size_t max_bytes,
	       int (*cb)(void *arg, const char *rec, size_t len), void *arg,
	       uint64_t *first_seq)
{
	struct spool *s = r->s;
	uint64_t durable, ack, next_first;
	size_t n = 0, bytes = 0;
	int err;

	pthread_mutex_lock(&s->lock);
	durable = s->durable;
	ack = s->sinks[r->idx].ack;
	pthread_mutex_unlock(&s->lock);
	if (r->seq < ack) {
		/* the size limit dropped records this reader had not read */
		r->seq = ack;
		if (r->fd >= 0)
			close(r->fd);
		r->fd = -1;
	}
	*first_seq = r->seq;
	while (n < max_records && r->seq < durable) {
		const char *p;
		uint32_t hdr[2], len;

		if (r->fd < 0 || (next_segment(r, &next_first) &&
				  r->seq >= next_first)) {
			err = reader_seek(r);
			if (err == -EBADMSG)
				goto bad;	/* skipped like a bad frame */
			if (err)
				return n ? (int)n : err;
		}
		p = reader_bytes(r, FRAME_HDR);
		if (!p)
			goto bad;
		memcpy(hdr, p, sizeof(hdr));
		len = le32toh(hdr[0]);
		if (len == 0 || len > SPOOL_MAX_RECORD)
			goto bad;
		if (n && bytes + len > max_bytes)
			break;
		p = reader_bytes(r, FRAME_HDR + len);
		if (!p || frame_crc(hdr[0], p + FRAME_HDR, len) !=
			  le32toh(hdr[1]))
			goto bad;
		if (cb(arg, p + FRAME_HDR, len))
			break;
		r->off += FRAME_HDR + len;
		r->seq++;
		n++;
		bytes += len;
		continue;
bad:
		if (n)
			break;	/* deliver what is good first */
		if (next_segment(r, &next_first)) {
			skip_corrupt(r, next_first);
			*first_seq = r->seq;
			continue;
		}
		return -EBADMSG;
	}
	return (int)n;
}
