/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulesrc.h - where the rules come from (rules.source, jobtrace.conf(5)):
 *   ""                 the rules_dir folder, as before rules.source existed
 *   /a/folder          a folder (local or shared): rulesctl.c follows it
 *                      by polling (every 0.25 s on a local file system,
 *                      every poll_interval on others), with inotify too
 *                      when rules.inotify is true
 *   https://host/x.tar a bundle (rulebundle.h) fetched with If-None-Match
 *   clickhouse         the latest bundle in the fleet store's rules table
 *                      (rulesrc_ch.h: the ClickHouse sink's server)
 *
 * A bundle source is one row of a table: open from the configuration,
 * fetch, close.  Its fetches run on a thread of their own (the fetcher),
 * never on the agent's loop: every poll_interval, after a random jitter of
 * up to a tenth of it (and one at start), so that a fleet's nodes do not
 * ask at once.  A fetched bundle is checked (rulebundle_open, the public
 * key when set) and extracted into STATE/rules/<sha256>/ by the fetcher;
 * the loop takes it (rulesrc_take) and loads it with rules_load_dir under
 * the usual deadline, memory limit and self-tests.
 *
 * Threading: the fetcher thread owns the source's ctx; everything the loop
 * reads (rulesrc_take, rulesrc_get_status) goes through the fetcher's
 * mutex.
 */
#ifndef JT_RULESRC_H
#define JT_RULESRC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "json.h"
#include "rulebundle.h"

/*
 * Fetch the source's bundle.  have_tag: the tag of the bundle the agent
 * holds ("" none).  Returns 0 with a new bundle appended to out and its tag
 * (an ETag, a version: what tells it apart next time) in tag; 1 when the
 * bundle is unchanged since have_tag; -errno on failure with the reason,
 * naming the URL or server, in err.
 */
typedef int (*rulesrc_fetch_fn)(void *ctx, const char *have_tag,
				struct jbuf *out, char *tag, size_t taglen,
				char *err, size_t errlen);

enum rulesrc_type {
	RULESRC_FOLDER,		/* "" or a path: rulesctl.c */
	RULESRC_URL,		/* http:// or https:// */
	RULESRC_CLICKHOUSE,	/* "clickhouse" */
};

/* A bundle source: one row of the sources' table (rulesrc.c). */
struct rulesrc_ops {
	const char *name;		/* "https", "clickhouse": in status */
	/* the source of cfg's rules.source in *ctx: 0 or -errno, err */
	int (*open)(const struct jt_config *cfg, void **ctx, char *err,
		    size_t errlen);
	rulesrc_fetch_fn fetch;
	void (*close)(void *ctx);	/* accepts NULL */
	/* end a running fetch soon, from another thread; NULL: none (the
	 * fetch's own timeout bounds the agent's stop) */
	void (*cancel)(void *ctx);
};

/* The kind of source of a rules.source value. */
enum rulesrc_type rulesrc_type_of(const char *source);
/* The row of a bundle source type; NULL for RULESRC_FOLDER. */
const struct rulesrc_ops *rulesrc_ops_of(enum rulesrc_type t);

#define RULESRC_TAG_MAX 256
#define RULESRC_TIMEOUT_MS 20000	/* one fetch, connect and transfer */

/* A checked bundle extracted and ready to load, or the one in force. */
struct rulesrc_bundle {
	char dir[PATH_MAX];		/* STATE/rules/<sha256> */
	char version[RULEBUNDLE_VERSION_MAX + 1];
	char sha256[65];
	char tag[RULESRC_TAG_MAX];
	uint64_t fetched_at;		/* CLOCK_REALTIME ns */
};

/* What `jobtrace status` shows of a bundle source. */
struct rulesrc_status {
	char source[PATH_MAX];		/* as shown: a URL without secrets */
	uint64_t polls;			/* fetches asked */
	uint64_t unchanged;		/* answered "unchanged" (HTTP 304) */
	uint64_t fetched;		/* new bundles that passed the checks */
	uint64_t refused;		/* fetched bundles refused, fetches failed */
	uint64_t last_poll;		/* CLOCK_REALTIME ns, 0: none yet */
	uint64_t last_fetch;		/* CLOCK_REALTIME ns of the last new one */
	char last_error[512];		/* "" when the last fetch went well */
};

struct rulesrc;

/*
 * Start following cfg's bundle source (rules.source a URL or clickhouse):
 * its thread polls as above; have: the bundle in force (its tag is sent
 * as the one held), or NULL.  0 or -errno with err filled.
 */
int rulesrc_start(const struct jt_config *cfg, const struct rulesrc_bundle *have,
		  struct rulesrc **out, char *err, size_t errlen);
/* On the loop: true and *b filled (its tar into tar when not NULL) when a
 * checked bundle waits to load. */
bool rulesrc_take(struct rulesrc *s, struct rulesrc_bundle *b,
		  struct jbuf *tar);
/* On the loop: the bundle sha256 is in force (its folder is kept). */
void rulesrc_loaded(struct rulesrc *s, const char *sha256);
/* Copy the source's status. */
void rulesrc_get_status(struct rulesrc *s, struct rulesrc_status *st);
/* Stop the thread (an ongoing fetch is cancelled) and free; accepts NULL. */
void rulesrc_stop(struct rulesrc *s);

/* Extract checked bundle b into STATE/rules/<sha256>/ (kept when it is
 * there), its path into dir: 0 or -errno with err filled. */
int rulesrc_install(const char *state, const struct rulebundle *b,
		    char *dir, size_t dirlen, char *err, size_t errlen);
/* The bundle of tar t, tagged tag, loaded: it is kept as
 * STATE/rules/current.tar, the one an agent starts with.  0 or -errno. */
int rulesrc_keep(const char *state, const struct jbuf *t, const char *tag);
/*
 * The last bundle that loaded, checked again with cfg's rules.public_key
 * and installed: 0 with *out filled; -ENOENT when there is none; -errno
 * with err filled.
 */
int rulesrc_last_good(const struct jt_config *cfg, struct rulesrc_bundle *out,
		      char *err, size_t errlen);

#endif
