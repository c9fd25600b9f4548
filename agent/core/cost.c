// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cost.c - node price, job cost, efficiency and waste flags (cost.h).
 * The formulas are documented in the README's section "Cost"; change one
 * here and there together.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cost.h"
#include "jobs.h"
#include "prices.h"
#include "util.h"

#define GIB 1073741824.0

const char *const cost_flag_names[COST_F__N] = {
	"cpu_underused", "memory_overrequested", "time_overrequested",
};

/* MemTotal of /proc/meminfo in bytes; 0 when it cannot be read. */
static uint64_t mem_total(void)
{
	char buf[4096];
	const char *p;
	ssize_t n = util_read_file("/proc/meminfo", buf, sizeof(buf));

	if (n <= 0)
		return 0;
	p = strstr(buf, "MemTotal:");
	return p ? strtoull(p + 9, NULL, 10) * 1024 : 0;
}

/* The node's size: the configured one, else the machine's. */
static void node_size(const struct jt_config *c, struct cost_price *out)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	out->node_cpus = c->cost_node_cpus ? c->cost_node_cpus :
			 n > 0 ? (unsigned)n : 0;
	out->node_mem_bytes = c->cost_node_mem_gib > 0 ?
			      (uint64_t)(c->cost_node_mem_gib * GIB + 0.5) :
			      mem_total();
	out->node_gpus = c->cost_node_gpus;
}

/* Are any of the per-core, per-GiB, per-GPU rates set? */
static bool have_rates(const struct jt_config *c)
{
	return c->cost_core_hour > 0 || c->cost_gib_hour > 0 ||
	       c->cost_gpu_hour > 0;
}

/* The price from the prices file for this instance (type, region,
 * lifecycle); per_hour stays < 0 with a note when it is not there. */
static void table_price(const struct jt_config *c, const struct jt_cloud *cl,
			struct cost_price *out)
{
	bool spot = !strcmp(cl->lifecycle, "spot");
	double on_demand, spot_price;
	char cur[8], err[sizeof(out->note)];
	int r;

	snprintf(out->source, sizeof(out->source), "prices:%s",
		 c->cost_prices_file);
	r = prices_lookup(c->cost_prices_file, cl->region, cl->instance_type,
			  &on_demand, &spot_price, cur, err, sizeof(err));
	if (r) {
		util_strlcpy(out->note, err, sizeof(out->note));
		return;
	}
	util_strlcpy(out->currency, cur, sizeof(out->currency));
	if (spot && spot_price < 0)
		snprintf(out->note, sizeof(out->note),
			 "no spot price of %s in %s in the prices file (the on-demand price is not used for a spot instance)",
			 cl->instance_type, cl->region);
	else if (!spot && on_demand < 0)
		snprintf(out->note, sizeof(out->note),
			 "no on-demand price of %s in %s in the prices file",
			 cl->instance_type, cl->region);
	else
		out->per_hour = spot ? spot_price : on_demand;
}

/* The node's price per hour; see cost.h for the order. */
void cost_node_price(const struct jt_config *c, const struct jt_cloud *cloud,
		     struct cost_price *out)
{
	bool identity = cloud && cloud->instance_type[0] && cloud->region[0];

	memset(out, 0, sizeof(*out));
	out->per_hour = -1;
	node_size(c, out);
	util_strlcpy(out->currency, c->cost_currency ? c->cost_currency : "USD",
		     sizeof(out->currency));
	if (c->cost_prices_file && c->cost_prices_file[0] && identity) {
		table_price(c, cloud, out);
	} else if (c->cost_node_hour > 0) {
		out->per_hour = c->cost_node_hour;
		util_strlcpy(out->source, "config:node_hour",
			     sizeof(out->source));
	} else if (have_rates(c)) {
		out->per_hour = out->node_cpus * c->cost_core_hour +
				out->node_mem_bytes / GIB * c->cost_gib_hour +
				out->node_gpus * c->cost_gpu_hour;
		util_strlcpy(out->source, "config:rates", sizeof(out->source));
	} else if (c->cost_prices_file && c->cost_prices_file[0]) {
		util_strlcpy(out->note, "no price: cost.prices_file needs the instance's type and region from the instance metadata (cloud.imds), and none are known",
			     sizeof(out->note));
	} else {
		util_strlcpy(out->note, "no price configured (cost.node_hour, cost.core_hour/gib_hour/gpu_hour or cost.prices_file)",
			     sizeof(out->note));
	}
}

/* The larger of a and b where b >= 0. */
static double max_known(double a, double b)
{
	return b > a ? b : a;
}

/* The job's efficiency figures and the flags they earn. */
static void efficiency(const struct jt_config *c, const struct cost_inputs *in,
		       struct cost_job *out)
{
	double el = in->elapsed_s;

	out->eff_cpu = out->eff_memory = out->eff_time = -1;
	if (in->cpus && el > 0 && in->cpu_s >= 0)
		out->eff_cpu = in->cpu_s / (in->cpus * el);
	if (in->mem_bytes && in->mem_peak_bytes)
		out->eff_memory = (double)in->mem_peak_bytes / in->mem_bytes;
	if (in->time_limit_s > 0 && el > 0)
		out->eff_time = el / in->time_limit_s;
	out->flags = 0;
	if (out->eff_cpu >= 0 && out->eff_cpu < c->waste_cpu_below)
		out->flags |= COST_F_CPU_UNDERUSED;
	if (out->eff_memory >= 0 && out->eff_memory < c->waste_mem_below)
		out->flags |= COST_F_MEMORY_OVERREQUESTED;
	if (out->eff_time >= 0 && out->eff_time < c->waste_time_below &&
	    el >= c->waste_time_min_s)
		out->flags |= COST_F_TIME_OVERREQUESTED;
}

/*
 * What the job is counted as having, for the share and the rates: its
 * allocation, or (usage) its CPU seconds over its elapsed time and its
 * memory peak.  false when none of it is known.
 */
static bool job_size(const struct cost_inputs *in, bool usage, double *cpus,
		     double *mem, double *gpus)
{
	*gpus = in->gpus;
	if (!usage) {
		*cpus = in->cpus;
		*mem = (double)in->mem_bytes;
		return in->cpus || in->mem_bytes || in->gpus;
	}
	*cpus = in->cpu_s >= 0 ? in->cpu_s / in->elapsed_s : 0;
	*mem = (double)in->mem_peak_bytes;
	return in->cpu_s >= 0 || in->mem_peak_bytes;
}

/* The cost, efficiency and flags of a job; see cost.h. */
void cost_job(const struct jt_config *c, const struct cost_price *p,
	      const struct cost_inputs *in, struct cost_job *out)
{
	bool rates = p && !strcmp(p->source, "config:rates");
	bool usage = c->cost_attribution == JT_ATTR_USAGE ||
		     (!in->cpus && !in->mem_bytes && !in->gpus);
	double cpus, mem, gpus;

	memset(out, 0, sizeof(*out));
	out->amount = out->price_per_hour = out->share = out->elapsed_s = -1;
	efficiency(c, in, out);
	if (!p || p->per_hour < 0) {
		util_strlcpy(out->note, p && p->note[0] ? p->note :
			     "no price known", sizeof(out->note));
		return;
	}
	if (in->elapsed_s <= 0) {
		util_strlcpy(out->note, "no elapsed time: the job's start or end is not known",
			     sizeof(out->note));
		return;
	}
	if (!job_size(in, usage, &cpus, &mem, &gpus)) {
		util_strlcpy(out->note, "neither the allocation nor the usage of the job is known",
			     sizeof(out->note));
		return;
	}
	util_strlcpy(out->currency, p->currency, sizeof(out->currency));
	util_strlcpy(out->source, p->source, sizeof(out->source));
	out->elapsed_s = in->elapsed_s;
	if (rates) {
		/* as HPC centres bill: what the job had, at the rates */
		out->formula = usage ? "usage_rates" : "rates";
		out->price_per_hour = cpus * c->cost_core_hour +
				      mem / GIB * c->cost_gib_hour +
				      gpus * c->cost_gpu_hour;
	} else {
		/* the node's price x the largest of the job's shares */
		out->formula = usage ? "usage_share" : "allocation_share";
		out->price_per_hour = p->per_hour;
		out->share = 0;
		if (p->node_cpus && cpus > 0)
			out->share = max_known(out->share, cpus / p->node_cpus);
		if (p->node_mem_bytes && mem > 0)
			out->share = max_known(out->share,
					       mem / p->node_mem_bytes);
		if (p->node_gpus && gpus > 0)
			out->share = max_known(out->share, gpus / p->node_gpus);
		if (out->share > 1)
			out->share = 1;
		if (out->share <= 0) {
			/* no term has both the job's and the node's side */
			out->price_per_hour = out->share = out->elapsed_s = -1;
			out->formula = NULL;
			out->currency[0] = out->source[0] = '\0';
			util_strlcpy(out->note, "no share: the node's size is not known for what the job has",
				     sizeof(out->note));
			return;
		}
	}
	out->amount = out->price_per_hour * (out->share >= 0 ? out->share : 1) *
		      in->elapsed_s / 3600.0;
	if (usage && !in->cpus && !in->mem_bytes && !in->gpus &&
	    c->cost_attribution != JT_ATTR_USAGE)
		util_strlcpy(out->note, "no allocation known: attributed by usage",
			     sizeof(out->note));
}

/* The inputs of cost_job() from a job the registry closed. */
void cost_inputs_of(const struct jt_jobinfo *ji, struct cost_inputs *in)
{
	memset(in, 0, sizeof(*in));
	in->cpus = ji->cpus;
	in->mem_bytes = ji->mem_bytes;
	in->gpus = ji->gpus;
	in->time_limit_s = ji->time_limit_s;
	if (ji->start_ns && ji->end_ns > ji->start_ns)
		in->elapsed_s = (ji->end_ns - ji->start_ns) / 1e9;
	/* no process finished: its CPU is not known, not 0 */
	in->cpu_s = ji->usage.processes ? ji->usage.cpu_s : -1;
	in->mem_peak_bytes = jobs_mem_peak(&ji->usage, NULL);
}

/* Whole number of at most 9 digits at *s, advancing *s; -1 if none. */
static long digits(const char **s)
{
	long v = 0;
	int n = 0;

	while (**s >= '0' && **s <= '9' && n < 9) {
		v = v * 10 + (**s - '0');
		(*s)++;
		n++;
	}
	return n && !(**s >= '0' && **s <= '9') ? v : -1;
}

/* Parse a time limit into seconds; see cost.h. */
int cost_parse_time_limit(const char *s, uint32_t *seconds)
{
	long part[3], days = 0;
	int n = 0;
	double total;
	const char *p = s;

	if (!strcmp(s, "UNLIMITED") || !strcmp(s, "INFINITE")) {
		*seconds = 0;
		return 0;
	}
	if (!strchr(s, ':') && !strchr(s, '-')) {
		long v = digits(&p);

		if (v < 0 || *p)
			return -EINVAL;
		*seconds = (uint32_t)v;
		return 0;
	}
	if (strchr(s, '-')) {
		days = digits(&p);
		if (days < 0 || *p++ != '-')
			return -EINVAL;
	}
	for (n = 0; n < 3; n++) {
		part[n] = digits(&p);
		if (part[n] < 0 || (n && part[n] > 59))
			return -EINVAL;
		if (*p != ':')
			break;
		p++;
	}
	if (*p || n == 3)
		return -EINVAL;
	n++;
	if (strchr(s, '-')) {
		/* D-HH, D-HH:MM, D-HH:MM:SS */
		total = days * 86400.0 + part[0] * 3600.0 +
			(n > 1 ? part[1] * 60.0 : 0) + (n > 2 ? part[2] : 0);
		if (part[0] > 23)
			return -EINVAL;
	} else if (n == 3) {
		total = part[0] * 3600.0 + part[1] * 60.0 + part[2];
	} else if (n == 2) {
		total = part[0] * 60.0 + part[1];	/* MM:SS */
	} else {
		return -EINVAL;
	}
	if (total > UINT32_MAX)
		return -EINVAL;
	*seconds = (uint32_t)total;
	return 0;
}

/* The node's price over seconds, -1 without a price. */
double cost_node_time(const struct cost_price *p, double seconds)
{
	if (!p || p->per_hour < 0)
		return -1;
	return p->per_hour * seconds / 3600.0;
}
