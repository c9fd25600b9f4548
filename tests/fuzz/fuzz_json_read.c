// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_json_read.c - the JSON reader (agent/lib/json_read.c), which every
 * record goes through on its way to ClickHouse and the SQLite store.  The
 * input is one JSON text.  It is read twice: skipped whole, and copied
 * value by value into a json.h buffer with the typed reads.  The checks:
 *   - both reads agree: the same verdict, the same error at the same byte;
 *   - tests/unit/json_check.h, a validator written apart from the reader,
 *     agrees, but for lone surrogates, which only the reader refuses;
 *   - each number agrees with strtoull, strtoll and strtod;
 *   - a string decodes to what jr_str_eq() matches;
 *   - the copy reads back and copies to the same bytes (when json.h can
 *     write it: keys without NUL, nesting within JSON_MAX_DEPTH);
 *   - jr_member_str() finds the first top-level "type" the walk saw.
 */
#include <errno.h>
#include <math.h>

#include "fuzz.h"
#include "json.h"
#include "json_read.h"

#include "../unit/json_check.h"

struct copy {
	struct jbuf *out;
	struct jbuf str;	/* decoded strings */
	struct jbuf key;	/* a key with its NUL */
	bool exact;		/* json.h could write all of it */
	int type;		/* first top-level "type": 0 string, -EDOM, -ENOENT */
	const char *type_s;
};

/* A number token agrees with the C library's conversions. */
static void check_number(const struct jr *at)
{
	struct jr r = *at;
	struct jr_num num;
	char tok[600], *end;
	unsigned long long ull;
	long long ll;
	uint64_t u;
	int64_t i;
	double f, want;
	bool is_int, ull_ok, ll_ok;

	if (jr_num(&r, &num))
		return;		/* "-" and no digit: refused by every read */
	if (num.len >= sizeof(tok))
		return;
	memcpy(tok, num.s, num.len);
	tok[num.len] = '\0';
	is_int = !strpbrk(tok, ".eE");
	FUZZ_CHECK(is_int == num.is_int && num.neg == (tok[0] == '-'));

	errno = 0;
	ull = strtoull(tok + num.neg, &end, 10);
	ull_ok = is_int && !errno && !*end && (!num.neg || !ull);
	r = *at;
	FUZZ_CHECK((jr_u64(&r, &u) == 0) == ull_ok);
	FUZZ_CHECK(!ull_ok || u == ull);

	errno = 0;
	ll = strtoll(tok, &end, 10);
	ll_ok = is_int && !errno && !*end;
	r = *at;
	FUZZ_CHECK((jr_i64(&r, &i) == 0) == ll_ok);
	FUZZ_CHECK(!ll_ok || i == ll);

	want = strtod(tok, &end);
	r = *at;
	if (jr_f64(&r, &f) == 0)
		FUZZ_CHECK(f == want);
	else
		FUZZ_CHECK(!isfinite(want) || num.len >= 512);
}

/* The decoded bytes of s (in c->str), checked against jr_str_eq(). */
static const char *decoded(struct copy *c, const struct jr_str *s, size_t *n)
{
	char bytes[64];
	const char *p = jr_str_jbuf(s, &c->str, 0, n);

	FUZZ_CHECK(p && *n <= s->len);
	FUZZ_CHECK(jr_str_eq(s, p, *n));
	FUZZ_CHECK(!*n || !jr_str_eq(s, p, *n - 1));
	if (s->len <= sizeof(bytes))
		FUZZ_CHECK(jr_str_decode(s, bytes, JR_BYTES) <= *n);
	FUZZ_CHECK(s->plain == (!s->esc && !memchr(s->s, 0x7f, s->len)));
	return p;
}

/* Copy the next value of r into c->out; the reader's error if any. */
static int copy_value(struct jr *r, struct copy *c, unsigned depth)
{
	struct jr_str s;
	const char *p;
	uint64_t u;
	int64_t i;
	double f;
	bool b;
	size_t n;
	int err;

	switch (jr_peek(r)) {
	case JR_OBJ:
		if (depth >= JSON_MAX_DEPTH)
			c->exact = false;
		err = jr_obj_open(r);
		json_obj_open(c->out);
		while (!err && (err = jr_next_member(r, &s)) > 0) {
			p = decoded(c, &s, &n);
			if (memchr(p, '\0', n))
				c->exact = false;
			jbuf_reset(&c->key);
			FUZZ_CHECK(jbuf_put(&c->key, p, n) == 0);
			json_key(c->out, jbuf_str(&c->key));
			if (!depth && c->type == -ENOENT && jr_str_eq(&s, "type", 4)) {
				c->type = jr_peek(r) == JR_STR ? 0 : -EDOM;
				c->type_s = (const char *)r->pos + 1;
			}
			err = copy_value(r, c, depth + 1);
		}
		json_obj_close(c->out);
		return err;
	case JR_ARR:
		if (depth >= JSON_MAX_DEPTH)
			c->exact = false;
		err = jr_arr_open(r);
		json_arr_open(c->out);
		while (!err && (err = jr_next_elem(r)) > 0)
			err = copy_value(r, c, depth + 1);
		json_arr_close(c->out);
		return err;
	case JR_STR:
		err = jr_str(r, &s);
		if (err)
			return err;
		p = decoded(c, &s, &n);
		json_strn(c->out, p, n);
		return 0;
	case JR_NUM:
		check_number(r);
		if (!jr_u64(r, &u)) {
			json_u64(c->out, u);
		} else if (!jr_i64(r, &i)) {
			json_i64(c->out, i);
		} else if (!(err = jr_f64(r, &f))) {
			json_double(c->out, f);
		} else {
			if (err != -EDOM)
				return err;
			err = jr_skip(r);	/* beyond a double */
			json_null(c->out);
			return err;
		}
		return 0;
	case JR_BOOL:
		err = jr_bool(r, &b);
		if (!err)
			json_bool(c->out, b);
		return err;
	case JR_NULL:
		err = jr_null(r);
		if (!err)
			json_null(c->out);
		return err;
	default:
		return jr_skip(r);
	}
}

/* Copy the text buf[0..len) whole into out; 0 or the reader's error. */
static int copy_text(const char *buf, size_t len, struct copy *c,
		     struct jr *r)
{
	int err;

	jr_init(r, buf, len);
	err = copy_value(r, c, 0);
	if (!err)
		err = jr_end(r);
	FUZZ_CHECK(err == 0 || err == -EINVAL);
	FUZZ_CHECK(!err == !r->err);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct jbuf out1, out2;
	struct copy c = { 0 };
	struct jr_str type;
	struct jr r, skip;
	int err, skip_err, rc;

	/* skipped whole */
	jr_init(&skip, text, size);
	skip_err = jr_skip(&skip);
	if (!skip_err)
		skip_err = jr_end(&skip);

	/* copied value by value */
	jbuf_init(&out1);
	jbuf_init(&out2);
	jbuf_init(&c.str);
	jbuf_init(&c.key);
	c.out = &out1;
	c.exact = true;
	c.type = -ENOENT;
	err = copy_text(text, size, &c, &r);
	FUZZ_CHECK(err == skip_err);
	if (err) {
		FUZZ_CHECK(!strcmp(r.err, skip.err) && r.err_off == skip.err_off);
		FUZZ_CHECK(r.err_off <= size);
	}

	/* an independent validator: the same verdict but on surrogates */
	if (!err)
		FUZZ_CHECK(json_valid_n(text, size));
	else if (json_valid_n(text, size))
		FUZZ_CHECK(!strcmp(r.err, "invalid escape or lone surrogate"));

	/* the copy reads back the same */
	if (!err && c.exact) {
		struct copy c2 = { 0 };
		struct jr r2;

		FUZZ_CHECK(!out1.oom && json_valid_n(out1.buf, out1.len));
		jbuf_init(&c2.str);
		jbuf_init(&c2.key);
		c2.out = &out2;
		c2.exact = true;
		c2.type = -ENOENT;
		FUZZ_CHECK(copy_text(out1.buf, out1.len, &c2, &r2) == 0);
		FUZZ_CHECK(out2.len == out1.len &&
			   !memcmp(out2.buf, out1.buf, out1.len));
		jbuf_free(&c2.str);
		jbuf_free(&c2.key);
	}

	/* the first top-level "type", as the walk saw it */
	rc = jr_member_str(text, size, "type", &type);
	if (!err) {
		jr_init(&r, text, size);
		if (jr_peek(&r) != JR_OBJ)
			FUZZ_CHECK(rc == -EINVAL);
		else
			FUZZ_CHECK(rc == c.type && (rc || type.s == c.type_s));
	}

	jbuf_free(&out1);
	jbuf_free(&out2);
	jbuf_free(&c.str);
	jbuf_free(&c.key);
	return 0;
}
