// SPDX-License-Identifier: GPL-2.0-or-later
/* test_ringbuf.c - unit tests for agent/daemon/collect/ringbuf.c over plain memory. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/bpf.h>

#include "ringbuf.h"

#define SIZE 64u	/* data bytes: a record of 20 wraps soon */

/* The kernel's side: positions and data, as the pages lay them out. */
struct fake {
	unsigned long cons, prod;
	uint8_t data[SIZE];
};

/* What the callback saw. */
struct seen {
	char rec[8][SIZE];
	size_t len[8];
	int n;
	int fail_at;	/* return -EIO on this record (1-based), 0: never */
};

static int on_rec(void *ctx, void *data, size_t len)
{
	struct seen *s = ctx;

	assert_true(s->n < 8 && len <= SIZE);
	memcpy(s->rec[s->n], data, len);
	s->len[s->n] = len;
	if (++s->n == s->fail_at)
		return -EIO;
	return 0;
}

/* Produce one record of len bytes of c with header flags; returns its
 * header position. */
static unsigned long produce(struct fake *f, uint8_t c, uint32_t len,
			     uint32_t flags)
{
	unsigned long at = f->prod;
	uint32_t hdr = len | flags;

	memcpy(f->data + (at % SIZE), &hdr, sizeof(hdr));
	for (uint32_t i = 0; i < len; i++)
		f->data[(at + BPF_RINGBUF_HDR_SZ + i) % SIZE] = c;
	f->prod += (BPF_RINGBUF_HDR_SZ + len + 7) & ~7ul;
	return at;
}

/* Records come out in order, the discarded one not at all. */
static void test_order_and_discard(void **state)
{
	struct fake f = { 0 };
	struct seen s = { 0 };
	struct ringbuf *r;

	(void)state;
	assert_int_equal(ringbuf_open_mem(&f.cons, &f.prod, f.data, SIZE,
					  on_rec, &s, &r), 0);
	produce(&f, 'a', 3, 0);
	produce(&f, 'x', 5, BPF_RINGBUF_DISCARD_BIT);
	produce(&f, 'b', 8, 0);
	assert_int_equal(ringbuf_consume(r), 2);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.len[0], 3);
	assert_memory_equal(s.rec[0], "aaa", 3);
	assert_int_equal(s.len[1], 8);
	assert_memory_equal(s.rec[1], "bbbbbbbb", 8);
	assert_int_equal(f.cons, f.prod);
	assert_int_equal(ringbuf_consume(r), 0);
	ringbuf_free(r);
}

/* A record not yet committed stops the consumer before it. */
static void test_busy(void **state)
{
	struct fake f = { 0 };
	struct seen s = { 0 };
	struct ringbuf *r;
	unsigned long busy;
	uint32_t hdr = 4;

	(void)state;
	assert_int_equal(ringbuf_open_mem(&f.cons, &f.prod, f.data, SIZE,
					  on_rec, &s, &r), 0);
	produce(&f, 'a', 4, 0);
	busy = produce(&f, 'b', 4, BPF_RINGBUF_BUSY_BIT);
	assert_int_equal(ringbuf_consume(r), 1);
	assert_int_equal(f.cons, busy);
	memcpy(f.data + busy % SIZE, &hdr, sizeof(hdr));	/* committed */
	assert_int_equal(ringbuf_consume(r), 1);
	assert_memory_equal(s.rec[1], "bbbb", 4);
	assert_int_equal(f.cons, f.prod);
	ringbuf_free(r);
}

/* A record that runs past the end of the data reads as one. */
static void test_wrap(void **state)
{
	struct fake f = { 0 };
	struct seen s = { 0 };
	struct ringbuf *r;
	char want[20];

	(void)state;
	assert_int_equal(ringbuf_open_mem(&f.cons, &f.prod, f.data, SIZE,
					  on_rec, &s, &r), 0);
	produce(&f, 'a', 32, 0);	/* 40 bytes: up to 40 */
	assert_int_equal(ringbuf_consume(r), 1);
	produce(&f, 'b', 20, 0);	/* data 48..67: wraps after 16 */
	produce(&f, 'c', 4, 0);
	assert_int_equal(ringbuf_consume(r), 2);
	memset(want, 'b', sizeof(want));
	assert_int_equal(s.len[1], 20);
	assert_memory_equal(s.rec[1], want, 20);
	assert_memory_equal(s.rec[2], "cccc", 4);
	assert_int_equal(f.cons, f.prod);
	ringbuf_free(r);
}

/* A callback's error stops the consumer after releasing that record. */
static void test_callback_error(void **state)
{
	struct fake f = { 0 };
	struct seen s = { .fail_at = 1 };
	struct ringbuf *r;
	unsigned long second;

	(void)state;
	assert_int_equal(ringbuf_open_mem(&f.cons, &f.prod, f.data, SIZE,
					  on_rec, &s, &r), 0);
	produce(&f, 'a', 4, 0);
	second = produce(&f, 'b', 4, 0);
	assert_int_equal(ringbuf_consume(r), -EIO);
	assert_int_equal(f.cons, second);
	assert_int_equal(ringbuf_consume(r), 1);
	assert_int_equal(s.n, 2);
	ringbuf_free(r);
}

/* A length that cannot fit the buffer is refused, not read. */
static void test_bad_length(void **state)
{
	struct fake f = { 0 };
	struct seen s = { 0 };
	struct ringbuf *r;
	uint32_t hdr = SIZE;

	(void)state;
	assert_int_equal(ringbuf_open_mem(&f.cons, &f.prod, f.data, SIZE,
					  on_rec, &s, &r), 0);
	memcpy(f.data, &hdr, sizeof(hdr));
	f.prod = 8;
	assert_int_equal(ringbuf_consume(r), -EBADMSG);
	assert_int_equal(s.n, 0);
	ringbuf_free(r);
	assert_int_equal(ringbuf_open_mem(&f.cons, &f.prod, f.data, 48,
					  on_rec, &s, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_discard),
		cmocka_unit_test(test_busy),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_callback_error),
		cmocka_unit_test(test_bad_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
