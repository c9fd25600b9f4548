// SPDX-License-Identifier: GPL-2.0-or-later
/* ringbuf.c - a BPF ring buffer's consumer, data mapped once. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "ringbuf.h"

struct ringbuf {
	unsigned long *consumer_pos;	/* the page we write */
	const unsigned long *producer_pos;	/* read-only, then the data */
	const uint8_t *data;
	size_t size;			/* data bytes, a power of two */
	ringbuf_cb cb;
	void *ctx;
	int fd;				/* -1 over plain memory */
	size_t page;
	char *wrap;			/* a record that wraps, joined */
	size_t wrap_cap;
};

/* Set up r over the given memory. */
static int init(unsigned long *cons, const unsigned long *prod,
		const void *data, size_t size, ringbuf_cb cb, void *ctx,
		struct ringbuf **out)
{
	struct ringbuf *r;

	if (!size || (size & (size - 1)))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->consumer_pos = cons;
	r->producer_pos = prod;
	r->data = data;
	r->size = size;
	r->cb = cb;
	r->ctx = ctx;
	r->fd = -1;
	*out = r;
	return 0;
}

/* Map the ring buffer map_fd of size data bytes. */
int ringbuf_open(int map_fd, size_t size, ringbuf_cb cb, void *ctx,
		 struct ringbuf **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *cons, *prod;
	int err;

	*out = NULL;
	if (!size || (size & (size - 1)) || size % page)
		return -EINVAL;
	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	/* the producer's page and the data, once (libbpf maps it twice) */
	prod = mmap(NULL, page + size, PROT_READ, MAP_SHARED, map_fd,
		    (off_t)page);
	if (prod == MAP_FAILED) {
		err = -errno;
		munmap(cons, page);
		return err;
	}
	err = init(cons, prod, (uint8_t *)prod + page, size, cb, ctx, out);
	if (err) {
		munmap(prod, page + size);
		munmap(cons, page);
		return err;
	}
	(*out)->fd = map_fd;
	(*out)->page = page;
	return 0;
}

/* A consumer over plain memory. */
int ringbuf_open_mem(unsigned long *consumer_pos,
		     const unsigned long *producer_pos, const void *data,
		     size_t size, ringbuf_cb cb, void *ctx,
		     struct ringbuf **out)
{
	*out = NULL;
	return init(consumer_pos, producer_pos, data, size, cb, ctx, out);
}

/* Unmap and free. */
void ringbuf_free(struct ringbuf *r)
{
	if (!r)
		return;
	if (r->fd >= 0) {
		munmap((void *)r->producer_pos, r->page + r->size);
		munmap(r->consumer_pos, r->page);
	}
	free(r->wrap);
	free(r);
}

/* The fd to poll. */
int ringbuf_fd(const struct ringbuf *r)
{
	return r->fd;
}

/* The len bytes of the record whose data starts at position pos: in
 * place, or joined in r->wrap when they run past the end; NULL: ENOMEM. */
static void *record_at(struct ringbuf *r, unsigned long pos, size_t len)
{
	size_t off = pos & (r->size - 1), first = r->size - off;

	if (len <= first)
		return (void *)(r->data + off);
	if (len > r->wrap_cap) {
		char *p = realloc(r->wrap, len);

		if (!p)
			return NULL;
		r->wrap = p;
		r->wrap_cap = len;
	}
	memcpy(r->wrap, r->data + off, first);
	memcpy(r->wrap + first, r->data, len - first);
	return r->wrap;
}

/* Hand every committed record over and release its space. */
int ringbuf_consume(struct ringbuf *r)
{
	unsigned long cons, prod;
	int n = 0, err;
	bool more;

	cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	do {
		more = false;
		prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
		while (cons < prod) {
			const uint32_t *hdr = (const void *)
				(r->data + (cons & (r->size - 1)));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			uint32_t data_len = len & ~(BPF_RINGBUF_BUSY_BIT |
						    BPF_RINGBUF_DISCARD_BIT);
			unsigned long at = cons + BPF_RINGBUF_HDR_SZ;
			void *rec;

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n;	/* not committed yet */
			if (data_len > r->size - BPF_RINGBUF_HDR_SZ)
				return -EBADMSG;	/* not the kernel's */
			more = true;
			cons += (BPF_RINGBUF_HDR_SZ + data_len + 7) & ~7ul;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				rec = record_at(r, at, data_len);
				err = rec ? r->cb(r->ctx, rec, data_len)
					  : -ENOMEM;
				if (err < 0) {
					__atomic_store_n(r->consumer_pos, cons,
							 __ATOMIC_RELEASE);
					return err;
				}
				if (n < INT_MAX)
					n++;
			}
			__atomic_store_n(r->consumer_pos, cons,
					 __ATOMIC_RELEASE);
		}
	} while (more);
	return n;
}
