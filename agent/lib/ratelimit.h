/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ratelimit.h - how much of the agent's time users' requests may take.
 *
 * The event loop answers "status", "ps" and a user's job requests itself,
 * and starts a child for each report; all of it is the agent's time,
 * which the node's jobs and root's hooks need too.  Each user (uid) gets a
 * budget in units: RATE_USER_UNITS_S a second, at most RATE_USER_BURST
 * saved; every request costs one unit, and an answer one more per
 * RATE_UNIT_BYTES of it (ps of a user with 1,000 processes: about 7).  All
 * unprivileged users together get RATE_ALL_UNITS_S (RATE_ALL_BURST).  A
 * request arriving with less than a unit left is refused "busy" with the
 * time to wait; an answer may cost more than what was left (the debt is
 * paid back before the next).  Root and agent.control_group are not limited.
 */
#ifndef JOBTRACE_RATELIMIT_H
#define JOBTRACE_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RATE_UNIT_BYTES 16384	/* of an answer, one unit */
#define RATE_USER_UNITS_S 10.0	/* one user's units a second */
#define RATE_USER_BURST 20.0	/* ... saved at most */
#define RATE_ALL_UNITS_S 40.0	/* every unprivileged user's together */
#define RATE_ALL_BURST 80.0
#define RATE_USERS 64		/* users followed at once */

/* Units available at at_ns, refilled at rate up to burst. */
struct rate_bucket {
	double units;
	uint64_t at_ns;
};

struct rate_limiter {
	struct rate_bucket all;
	struct {
		uid_t uid;
		struct rate_bucket b;	/* at_ns 0: slot free */
	} user[RATE_USERS];
};

/* An empty table: every budget full. */
void rate_init(struct rate_limiter *r);
/*
 * May uid be answered at now_ns (CLOCK_MONOTONIC)?  0, or -EBUSY with
 * *wait_s the seconds until it may and *all true when the budget of all
 * users is what ran out.
 */
int rate_admit(struct rate_limiter *r, uid_t uid, uint64_t now_ns,
	       double *wait_s, int *all);
/* Charge uid for an answer of bytes (one unit plus one per
 * RATE_UNIT_BYTES), at now_ns. */
void rate_charge(struct rate_limiter *r, uid_t uid, size_t bytes,
		 uint64_t now_ns);

#endif
