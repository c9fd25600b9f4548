// SPDX-License-Identifier: GPL-2.0-or-later
/* cgtrust.c - is a cgroup folder root's?  (see cgtrust.h) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgtrust.h"
#include "util.h"

#define MAX_ROOTS 4

static const char *const real_roots[] = {
	"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/memory",
	NULL,
};

/* One cached verdict: the folder and the answer. */
struct verdict {
	uint64_t hash;		/* 0: empty */
	char *dir;
	bool root;
};

struct cgtrust {
	const char *roots[MAX_ROOTS + 1];
	uid_t owner;
	struct verdict cache[CGTRUST_CACHE];	/* slot: hash % CGTRUST_CACHE */
	unsigned long lookups;
};

/* 64-bit FNV-1a of s, never 0. */
static uint64_t hash_of(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h ? h : 1;
}

/* Make a checker (see cgtrust.h). */
int cgtrust_new(const char *const *roots, uid_t owner, struct cgtrust **out)
{
	struct cgtrust *c = calloc(1, sizeof(*c));
	size_t n = 0;

	if (!c)
		return -ENOMEM;
	for (roots = roots ? roots : real_roots; roots[n] && n < MAX_ROOTS; n++)
		c->roots[n] = roots[n];
	c->owner = owner;
	*out = c;
	return 0;
}

/* Free it. */
void cgtrust_free(struct cgtrust *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CGTRUST_CACHE; i++)
		free(c->cache[i].dir);
	free(c);
}

/* Is dir the owner's, under the first root that has it? */
static bool lookup(struct cgtrust *c, const char *dir, bool *found)
{
	char path[4096];
	struct stat st;

	c->lookups++;
	*found = false;
	for (size_t i = 0; c->roots[i]; i++) {
		if (snprintf(path, sizeof(path), "%s%s", c->roots[i], dir) >=
		    (int)sizeof(path))
			return false;
		if (lstat(path, &st))
			continue;
		*found = true;
		return S_ISDIR(st.st_mode) && st.st_uid == c->owner;
	}
	return false;
}

/* Is dir the owner's (cached)? */
bool cgtrust_root(struct cgtrust *c, const char *dir)
{
	struct verdict *v;
	uint64_t h;
	bool root, found;

	if (!dir || dir[0] != '/' || strstr(dir, "/../") ||
	    (strlen(dir) >= 3 && !strcmp(dir + strlen(dir) - 3, "/..")))
		return false;
	h = hash_of(dir);
	v = &c->cache[h % CGTRUST_CACHE];
	/* the whole path decides: a path made to hash like a trusted one
	 * only takes its slot */
	if (v->hash == h && !strcmp(v->dir, dir))
		return v->root;
	root = lookup(c, dir, &found);
	if (found) {
		/* a folder not there yet or any more is asked again */
		char *copy = strdup(dir);

		if (copy) {
			free(v->dir);
			*v = (struct verdict){ .hash = h, .dir = copy, .root = root };
		}
	}
	return root;
}

/* Stat calls made so far. */
unsigned long cgtrust_lookups(const struct cgtrust *c)
{
	return c->lookups;
}
