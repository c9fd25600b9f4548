// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_schema.c - the record reader (schema_read in agent/core/schema.c), which
 * reads the columns of every record the SQLite store keeps.  The input is
 * one JSON text, read as each record type.  The checks:
 *   - its verdict is json_read.h's on the same text (one valid object, or
 *     not), whatever the record type;
 *   - every string value lies in the input or in the scratch buffer, and
 *     every SV_RAW value is a JSON text the reader accepts of the type its
 *     member describes;
 *   - schema_type_of() names the type jr_member_str() finds.
 */
#include <errno.h>

#include "fuzz.h"
#include "json.h"
#include "json_read.h"
#include "schema.h"

/* Whether [s, s+n) lies in [base, base+len). */
static int inside(const char *s, size_t n, const char *base, size_t len)
{
	return s >= base && n <= len && s - base <= (ptrdiff_t)(len - n);
}

/* The values of f[0..n) are where they must be. */
static void check_values(const struct sf_field *f, size_t n, const struct sv *v,
			 const char *in, size_t len, const struct jbuf *scratch)
{
	for (size_t i = 0; i < n; i++, f++) {
		const struct sv *x = &v[f->slot];
		struct jr r;

		if (f->type == SFT_OBJ)
			check_values(f->sub, f->nsub, v, in, len, scratch);
		if (f->type == SFT_OBJ || f->type == SFT_RECTIME)
			continue;
		FUZZ_CHECK(x->st == SV_NULL || x->st == SV_SET || x->st == SV_RAW);
		if (x->st == SV_RAW) {
			FUZZ_CHECK(f->type == SFT_STRARR || f->type == SFT_COUNTS ||
				   f->type == SFT_OBJARR);
			FUZZ_CHECK(inside(x->s, x->n, in, len));
			jr_init(&r, x->s, x->n);
			FUZZ_CHECK(jr_peek(&r) == (f->type == SFT_COUNTS ? JR_OBJ : JR_ARR));
			FUZZ_CHECK(jr_skip(&r) == 0 && jr_end(&r) == 0);
		} else if (x->st == SV_SET && f->type == SFT_STR) {
			FUZZ_CHECK(inside(x->s, x->n, in, len) ||
				   inside(x->s, x->n, scratch->buf, scratch->cap));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data;
	static struct jbuf scratch;
	struct sv v[V__N];
	struct jr_str t;
	struct jr r;
	int valid;

	jr_init(&r, in, size);
	valid = jr_peek(&r) == JR_OBJ && jr_skip(&r) == 0 && jr_end(&r) == 0;
	for (size_t i = 0; i < SF_REC__N; i++) {
		const struct sf_record *rec = &sf_records[i];
		const char *why = NULL;
		int err = schema_read(rec, in, size, v, &scratch, &why);

		FUZZ_CHECK(err == 0 || err == -EINVAL);
		FUZZ_CHECK((err == 0) == valid);
		FUZZ_CHECK(err == 0 || why);
		if (!err)
			check_values(rec->f, rec->n, v, in, size, &scratch);
	}
	if (!jr_member_str(in, size, "type", &t)) {
		char buf[16];
		size_t n;
		const char *s = jr_str_get(&t, buf, sizeof(buf), &n);
		const struct sf_record *want = s ? sf_record_find(s, n) : NULL;

		FUZZ_CHECK(schema_type_of(in, size) == want);
	} else {
		FUZZ_CHECK(schema_type_of(in, size) == NULL);
	}
	return 0;
}
