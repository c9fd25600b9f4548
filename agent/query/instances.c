// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * instances.c - `jobtrace rightsize --format instances`: instance types
 * from what each task used (see instances.h for every definition).
 *
 * The computation fills one struct calc per task from the price table;
 * the text and JSON printers only print it, so each figure has one
 * definition.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "instances.h"
#include "json.h"
#include "storeq.h"
#include "util.h"

#define GIB 1073741824.0

/* The cheapest fitting types of one region. */
struct fit {
	const char *region;
	const struct prices_entry *od;		/* NULL: none fits */
	const struct prices_entry *spot;	/* NULL: none with a spot price */
	const char *spot_zone;			/* the zone of that price */
};

/* What is said of one task. */
struct calc {
	const struct instances_task *t;
	unsigned gpus;
	double ratio;			/* needed GiB per vCPU */
	const char *family;
	bool arm_ok;			/* arm64 types are candidates */
	const struct prices_entry *arm_alt;	/* arm64 fits, not proposed */
	double month_h;			/* its hours a month */
	double now;			/* cost a month where it ran; -1 */
	char why[256];			/* why now is -1 */
	const char *region;		/* where it ran most (known), or NULL */
	struct fit *fit;		/* per region of the table */
	const struct fit *here;		/* fit[] of region, or NULL */
	double save_od, save_spot;	/* valid when has_save_* */
	bool has_save_od, has_save_spot;
};

struct ctx {
	const struct instances_in *in;
	struct prices_set set;
	const char **regions;
	size_t nregions;
	struct calc *c;
};

/* Family advice for gib_per_vcpu: the nearest of 2, 4, 8 on a log scale. */
const char *instances_family(double gib_per_vcpu)
{
	if (gib_per_vcpu <= INSTANCES_COMPUTE_MAX)
		return "compute-optimized";
	if (gib_per_vcpu < INSTANCES_MEMORY_MIN)
		return "general-purpose";
	return "memory-optimized";
}

/* The period of the selection, seconds (instances.h). */
double instances_period(double since, double now, double first, double last)
{
	double days;

	if (since > 0 && now > since)
		return now - since;
	days = last > first ? ceil((last - first) / 86400) : 1;
	return (days < 1 ? 1 : days) * 86400;
}

/* The table's line of type in region, or NULL. */
static const struct prices_entry *line_of(const struct ctx *x,
					  const char *region, const char *type)
{
	if (!region || !type)
		return NULL;
	return prices_find(&x->set, region, type);
}

/* Whether e is a type that fits c's needs with architecture arch. */
static bool fits(const struct calc *c, const struct prices_entry *e,
		 const char *arch)
{
	return !prices_is_zone(e->region) && e->vcpus >= 0 &&
	       e->memory_gib >= 0 && e->gpus >= 0 &&
	       (unsigned)e->vcpus >= c->t->cpus &&
	       e->memory_gib * GIB >= (double)c->t->mem &&
	       (unsigned)e->gpus >= c->gpus && !strcmp(e->arch, arch);
}

/* Whether price a (of type ta) is below b (of tb): ties by type name. */
static bool cheaper(double a, const char *ta, double b, const char *tb)
{
	return a < b || (a == b && strcmp(ta, tb) < 0);
}

/* The zone whose spot price for e's type is e's region's. */
static const char *spot_zone(const struct ctx *x, const struct prices_entry *e)
{
	size_t n = strlen(e->region);

	for (size_t i = 0; i < x->set.n; i++) {
		const struct prices_entry *z = &x->set.e[i];

		if (prices_is_zone(z->region) && !strcmp(z->type, e->type) &&
		    !strncmp(z->region, e->region, n) && z->spot == e->spot)
			return z->region;
	}
	return NULL;
}

/* The cheapest fitting types of region for c, of architecture arch. */
static void fit_region(const struct ctx *x, const struct calc *c,
		       const char *region, const char *arch, struct fit *f)
{
	memset(f, 0, sizeof(*f));
	f->region = region;
	for (size_t i = 0; i < x->set.n; i++) {
		const struct prices_entry *e = &x->set.e[i];

		if (strcmp(e->region, region) || !fits(c, e, arch))
			continue;
		if (e->on_demand >= 0 && (!f->od || cheaper(e->on_demand,
			e->type, f->od->on_demand, f->od->type)))
			f->od = e;
		if (e->spot >= 0 && (!f->spot || cheaper(e->spot, e->type,
			f->spot->spot, f->spot->type)))
			f->spot = e;
	}
	if (f->spot)
		f->spot_zone = spot_zone(x, f->spot);
}

/* Where c's task ran: the GPUs it had, whether arm64 may be proposed,
 * the region of the most hours, and its cost now a month. */
static void where_ran(const struct ctx *x, struct calc *c, double factor)
{
	const struct instances_task *t = c->t;
	double best = -1;
	bool all_arm = t->nseen > 0;
	int gpus = -1;

	c->now = 0;
	for (size_t i = 0; i < t->nseen; i++) {
		const struct instances_seen *s = &t->seen[i];
		const struct prices_entry *e = line_of(x, s->region, s->type);
		bool spot = s->lifecycle && !strcmp(s->lifecycle, "spot");
		double price = e ? (spot ? e->spot : e->on_demand) : -1;

		all_arm = all_arm && e && !strcmp(e->arch, "arm64");
		if (e && e->gpus > 0 && (gpus < 0 || e->gpus < gpus))
			gpus = e->gpus;
		if (s->region && s->hours > best) {
			best = s->hours;
			c->region = s->region;
		}
		if (c->now < 0)
			continue;
		if (!s->type || !s->region)
			snprintf(c->why, sizeof(c->why), "some instances ran on"
				 " a host of no known instance type (no cloud"
				 " identity)");
		else if (!e)
			snprintf(c->why, sizeof(c->why), "%s in %s is not in"
				 " the price table", s->type, s->region);
		else if (price < 0)
			snprintf(c->why, sizeof(c->why), "the table has no %s"
				 " price for %s in %s", spot ? "spot" :
				 "on-demand", s->type, s->region);
		if (price < 0)
			c->now = -1;
		else
			c->now += price * s->hours * factor;
	}
	if (!t->nseen) {
		c->now = -1;
		snprintf(c->why, sizeof(c->why), "no instance seen");
	}
	c->gpus = gpus > 0 ? (unsigned)gpus : 0;
	c->arm_ok = all_arm;
}

/* Everything said of one task. */
static int calc_task(struct ctx *x, struct calc *c,
		     const struct instances_task *t)
{
	double factor = INSTANCES_MONTH_H * 3600 / x->in->period_s;

	c->t = t;
	c->month_h = t->hours * factor;
	where_ran(x, c, factor);
	if (!t->enough)
		return 0;
	c->ratio = (double)t->mem / GIB / (t->cpus ? t->cpus : 1);
	c->family = instances_family(c->ratio);
	c->fit = calloc(x->nregions ? x->nregions : 1, sizeof(*c->fit));
	if (!c->fit)
		return -ENOMEM;
	for (size_t i = 0; i < x->nregions; i++) {
		struct fit arm;

		fit_region(x, c, x->regions[i], c->arm_ok ? "arm64" : "x86_64",
			   &c->fit[i]);
		if (c->arm_ok)
			continue;
		fit_region(x, c, x->regions[i], "arm64", &arm);
		if (arm.od && (!c->arm_alt || (c->region &&
		    !strcmp(x->regions[i], c->region))))
			c->arm_alt = arm.od;
	}
	for (size_t i = 0; c->region && i < x->nregions; i++)
		if (!strcmp(x->regions[i], c->region))
			c->here = &c->fit[i];
	c->has_save_od = c->here && c->now >= 0 && c->here->od;
	c->has_save_spot = c->here && c->now >= 0 && c->here->spot;
	if (c->has_save_od)
		c->save_od = c->now - c->here->od->on_demand * c->month_h;
	if (c->has_save_spot)
		c->save_spot = c->now - c->here->spot->spot * c->month_h;
	return 0;
}

/* The regions of the table (not its zones), in its order. */
static int table_regions(struct ctx *x)
{
	x->regions = calloc(x->set.n ? x->set.n : 1, sizeof(*x->regions));
	if (!x->regions)
		return -ENOMEM;
	for (size_t i = 0; i < x->set.n; i++) {
		const char *r = x->set.e[i].region;
		size_t j;

		if (prices_is_zone(r))
			continue;
		for (j = 0; j < x->nregions && strcmp(x->regions[j], r); j++)
			;
		if (j == x->nregions)
			x->regions[x->nregions++] = r;
	}
	return 0;
}

/* A price per hour in text ("0.085 USD/h"), or "-". */
static const char *per_h(double v, const char *cur, char *out, size_t len)
{
	if (v < 0)
		snprintf(out, len, "-");
	else
		snprintf(out, len, "%.4g %s/h", v, cur);
	return out;
}

/* Text: one task. */
static void text_task(const struct ctx *x, const struct calc *c, FILE *out)
{
	const struct instances_task *t = c->t;
	char a[64], b[64], name[64];

	util_strlcpy(name, t->name, sizeof(name));
	fprintf(out, "\ntask %s: %zu run%s, %zu instance%s, %.4g instance-hours"
		" (%.4g a month)\n", util_printable(name), t->runs,
		t->runs == 1 ? "" : "s", t->n, t->n == 1 ? "" : "s", t->hours,
		c->month_h);
	for (size_t i = 0; i < t->nseen; i++) {
		const struct instances_seen *s = &t->seen[i];

		fprintf(out, "  ran on: %s in %s (%s), %.4g h\n",
			s->type ? s->type : "no known type",
			s->region ? s->region : "-",
			s->lifecycle ? s->lifecycle : "-", s->hours);
	}
	if (c->now >= 0)
		fprintf(out, "  cost now: %.4f USD a month\n", c->now);
	else
		fprintf(out, "  cost now: not known: %s\n", c->why);
	if (!t->enough) {
		fprintf(out, "  no recommendation: %zu run%s, at least %u"
			" needed\n", t->runs, t->runs == 1 ? "" : "s",
			x->in->min_runs);
		return;
	}
	fprintf(out, "  needs: %u vCPU%s, %.3f GiB, %u GPU%s (rightsize's"
		" recommendation)\n", t->cpus, t->cpus == 1 ? "" : "s",
		(double)t->mem / GIB, c->gpus, c->gpus == 1 ? "" : "s");
	fprintf(out, "  family: %s (%.2f GiB per vCPU)\n", c->family,
		c->ratio);
	fprintf(out, "  architecture: %s\n", c->arm_ok ? "arm64 (it ran on"
		" arm64 only)" : "x86_64 (arm64 only for a task seen on arm64"
		" only)");
	if (c->arm_alt)
		fprintf(out, "  not proposed: %s in %s fits at %s (arm64: are"
			" all its tools built for it?)\n", c->arm_alt->type,
			c->arm_alt->region, per_h(c->arm_alt->on_demand,
			c->arm_alt->currency, a, sizeof(a)));
	for (size_t i = 0; i < x->nregions; i++) {
		const struct fit *f = &c->fit[i];

		if (!f->od && !f->spot) {
			fprintf(out, "  %-14s no type in the table fits\n",
				f->region);
			continue;
		}
		fprintf(out, "  %-14s on-demand %s %s, spot %s %s%s%s\n",
			f->region, f->od ? f->od->type : "-",
			per_h(f->od ? f->od->on_demand : -1, "USD", a, sizeof(a)),
			f->spot ? f->spot->type : "-",
			per_h(f->spot ? f->spot->spot : -1, "USD", b, sizeof(b)),
			f->spot_zone ? " in " : "",
			f->spot_zone ? f->spot_zone : "");
	}
	snprintf(a, sizeof(a), c->has_save_od ? "%.4f USD" : "-", c->save_od);
	snprintf(b, sizeof(b), c->has_save_spot ? "%.4f USD" : "-",
		 c->save_spot);
	if (c->region)
		fprintf(out, "  saving a month in %s: on-demand %s, spot %s\n",
			c->region, a, b);
	else
		fprintf(out, "  saving a month: not known (no known region)\n");
}

/* JSON: an amount (money, hours) with 12 decimals, or null. */
static void json_kv_maybe(struct jbuf *b, const char *key, bool known,
			  double v)
{
	json_key(b, key);
	if (known)
		json_double12(b, v);
	else
		json_null(b);
}

/* JSON: a fitting type and its price, or null. */
static void json_type(struct jbuf *b, const char *key,
		      const struct prices_entry *e, double price,
		      const char *zone)
{
	json_key(b, key);
	if (!e) {
		json_null(b);
		return;
	}
	json_obj_open(b);
	json_kv_str(b, "type", e->type);
	json_kv_maybe(b, "per_hour", true, price);
	json_kv_u64(b, "vcpus", (uint64_t)e->vcpus);
	json_kv_double(b, "memory_gib", e->memory_gib);
	json_kv_str(b, "family", e->family);
	json_kv_str(b, "arch", e->arch);
	if (zone)
		json_kv_str(b, "zone", zone);
	json_obj_close(b);
}

/* JSON: where one task ran. */
static void json_seen(struct jbuf *b, const struct instances_task *t)
{
	json_key(b, "ran_on");
	json_arr_open(b);
	for (size_t i = 0; i < t->nseen; i++) {
		const struct instances_seen *s = &t->seen[i];

		json_obj_open(b);
		json_key(b, "type");
		s->type ? json_str(b, s->type) : json_null(b);
		json_key(b, "region");
		s->region ? json_str(b, s->region) : json_null(b);
		json_key(b, "lifecycle");
		s->lifecycle ? json_str(b, s->lifecycle) : json_null(b);
		json_key(b, "compute_environment");
		s->compute_env ? json_str(b, s->compute_env) : json_null(b);
		json_kv_maybe(b, "hours", true, s->hours);
		json_obj_close(b);
	}
	json_arr_close(b);
}

/* JSON: one task. */
static void json_task(const struct ctx *x, const struct calc *c,
		      struct jbuf *b)
{
	const struct instances_task *t = c->t;

	json_obj_open(b);
	json_kv_str(b, "task", t->name);
	json_kv_u64(b, "runs", t->runs);
	json_kv_u64(b, "instances", t->n);
	json_kv_maybe(b, "hours", true, t->hours);
	json_kv_maybe(b, "hours_month", true, c->month_h);
	json_seen(b, t);
	json_kv_maybe(b, "cost_month", c->now >= 0, c->now);
	json_key(b, "cost_note");
	c->now >= 0 ? json_null(b) : json_str(b, c->why);
	json_key(b, "needs");
	if (!t->enough) {
		json_null(b);
		json_obj_close(b);
		return;
	}
	json_obj_open(b);
	json_kv_u64(b, "vcpus", t->cpus);
	json_kv_u64(b, "mem_bytes", t->mem);
	json_kv_u64(b, "gpus", c->gpus);
	json_obj_close(b);
	json_kv_double(b, "gib_per_vcpu", c->ratio);
	json_kv_str(b, "family", c->family);
	json_kv_str(b, "arch", c->arm_ok ? "arm64" : "x86_64");
	json_type(b, "arm64_not_proposed", c->arm_alt,
		  c->arm_alt ? c->arm_alt->on_demand : 0, NULL);
	json_key(b, "regions");
	json_arr_open(b);
	for (size_t i = 0; i < x->nregions; i++) {
		const struct fit *f = &c->fit[i];

		json_obj_open(b);
		json_kv_str(b, "region", f->region);
		json_type(b, "on_demand", f->od, f->od ? f->od->on_demand : 0,
			  NULL);
		json_type(b, "spot", f->spot, f->spot ? f->spot->spot : 0,
			  f->spot_zone);
		json_obj_close(b);
	}
	json_arr_close(b);
	json_key(b, "region");
	c->region ? json_str(b, c->region) : json_null(b);
	json_kv_maybe(b, "saving_month_on_demand", c->has_save_od, c->save_od);
	json_kv_maybe(b, "saving_month_spot", c->has_save_spot, c->save_spot);
	json_obj_close(b);
}

/* ---- AWS Batch ----------------------------------------------------------- */

/* Whether type is among the n in list. */
static bool listed(const char *const *list, size_t n, const char *type)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], type))
			return true;
	return false;
}

/*
 * The instanceTypes of compute environment ce: the cheapest fitting
 * on-demand type of each task that ran in it (in the region it ran in);
 * into list (room for x->in->ntask), their count.  *unfit: tasks of it
 * with no such type.
 */
static size_t ce_types(const struct ctx *x, const char *ce,
		       const char **list, size_t *unfit)
{
	size_t n = 0;

	*unfit = 0;
	for (size_t i = 0; i < x->in->ntask; i++) {
		const struct calc *c = &x->c[i];
		bool in_ce = false;

		for (size_t j = 0; j < c->t->nseen && !in_ce; j++)
			in_ce = c->t->seen[j].compute_env &&
				!strcmp(c->t->seen[j].compute_env, ce);
		if (!in_ce || !c->t->enough)
			continue;
		if (!c->here || !c->here->od)
			(*unfit)++;
		else if (!listed(list, n, c->here->od->type))
			list[n++] = c->here->od->type;
	}
	return n;
}

/* The compute environments seen, once each, into ces (their count). */
static size_t compute_envs(const struct ctx *x, const char **ces, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < x->in->ntask; i++)
		for (size_t j = 0; j < x->c[i].t->nseen; j++) {
			const char *ce = x->c[i].t->seen[j].compute_env;

			if (ce && n < max && !listed(ces, n, ce))
				ces[n++] = ce;
		}
	return n;
}

/* Text or JSON: the compute environments' instanceTypes. */
static int print_batch(const struct ctx *x, struct jbuf *b, FILE *out)
{
	size_t max = 0, nce, n, unfit;
	const char **ces, **list;

	for (size_t i = 0; i < x->in->ntask; i++)
		max += x->in->task[i].nseen;
	ces = calloc(max + 1, sizeof(*ces));
	list = calloc(x->in->ntask + 1, sizeof(*list));
	if (!ces || !list) {
		free(ces);
		free(list);
		return -ENOMEM;
	}
	nce = compute_envs(x, ces, max);
	if (b) {
		json_key(b, "batch");
		json_arr_open(b);
	}
	for (size_t i = 0; i < nce; i++) {
		n = ce_types(x, ces[i], list, &unfit);
		if (b) {
			json_obj_open(b);
			json_kv_str(b, "compute_environment", ces[i]);
			json_key(b, "instanceTypes");
			json_arr_open(b);
			for (size_t j = 0; j < n; j++)
				json_str(b, list[j]);
			json_arr_close(b);
			json_kv_u64(b, "tasks_without_a_type", unfit);
			json_obj_close(b);
			continue;
		}
		fprintf(out, "\nAWS Batch compute environment %s: instanceTypes ",
			ces[i]);
		for (size_t j = 0; j < n; j++)
			fprintf(out, "%s%s", j ? "," : "", list[j]);
		fprintf(out, "%s%s\n", n ? "" : "(none)", unfit ?
			" (some of its tasks fit no type or lack a"
			" recommendation)" : "");
	}
	if (b)
		json_arr_close(b);
	free(ces);
	free(list);
	return 0;
}

/* ---- the store ---------------------------------------------------------- */

/* Read every host record's cloud identity (instances.h). */
int instances_hosts_load(struct sqlite3 *db, const char *where,
			 struct instances_hosts *hs)
{
	static const char sql[] =
		"SELECT " JSTR("$.host") ", time, " JSTR("$.cloud.instance_type")
		", " JSTR("$.cloud.region") ", " JSTR("$.cloud.lifecycle")
		" FROM record WHERE type = 'host' ORDER BY 1, 2, id";
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = SQLITE_DONE, err;

	memset(hs, 0, sizeof(*hs));
	err = storeq_prepare_db(db, where, sql, NULL, &st);
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct instances_host *h;

		if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
			continue;
		if (hs->n == cap) {
			cap = cap ? cap * 2 : 64;
			h = realloc(hs->h, cap * sizeof(*h));
			if (!h) {
				err = -ENOMEM;
				break;
			}
			hs->h = h;
		}
		h = &hs->h[hs->n++];
		memset(h, 0, sizeof(*h));
		h->time = storeq_col_num(st, 1, 0);
		err |= storeq_col_dup(st, 0, &h->host);
		err |= storeq_col_dup(st, 2, &h->type);
		err |= storeq_col_dup(st, 3, &h->region);
		err |= storeq_col_dup(st, 4, &h->lifecycle);
	}
	if (!err)
		err = storeq_step_done(db, where, rc);
	sqlite3_finalize(st);
	return err;
}

/* The identity of host at time t (instances.h). */
const struct instances_host *instances_host_at(const struct instances_hosts *hs,
					       const char *host, double t)
{
	const struct instances_host *before = NULL, *after = NULL;

	for (size_t i = 0; host && i < hs->n; i++) {
		const struct instances_host *h = &hs->h[i];

		if (strcmp(h->host, host) || !h->type)
			continue;
		if (h->time <= t)
			before = h;
		else if (!after)
			after = h;
	}
	return before ? before : after;
}

/* Release hs. */
void instances_hosts_free(struct instances_hosts *hs)
{
	for (size_t i = 0; i < hs->n; i++) {
		free(hs->h[i].host);
		free(hs->h[i].type);
		free(hs->h[i].region);
		free(hs->h[i].lifecycle);
	}
	free(hs->h);
	memset(hs, 0, sizeof(*hs));
}

/* The AWS Batch compute environment of job (instances.h). */
int instances_compute_env(struct sqlite3 *db, const char *where,
			  const char *job, char **ce)
{
	static const char sql[] =
		"SELECT " JSTR("$.job.compute_environment") " FROM record"
		" WHERE type = 'job' AND job_id = ?1 AND "
		JSTR("$.job.compute_environment") " IS NOT NULL LIMIT 1";
	struct report_query q = { .job = job };
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, err;

	*ce = NULL;
	if (!job)
		return 0;
	err = storeq_prepare_db(db, where, sql, &q, &st);
	if (!err && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = storeq_col_dup(st, 0, ce);
	if (!err && rc != SQLITE_ROW)
		err = storeq_step_done(db, where, rc);
	sqlite3_finalize(st);
	return err;
}

/* ---- entry --------------------------------------------------------------- */

/* Load the table and compute every task. */
static int compute(struct ctx *x)
{
	const struct instances_in *in = x->in;
	char err[1024];
	int rc;

	if (!in->prices_file || !*in->prices_file) {
		fprintf(stderr, "jobtrace rightsize: --format instances needs a"
			" price table: set cost.prices_file (jobtrace prices"
			" import writes one)\n");
		return -ENOENT;
	}
	rc = prices_load(in->prices_file, &x->set, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "jobtrace rightsize: cost.prices_file: %s\n",
			util_printable(err));
		return rc == -ENOMEM ? rc : rc == -ENOENT ? -ENOENT : -EINVAL;
	}
	if ((rc = table_regions(x)))
		return rc;
	x->c = calloc(in->ntask ? in->ntask : 1, sizeof(*x->c));
	if (!x->c)
		return -ENOMEM;
	for (size_t i = 0; i < in->ntask; i++)
		if ((rc = calc_task(x, &x->c[i], &in->task[i])))
			return rc;
	return 0;
}

/* Text: the head, every task, the compute environments. */
static int print_text(const struct ctx *x, FILE *out)
{
	const struct instances_in *in = x->in;

	fprintf(out, "jobtrace rightsize --format instances, %s: %zu task%s,"
		" period %.4g days (a month: 30 days), prices %s\n", in->sel,
		in->ntask, in->ntask == 1 ? "" : "s", in->period_s / 86400,
		in->prices_file);
	fprintf(out, "# needs: %s; each instance on an instance of its own"
		" for its wall time\n", in->rule);
	for (size_t i = 0; i < in->ntask; i++)
		text_task(x, &x->c[i], out);
	return print_batch(x, NULL, out);
}

/* JSON: the same. */
static int print_json(const struct ctx *x, FILE *out)
{
	const struct instances_in *in = x->in;
	struct jbuf b;
	int rc;

	jbuf_init(&b);
	json_obj_open(&b);
	json_kv_str(&b, "selection", in->sel);
	json_kv_str(&b, "prices_file", in->prices_file);
	json_kv_double(&b, "period_s", in->period_s);
	json_kv_double(&b, "month_h", INSTANCES_MONTH_H);
	json_kv_str(&b, "needs_rule", in->rule);
	json_key(&b, "tasks");
	json_arr_open(&b);
	for (size_t i = 0; i < in->ntask; i++)
		json_task(x, &x->c[i], &b);
	json_arr_close(&b);
	rc = print_batch(x, &b, out);
	json_obj_close(&b);
	if (rc) {
		jbuf_free(&b);
		return rc;
	}
	return storeq_json_print(&b, out);
}

/* Print the answer as text or JSON. */
int instances_print(const struct instances_in *in, bool json, FILE *out)
{
	struct ctx x = { .in = in };
	int rc = compute(&x);

	if (!rc)
		rc = json ? print_json(&x, out) : print_text(&x, out);
	for (size_t i = 0; x.c && i < in->ntask; i++)
		free(x.c[i].fit);
	free(x.c);
	free(x.regions);
	prices_set_free(&x.set);
	return rc;
}
