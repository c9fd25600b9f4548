// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rulesq.c - cmocka tests of agent/query/rulesq.c's status
 * computation without root or ClickHouse: nodes from host records, which
 * are behind the latest push and which refused a bundle, the text and
 * JSON forms; and agent/core/chsql.c's TabSeparated rows and escaping.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chsql.h"
#include "json_check.h"
#include "rulesq.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* A host record of node at time t with rules (version, sha, error). */
static void host_rec(char *out, size_t len, const char *node, const char *t,
		     const char *version, const char *sha, const char *error)
{
	snprintf(out, len, "{\"type\":\"host\",\"schema\":1,\"host\":\"%s\","
		 "\"id\":\"x\",\"time\":\"%s\",\"agent_version\":\"1\","
		 "\"rules\":{\"version\":\"%s\",\"sha256\":\"%s\","
		 "\"source\":\"clickhouse\",\"error\":%s}}", node, t, version,
		 sha, error);
}

/* Add a host record to f; assert it is taken. */
static void add(struct rulesq_fleet *f, const char *node, const char *t,
		const char *version, const char *sha, const char *error)
{
	char rec[1024];

	host_rec(rec, sizeof(rec), node, t, version, sha, error);
	assert_int_equal(rulesq_fleet_add_host(f, rec, strlen(rec)), 0);
}

/* Five nodes against a push of B: one current, one behind on A, one
 * refused (error, still on A), one whose later record moved it to B, one
 * that follows a folder (not behind: elsewhere). */
static void test_fleet_status(void **state)
{
	const char *folder = "{\"type\":\"host\",\"host\":\"n5\",\"time\":"
			     "\"2026-11-27T10:00:00.000000Z\",\"rules\":{"
			     "\"version\":null,\"sha256\":null,\"source\":"
			     "\"/shared/rules\",\"error\":null}}";
	struct rulesq_fleet f = { .pushed = true };
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	strcpy(f.version, "v2");
	strcpy(f.sha256, SHA_B);
	add(&f, "n3", "2026-11-27T10:00:00.000000Z", "v1", SHA_A,
	    "\"MANIFEST.sig: no signature\"");
	add(&f, "n1", "2026-11-27T10:00:00.000000Z", "v2", SHA_B, "null");
	add(&f, "n2", "2026-11-27T10:00:00.000000Z", "v1", SHA_A, "\"\"");
	add(&f, "n4", "2026-11-27T10:00:05.000000Z", "v2", SHA_B, "null");
	/* an older record of n4 comes later in the answer: it is not kept */
	add(&f, "n4", "2026-11-27T09:59:00.000000Z", "v1", SHA_A, "null");
	/* a node that follows a folder: not behind, on another source */
	assert_int_equal(rulesq_fleet_add_host(&f, folder, strlen(folder)), 0);
	rulesq_fleet_finish(&f);

	assert_int_equal(f.n, 5);
	assert_string_equal(f.nodes[4].host, "n5");
	assert_false(f.nodes[4].following);
	assert_false(f.nodes[4].behind);
	assert_int_equal(f.elsewhere, 1);
	assert_string_equal(f.nodes[0].host, "n1");
	assert_string_equal(f.nodes[3].host, "n4");
	assert_false(f.nodes[0].behind);
	assert_false(f.nodes[0].refused);
	assert_true(f.nodes[1].behind);
	assert_false(f.nodes[1].refused);
	assert_true(f.nodes[2].behind);
	assert_true(f.nodes[2].refused);
	assert_string_equal(f.nodes[2].error, "MANIFEST.sig: no signature");
	assert_false(f.nodes[3].behind);
	assert_string_equal(f.nodes[3].version, "v2");
	assert_int_equal(f.behind, 2);
	assert_int_equal(f.refused, 1);

	m = open_memstream(&text, &len);
	assert_non_null(m);
	assert_int_equal(rulesq_fleet_print(&f, m, true), 0);
	fclose(m);
	assert_true(json_valid(text));
	assert_non_null(strstr(text, "\"nodes_behind\":2"));
	assert_non_null(strstr(text, "\"nodes_refused\":1,\"nodes_elsewhere\":1"));
	assert_non_null(strstr(text, "{\"node\":\"n2\",\"version\":\"v1\""));
	free(text);

	m = open_memstream(&text, &len);
	assert_int_equal(rulesq_fleet_print(&f, m, false), 0);
	fclose(m);
	assert_non_null(strstr(text, "nodes: 5, 2 behind, 1 refused a bundle,"
				     " 1 on another rules source"));
	assert_non_null(strstr(text, "another source"));
	assert_non_null(strstr(text, "error:  MANIFEST.sig: no signature"));
	free(text);
	rulesq_fleet_free(&f);
}

/* Nothing pushed: no node is behind; a record without rules has none;
 * what is not a host record is refused; escapes reach the terminal
 * harmless. */
static void test_fleet_odd(void **state)
{
	static const char *const bad[] = {
		"{\"type\":\"process\",\"host\":\"n1\"}",
		"{\"type\":\"host\",\"time\":\"2026-11-27T10:00:00Z\"}",
		"{\"type\":\"host\",\"host\":\"n1\"",
		"[]", "",
	};
	const char *old = "{\"type\":\"host\",\"host\":\"old\",\"time\":"
			  "\"2026-11-27T10:00:00.000000Z\"}";
	struct rulesq_fleet f = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rulesq_fleet_add_host(&f, bad[i],
						       strlen(bad[i])),
				 -EINVAL);
	assert_int_equal(rulesq_fleet_add_host(&f, old, strlen(old)), 0);
	add(&f, "evil\\u001b[2J", "2026-11-27T10:00:00.000000Z", "v\\n1",
	    SHA_A, "null");
	rulesq_fleet_finish(&f);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.behind, 0);
	m = open_memstream(&text, &len);
	assert_int_equal(rulesq_fleet_print(&f, m, false), 0);
	fclose(m);
	assert_non_null(strstr(text, "latest push: none"));
	assert_non_null(strstr(text, "no rules source said"));
	assert_null(strchr(text, '\033'));
	free(text);
	rulesq_fleet_free(&f);
}

/* TabSeparated: any bytes escaped, then split into rows and values and
 * unescaped, come back byte for byte. */
static void test_tsv_roundtrip(void **state)
{
	unsigned char bytes[256];
	char *p, *v[3];
	struct jbuf b;

	(void)state;
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)i;
	jbuf_init(&b);
	chsql_tsv_escape(&b, "a\tb", 3);
	jbuf_put(&b, "\t", 1);
	chsql_tsv_escape(&b, bytes, sizeof(bytes));
	jbuf_put(&b, "\t\n", 2);
	jbuf_put(&b, "x\\\\y\n", 5);
	p = (char *)jbuf_str(&b);
	assert_null(memchr(b.buf, '\0', b.len));
	assert_int_equal(chsql_row(&p, b.buf + b.len, v, 3), 3);
	assert_string_equal(v[0], "a\tb");
	assert_memory_equal(v[1], bytes, sizeof(bytes));
	assert_string_equal(v[2], "");
	assert_int_equal(chsql_row(&p, b.buf + b.len, v, 3), 1);
	assert_string_equal(v[0], "x\\y");
	assert_int_equal(chsql_row(&p, b.buf + b.len, v, 3), 0);
	jbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_status),
		cmocka_unit_test(test_fleet_odd),
		cmocka_unit_test(test_tsv_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
