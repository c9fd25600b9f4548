// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sizefit.c - resources as a function of input size (sizefit.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "filesq.h"
#include "json.h"
#include "log.h"
#include "sizefit.h"
#include "store.h"
#include "util.h"

/* Fit y = a + b x over the points with x >= 0 (sizefit.h). */
int sizefit_linear(const double *x, const double *y, size_t n,
		   struct sizefit *out)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, ssr = 0, syy = 0, mx, my, e;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] >= 0))
			continue;
		if (!k || x[i] < out->x_min)
			out->x_min = x[i];
		if (!k || x[i] > out->x_max)
			out->x_max = x[i];
		sx += x[i];
		sy += y[i];
		k++;
	}
	out->n = k;
	if (k < 3 || out->x_max == out->x_min)
		return -EINVAL;
	mx = sx / (double)k;
	my = sy / (double)k;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] >= 0))
			continue;
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	out->b = sxy / sxx;
	out->a = my - out->b * mx;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] >= 0))
			continue;
		e = y[i] - out->a - out->b * x[i];
		ssr += e * e;
	}
	out->s = sqrt(ssr / (double)(k - 2));
	out->se_b = out->s / sqrt(sxx);
	out->r2 = syy > 0 ? 1 - ssr / syy : 1;
	out->grows = k >= SIZEFIT_MIN_N && out->b > 0 &&
		     out->b >= 2 * out->se_b && out->r2 >= SIZEFIT_MIN_R2;
	return 0;
}

/* The line plus twice its error at x. */
double sizefit_at(const struct sizefit *f, double x)
{
	return f->a + f->b * x + 2 * f->s;
}

/* Fit a task's instances (sizefit.h). */
void sizefit_task(struct sizefit_task *t, const double *x,
		  const double *mem, const double *wall, size_t n)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++)
		t->known += x[i] >= 0;
	sizefit_linear(x, mem, n, &t->mem);
	sizefit_linear(x, wall, n, &t->wall);
}

/* Does memory or time grow with input size? */
bool sizefit_grows(const struct sizefit_task *t)
{
	return t->mem.grows || t->wall.grows;
}

/* One fit as text: "memory = 210 MiB + 0.62 x input (error 35 MiB,
 * r2 0.97, 7 instances, input 1.0 GiB to 5.0 GiB)". */
static void fit_text(FILE *out, const char *what, const struct sizefit *f,
		     bool bytes)
{
	char a[32], s[32], lo[32], hi[32];

	util_human_bytes(f->x_min, lo, sizeof(lo));
	util_human_bytes(f->x_max, hi, sizeof(hi));
	if (bytes) {
		util_human_bytes(f->a > 0 ? (uint64_t)f->a : 0, a, sizeof(a));
		util_human_bytes((uint64_t)f->s, s, sizeof(s));
		fprintf(out, "    %s = %s%s + %.4g x input (error %s",
			what, f->a < 0 ? "-" : "", a, f->b, s);
	} else {
		fprintf(out, "    %s = %.1f s + %.4g s per GiB of input (error"
			" %.1f s", what, f->a, f->b * 1073741824.0, f->s);
	}
	fprintf(out, ", r2 %.2f, %zu instances, input %s to %s)\n", f->r2,
		f->n, lo, hi);
}

/* The text lines of a task's fits. */
void sizefit_print_text(FILE *out, const char *name,
			const struct sizefit_task *t)
{
	if (!sizefit_grows(t))
		return;
	fprintf(out, "  %s grows with its input size (asked: the line + 2 x"
		" its error, then the margin):\n", name);
	if (t->mem.grows)
		fit_text(out, "memory", &t->mem, true);
	if (t->wall.grows)
		fit_text(out, "wall", &t->wall, false);
}

/* One fit as a JSON object, or null when it does not grow. */
static void fit_json(struct jbuf *b, const char *key, const struct sizefit *f)
{
	const char *const keys[] = { "intercept", "slope", "error",
				     "slope_error", "r2", "input_min_bytes",
				     "input_max_bytes" };
	const double v[] = { f->a, f->b, f->s, f->se_b, f->r2, f->x_min,
			     f->x_max };

	json_key(b, key);
	if (!f->grows) {
		json_null(b);
		return;
	}
	json_obj_open(b);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		json_key(b, keys[i]);	/* every digit: a slope is tiny */
		json_double_exact(b, v[i]);
	}
	json_kv_u64(b, "instances", f->n);
	json_obj_close(b);
}

/* "input_fit": {instances_with_input, memory_bytes, wall_s}, when some
 * instance's input bytes are known. */
void sizefit_json(struct jbuf *b, const struct sizefit_task *t)
{
	if (!t->known)
		return;
	json_key(b, "input_fit");
	json_obj_open(b);
	json_kv_u64(b, "instances_with_input", t->known);
	fit_json(b, "memory_bytes", &t->mem);
	fit_json(b, "wall_s", &t->wall);
	json_obj_close(b);
}

/*
 * Nextflow: memory and time as closures over x, the bytes of the task's
 * input files (the names of its path inputs; Nextflow evaluates a dynamic
 * directive in the task's context, where they are Paths).
 */
void sizefit_nextflow(FILE *out, const struct sizefit_task *t)
{
	const char *x = "def x = [INPUTS].flatten().sum { it.size() } ?: 0";

	if (t->mem.grows)
		fprintf(out, "        memory = { %s; \"${Math.max(%llu,"
			" (long) Math.ceil(%g * (%.10g + %.10g * x + %.10g) /"
			" %llu) * %llu)} B\" }\n", x,
			(unsigned long long)t->mem_min, SIZEFIT_MEM_MARGIN,
			t->mem.a, t->mem.b, 2 * t->mem.s,
			(unsigned long long)t->mem_step,
			(unsigned long long)t->mem_step);
	if (t->wall.grows)
		fprintf(out, "        time = { %s; \"${Math.max(%u, (long)"
			" Math.ceil(%g * (%.10g + %.10g * x + %.10g) / 60))}m\""
			" }\n", x, t->min_minutes, SIZEFIT_TIME_MARGIN,
			t->wall.a, t->wall.b, 2 * t->wall.s);
}

/* Snakemake: mem_mb and runtime callables of rule name in a rules file. */
void sizefit_snakemake(FILE *out, const char *name,
		       const struct sizefit_task *t)
{
	if (t->mem.grows)
		fprintf(out, "jobtrace_mem_mb[\"%s\"] = lambda wildcards, input:"
			" max(%llu, math.ceil(math.ceil(%g * (%.10g + %.10g *"
			" _jobtrace_bytes(input) + %.10g) / %llu) * %llu /"
			" 1e6))\n", name,
			(unsigned long long)((t->mem_min + 999999) / 1000000),
			SIZEFIT_MEM_MARGIN, t->mem.a, t->mem.b, 2 * t->mem.s,
			(unsigned long long)t->mem_step,
			(unsigned long long)t->mem_step);
	if (t->wall.grows)
		fprintf(out, "jobtrace_runtime[\"%s\"] = lambda wildcards, input:"
			" max(%u, math.ceil(%g * (%.10g + %.10g *"
			" _jobtrace_bytes(input) + %.10g) / 60))\n", name,
			t->min_minutes, SIZEFIT_TIME_MARGIN, t->wall.a,
			t->wall.b, 2 * t->wall.s);
}

/* The files of the process record id into p (none when it has none). */
static int load_files(sqlite3_stmt *st, const char *id,
		      struct filesq_proc *p)
{
	const char *files;
	int rc, err = 0;

	sqlite3_reset(st);
	if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		files = (const char *)sqlite3_column_text(st, 0);
		if (files && sqlite3_column_type(st, 0) == SQLITE_TEXT)
			err = filesq_parse(p, files, strlen(files), NULL,
					   NULL);
	} else if (rc != SQLITE_DONE) {
		return -EIO;
	}
	return err == -EINVAL ? 0 : err;	/* a corrupt column: none */
}

/* The input bytes of the instance whose processes are p (one task). */
static int instance_inputs(const struct filesq_procs *p, double *out)
{
	struct filesq_data d;
	const struct filesq_task *t;
	int err;

	*out = -1;
	err = filesq_data(p, &d);
	if (err || !d.with_files) {
		filesq_data_free(&d);
		return err;
	}
	*out = 0;
	for (size_t i = 0; i < d.n; i++) {
		t = &d.v[i];
		for (size_t j = 0; j < t->n[FILESQ_INPUT]; j++) {
			const struct filesq_item *it = &t->v[FILESQ_INPUT][j];

			*out += (double)(it->size != FILESQ_NO_SIZE ? it->size :
					 it->read_bytes);
		}
	}
	filesq_data_free(&d);
	return 0;
}

/* The input bytes of each instance (sizefit.h). */
int sizefit_inputs(struct store *st, const char *where,
		   const char *const *ids, const long *of, size_t n,
		   size_t ninst, double *out)
{
	static const char sql[] = "SELECT CASE WHEN json_valid(j) THEN"
		" json_extract(j, '$.files') END FROM (SELECT"
		" jobtrace_json(?1) AS j)";
	struct filesq_procs all = { 0 }, one = { 0 };
	sqlite3 *db = store_handle(st);
	sqlite3_stmt *s = NULL;
	int err = 0;

	for (size_t i = 0; i < ninst; i++)
		out[i] = -1;
	all.v = calloc(n ? n : 1, sizeof(*all.v));
	one.v = calloc(n ? n : 1, sizeof(*one.v));
	all.n = n;
	if (!all.v || !one.v) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		err = -EIO;
		goto cleanup;
	}
	for (size_t i = 0; !err && i < n; i++)
		if (of[i] >= 0 && (size_t)of[i] < ninst)
			err = load_files(s, ids[i], &all.v[i]);
	for (size_t k = 0; !err && k < ninst; k++) {
		one.n = 0;
		for (size_t i = 0; i < n; i++)
			if (of[i] == (long)k)
				one.v[one.n++] = all.v[i];	/* borrowed */
		err = instance_inputs(&one, &out[k]);
	}
	if (err == -EIO)
		log_error("database %s: %s", where, sqlite3_errmsg(db));

cleanup:
	sqlite3_finalize(s);
	free(one.v);
	filesq_procs_free(&all);
	return err;
}
