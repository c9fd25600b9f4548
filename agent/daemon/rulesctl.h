/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulesctl.h - the rules on the agent's loop, from their source
 * (rules.source, rulesrc.h):
 * - a folder (rules_dir, or rules.source a path): loaded at start (the
 *   built-in rules stand in, every argument withheld, when it does not
 *   load), loaded again when a .lua file in it changes, once the changes
 *   settle: seen by comparing each file's modification time, size and
 *   inode every RULESCTL_LOCAL_POLL_NS on a local file system, else every
 *   rules.poll_interval (a shared file system's edits from other nodes),
 *   or with inotify as well when rules.inotify is true; on SIGHUP and
 *   `jobtrace reload`;
 * - a bundle source (a URL, clickhouse): at start the last bundle that
 *   loaded (STATE/rules/current.tar), else the built-in rules; then each
 *   bundle the fetcher thread hands over.
 * A load that fails keeps the rules in force and its error is shown.
 */
#ifndef JT_RULESCTL_H
#define JT_RULESCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "rulesrc.h"

struct rules;

struct rulesctl {
	struct rules *rules;	/* borrowed */
	const char *dir;	/* borrowed: the folder followed */
	const struct jt_config *cfg;	/* borrowed; NULL: a folder, inotify,
					 * no polling (rulesctl_init alone) */
	enum rulesrc_type type;
	int fd;			/* inotify on dir, -1: not watched */
	uint64_t reload_at;	/* CLOCK_MONOTONIC, 0: none due */
	bool failing;		/* the last load failed */
	/* a folder's polling */
	uint64_t poll_ns;	/* 0: not polled */
	uint64_t next_poll;	/* CLOCK_MONOTONIC */
	uint64_t stamp;		/* of the files' names, times, sizes, inodes */
	bool poll_told;		/* the interval chosen was logged */
	/* a bundle source */
	struct rulesrc *src;
	struct rulesrc_bundle cur;	/* in force when cur.sha256[0] */
	bool from_state;	/* cur is the one kept in STATE at start */
	char load_error[512];	/* the last handed-over bundle's load, "" ok */
	char fetch_error[512];	/* the fetcher's error as last seen */
	uint64_t loaded_at;	/* CLOCK_REALTIME ns of the last good load */
	unsigned changes;	/* the rules in force changed (host records) */
};

/* The engine rules over folder dir, nothing loaded or watched yet. */
void rulesctl_init(struct rulesctl *rc, struct rules *rules, const char *dir);
/* Follow cfg's rules.source (after rulesctl_init, before start). */
void rulesctl_source(struct rulesctl *rc, const struct jt_config *cfg);
/* At start: load the rules (else the built-in ones), follow the source. */
void rulesctl_start(struct rulesctl *rc);
/* Load the rules now; 0, or its error in err (the running rules stay). */
int rulesctl_reload(struct rulesctl *rc, char *err, size_t errlen);
/* The folder's watch is readable: a reload is due RULESCTL_SETTLE_NS after
 * the last change of a .lua file (now: CLOCK_MONOTONIC). */
void rulesctl_changed(struct rulesctl *rc, uint64_t now);
/* Every tick: poll the folder when due, load it when a reload is due,
 * load a bundle the fetcher handed over. */
void rulesctl_tick(struct rulesctl *rc, uint64_t now);
/* What a host record says of the rules in force. */
struct rulesctl_host {
	const char *version, *sha256, *source, *error;	/* NULL: none */
	char source_buf[PATH_MAX];
	char error_buf[512];
};
void rulesctl_host(const struct rulesctl *rc, struct rulesctl_host *h);
/* The rules_source* lines of `jobtrace status`. */
void rulesctl_print(const struct rulesctl *rc, FILE *out);
/* Stop watching and fetching. */
void rulesctl_fini(struct rulesctl *rc);

#define RULESCTL_SETTLE_NS 200000000ull	/* wait after the last change */
#define RULESCTL_LOCAL_POLL_NS 250000000ull	/* a local folder's polls, no inotify */

/* Whether a folder on a file system of type f_type (statfs) is local:
 * polled every RULESCTL_LOCAL_POLL_NS, not only every poll_interval. */
bool rulesctl_fs_local(long f_type);

#endif
