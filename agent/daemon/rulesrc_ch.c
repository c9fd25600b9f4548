// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rulesrc_ch.c - the ClickHouse rules source (rulesrc_ch.h): not built
 * yet; every call says so, so that rules.source = "clickhouse" is refused
 * with a clear message rather than silently ignored.
 */
#include <errno.h>

#include "rulesrc_ch.h"
#include "util.h"

/* Not built yet: -ENOSYS. */
int rulesrc_clickhouse_open(const struct jt_config *cfg, void **ctx,
			    char *err, size_t errlen)
{
	(void)cfg;
	*ctx = NULL;
	util_seterr(err, errlen, "rules.source = \"clickhouse\": the ClickHouse "
		    "rules source is not built yet");
	return -ENOSYS;
}

/* Not built yet: -ENOSYS. */
int rulesrc_clickhouse_fetch(void *ctx, const char *have_tag,
			     struct jbuf *out, char *tag, size_t taglen,
			     char *err, size_t errlen)
{
	(void)ctx;
	(void)have_tag;
	(void)out;
	(void)tag;
	(void)taglen;
	util_seterr(err, errlen, "the ClickHouse rules source is not built yet");
	return -ENOSYS;
}

/* Nothing to release. */
void rulesrc_clickhouse_close(void *ctx)
{
	(void)ctx;
}
