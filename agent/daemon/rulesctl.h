/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rulesctl.h - the rules on the agent's loop: loaded from the rules folder
 * at start (the built-in rules stand in, every argument withheld, when it
 * does not load), loaded again when a .lua file in it changes (once the
 * changes settle), on SIGHUP and on `jobtrace reload`; a load that fails
 * keeps the rules in force.
 */
#ifndef JT_RULESCTL_H
#define JT_RULESCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rules;

struct rulesctl {
	struct rules *rules;	/* borrowed */
	const char *dir;	/* borrowed: rules.dir */
	int fd;			/* inotify on dir, -1: not watched */
	uint64_t reload_at;	/* CLOCK_MONOTONIC, 0: none due */
	bool failing;		/* the last load failed */
};

/* The engine rules over folder dir, nothing loaded or watched yet. */
void rulesctl_init(struct rulesctl *rc, struct rules *rules, const char *dir);
/* At start: load the folder (else the built-in rules), watch it. */
void rulesctl_start(struct rulesctl *rc);
/* Load the folder now; 0, or its error in err (the running rules stay). */
int rulesctl_reload(struct rulesctl *rc, char *err, size_t errlen);
/* The folder's watch is readable: a reload is due RULESCTL_SETTLE_NS after
 * the last change of a .lua file (now: CLOCK_MONOTONIC). */
void rulesctl_changed(struct rulesctl *rc, uint64_t now);
/* Every tick: load the folder when a reload is due. */
void rulesctl_tick(struct rulesctl *rc, uint64_t now);
/* Stop watching. */
void rulesctl_fini(struct rulesctl *rc);

#define RULESCTL_SETTLE_NS 200000000ull	/* wait after the last change */

#endif
