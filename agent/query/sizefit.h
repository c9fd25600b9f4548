/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sizefit.h - resources as a function of input size, for `jobtrace
 * rightsize`: each instance's input bytes, and a least-squares line of
 * its memory peak (or wall time) over them.
 *
 *  - An instance's input bytes: the sum of the sizes of its inputs, the
 *    files its processes read and none of them wrote (filesq.h's
 *    definition, over the instance's processes); a file's size is its
 *    size_bytes, else the bytes read from it.  Not known (-1) when none of
 *    its processes' records has files.
 *  - The fit: y = a + b x by ordinary least squares over the n instances
 *    whose input bytes are known; its error s is the residual standard
 *    error sqrt(sum((y - a - b x)^2) / (n - 2)), se_b the slope's standard
 *    error s / sqrt(sum((x - mean x)^2)), r2 the coefficient of
 *    determination; its range is [x_min, x_max] of the instances seen.
 *  - y grows with input size when n >= SIZEFIT_MIN_N, the x are not all
 *    equal, b > 0, b >= 2 se_b (the slope is not noise) and r2 >=
 *    SIZEFIT_MIN_R2.
 *  - The amount to ask for at input size x: a + b x + 2 s (the line plus
 *    twice its error), then rightsize's margin (memory x 1.2 rounded up to
 *    100 MiB, time x 1.5), at least what the flat rule would give for the
 *    smallest instance seen.  Outside [x_min, x_max] it is an
 *    extrapolation: the outputs say the range.
 */
#ifndef JOBTRACE_SIZEFIT_H
#define JOBTRACE_SIZEFIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIZEFIT_MIN_N 5		/* instances with known input bytes */
#define SIZEFIT_MIN_R2 0.5

struct jbuf;
struct store;

/* A least-squares line y = a + b x over n points. */
struct sizefit {
	size_t n;
	double a, b;		/* intercept, slope */
	double s;		/* residual standard error (y's unit) */
	double se_b;		/* the slope's standard error */
	double r2;
	double x_min, x_max;
	bool grows;		/* the rule above */
};

/*
 * Fit y = a + b x over the points (x[i], y[i]) whose x[i] >= 0 (n of
 * them); -EINVAL with fewer than 3 such points or all x equal (out is then
 * zeroed but n and the range).
 */
int sizefit_linear(const double *x, const double *y, size_t n,
		   struct sizefit *out);
/* a + b x + 2 s: the amount before rightsize's margin, at input x. */
double sizefit_at(const struct sizefit *f, double x);

/* rightsize's margins (RIGHTSIZE_RULE), applied to the line + 2 s */
#define SIZEFIT_MEM_MARGIN 1.2
#define SIZEFIT_TIME_MARGIN 1.5

/* A task's fits over its instances: memory peak and wall time. */
struct sizefit_task {
	size_t known;		/* instances whose input bytes are known */
	struct sizefit mem, wall;
	/* what the closures ask at the least (the flat rule for the
	 * task's smallest instance), and the memory's granularity */
	uint64_t mem_min, mem_step;
	unsigned min_minutes;
};

/*
 * Fit the n instances of a task: input bytes x[i] (-1: not known), memory
 * peak mem[i] and wall seconds wall[i].
 */
void sizefit_task(struct sizefit_task *t, const double *x,
		  const double *mem, const double *wall, size_t n);
/* Does either figure of t grow with input size? */
bool sizefit_grows(const struct sizefit_task *t);
/* The text lines of task name's fits (nothing when neither grows). */
void sizefit_print_text(FILE *out, const char *name,
			const struct sizefit_task *t);
/* "input_fit": its figures as a member of an open JSON object (none
 * when no instance's input bytes are known). */
void sizefit_json(struct jbuf *b, const struct sizefit_task *t);
/* Nextflow: the directives of a withName block as closures over the
 * task's input size; Snakemake: a rules file's callables. */
void sizefit_nextflow(FILE *out, const struct sizefit_task *t);
void sizefit_snakemake(FILE *out, const char *name,
		       const struct sizefit_task *t);

/*
 * The input bytes of each of ninst instances: of[i] is the instance of
 * process i (-1: none) of the n processes whose record ids are ids[i].
 * out[ninst] gets the bytes, -1 when not known.  Reads st (where names it
 * in messages); 0, -EIO, -ENOMEM.
 */
int sizefit_inputs(struct store *st, const char *where,
		   const char *const *ids, const long *of, size_t n, size_t ninst,
		   double *out);

#endif
