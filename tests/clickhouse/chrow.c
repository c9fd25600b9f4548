// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * chrow.c - schema v1 records to ClickHouse rows, for tests.
 *
 *   chrow --schema DB          print the DDL (chschema_print)
 *   chrow OUTDIR < NDJSON      convert each record (one per line) and append
 *                              its JSONEachRow line to OUTDIR/TABLE.rows
 *                              (a process record's files rows to
 *                              OUTDIR/files.rows);
 *                              print "TABLE COUNT" per table on stdout.
 *                              A line that is rejected is reported on stderr
 *                              with its number and the reason; the exit
 *                              status is then 1.
 *   chrow --bench N < NDJSON   convert the records over and over, in N
 *                              rounds of >= 1000 records; print the CPU
 *                              time per record (fastest and median round)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chschema.h"
#include "schema.h"

#define MAX_TABLES 16

/* Read all of stdin into a NUL-terminated buffer. */
static char *slurp(size_t *len)
{
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap), *p;

	if (!buf)
		return NULL;
	while ((r = fread(buf + n, 1, cap - n - 1, stdin)) > 0) {
		n += r;
		if (cap - n - 1 == 0) {
			p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				return NULL;
			}
			buf = p;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* CPU time of this thread in ns. */
static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Sort helper for doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Convert every line N times over, in rounds; print the CPU time per
 * record of the fastest and the median round (a shared VM is noisy).
 */
static int bench(const char *in, size_t len, long rounds)
{
	const char *table, *p, *nl, *end = in + len;
	long records = 0, bytes = 0, r;
	double *per = calloc((size_t)rounds, sizeof(double)), t0;
	struct jbuf b;

	if (!per)
		return 2;
	jbuf_init(&b);
	for (r = 0; r < rounds; r++) {
		long n = 0;

		t0 = cpu_ns();
		do {
			for (p = in; p < end; p = nl + 1) {
				nl = memchr(p, '\n', (size_t)(end - p));
				if (!nl)
					nl = end;
				if (nl == p)
					continue;
				jbuf_reset(&b);
				if (chschema_row(&b, p, (size_t)(nl - p), &table)) {
					fprintf(stderr, "chrow: %s\n",
						chschema_strerror());
					jbuf_free(&b);
					free(per);
					return 1;
				}
				n++;
				if (!r)
					bytes += nl - p;
			}
		} while (n < 1000);
		per[r] = (cpu_ns() - t0) / (double)n;
		if (!r)
			records = n;
	}
	jbuf_free(&b);
	if (!records) {
		fprintf(stderr, "chrow: no records on stdin\n");
		free(per);
		return 1;
	}
	qsort(per, (size_t)rounds, sizeof(double), cmp_double);
	printf("%.0f bytes/record: %.0f ns/record fastest round, %.0f median "
	       "(%ld rounds, CPU time)\n", (double)bytes / (double)records,
	       per[0], per[rounds / 2], rounds);
	free(per);
	return 0;
}

/* Convert each line into OUTDIR/TABLE.rows. */
static int convert(const char *dir, const char *in, size_t len)
{
	const char *names[MAX_TABLES];
	FILE *files[MAX_TABLES];
	long counts[MAX_TABLES];
	const char *table, *p, *nl, *end = in + len;
	char path[4096];
	struct jbuf b;
	int n = 0, i, rows, status = 0;
	long line = 0;

	for (; n <= SF_REC__N && n < MAX_TABLES; n++) {
		names[n] = n < SF_REC__N ? sf_records[n].name :
			   CHSCHEMA_FILES_TABLE;
		counts[n] = 0;
		snprintf(path, sizeof(path), "%s/%s.rows", dir, names[n]);
		files[n] = fopen(path, "a");
		if (!files[n]) {
			fprintf(stderr, "chrow: cannot open %s: %s\n", path,
				strerror(errno));
			return 2;
		}
	}
	jbuf_init(&b);
	for (p = in; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		line++;
		if (nl == p)
			continue;
		jbuf_reset(&b);
		if (chschema_row(&b, p, (size_t)(nl - p), &table)) {
			fprintf(stderr, "chrow: line %ld: %s\n", line,
				chschema_strerror());
			status = 1;
			continue;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(names[i], table))
				break;
		fwrite(b.buf, 1, b.len, files[i]);
		counts[i]++;
		if (i != SF_REC_PROCESS)
			continue;
		jbuf_reset(&b);
		rows = chschema_file_rows(&b, p, (size_t)(nl - p));
		if (rows < 0) {
			fprintf(stderr, "chrow: line %ld: files: %s\n", line,
				strerror(-rows));
			status = 1;
			continue;
		}
		fwrite(b.buf, 1, b.len, files[SF_REC__N]);
		counts[SF_REC__N] += rows;
	}
	jbuf_free(&b);
	for (i = 0; i < n; i++) {
		if (fclose(files[i])) {
			fprintf(stderr, "chrow: writing %s/%s.rows: %s\n", dir,
				names[i], strerror(errno));
			status = 2;
		}
		printf("%s %ld\n", names[i], counts[i]);
	}
	return status;
}

int main(int argc, char **argv)
{
	size_t len;
	char *in;
	int rc;

	if (argc == 3 && !strcmp(argv[1], "--schema")) {
		chschema_print(stdout, argv[2]);
		return fflush(stdout) ? 2 : 0;
	}
	if (argc != 2 && !(argc == 3 && !strcmp(argv[1], "--bench"))) {
		fprintf(stderr, "usage: chrow --schema DB | chrow OUTDIR < NDJSON | "
			"chrow --bench N < NDJSON\n");
		return 2;
	}
	in = slurp(&len);
	if (!in) {
		fprintf(stderr, "chrow: out of memory reading stdin\n");
		return 2;
	}
	if (argc == 3)
		rc = bench(in, len, atol(argv[2]) > 0 ? atol(argv[2]) : 1);
	else
		rc = convert(argv[1], in, len);
	free(in);
	return rc;
}
