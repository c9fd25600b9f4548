/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spool.h - the durable, bounded record spool between the agent's event
 * loop and its sinks.
 *
 * Records are appended (by one writer: the event loop) to segment files
 * named after the sequence number of their first record.  Each record is
 * a frame: u32 length, u32 CRC-32C of length and payload, payload.  A
 * record becomes visible to readers once spool_sync() has written and
 * fdatasync'd it.  Each sink has a reader and an acknowledged position
 * (the sequence number of the first record it has not stored), kept in
 * DIR/NAME.ack; a segment is deleted once every sink has acknowledged all
 * of it.  When the size limit is reached the oldest segment is dropped,
 * and the records a sink had not acknowledged are counted against it.
 *
 * Thread safety: spool_append/spool_sync/spool_maintain from the writer
 * thread only; each reader from one (its sink's) thread; spool_ack and the
 * stats calls from any thread.
 */
#ifndef JOBTRACE_SPOOL_H
#define JOBTRACE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_MAX_RECORD (1u << 20)	/* a larger record is refused */

struct spool;
struct spool_reader;

struct spool_opts {
	const char *dir;
	uint64_t max_bytes;		/* size limit over all segments */
	uint64_t segment_bytes;		/* rotate a segment beyond this */
};

/* What happened to the spool, since it was created (drops, corruption)
 * or since this open (the rest). */
struct spool_stats {
	uint64_t first_seq;		/* oldest record still on disk */
	uint64_t next_seq;		/* sequence number of the next append */
	uint64_t durable_seq;		/* records below this are synced */
	uint64_t bytes;			/* on disk and buffered */
	unsigned segments;
	uint64_t appended;		/* records appended since open */
	uint64_t refused;		/* records too large to spool */
	uint64_t write_errors;		/* failed writes or syncs (attempts) */
	uint64_t lost;			/* records not written, so lost */
	uint64_t lost_disk_full;	/* ... of them for a full filesystem */
	int error;			/* errno of the failure going on, or 0 */
	uint64_t tail_cut_bytes;	/* torn tail found and cut at open */
	uint64_t ack_bad;		/* .ack files (a link, not a file) and
					 * lines not read, at open */
	uint64_t foreign;		/* not regular files where segments go:
					 * ignored, or moved aside */
};

struct spool_sink_stats {
	uint64_t ack_seq;		/* first record not yet stored */
	uint64_t dropped;		/* dropped unacknowledged (size limit) */
	uint64_t corrupt;		/* skipped over a bad frame */
};

/*
 * Open (creating) the spool for the named sinks.  The last segment is
 * checked frame by frame; a torn tail is cut and logged (see the stats).
 * Acknowledged positions are read from DIR/NAME.ack; a sink without one
 * starts at the oldest record.  Errors name the file in err.
 */
int spool_open(const struct spool_opts *o, const char *const *sinks,
	       size_t n_sinks, struct spool **out, char *err, size_t errlen);
/* CRC-32C (Castagnoli) of n bytes, continuing from crc (0 to start);
 * SSE4.2's instruction when the CPU has it. */
uint32_t spool_crc32c(uint32_t crc, const void *p, size_t n);
/* Sync, persist positions and close; accepts NULL.  Readers first. */
void spool_close(struct spool *s);

/* Append one record (buffered until spool_sync).  Returns 0 or -errno:
 * -E2BIG for a record over SPOOL_MAX_RECORD, or why writing failed (the
 * record is lost: counted in the stats, logged with the spool's path). */
int spool_append(struct spool *s, const void *rec, size_t len);
/* Write and fdatasync what was appended; readers then see it.  Returns
 * 0, or -errno (logged once per failure streak). */
int spool_sync(struct spool *s);
/* Delete segments every sink has acknowledged; returns segments deleted. */
int spool_maintain(struct spool *s);
/* Records appended but not yet synced. */
unsigned spool_unsynced(const struct spool *s);

void spool_get_stats(struct spool *s, struct spool_stats *st);
void spool_get_sink_stats(struct spool *s, unsigned sink,
			  struct spool_sink_stats *st);
/* Count of sinks. */
size_t spool_sinks(const struct spool *s);

/* A reader for sink number idx (order of spool_open's list). */
int spool_reader_open(struct spool *s, unsigned idx,
		      struct spool_reader **out);
void spool_reader_close(struct spool_reader *r);
/*
 * Read synced records after the reader's position (which follows the
 * sink's acknowledged position when drops moved it on), at most
 * max_records or max_bytes of payload, calling cb for each.  A cb that
 * returns non-zero stops the read before that record.  Returns records
 * read (0: nothing new) or -errno.  *first_seq gets the sequence number
 * of the first record read.
 */
int spool_read(struct spool_reader *r, size_t max_records, size_t max_bytes,
	       int (*cb)(void *arg, const char *rec, size_t len), void *arg,
	       uint64_t *first_seq);
/* Seek the reader back to the acknowledged position (a failed batch). */
void spool_reader_rewind(struct spool_reader *r);
/* The sink stored every record below seq: persist, release space later. */
int spool_ack(struct spool *s, unsigned sink, uint64_t seq);
/*
 * The sink lost what it had stored (its store was deleted): move its
 * acknowledged position back to the oldest record on disk.  Returns how
 * many acknowledged records it reads again; its reader must be rewound.
 */
uint64_t spool_reread(struct spool *s, unsigned sink);

#endif
