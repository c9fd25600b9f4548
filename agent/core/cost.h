/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cost.h - what a node costs per hour, and what a job cost, how well it
 * used what it was given and which waste flags it earns.  Pure functions
 * of the configuration, the price and the job's figures: every formula of
 * the README's section "Cost" is here and nowhere else.
 *
 * Nothing is invented: a figure that cannot be computed is null (here a
 * negative number) and a note says why.
 */
#ifndef JOBTRACE_COST_H
#define JOBTRACE_COST_H

#include <stdbool.h>
#include <stdint.h>

struct jt_config;
struct jt_cloud;
struct jt_jobinfo;

/* What the cloud's instance metadata says of this node (imds.c); an
 * empty string is a fact not known. */
struct jt_cloud {
	char provider[8];		/* "aws", "" when there is no IMDS */
	char instance_id[32];
	char instance_type[64];
	char region[32];
	char zone[48];
	char lifecycle[16];
};

/* The node's price, as the host record's price object shows it. */
struct cost_price {
	double per_hour;		/* < 0: not known (note says why) */
	char currency[8];
	char source[300];		/* config:node_hour, config:rates,
					 * prices:FILE; "" when none */
	char note[256];			/* "" or why per_hour is null */
	unsigned node_cpus;		/* the node's size for the shares */
	uint64_t node_mem_bytes;
	unsigned node_gpus;
};

/*
 * The node's price per hour from c (cloud: the instance's identity, or
 * NULL): the first that applies of cost.prices_file with a cloud identity
 * (a spot instance: the spot column), cost.node_hour, the rates
 * (node_cpus x core_hour + node_mem_gib x gib_hour + node_gpus x
 * gpu_hour); else per_hour < 0 and a note.  The node's size is c's
 * cost.node_* where set, else what the machine has (online CPUs,
 * MemTotal).  Reads the prices file when that applies.
 */
void cost_node_price(const struct jt_config *c, const struct jt_cloud *cloud,
		     struct cost_price *out);

/* What a job was given and what it used; 0 or < 0 where not known. */
struct cost_inputs {
	unsigned cpus;			/* allocation, 0: not known */
	uint64_t mem_bytes;
	unsigned gpus;
	double time_limit_s;		/* 0: not known or none */
	double elapsed_s;		/* end - start, <= 0: not known */
	double cpu_s;			/* < 0: not known */
	uint64_t mem_peak_bytes;	/* 0: not known */
};

/* A job end record's cost, efficiency and flags; < 0 is null. */
struct cost_job {
	double amount;
	char currency[8];		/* "" null */
	char source[300];		/* "" null */
	const char *formula;		/* allocation_share, usage_share,
					 * rates, usage_rates; NULL: null */
	double price_per_hour;
	double share;
	double elapsed_s;
	char note[256];			/* "" null */

	double eff_cpu;			/* cpu_s / (cpus x elapsed_s) */
	double eff_memory;		/* mem_peak / allocated memory */
	double eff_time;		/* elapsed_s / time limit */
	unsigned flags;			/* COST_F_* */
};

/* The waste flags, in the order of cost_flag_names. */
enum {
	COST_F_CPU_UNDERUSED = 1u << 0,
	COST_F_MEMORY_OVERREQUESTED = 1u << 1,
	COST_F_TIME_OVERREQUESTED = 1u << 2,
	COST_F__N = 3,
};
extern const char *const cost_flag_names[COST_F__N];

/*
 * The cost, efficiency and flags of a job from what it was given and used
 * (in), the node's price (p, NULL: none known) and c's cost.attribution
 * and waste { } thresholds.
 */
void cost_job(const struct jt_config *c, const struct cost_price *p,
	      const struct cost_inputs *in, struct cost_job *out);

/* The inputs of cost_job() from a job the registry closed: allocation,
 * time limit, elapsed time, and usage (CPU unknown when no process of
 * it finished). */
void cost_inputs_of(const struct jt_jobinfo *ji, struct cost_inputs *in);

/* Parse a time limit "SECONDS" or "[D-]HH:MM:SS" (Slurm's, also M:SS
 * and D-HH) into seconds; "UNLIMITED" and "INFINITE" are 0.  0, or
 * -EINVAL. */
int cost_parse_time_limit(const char *s, uint32_t *seconds);

/* What the node cost over seconds at p's price (an idle node's time):
 * per_hour x seconds / 3600, or -1 when p has no price. */
double cost_node_time(const struct cost_price *p, double seconds);

#endif
