// SPDX-License-Identifier: GPL-2.0-or-later
/* ratelimit.c - per-user budgets of the agent's answers (see ratelimit.h). */
#include <errno.h>
#include <string.h>

#include "ratelimit.h"

/* Start every budget full. */
void rate_init(struct rate_limiter *r)
{
	memset(r, 0, sizeof(*r));
	r->all.units = RATE_ALL_BURST;
}

/* Bring b's units up to now at rate units a second, burst at most. */
static void refill(struct rate_bucket *b, double rate, double burst,
		   uint64_t now)
{
	if (now > b->at_ns)
		b->units += (double)(now - b->at_ns) / 1e9 * rate;
	if (b->units > burst)
		b->units = burst;
	b->at_ns = now;
}

/*
 * uid's bucket, brought up to now; with make, a slot for it if it has
 * none: a free one, or one whose budget is full again (as good as free),
 * else the one closest to full (its user's debt is forgiven: the budget
 * of all still holds).  NULL when uid has none and make is false.
 */
static struct rate_bucket *user(struct rate_limiter *r, uid_t uid,
				uint64_t now, int make)
{
	size_t i, pick = 0;

	for (i = 0; i < RATE_USERS; i++) {
		struct rate_bucket *s = &r->user[i].b;

		if (s->at_ns && r->user[i].uid == uid) {
			refill(s, RATE_USER_UNITS_S, RATE_USER_BURST, now);
			return s;
		}
	}
	if (!make)
		return NULL;
	for (i = 0; i < RATE_USERS; i++) {
		struct rate_bucket *s = &r->user[i].b;

		if (s->at_ns)
			refill(s, RATE_USER_UNITS_S, RATE_USER_BURST, now);
		if (!s->at_ns || s->units >= RATE_USER_BURST) {
			pick = i;
			break;
		}
		if (s->units > r->user[pick].b.units)
			pick = i;
	}
	r->user[pick].uid = uid;
	r->user[pick].b.units = RATE_USER_BURST;
	r->user[pick].b.at_ns = now;
	return &r->user[pick].b;
}

/* A request needs a whole unit left (float sums of tenths fall short). */
#define ONE_UNIT (1.0 - 1e-9)

/* Seconds until b has a unit again at rate. */
static double wait_for(const struct rate_bucket *b, double rate)
{
	return b->units >= ONE_UNIT ? 0 : (1.0 - b->units) / rate;
}

/* May uid be answered now?  (see ratelimit.h) */
int rate_admit(struct rate_limiter *r, uid_t uid, uint64_t now_ns,
	       double *wait_s, int *all)
{
	struct rate_bucket *b = user(r, uid, now_ns, 0);

	refill(&r->all, RATE_ALL_UNITS_S, RATE_ALL_BURST, now_ns);
	*all = 0;
	*wait_s = 0;
	if (b && b->units < ONE_UNIT) {
		*wait_s = wait_for(b, RATE_USER_UNITS_S);
		return -EBUSY;
	}
	if (r->all.units < ONE_UNIT) {
		*all = 1;
		*wait_s = wait_for(&r->all, RATE_ALL_UNITS_S);
		return -EBUSY;
	}
	return 0;
}

/* Charge uid for an answer of bytes. */
void rate_charge(struct rate_limiter *r, uid_t uid, size_t bytes,
		 uint64_t now_ns)
{
	double cost = 1.0 + (double)(bytes / RATE_UNIT_BYTES);
	struct rate_bucket *b = user(r, uid, now_ns, 1);

	refill(&r->all, RATE_ALL_UNITS_S, RATE_ALL_BURST, now_ns);
	b->units -= cost;
	r->all.units -= cost;
}
