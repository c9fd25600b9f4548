/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_get.h - for tests only: read a value back from a record by its
 * dotted path ("io.read_bytes", "usage.steps.0.step") and assert on it,
 * and keep records as they are written.  Include after cmocka.h and
 * json_check.h.
 */
#ifndef JOBTRACE_TEST_JSON_GET_H
#define JOBTRACE_TEST_JSON_GET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Move p from the '{' of an object to the value of its member name. */
static inline bool member(struct vp *p, const char *name, size_t len)
{
	v_ws(p);
	if (p->i >= p->n || p->s[p->i] != '{')
		return false;
	p->i++;
	for (;;) {
		size_t k;

		v_ws(p);
		k = p->i;
		if (v_string(p))
			return false;
		/* keys of records carry no escapes */
		if (p->i - k - 2 == len && !memcmp(p->s + k + 1, name, len)) {
			v_ws(p);
			p->i++;	/* ':' */
			v_ws(p);
			return true;
		}
		v_ws(p);
		p->i++;
		if (v_value(p))
			return false;
		v_ws(p);
		if (p->i >= p->n || p->s[p->i++] != ',')
			return false;
	}
}

/* Move p from the '[' of an array to its element idx. */
static inline bool element(struct vp *p, unsigned long idx)
{
	v_ws(p);
	if (p->i >= p->n || p->s[p->i] != '[')
		return false;
	p->i++;
	for (unsigned long k = 0; k < idx; k++) {
		if (v_value(p))
			return false;
		v_ws(p);
		if (p->i >= p->n || p->s[p->i++] != ',')
			return false;
	}
	v_ws(p);
	return p->i < p->n && p->s[p->i] != ']';
}

/*
 * The raw JSON text of the value at a dotted path ("io.read_bytes",
 * "usage.steps.0.step") of rec into out; false when there is none.
 */
static inline bool jget(const char *rec, const char *path, char *out,
			size_t outlen)
{
	struct vp p = { (const unsigned char *)rec, strlen(rec), 0, 0 };
	size_t start;

	while (*path) {
		size_t n = strcspn(path, ".");
		char *end;
		unsigned long idx = strtoul(path, &end, 10);
		bool ok = end == path + n && n ? element(&p, idx)
					       : member(&p, path, n);

		if (!ok)
			return false;
		path += n + (path[n] == '.');
	}
	start = p.i;
	if (v_value(&p) || p.i - start >= outlen)
		return false;
	memcpy(out, p.s + start, p.i - start);
	out[p.i - start] = '\0';
	return true;
}

/* The raw value at path, which must be there. */
static inline const char *jraw(const char *rec, const char *path)
{
	static char buf[4096];

	if (!jget(rec, path, buf, sizeof(buf)))
		fail_msg("no %s in %s", path, rec);
	return buf;
}

/* The unsigned integer at path. */
static inline uint64_t ju64(const char *rec, const char *path)
{
	const char *v = jraw(rec, path);
	char *end;
	uint64_t x = strtoull(v, &end, 10);

	if (!*v || *end || *v == '-')
		fail_msg("%s is %s, not an unsigned integer", path, v);
	return x;
}

/* The number at path. */
static inline double jnum(const char *rec, const char *path)
{
	const char *v = jraw(rec, path);
	char *end;
	double x = strtod(v, &end);

	if (!*v || *end)
		fail_msg("%s is %s, not a number", path, v);
	return x;
}

/* Assert the raw JSON at path (a literal, array or quoted string). */
static inline void assert_jraw(const char *rec, const char *path,
			       const char *want)
{
	const char *v = jraw(rec, path);

	if (strcmp(v, want))
		fail_msg("%s is %s, want %s in %s", path, v, want, rec);
}

/* Assert the string at path. */
static inline void assert_jstr(const char *rec, const char *path,
			       const char *want)
{
	char q[1024];

	snprintf(q, sizeof(q), "\"%s\"", want);
	assert_jraw(rec, path, q);
}

/* Keep a copy of record s as rec[*n] (at most max records); it must be
 * one valid JSON text. */
static inline void json_keep(char **rec, size_t *n, size_t max, const char *s)
{
	if (!json_valid(s))
		fail_msg("not valid JSON: %s", s);
	assert_true(*n < max);
	rec[*n] = strdup(s);
	assert_non_null(rec[*n]);
	(*n)++;
}

#endif
