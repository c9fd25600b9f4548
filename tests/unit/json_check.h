/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_check.h - for tests only: a strict RFC 8259 validator, so a test
 * can check that what a writer produced is one valid JSON text.
 * Included by test_json.c, test_chschema.c, test_json_read.c and
 * tests/fuzz/fuzz_json_read.c, which checks agent/lib/json_read.c against it
 * (static functions: one copy per program).
 */
#ifndef JOBTRACE_TEST_JSON_CHECK_H
#define JOBTRACE_TEST_JSON_CHECK_H

#include <stddef.h>
#include <string.h>

/*
 * A strict little RFC 8259 validator, so tests can check that whatever the
 * writer produced is one valid JSON text (raw bytes in strings must be
 * valid UTF-8, control characters must be escaped).
 */
struct vp {
	const unsigned char *s;
	size_t n, i;
	int depth;
};

static int v_value(struct vp *p);

/* Skip JSON whitespace. */
static void v_ws(struct vp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
			       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

/* Accept a literal word. */
static int v_word(struct vp *p, const char *w)
{
	size_t l = strlen(w);

	if (p->n - p->i < l || memcmp(p->s + p->i, w, l))
		return -1;
	p->i += l;
	return 0;
}

/* Accept one valid UTF-8 sequence of 2..4 bytes. */
static int v_utf8(struct vp *p)
{
	const unsigned char *s = p->s + p->i;
	size_t avail = p->n - p->i, len, k;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return -1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	if (s[0] == 0xed)
		hi = 0x9f;
	if (s[0] == 0xf0)
		lo = 0x90;
	if (s[0] == 0xf4)
		hi = 0x8f;
	if (avail < len || s[1] < lo || s[1] > hi)
		return -1;
	for (k = 2; k < len; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return -1;
	p->i += len;
	return 0;
}

/* Accept a string token. */
static int v_string(struct vp *p)
{
	if (p->i >= p->n || p->s[p->i] != '"')
		return -1;
	p->i++;
	while (p->i < p->n) {
		unsigned char c = p->s[p->i];

		if (c == '"') {
			p->i++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			if (++p->i >= p->n)
				return -1;
			c = p->s[p->i++];
			if (c == 'u') {
				for (int k = 0; k < 4; k++, p->i++)
					if (p->i >= p->n ||
					    !strchr("0123456789abcdefABCDEF",
						    p->s[p->i]) || !p->s[p->i])
						return -1;
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return -1;
			}
			continue;
		}
		if (c >= 0x80) {
			if (v_utf8(p))
				return -1;
			continue;
		}
		p->i++;
	}
	return -1;
}

/* Accept a number token (RFC 8259 grammar). */
static int v_number(struct vp *p)
{
	size_t st;

	if (p->i < p->n && p->s[p->i] == '-')
		p->i++;
	if (p->i >= p->n)
		return -1;
	if (p->s[p->i] == '0') {
		p->i++;
	} else if (p->s[p->i] >= '1' && p->s[p->i] <= '9') {
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
	} else {
		return -1;
	}
	if (p->i < p->n && p->s[p->i] == '.') {
		st = ++p->i;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		if (p->i == st)
			return -1;
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		st = p->i;
		while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
			p->i++;
		if (p->i == st)
			return -1;
	}
	return 0;
}

/* Accept an object or array body after its opening bracket. */
static int v_container(struct vp *p, char close, int obj)
{
	if (++p->depth > 64)
		return -1;
	p->i++;
	v_ws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return 0;
	}
	for (;;) {
		v_ws(p);
		if (obj) {
			if (v_string(p))
				return -1;
			v_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return -1;
			p->i++;
		}
		if (v_value(p))
			return -1;
		v_ws(p);
		if (p->i >= p->n)
			return -1;
		if (p->s[p->i] == ',') {
			p->i++;
			continue;
		}
		if (p->s[p->i] != close)
			return -1;
		p->i++;
		p->depth--;
		return 0;
	}
}

/* Accept any value. */
static int v_value(struct vp *p)
{
	v_ws(p);
	if (p->i >= p->n)
		return -1;
	switch (p->s[p->i]) {
	case '{':
		return v_container(p, '}', 1);
	case '[':
		return v_container(p, ']', 0);
	case '"':
		return v_string(p);
	case 't':
		return v_word(p, "true");
	case 'f':
		return v_word(p, "false");
	case 'n':
		return v_word(p, "null");
	default:
		return v_number(p);
	}
}

/* True if s[0..n) is exactly one valid JSON text. */
static int json_valid_n(const char *s, size_t n)
{
	struct vp p = { (const unsigned char *)s, n, 0, 0 };

	if (v_value(&p))
		return 0;
	v_ws(&p);
	return p.i == p.n;
}

/* True if the C string s is exactly one valid JSON text. */
static inline int json_valid(const char *s)
{
	return json_valid_n(s, strlen(s));
}

#endif
