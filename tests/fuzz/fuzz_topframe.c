// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_topframe.c - what `jobtrace top` reads back from the agent's query
 * child: a frame's JSON (topq_from_json, agent/query/topq.c), which a
 * user's view draws.  The input is one frame.  The checks:
 *   - a frame read is drawn line by line (topq_line_text, every width
 *     the view uses) and printed again (topq_print_json);
 *   - what is printed reads back with the same lines: each line's text,
 *     parent, depth and kind, the runs and the running runs;
 *   - a frame refused leaves nothing to free but what topq_free() frees.
 */
#include <errno.h>

#include "fuzz.h"
#include "topq.h"

/* Every line of t drawn at the widths the view and --once use. */
static void draw(const struct topq *t)
{
	static const int widths[] = { 0, 80, 120, 400 };
	char line[512];

	for (size_t i = 0; i < t->n; i++) {
		for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++) {
			topq_line_text(t, i, widths[w], line, sizeof(line));
			FUZZ_CHECK(strlen(line) < sizeof(line));
		}
		FUZZ_CHECK(t->v[i].parent < (long)i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_query q = { 0 };
	struct topq t, u;
	char *buf = NULL, a[512], b[512];
	size_t len = 0;
	FILE *m;

	if (topq_from_json((const char *)data, size, &t)) {
		topq_free(&t);
		return 0;
	}
	draw(&t);
	m = open_memstream(&buf, &len);
	if (!m || topq_print_json(&t, &q, m)) {
		if (m)
			fclose(m);
		free(buf);
		topq_free(&t);
		return 0;
	}
	fclose(m);
	FUZZ_CHECK(topq_from_json(buf, len, &u) == 0);
	FUZZ_CHECK(u.n == t.n && u.runs == t.runs && u.running == t.running);
	for (size_t i = 0; i < t.n; i++) {
		topq_line_text(&t, i, 0, a, sizeof(a));
		topq_line_text(&u, i, 0, b, sizeof(b));
		FUZZ_CHECK(!strcmp(a, b));
		FUZZ_CHECK(u.v[i].parent == t.v[i].parent &&
			   u.v[i].depth == t.v[i].depth &&
			   u.v[i].kind == t.v[i].kind);
	}
	topq_free(&u);
	topq_free(&t);
	free(buf);
	return 0;
}
