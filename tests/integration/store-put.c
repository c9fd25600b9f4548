// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store-put.c - store the NDJSON records on stdin in the SQLite store DB
 * with the agent's own writer (store_put_json), in one transaction, for
 * tests that need records of chosen times (retention).  The agent may be
 * running: SQLite's locking orders the two writers.
 *
 *   store-put DB < records.ndjson
 *
 * Prints "stored=N" (new records); exit status 0, or 1 on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "log.h"
#include "store.h"

/* Store stdin's records in argv[1]. */
int main(int argc, char **argv)
{
	struct store *s = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int n, ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: store-put DB < records.ndjson\n");
		return 2;
	}
	log_init("store-put", 0, LOG_LVL_WARN);
	if (store_open(argv[1], false, &s))
		return 1;
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len && store_put_json(s, line, (size_t)len))
			goto cleanup;
	}
	n = store_flush(s);
	if (n < 0)
		goto cleanup;
	printf("stored=%d\n", n);
	ret = 0;
cleanup:
	free(line);
	store_close(s);
	return ret;
}
