/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ringbuf.h - the consumer of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF)
 * that maps its data area once.
 *
 * libbpf's ring_buffer maps the data area twice in a row, so that a
 * record that wraps around the end reads as one; every page then counts
 * twice in the agent's resident set (16 MiB of VmRSS for the default
 * 8 MiB buffer, of the same 8 MiB of memory).  Here the data is mapped
 * once and the rare record that wraps is copied into a buffer first.  The
 * protocol is the kernel's (kernel/bpf/ringbuf.c) as libbpf reads it: an
 * 8-byte header per record, whose length carries a busy and a discard
 * bit, records 8-byte aligned, positions that only grow.
 */
#ifndef JOBTRACE_RINGBUF_H
#define JOBTRACE_RINGBUF_H

#include <stddef.h>
#include <stdint.h>

struct ringbuf;

/* One record: 0 to go on, < 0 to stop consuming (returned). */
typedef int (*ringbuf_cb)(void *ctx, void *data, size_t len);

/* Map the ring buffer map_fd of size data bytes (its max_entries);
 * returns 0 or -errno. */
int ringbuf_open(int map_fd, size_t size, ringbuf_cb cb, void *ctx,
		 struct ringbuf **out);
/*
 * A consumer over memory laid out like the kernel's pages: consumer_pos,
 * producer_pos and size bytes of data (a power of two); for tests.
 */
int ringbuf_open_mem(unsigned long *consumer_pos,
		     const unsigned long *producer_pos, const void *data,
		     size_t size, ringbuf_cb cb, void *ctx,
		     struct ringbuf **out);
/* Unmap and free; accepts NULL. */
void ringbuf_free(struct ringbuf *r);
/* The fd to poll: readable while records wait. */
int ringbuf_fd(const struct ringbuf *r);
/*
 * Hand every committed record to the callback, oldest first, and release
 * its space.  Returns the records handed over, or what the callback
 * returned when it stopped (the record it stopped on is released).
 */
int ringbuf_consume(struct ringbuf *r);

#endif
