// SPDX-License-Identifier: GPL-2.0-or-later
/* proc_table.c - the processes the agent follows, keyed by (pid, start). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "proc_table.h"
#include "util.h"

struct node {
	struct jt_proc p;	/* first: a jt_proc pointer is a node pointer */
	struct node *next;
};

struct proc_table {
	struct node **buckets;
	size_t nbuckets;	/* power of two */
	size_t count;
};

/* Bucket index of a key. */
static size_t slot(const struct proc_table *t, uint32_t pid, uint64_t start)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^ start;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h & (t->nbuckets - 1);
}

/* Create an empty table. */
int proc_table_new(struct proc_table **out)
{
	struct proc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->nbuckets = 1024;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

/* Release the strings of a jt_proc. */
void proc_free_strings(struct jt_proc *p)
{
	files_raw_free(p->fraw);
	free(p->fraw);
	p->fraw = NULL;
	free(p->exe);
	free(p->argv);
	free(p->cgroup);
	p->exe = p->argv = p->cgroup = NULL;
	p->argv_len = 0;
}

/* Set a string field to a copy of len bytes (NUL appended). */
int proc_set_str(char **field, const char *s, size_t len)
{
	char *c = malloc(len + 1);

	if (!c)
		return -ENOMEM;
	memcpy(c, s, len);
	c[len] = '\0';
	free(*field);
	*field = c;
	return 0;
}

/*
 * The default tool name: the executable's base name, else comm.  A path
 * the kernel cut ends in a fragment, so then argv[0]'s base name stands in
 * when it begins with comm (the first 15 bytes of the name the kernel
 * gave the program: an interpreter's argv[0] for a script does not), else
 * comm.
 */
const char *proc_default_tool(const struct jt_proc *p)
{
	const char *a0;

	if (p->exe && *p->exe && !(p->state & JT_PS_EXE_TRUNC))
		return util_basename(p->exe);
	/* argv[0] whole: a NUL ends it within the captured bytes */
	if (p->argv && memchr(p->argv, '\0', p->argv_len)) {
		a0 = util_basename(p->argv);
		if (*a0 && !strncmp(a0, p->comm, strnlen(p->comm, sizeof(p->comm))))
			return a0;
	}
	return p->comm;
}

/* Free the table and every entry. */
void proc_table_free(struct proc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct node *n = t->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			proc_free_strings(&n->p);
			free(n);
		}
	}
	free(t->buckets);
	free(t);
}

/* The entry for (pid, start_ns), or NULL. */
struct jt_proc *proc_table_lookup(const struct proc_table *t, uint32_t pid,
				  uint64_t start_ns)
{
	struct node *n = t->buckets[slot(t, pid, start_ns)];

	for (; n; n = n->next)
		if (n->p.pid == pid && n->p.start_ns == start_ns)
			return &n->p;
	return NULL;
}

/* The parent entry of p, or NULL. */
struct jt_proc *proc_table_parent(const struct proc_table *t,
				  const struct jt_proc *p)
{
	if (!p->ppid)
		return NULL;
	return proc_table_lookup(t, p->ppid, p->parent_start_ns);
}

/* Double the bucket array when the load factor passes 1. */
static void grow(struct proc_table *t)
{
	size_t nb = t->nbuckets * 2;
	struct node **b = calloc(nb, sizeof(*b));
	struct proc_table tmp = { .buckets = b, .nbuckets = nb };

	if (!b)
		return;	/* keep working with longer chains */
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct node *n = t->buckets[i], *next;

		for (; n; n = next) {
			size_t s = slot(&tmp, n->p.pid, n->p.start_ns);

			next = n->next;
			n->next = b[s];
			b[s] = n;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
}

/* The entry for a key, created zeroed if missing. */
struct jt_proc *proc_table_get(struct proc_table *t, uint32_t pid,
			       uint64_t start_ns, int *created)
{
	struct jt_proc *p = proc_table_lookup(t, pid, start_ns);
	struct node *n;
	size_t s;

	if (created)
		*created = 0;
	if (p)
		return p;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->p.pid = pid;
	n->p.start_ns = start_ns;
	s = slot(t, pid, start_ns);
	n->next = t->buckets[s];
	t->buckets[s] = n;
	if (++t->count > t->nbuckets)
		grow(t);
	if (created)
		*created = 1;
	return &n->p;
}

/* Remove and free one entry. */
void proc_table_remove(struct proc_table *t, struct jt_proc *p)
{
	struct node **pp = &t->buckets[slot(t, p->pid, p->start_ns)];

	for (; *pp; pp = &(*pp)->next) {
		if (&(*pp)->p != p)
			continue;
		struct node *n = *pp;

		*pp = n->next;
		proc_free_strings(&n->p);
		free(n);
		t->count--;
		return;
	}
}

/* Number of entries. */
size_t proc_table_count(const struct proc_table *t)
{
	return t->count;
}

/* Call fn on every entry; fn may remove the entry it is given. */
void proc_table_foreach(struct proc_table *t,
			void (*fn)(struct jt_proc *p, void *arg), void *arg)
{
	for (size_t i = 0; i < t->nbuckets; i++) {
		struct node *n = t->buckets[i], *next;

		for (; n; n = next) {
			next = n->next;
			fn(&n->p, arg);
		}
	}
}
