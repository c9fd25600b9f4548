/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostrec.h - the node's own records and facts: the `host` record (start,
 * stop, a summary of what ran outside jobs, drops), the node's price for
 * it and for job records (computed again when the cloud's identity
 * changes), and whether the cloud's metadata service is asked at all.
 */
#ifndef JT_HOSTREC_H
#define JT_HOSTREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "cost.h"
#include "json.h"
#include "record.h"
#include "schema.h"

/* The node's price and the cloud identity it was computed for. */
struct hostrec_price {
	struct cost_price price;
	struct jt_cloud cloud;
	bool known;		/* false: compute it again */
};

/*
 * The node's price under cfg for the cloud identity now: the one kept
 * while the identity is the same, else computed again (and logged).
 */
const struct cost_price *hostrec_price(struct hostrec_price *hp,
				       const struct jt_config *cfg,
				       const struct jt_cloud *cloud);

/* What a host record says. */
struct hostrec_src {
	const struct jt_host *host;
	const uint64_t *counters;	/* the kernel's, JT_CNT_NR */
	uint64_t events_seen, exits_lost;
	uint64_t records_unspooled;	/* never spooled, the disk-full ones
					 * among them */
	uint64_t lost_disk_full;
	const struct sv_count *spool_drops;	/* per sink */
	size_t n_spool_drops;
	uint64_t store_size_cap;	/* rows the store's cap deleted */
	const struct jt_cloud *cloud;
	const struct cost_price *price;
	const struct jt_outside *outside;	/* NULL: everything recorded */
	/* the rules in force (rulesctl_host); NULL: not said */
	const char *rules_version, *rules_sha256, *rules_source, *rules_error;
};

/* The `host` record of phase at now (CLOCK_BOOTTIME) into b. */
void hostrec_write(struct jbuf *b, const struct hostrec_src *s,
		   const char *phase, uint64_t now);
/*
 * Is the instance metadata service to be asked under cfg?  "on": yes;
 * "off": no; "auto": when this machine's own facts say EC2, so that a
 * node elsewhere sends nothing to 169.254.169.254.  Why not into why.
 */
bool hostrec_cloud_asked(const struct jt_config *cfg, char *why, size_t len);

#endif
