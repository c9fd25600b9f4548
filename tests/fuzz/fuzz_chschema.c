// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_chschema.c - the record -> ClickHouse row encoder (chschema_row),
 * whose JSON reader takes every record the ClickHouse sink sends.  The
 * input is one record.  A row is one line ending in "}\n" that keeps the
 * record verbatim; a refused record leaves the buffer as it was and says
 * why.
 */
#include <errno.h>

#include "chschema.h"
#include "schema.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char before[] = "{\"earlier\":\"row\"}\n";
	const char *table = "unset";
	struct jbuf b;
	int rc;

	jbuf_init(&b);
	/* the sink appends rows to a batch: start with one in it */
	if (jbuf_put(&b, before, sizeof(before) - 1))
		abort();
	rc = chschema_row(&b, (const char *)data, size, &table);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOENT || rc == -ENOMEM);
	if (rc == 0) {
		const char *row = jbuf_str(&b) + sizeof(before) - 1;
		size_t n = b.len - (sizeof(before) - 1);
		int known = 0;

		FUZZ_CHECK(!memcmp(jbuf_str(&b), before, sizeof(before) - 1));
		FUZZ_CHECK(n >= 3 && row[0] == '{' && row[n - 2] == '}' &&
			   row[n - 1] == '\n');
		FUZZ_CHECK(memchr(row, '\n', n) == row + n - 1);
		for (size_t i = 0; i < SF_REC__N; i++)
			known += table && !strcmp(sf_records[i].name, table);
		FUZZ_CHECK(known == 1);
		FUZZ_CHECK(chschema_strerror()[0] == '\0');
	} else if (rc != -ENOMEM) {
		FUZZ_CHECK(table == NULL);
		FUZZ_CHECK(b.len == sizeof(before) - 1 &&
			   !memcmp(jbuf_str(&b), before, b.len));
		FUZZ_CHECK(chschema_strerror()[0] != '\0');
	}
	jbuf_free(&b);
	return 0;
}
