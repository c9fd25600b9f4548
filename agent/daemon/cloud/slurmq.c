// SPDX-License-Identifier: GPL-2.0-or-later
/* slurmq.c - background `scontrol show job -o ID` and its parser. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "jobstate.h"
#include "slurmq.h"
#include "util.h"

/* Start the query in the background: the agent's own environment
 * (SLURM_CONF), nothing of any job's. */
int slurmq_start(const char *jobid, pid_t *pid, int *fd)
{
	char *argv[] = { "scontrol", "show", "job", "-o", (char *)jobid, NULL };

	return util_spawn_reader(argv, pid, fd);
}

/* Bytes from a size like "2000M", "4G", "512K" or "1024" (MiB); 0 for
 * what is not a size (NaN, negative, 2^64 bytes or more). */
static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s)
		return 0;
	switch (*end) {
	case 'K': v *= 1024; break;
	case 'G': v *= 1024.0 * 1024 * 1024; break;
	case 'T': v *= 1024.0 * 1024 * 1024 * 1024; break;
	case 'M':
	default: v *= 1024 * 1024; break;
	}
	/* written so that NaN fails too; 2^64 itself does not convert */
	if (!(v >= 0 && v < 18446744073709551616.0))
		return 0;
	return (uint64_t)v;
}

/* Copy a value into an empty field; "(null)" and "" are no value. */
static int take(char *dst, size_t len, const char *v, size_t vlen)
{
	if (dst[0] || vlen == 0 || (vlen == 6 && !strncmp(v, "(null)", 6)))
		return 0;
	if (vlen >= len)
		vlen = len - 1;
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return 1;
}

/* The value of "key=" in a TRES list like "cpu=2,mem=2000M,node=1". */
static const char *tres(const char *list, size_t len, const char *key)
{
	size_t k = strlen(key);

	for (const char *s = list; s < list + len;) {
		if (!strncmp(s, key, k) && s[k] == '=')
			return s + k + 1;
		s = memchr(s, ',', list + len - s);
		if (!s)
			break;
		s++;
	}
	return NULL;
}

/* A whole decimal number of 1 to 10 digits. */
static bool digits(const char *v, size_t n)
{
	if (!n || n > 10)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return false;
	return true;
}

/*
 * Give ji the id Slurm shows (sacct, squeue): "A_T" for an array task,
 * "H+O" for a heterogeneous job's component; its JobId becomes raw_id.
 * Returns 1 when it changed.
 */
static int rename_job(struct jt_jobinfo *ji, const char *a, size_t alen,
		      const char *b, size_t blen, char sep)
{
	char id[JT_STR_SMALL];

	/* once, and not for a job without an id of its own (no raw id then) */
	if (ji->raw_id[0] || !ji->job.id[0] || !digits(a, alen) ||
	    !digits(b, blen))
		return 0;
	snprintf(id, sizeof(id), "%.*s%c%.*s", (int)alen, a, sep, (int)blen, b);
	util_strlcpy(ji->raw_id, ji->job.id, sizeof(ji->raw_id));
	util_strlcpy(ji->job.id, id, sizeof(ji->job.id));
	if (sep == '_') {
		ji->batch.array_index = (uint32_t)strtoul(b, NULL, 10);
		ji->batch.has_array = true;
	}
	return 1;
}

/* The value of a key in one line as (pointer, length). */
struct kv {
	const char *v;
	size_t n;
};

/* Fill ji from one scontrol -o line about it (eol: the line's end). */
static int parse_line(const char *s, const char *eol, struct jt_jobinfo *ji)
{
	struct kv arr = { 0 }, task = { 0 }, het = { 0 }, off = { 0 };
	int filled = 0;

	while (s < eol) {
		/* a line ends at '\n' or NUL: no word runs past eol */
		size_t n = strcspn(s, " \n"), klen;
		const char *eq = memchr(s, '=', n), *v;
		size_t vlen;

		if (eq) {
			klen = eq - s;
			v = eq + 1;
			vlen = n - klen - 1;
#define KEY(k) (klen == sizeof(k) - 1 && !strncmp(s, k, klen))
			if (KEY("JobName")) {
				filled += take(ji->name, sizeof(ji->name), v, vlen);
			} else if (KEY("Account")) {
				filled += take(ji->job.account,
					       sizeof(ji->job.account), v, vlen);
			} else if (KEY("Partition")) {
				filled += take(ji->partition, sizeof(ji->partition),
					       v, vlen);
			} else if (KEY("UserId")) {
				/* "name(uid)" */
				const char *par = memchr(v, '(', vlen);

				filled += take(ji->job.user, sizeof(ji->job.user),
					       v, par ? (size_t)(par - v) : vlen);
				if (par && !ji->uid_known) {
					ji->uid = strtoul(par + 1, NULL, 10);
					ji->uid_known = true;
				}
			} else if (KEY("TimeLimit")) {
				char tl[32];
				uint32_t sec;

				if (!ji->time_limit_s && vlen < sizeof(tl)) {
					memcpy(tl, v, vlen);
					tl[vlen] = '\0';
					if (!cost_parse_time_limit(tl, &sec) && sec) {
						ji->time_limit_s = sec;
						filled++;
					}
				}
			} else if (KEY("NumCPUs")) {
				if (!ji->cpus && (ji->cpus = strtoul(v, NULL, 10)))
					filled++;
			} else if (KEY("TRES")) {
				const char *m = tres(v, vlen, "mem");
				const char *g = tres(v, vlen, "gres/gpu");

				if (m && !ji->mem_bytes && (ji->mem_bytes = parse_size(m)))
					filled++;
				if (g && !ji->gpus && (ji->gpus = strtoul(g, NULL, 10)))
					filled++;
			} else if (KEY("JobState")) {
				/* COMPLETING while an epilog runs: not yet */
				if (!ji->state[0] && jobstate_final(v, vlen) &&
				    vlen < sizeof(ji->state)) {
					memcpy(ji->state, v, vlen);
					ji->state[vlen] = '\0';
					filled++;
				}
			} else if (KEY("Reason")) {
				if (vlen < sizeof(ji->reason)) {
					memcpy(ji->reason, v, vlen);
					ji->reason[vlen] = '\0';
				}
			} else if (KEY("ArrayJobId")) {
				arr = (struct kv){ v, vlen };
			} else if (KEY("ArrayTaskId")) {
				task = (struct kv){ v, vlen };
			} else if (KEY("HetJobId")) {
				het = (struct kv){ v, vlen };
			} else if (KEY("HetJobOffset")) {
				off = (struct kv){ v, vlen };
			}
#undef KEY
		}
		s += n;
		while (s < eol && *s == ' ')
			s++;
	}
	if (arr.n)
		filled += rename_job(ji, arr.v, arr.n, task.v, task.n, '_');
	else if (het.n)
		filled += rename_job(ji, het.v, het.n, off.v, off.n, '+');
	return filled;
}

/*
 * Fill ji from what `scontrol show job -o` printed: the line whose JobId
 * is ji's (an array's job id lists every task, one line each).
 */
int slurmq_parse(const char *text, struct jt_jobinfo *ji)
{
	const char *me = ji->raw_id[0] ? ji->raw_id : ji->job.id;
	size_t melen = strlen(me);

	for (const char *s = text; *s;) {
		const char *eol = s + strcspn(s, "\n");

		while (*s == ' ')
			s++;
		if (!strncmp(s, "JobId=", 6) && !strncmp(s + 6, me, melen) &&
		    (s[6 + melen] == ' ' || s + 6 + melen == eol))
			return parse_line(s, eol, ji);
		s = *eol ? eol + 1 : eol;
	}
	return -EINVAL;
}
