// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_config.c - jobtrace.conf (agent/lib/config.c over libconfig).  The
 * input is written to a file (config_load reads a path, and reads the
 * file again to catch wrapped integer literals), loaded over the defaults
 * as at start, then loaded again over that result as a SIGHUP reload
 * does, and the effective settings are printed as --check-config does.
 * A failed load must leave the configuration as it was; what
 * --check-config prints must load back to the same settings.
 */
#include <errno.h>
#include <stdbool.h>

#include "config.h"
#include "fuzz.h"

static FILE *devnull;

/* Compare the printed settings of two configurations (not the first
 * line, which names the file). */
static bool same_dump(const struct jt_config *a, const struct jt_config *b)
{
	char *ta = NULL, *tb = NULL, *ra, *rb;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ta, &la), *fb = open_memstream(&tb, &lb);
	bool same;

	if (!fa || !fb) {
		perror("open_memstream");
		abort();
	}
	config_dump(a, fa);
	config_dump(b, fb);
	fclose(fa);
	fclose(fb);
	ra = memchr(ta, '\n', la);
	rb = memchr(tb, '\n', lb);
	FUZZ_CHECK(ra && rb);
	same = la - (ra - ta) == lb - (rb - tb) &&
	       !memcmp(ra, rb, la - (ra - ta));
	free(ta);
	free(tb);
	return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jt_config c = { 0 }, before = { 0 };
	char path[128], err[1024];
	FILE *dump;
	int rc;

	/* @include reads other files (the sample's own folder, /dev/stdin):
	 * the file is root's to write, and the includes are libconfig's */
	if (memmem(data, size, "@include", 8))
		return 0;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	snprintf(path, sizeof(path), "%s/jobtrace.conf", fuzz_scratch());
	fuzz_write_file(path, data, size);

	if (config_defaults(&before) || config_defaults(&c))
		abort();
	rc = config_load(&c, path, false, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc) {
		FUZZ_CHECK(err[0]);
		FUZZ_CHECK(same_dump(&c, &before));
		goto out;
	}
	config_dump(&c, devnull);
	config_socket_path(&c);
	config_find_sink(&c, JT_SINK_HTTP, NULL);
	config_find_sink(&c, JT_SINK_CLICKHOUSE, "fleet");

	/* a reload of the same file gives the same settings */
	config_free(&before);
	if (config_load(&before, path, false, err, sizeof(err)))
		abort();
	rc = config_load(&c, path, false, err, sizeof(err));
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(same_dump(&c, &before));

	/* the printed settings read back as the same settings, but for the
	 * headers, whose values are secrets it does not show */
	for (size_t i = 0; i < c.n_sinks; i++) {
		for (size_t j = 0; j < c.sinks[i].n_headers; j++)
			free(c.sinks[i].headers[j]);
		c.sinks[i].n_headers = 0;
	}
	snprintf(path, sizeof(path), "%s/effective.conf", fuzz_scratch());
	dump = fopen(path, "w");
	if (!dump)
		abort();
	config_dump(&c, dump);
	fclose(dump);
	config_free(&before);
	rc = config_load(&before, path, false, err, sizeof(err));
	if (rc)
		fprintf(stderr, "fuzz_config: the dump does not load: %s\n", err);
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(same_dump(&c, &before));
out:
	config_free(&c);
	config_free(&before);
	return 0;
}
