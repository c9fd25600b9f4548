// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_spool.c - the spool's recovery (agent/daemon/deliver/spool.c): the segment files
 * and the acknowledgement file an agent finds at start after a crash, a
 * power loss or a full disk.  spool_open() scans the newest segment and
 * cuts a torn tail; a sink's reader then walks the frames of every
 * segment from its acknowledged position, skipping bad ones.  Afterwards
 * an appended record must read back.
 *
 * Input: one flag byte (bit 0: recompute the CRC of every whole frame, so
 * that mutations get past the checksum to what follows it), the text of
 * the sink's .ack file, then segment files, each starting with its
 * header "JTSPOOL1" + u64 first sequence number (little endian) and
 * named after it.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "log.h"
#include "spool.h"

#define MAGIC "JTSPOOL1"
#define MAX_SEGS 8
#define MINE "{\"appended\":\"after recovery\"}"

/* Recompute the CRC-32C of each whole frame in a segment's body. */
static void fix_crcs(uint8_t *p, size_t n)
{
	size_t off = 0;

	while (n - off >= 8) {
		uint32_t len, crc;

		memcpy(&len, p + off, 4);
		len = le32toh(len);
		if (len > n - off - 8)
			break;
		crc = spool_crc32c(0, p + off, 4);
		crc = htole32(spool_crc32c(crc, p + off + 8, len));
		memcpy(p + off + 4, &crc, 4);
		off += 8 + (size_t)len;
	}
}

/* Write one segment file from its header and body. */
static void write_segment(const char *dir, const uint8_t *seg, size_t n,
			  int fix)
{
	uint8_t *copy = malloc(n + 16);
	uint64_t first = 0;
	char path[4096];
	size_t len = n;

	if (!copy)
		abort();
	/* a header cut short reads as zeros */
	memcpy(copy, seg, n);
	if (n < 16) {
		memset(copy + n, 0, 16 - n);
		len = 16;
	}
	memcpy(&first, copy + 8, 8);
	if (fix)
		fix_crcs(copy + 16, len - 16);
	snprintf(path, sizeof(path), "%s/%016" PRIx64 ".seg", dir,
		 le64toh(first));
	fuzz_write_file(path, copy, len);
	free(copy);
}

/* What the reads handed over. */
struct seen {
	size_t records;
	int last_is_mine;	/* the last record read is the one appended */
};

/* Count a record; note whether it is the one the harness appended. */
static int take(void *arg, const char *rec, size_t len)
{
	struct seen *sn = arg;

	FUZZ_CHECK(len > 0 && len <= SPOOL_MAX_RECORD);
	FUZZ_CHECK(rec != NULL);
	sn->records++;
	sn->last_is_mine = len == sizeof(MINE) - 1 &&
			   !memcmp(rec, MINE, sizeof(MINE) - 1);
	return 0;
}

/*
 * Read all there is as a sink does: acknowledge each batch; after a
 * failed read, rewind to the acknowledged position and try again (a
 * bounded number of times: a reader that never gets past a damaged
 * segment fails the check on the appended record).
 */
static void drain(struct spool *s, struct spool_reader *r, struct seen *sn)
{
	uint64_t first;

	for (int i = 0; i < 1000; i++) {
		int rc = spool_read(r, 64, 1 << 20, take, sn, &first);

		if (rc == 0)
			return;
		if (rc < 0) {
			spool_reader_rewind(r);
			continue;
		}
		FUZZ_CHECK(spool_ack(s, 0, first + (uint64_t)rc) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sinks[] = { "fuzz" };
	const char *dir = fuzz_scratch();
	struct spool_opts o = { .dir = dir, .max_bytes = 64 << 20,
				.segment_bytes = 1 << 20 };
	const uint8_t *p, *end = data + size, *next;
	struct spool_reader *r = NULL;
	struct spool_stats st;
	struct spool *s = NULL;
	char path[4096], err[512];
	struct seen sn = { 0 };
	int fix, segs = 0, rc;

	if (size < 1)
		return 0;
	log_init("fuzz", 0, LOG_LVL_ERROR);
	fuzz_empty_dir(dir);
	fix = data[0] & 1;
	p = data + 1;

	next = memmem(p, end - p, MAGIC, 8);
	snprintf(path, sizeof(path), "%s/fuzz.ack", dir);
	if (next != p)
		fuzz_write_file(path, p, (next ? next : end) - p);
	for (p = next; p && segs < MAX_SEGS; p = next, segs++) {
		next = memmem(p + 8, end - p - 8, MAGIC, 8);
		write_segment(dir, p, (next ? next : end) - p, fix);
	}

	rc = spool_open(&o, sinks, 1, &s, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(s == NULL);
		return 0;
	}
	spool_get_stats(s, &st);
	FUZZ_CHECK(st.first_seq <= st.next_seq);
	if (spool_reader_open(s, 0, &r))
		abort();
	drain(s, r, &sn);

	/* the writer goes on after what it recovered, and its record is
	 * read after every other */
	FUZZ_CHECK(spool_append(s, MINE, sizeof(MINE) - 1) == 0);
	FUZZ_CHECK(spool_sync(s) == 0);
	sn.last_is_mine = 0;
	drain(s, r, &sn);
	FUZZ_CHECK(sn.last_is_mine);
	spool_reader_close(r);
	spool_close(s);
	return 0;
}
