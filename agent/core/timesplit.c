// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * timesplit.c - where a process's, task's or job's time went (timesplit.h).
 */
#include <stddef.h>
#include <string.h>

#include "timesplit.h"

#define M(member, path) { offsetof(struct timesplit_in, member), path }
#define COMP_MEMBERS 4		/* at most this many members added */

/* A member of timesplit_in and where a job's end record has it, under
 * usage (its processes' sums). */
struct member {
	size_t off;
	const char *path;
};

/* One component: name, words, the members of timesplit_in it adds. */
struct comp {
	const char *name;
	const char *label;
	struct member member[COMP_MEMBERS];
	size_t nmember;
};

/*
 * The components of a wall time, in the order the views show them; the
 * rest of the wall time comes after them.  Memory is what memory_pressure
 * counts (doc/wait.md): direct reclaim, thrashing, swap-in.
 */
static const struct comp comps[] = {
	{ "cpu", "running on a CPU", { M(cpu_s, "cpu_s") }, 1 },
	{ "run_queue", "waiting for a CPU",
	  { M(w.run_queue_s, "wait.run_queue_s") }, 1 },
	{ "blkio", "block I/O", { M(blkio_s, "blkio_delay_s") }, 1 },
	{ "memory", "memory waits", { M(w.reclaim_s, "wait.reclaim_s"),
				      M(w.thrashing_s, "wait.thrashing_s"),
				      M(w.swapin_s, "wait.swapin_s") }, 3 },
	{ "net", "network", { M(w.net_s, "wait.net_s") }, 1 },
	{ "children", "children", { M(w.children_s, "wait.children_s") }, 1 },
};

/* The whole the components split. */
static const struct member wall_member = M(wall_s, "wall_s");

#define NCOMP (sizeof(comps) / sizeof(comps[0]))
_Static_assert(NCOMP < TIMESPLIT_MAX, "TIMESPLIT_MAX too small");

/* The double at offset off of in. */
static double member(const struct timesplit_in *in, size_t off)
{
	double v;

	memcpy(&v, (const char *)in + off, sizeof(v));
	return v > 0 ? v : 0;
}

/* How many components the table has. */
size_t timesplit_ncomponents(void)
{
	return NCOMP;
}

/* Component i's name ("other" after the table). */
const char *timesplit_name(size_t i)
{
	return i < NCOMP ? comps[i].name : TIMESPLIT_OTHER;
}

/* Component i's words. */
const char *timesplit_label(size_t i)
{
	return i < NCOMP ? comps[i].label : "other";
}

/* The seconds of component i of in. */
double timesplit_component(const struct timesplit_in *in, size_t i)
{
	double s = 0;

	if (i >= NCOMP)
		return 0;
	for (size_t k = 0; k < comps[i].nmember; k++)
		s += member(in, comps[i].member[k].off);
	return s;
}

/* Split in's wall time. */
void timesplit_compute(const struct timesplit_in *in, struct timesplit *out)
{
	double wall = in->wall_s > 0 ? in->wall_s : 0, used = 0;

	memset(out, 0, sizeof(*out));
	out->wall_s = wall;
	for (size_t i = 0; i <= NCOMP; i++) {
		struct timesplit_part *p = &out->part[out->n++];

		p->name = timesplit_name(i);
		p->label = timesplit_label(i);
		p->s = i < NCOMP ? timesplit_component(in, i) :
		       wall - used > 0 ? wall - used : 0;
		p->pct = wall > 0 ? 100 * p->s / wall : 0;
		used += p->s;
	}
}

/* Add the waits b to a. */
void timesplit_waits_add(struct jt_waits *a, const struct jt_waits *b)
{
	a->run_queue_s += b->run_queue_s;
	a->reclaim_s += b->reclaim_s;
	a->thrashing_s += b->thrashing_s;
	a->swapin_s += b->swapin_s;
	a->compact_s += b->compact_s;
	a->net_s += b->net_s;
	a->children_s += b->children_s;
	a->nvcsw += b->nvcsw;
	a->nivcsw += b->nivcsw;
}

/* The figures a split is made of: the wall time, then each component's
 * members in the table's order. */
static const struct member *field(size_t i)
{
	if (!i--)
		return &wall_member;
	for (size_t c = 0; c < NCOMP; c++) {
		if (i < comps[c].nmember)
			return &comps[c].member[i];
		i -= comps[c].nmember;
	}
	return NULL;
}

/* How many figures a split is made of. */
size_t timesplit_nfields(void)
{
	size_t n = 1;

	for (size_t c = 0; c < NCOMP; c++)
		n += comps[c].nmember;
	return n;
}

/* Where figure i is in a job end record's usage object. */
const char *timesplit_field_path(size_t i)
{
	const struct member *m = field(i);

	return m ? m->path : NULL;
}

/* Set figure i of in. */
void timesplit_field_set(struct timesplit_in *in, size_t i, double v)
{
	const struct member *m = field(i);

	if (m)
		memcpy((char *)in + m->off, &v, sizeof(v));
}

/* The number of the part called name: NCOMP for the rest, NCOMP + 1 for
 * none. */
static size_t index_of(const char *name)
{
	size_t i = 0;

	while (i <= NCOMP && strcmp(timesplit_name(i), name))
		i++;
	return i;
}

/* The words of the part called name. */
const char *timesplit_label_of(const char *name)
{
	size_t i = index_of(name);

	return i <= NCOMP ? timesplit_label(i) : NULL;
}

/* The seconds of in's component called name. */
double timesplit_component_named(const struct timesplit_in *in,
				 const char *name)
{
	return timesplit_component(in, index_of(name));
}
