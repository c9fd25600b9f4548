// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostrec.c - the host record, the node's price, whether the cloud is
 * asked (hostrec.h).
 */
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "hostrec.h"
#include "imds.h"
#include "log.h"

/* The node's price for cloud, kept while the identity is the same. */
const struct cost_price *hostrec_price(struct hostrec_price *hp,
				       const struct jt_config *cfg,
				       const struct jt_cloud *cloud)
{
	struct cost_price *p = &hp->price;

	if (hp->known && !memcmp(cloud, &hp->cloud, sizeof(*cloud)))
		return p;
	cost_node_price(cfg, cloud, p);
	hp->cloud = *cloud;
	hp->known = true;
	if (p->per_hour >= 0)
		log_info("cost: the node costs %g %s an hour (%s; %u CPUs, %.1f GiB)",
			 p->per_hour, p->currency, p->source, p->node_cpus,
			 p->node_mem_bytes / 1073741824.0);
	else if (p->source[0])	/* the prices file: its error */
		log_warn("cost: %s: job costs are null", p->note);
	else
		log_info("cost: %s: job costs are null", p->note);
	return p;
}

/* A `host` record of time `now` (CLOCK_BOOTTIME): identity, cloud,
 * agent version and the drop counters. */
void hostrec_write(struct jbuf *b, const struct hostrec_src *s,
		   const char *phase, uint64_t now)
{
	const uint64_t *c = s->counters;
	struct sv v[V__N] = { 0 };
	char id[37];

	record_make_id(s->host, "host", phase, now, id);
	record_head_values(v, s->host, id);
	sv_u64(&v[V_TIME], record_realtime(s->host, now));
	sv_str(&v[V_HOST_PHASE], phase);
	sv_str(&v[V_BOOT_ID], s->host->boot_id);
	sv_str(&v[V_AGENT_VERSION], JT_VERSION);
	sv_u64(&v[V_EVENTS_SEEN], s->events_seen);
	v[V_DROPS].st = SV_SET;
	sv_u64(&v[V_DROP_RINGBUF_FORK], c[JT_CNT_RB_DROP_FORK]);
	sv_u64(&v[V_DROP_RINGBUF_EXEC], c[JT_CNT_RB_DROP_EXEC]);
	sv_u64(&v[V_DROP_RINGBUF_EXIT], c[JT_CNT_RB_DROP_EXIT]);
	sv_u64(&v[V_DROP_RINGBUF_OOM], c[JT_CNT_RB_DROP_OOM]);
	sv_u64(&v[V_DROP_TRACKED_MAP_FULL], c[JT_CNT_TRACK_FULL]);
	sv_u64(&v[V_DROP_EXITS_BEFORE_LAST_SWITCH], c[JT_CNT_EXIT_EARLY]);
	sv_u64(&v[V_DROP_EXITS_LOST], s->exits_lost);
	/* apart, so that a sum over drops counts each record once: the
	 * full-disk losses are among those never spooled */
	sv_u64(&v[V_DROP_SPOOL_WRITE_ERRORS],
	       s->records_unspooled - s->lost_disk_full);
	sv_u64(&v[V_DROP_SPOOL_DISK_FULL], s->lost_disk_full);
	v[V_DROP_SPOOL].st = SV_SET;
	v[V_DROP_SPOOL].n = s->n_spool_drops;
	v[V_DROP_SPOOL].counts = s->spool_drops;
	sv_u64(&v[V_DROP_STORE_SIZE_CAP], s->store_size_cap);
	record_cloud_values(v, s->cloud);
	record_price_values(v, s->price);
	if (s->outside)
		record_outside_values(v, s->outside);
	if (s->rules_source) {
		v[V_RULES].st = SV_SET;
		sv_str(&v[V_RULES_VERSION], s->rules_version);
		sv_str(&v[V_RULES_SHA256], s->rules_sha256);
		sv_str(&v[V_RULES_SOURCE], s->rules_source);
		sv_str(&v[V_RULES_ERROR], s->rules_error);
	}
	jbuf_reset(b);
	schema_write(b, &sf_records[SF_REC_HOST], v);
}

/* Is the instance metadata service to be asked (hostrec.h)? */
bool hostrec_cloud_asked(const struct jt_config *cfg, char *why, size_t len)
{
	char facts[256];

	if (cfg->imds_mode == JT_IMDS_ON)
		return true;
	if (cfg->imds_mode == JT_IMDS_OFF) {
		snprintf(why, len, "off (cloud.imds = \"off\")");
		return false;
	}
	if (imds_local_ec2(cfg->dmi_dir, IMDS_HYPERVISOR_UUID, facts,
			   sizeof(facts))) {
		log_info("cloud: an EC2 instance (%s): asking %s", facts,
			 cfg->imds_url);
		return true;
	}
	snprintf(why, len, "not asked: not EC2 by this machine's own facts"
		 " (%s); cloud.imds = \"on\" asks all the same", facts);
	log_info("cloud: %s", why);
	return false;
}
