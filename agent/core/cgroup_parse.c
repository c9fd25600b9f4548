// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup_parse.c - what a cgroup path says about containers and Slurm jobs.
 *
 * Layouts recognised (component = one '/'-separated name):
 *
 * Containers, innermost match wins (the path is scanned from its end):
 *   docker-<64hex>.scope            docker, systemd cgroup driver (v1, v2)
 *   cri-containerd-<64hex>.scope    containerd under the kubelet, systemd
 *   crio-<64hex>[.scope]            CRI-O, systemd or cgroupfs driver
 *   libpod-<64hex>[.scope]          podman (root, rootless, cgroupfs)
 *   docker/<64hex>                  docker, cgroupfs driver
 *   kubepods.../<64hex>             kubelet cgroupfs driver: containerd
 *                                   (dockershim nodes look the same; we
 *                                   report "containerd" for both)
 *   ecs/<task>/<64hex>              ECS on EC2 (v1): runtime "ecs"
 *   ecs/<task>/<task>-<digits>      newer ECS agents / Fargate-like ids
 *   ecstasks-<task>.slice/docker-<64hex>.scope
 *                                   ECS on EC2 with cgroup v2 (systemd
 *                                   driver, under ecstasks.slice): "ecs"
 *   any other bare <64hex>          a container of unknown runtime ("")
 * The ECS layouts name the task too (ecs_task, task_level): a task's
 * containers share its cgroup, which the ECS agent limits.
 * crio-conmon-<id>.scope and libpod-conmon-<id>.scope hold conmon, the
 * runtime's monitor process, which is not part of the container: such a
 * path is reported as no container at all.
 *
 * Slurm (task/cgroup plugin):
 *   v1: .../slurm[_<node>]/uid_<n>/job_<n>[/step_<s>[/task_<t>]]
 *   v2: .../[<node>_]slurmstepd.scope/job_<n>[/step_<s>[/user[/task_<t>]]]
 *       (step_<s>/slurm holds the step's slurmstepd itself; it is still
 *       reported as that job and step)
 * Step names are kept as Slurm prints them ("batch", "extern",
 * "interactive", "0", "0+1" for a heterogeneous component).  Raw special
 * step ids, which older releases printed as numbers, are mapped to names:
 *   0xfffffffa interactive, 0xfffffffb batch, 0xfffffffc extern (>= 20.11)
 *   0xfffffffe batch, 0xffffffff extern (<= 20.02)
 * 0xfffffffd (pending step) never has processes and is kept as a number.
 *
 * Components that would not fit their output field make the whole parse
 * fail (return 0, output all ""): a real id never comes close.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_parse.h"

#define CG_MAX_COMPS 64
#define CONTAINER_ID_LEN 64

struct comp {
	const char *s;
	size_t n;
};

/* Split path into its non-empty components; returns how many (bounded). */
static size_t split(const char *path, struct comp *c, size_t max)
{
	size_t nr = 0;
	const char *p = path;

	while (*p) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		if (!e)
			e = p + strlen(p);
		if (nr == max) {
			/* keep the innermost levels: they name the container */
			memmove(c, c + 1, (max - 1) * sizeof(*c));
			nr--;
		}
		c[nr].s = p;
		c[nr].n = (size_t)(e - p);
		nr++;
		p = e;
	}
	return nr;
}

/* True if the component equals the C string w. */
static bool eq(const struct comp *c, const char *w)
{
	size_t l = strlen(w);

	return c->n == l && memcmp(c->s, w, l) == 0;
}

/* True if the n bytes at s start with prefix. */
static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t l = strlen(prefix);

	return n >= l && memcmp(s, prefix, l) == 0;
}

/* True if the n bytes at s end with suffix. */
static bool ends(const char *s, size_t n, const char *suffix)
{
	size_t l = strlen(suffix);

	return n >= l && memcmp(s + n - l, suffix, l) == 0;
}

/* True if s[0..n) is non-empty and all lowercase hex. */
static bool all_hex(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* True if s[0..n) is non-empty and all decimal digits. */
static bool all_digits(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Copy n bytes into dst with a NUL; fails (-1) if it would not fit. */
static int copy(char *dst, size_t size, const char *s, size_t n)
{
	if (n >= size)
		return -1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* Set runtime and id from a component slice; -1 if they do not fit. */
static int set_container(struct cg_container *out, const char *rt,
			 const char *id, size_t n)
{
	if (copy(out->id, sizeof(out->id), id, n))
		return -1;
	return copy(out->runtime, sizeof(out->runtime), rt, strlen(rt));
}

/* True if c looks like an ECS task id (32 hex, or a 36-char UUID). */
static bool ecs_task_id(const struct comp *c)
{
	size_t i;

	if (c->n == 32)
		return all_hex(c->s, c->n);
	if (c->n != 36)
		return false;
	for (i = 0; i < c->n; i++) {
		bool dash = (i == 8 || i == 13 || i == 18 || i == 23);

		if (dash ? c->s[i] != '-' : !all_hex(c->s + i, 1))
			return false;
	}
	return true;
}

/* The ECS task of an "ecstasks-<task>.slice" component, into out; false
 * when c is not one. */
static bool ecstasks_slice(const struct comp *c, struct cg_container *out)
{
	static const char pfx[] = "ecstasks-", sfx[] = ".slice";
	struct comp t;

	if (!starts(c->s, c->n, pfx) || !ends(c->s, c->n, sfx))
		return false;
	t.s = c->s + strlen(pfx);
	t.n = c->n - strlen(pfx) - strlen(sfx);
	if (!ecs_task_id(&t))
		return false;
	return copy(out->ecs_task, sizeof(out->ecs_task), t.s, t.n) == 0;
}

static const struct {
	const char *prefix;
	const char *runtime;	/* NULL: conmon, not a container */
} scopes[] = {
	{ "docker-", "docker" },
	{ "cri-containerd-", "containerd" },
	{ "crio-conmon-", NULL },
	{ "crio-", "cri-o" },
	{ "libpod-conmon-", NULL },
	{ "libpod-", "podman" },
};

/*
 * Match component i of c against the container layouts: 1 found,
 * 0 not this level, -1 stop (conmon, or an id that does not fit).
 */
static int match_level(const struct comp *c, size_t i,
		       struct cg_container *out)
{
	const char *s = c[i].s;
	size_t n = c[i].n, k;

	if (ends(s, n, ".scope"))
		n -= strlen(".scope");
	for (k = 0; k < sizeof(scopes) / sizeof(scopes[0]); k++) {
		size_t pl = strlen(scopes[k].prefix);

		if (!starts(s, n, scopes[k].prefix))
			continue;
		if (n - pl != CONTAINER_ID_LEN || !all_hex(s + pl, n - pl))
			return 0;
		if (!scopes[k].runtime)
			return -1;
		/* ECS on cgroup v2: docker's scope in the task's slice */
		if (i >= 1 && !strcmp(scopes[k].runtime, "docker") &&
		    ecstasks_slice(&c[i - 1], out))
			return set_container(out, "ecs", s + pl, n - pl) ? -1 : 1;
		return set_container(out, scopes[k].runtime, s + pl,
				     n - pl) ? -1 : 1;
	}
	if (n != c[i].n)
		return 0;	/* some other .scope */

	/* ECS: ecs/<task>/<64hex> or ecs/<task>/<task>-<digits> */
	if (i >= 2 && eq(&c[i - 2], "ecs") && ecs_task_id(&c[i - 1])) {
		const struct comp *t = &c[i - 1];
		bool plain = n == CONTAINER_ID_LEN && all_hex(s, n);
		bool numbered = n > t->n + 1 && memcmp(s, t->s, t->n) == 0 &&
				s[t->n] == '-' &&
				all_digits(s + t->n + 1, n - t->n - 1);

		if (plain || numbered) {
			if (copy(out->ecs_task, sizeof(out->ecs_task),
				 t->s, t->n))
				return -1;
			return set_container(out, "ecs", s, n) ? -1 : 1;
		}
		return 0;
	}

	if (n != CONTAINER_ID_LEN || !all_hex(s, n))
		return 0;
	if (i >= 1 && eq(&c[i - 1], "docker"))
		return set_container(out, "docker", s, n) ? -1 : 1;
	for (k = 0; k < i; k++)
		if (starts(c[k].s, c[k].n, "kubepods"))
			return set_container(out, "containerd", s, n) ? -1 : 1;
	return set_container(out, "", s, n) ? -1 : 1;
}

/* Fill *out from a cgroup path; returns 1 if a container was found, else 0. */
int cg_parse_container(const char *path, struct cg_container *out)
{
	struct comp c[CG_MAX_COMPS];
	size_t nr, i;
	int rc;

	if (!out)
		return 0;
	memset(out, 0, sizeof(*out));
	out->level = out->task_level = -1;
	if (!path)
		return 0;
	nr = split(path, c, CG_MAX_COMPS);
	for (i = nr; i-- > 0;) {
		rc = match_level(c, i, out);
		if (rc == 1) {
			out->level = (int)(nr - 1 - i);
			if (out->ecs_task[0])
				out->task_level = out->level + 1;
			return 1;
		}
		if (rc < 0)
			break;
	}
	memset(out, 0, sizeof(*out));
	out->level = out->task_level = -1;
	return 0;
}

/* True if s[0..n) is a step name: a word, or N or N+M (het component). */
static bool step_name_ok(const char *s, size_t n)
{
	const char *plus;
	size_t i;

	if (!n)
		return false;
	if (s[0] >= 'a' && s[0] <= 'z') {
		for (i = 0; i < n; i++)
			if (s[i] < 'a' || s[i] > 'z')
				return false;
		return true;
	}
	plus = memchr(s, '+', n);
	if (!plus)
		return all_digits(s, n);
	return all_digits(s, (size_t)(plus - s)) &&
	       all_digits(plus + 1, n - (size_t)(plus - s) - 1);
}

/* Store a step name, mapping raw special step ids to their names. */
static int set_step(struct cg_slurm *out, const char *s, size_t n)
{
	static const struct {
		const char *raw;
		const char *name;
	} special[] = {
		{ "4294967290", "interactive" },	/* 0xfffffffa */
		{ "4294967291", "batch" },		/* 0xfffffffb */
		{ "4294967292", "extern" },		/* 0xfffffffc */
		{ "4294967294", "batch" },		/* 0xfffffffe, old */
		{ "4294967295", "extern" },		/* 0xffffffff, old */
	};
	size_t k;

	if (!step_name_ok(s, n))
		return -1;
	for (k = 0; k < sizeof(special) / sizeof(special[0]); k++) {
		if (n == strlen(special[k].raw) &&
		    memcmp(s, special[k].raw, n) == 0) {
			s = special[k].name;
			n = strlen(s);
			break;
		}
	}
	return copy(out->step, sizeof(out->step), s, n);
}

/* Value after prefix in component c, copied to dst if it is all digits. */
static int take_num(const struct comp *c, const char *prefix,
		    char *dst, size_t size)
{
	size_t pl = strlen(prefix);

	if (!starts(c->s, c->n, prefix) || !all_digits(c->s + pl, c->n - pl))
		return -1;
	return copy(dst, size, c->s + pl, c->n - pl);
}

/* Task name after "task_": digits or "special". */
static int take_task(const struct comp *c, struct cg_slurm *out)
{
	size_t pl = strlen("task_");

	if (!starts(c->s, c->n, "task_"))
		return -1;
	if (!all_digits(c->s + pl, c->n - pl) &&
	    !(c->n - pl == 7 && memcmp(c->s + pl, "special", 7) == 0))
		return -1;
	return copy(out->task, sizeof(out->task), c->s + pl, c->n - pl);
}

/* Empty a Slurm parse result: no job, levels unknown. */
static void clear_slurm(struct cg_slurm *out)
{
	memset(out, 0, sizeof(*out));
	out->job_level = -1;
	out->step_level = -1;
}

/* Parse the levels from job_<n> on; i indexes the job component. */
static int parse_job_levels(const struct comp *c, size_t nr, size_t i,
			    bool v2, struct cg_slurm *out)
{
	if (take_num(&c[i], "job_", out->job, sizeof(out->job)))
		return -1;
	out->job_level = (int)(nr - i - 1);
	if (++i >= nr)
		return 0;
	if (!starts(c[i].s, c[i].n, "step_"))
		return 0;	/* e.g. v2 job_N/system: job, no step */
	if (set_step(out, c[i].s + 5, c[i].n - 5))
		return -1;
	out->step_level = (int)(nr - i - 1);
	if (++i >= nr)
		return 0;
	if (v2) {
		if (!eq(&c[i], "user"))
			return 0;	/* step_N/slurm: the stepd itself */
		if (++i >= nr)
			return 0;
	}
	if (starts(c[i].s, c[i].n, "task_") && take_task(&c[i], out))
		return -1;
	return 0;
}

/* Fill *out from a cgroup path; returns 1 if a Slurm job was found, else 0. */
int cg_parse_slurm(const char *path, struct cg_slurm *out)
{
	struct comp c[CG_MAX_COMPS];
	size_t nr, i;

	if (!out)
		return 0;
	clear_slurm(out);
	if (!path)
		return 0;
	nr = split(path, c, CG_MAX_COMPS);
	for (i = 0; i + 1 < nr; i++) {
		const struct comp *a = &c[i];
		int rc;

		if (eq(a, "slurmstepd.scope") ||
		    (ends(a->s, a->n, "_slurmstepd.scope") &&
		     a->n > strlen("_slurmstepd.scope"))) {
			if (!starts(c[i + 1].s, c[i + 1].n, "job_"))
				continue;
			rc = parse_job_levels(c, nr, i + 1, true, out);
		} else if (eq(a, "slurm") || (starts(a->s, a->n, "slurm_") &&
					      a->n > strlen("slurm_"))) {
			if (i + 2 >= nr ||
			    take_num(&c[i + 1], "uid_", out->uid,
				     sizeof(out->uid)) ||
			    !starts(c[i + 2].s, c[i + 2].n, "job_")) {
				clear_slurm(out);
				continue;
			}
			rc = parse_job_levels(c, nr, i + 2, false, out);
		} else {
			continue;
		}
		if (rc == 0)
			return 1;
		break;
	}
	clear_slurm(out);
	return 0;
}

/*
 * Parse the title of a slurmstepd ("slurmstepd: [1234.batch]",
 * "slurmstepd: [1234.0]", "slurmstepd: [1234.extern]", trailing spaces
 * allowed) into job and step; returns 1 on a match, else 0.
 */
int cg_parse_slurmstepd_title(const char *title, struct cg_slurm *out)
{
	static const char pfx[] = "slurmstepd: [";
	const char *p, *dot, *end;
	size_t n;

	if (!out)
		return 0;
	clear_slurm(out);
	if (!title || strncmp(title, pfx, sizeof(pfx) - 1) != 0)
		return 0;
	p = title + sizeof(pfx) - 1;
	end = strchr(p, ']');
	if (!end)
		goto fail;
	/* only padding may follow the closing bracket */
	for (const char *t = end + 1; *t; t++)
		if (*t != ' ' && *t != '\t' && *t != '\n')
			goto fail;
	dot = memchr(p, '.', (size_t)(end - p));
	if (!dot)
		goto fail;
	n = (size_t)(dot - p);
	if (!all_digits(p, n) || copy(out->job, sizeof(out->job), p, n))
		goto fail;
	if (set_step(out, dot + 1, (size_t)(end - dot - 1)))
		goto fail;
	return 1;
fail:
	clear_slurm(out);
	return 0;
}

/* The cgroup up levels above path (see cgroup_parse.h). */
int cg_ancestor(const char *path, int up, char *out, size_t len)
{
	struct comp c[CG_MAX_COMPS];
	size_t nr, n;

	if (!path || up < 0 || !len)
		return -1;
	nr = split(path, c, CG_MAX_COMPS);
	if ((size_t)up > nr || (nr == CG_MAX_COMPS && (size_t)up == nr))
		return -1;
	/* components point into path: the prefix ends with the last kept */
	n = (size_t)up == nr ? 0 : (size_t)(c[nr - 1 - up].s +
					     c[nr - 1 - up].n - path);
	if (!n)
		return copy(out, len, "/", 1);
	return copy(out, len, path, n);
}

/* Levels of path below ancestor (0: the same cgroup), or -1. */
int cg_level_below(const char *path, const char *ancestor)
{
	struct comp pc[CG_MAX_COMPS], ac[CG_MAX_COMPS];
	size_t np, na;

	if (!path || !ancestor || !*ancestor)
		return -1;
	np = split(path, pc, CG_MAX_COMPS);
	na = split(ancestor, ac, CG_MAX_COMPS);
	if (na > np || np == CG_MAX_COMPS || na == CG_MAX_COMPS)
		return -1;
	for (size_t i = 0; i < na; i++)
		if (pc[i].n != ac[i].n || memcmp(pc[i].s, ac[i].s, pc[i].n))
			return -1;
	return (int)(np - na);
}

/* Copy the n bytes at s into dst (size bytes), cut to fit. */
static void copy_cut(char *dst, size_t size, const char *s, size_t n)
{
	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/*
 * From the text of /proc/PID/cgroup: the cgroup v2 path ("0::/..." line)
 * into v2, and the memory controller's path into mem (the v1 line naming
 * "memory", else the v2 path when mem_on_v2).  Missing ones are "".
 * Returns 0, or -1 when no line had the hierarchy:controllers:path form.
 */
int cg_parse_proc_cgroup(const char *text, bool mem_on_v2, char *v2,
			 size_t v2len, char *mem, size_t memlen)
{
	const char *line = text;
	int lines = 0;

	if (v2len)
		v2[0] = '\0';
	if (memlen)
		mem[0] = '\0';
	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (c1 + 1 - line)) : NULL;

		if (c2) {
			const char *ctl = c1 + 1, *path = c2 + 1;
			size_t cl = (size_t)(c2 - ctl), pl = len - (path - line);

			lines++;
			if (cl == 0 && c1 - line == 1 && line[0] == '0') {
				copy_cut(v2, v2len, path, pl);
				if (mem_on_v2)
					copy_cut(mem, memlen, path, pl);
			} else {
				/* controllers are comma-separated */
				for (const char *k = ctl; k < c2;) {
					const char *e = memchr(k, ',', c2 - k);
					size_t kl = e ? (size_t)(e - k) : (size_t)(c2 - k);

					if (kl == 6 && !memcmp(k, "memory", 6) &&
					    !mem_on_v2)
						copy_cut(mem, memlen, path, pl);
					k += kl + 1;
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return lines ? 0 : -1;
}

/*
 * From the text of /proc/cgroups: 1 if the memory controller is on the
 * cgroup v2 hierarchy (hierarchy id 0), 0 if on a v1 one, -1 if it is
 * absent or disabled.
 */
int cg_memory_on_v2(const char *text)
{
	const char *line = text;

	while (line && *line) {
		char name[32];
		unsigned hier, num, enabled;

		if (sscanf(line, "%31s %u %u %u", name, &hier, &num,
			   &enabled) == 4 && !strcmp(name, "memory"))
			return enabled ? hier == 0 : -1;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -1;
}
