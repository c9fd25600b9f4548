/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz.h - what the libFuzzer harnesses share: the entry point, a
 * NUL-terminated copy of the input, a scratch folder for parsers that
 * read files, and a check that aborts (a crash libFuzzer keeps) when an
 * invariant of the code under test does not hold.
 */
#ifndef JOBTRACE_FUZZ_H
#define JOBTRACE_FUZZ_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the failed condition: libFuzzer saves the input. */
#define FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* A malloc'd copy of the input with a NUL after it (NULL on ENOMEM). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		return NULL;
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Remove every plain file in dir (the scratch folder has no others). */
static inline void fuzz_empty_dir(const char *dir)
{
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/* Remove the scratch folder at exit. */
static char fuzz_dir[64];
static inline void fuzz_scratch_remove(void)
{
	fuzz_empty_dir(fuzz_dir);
	rmdir(fuzz_dir);
}

/*
 * A private scratch folder, made at the first call and removed at exit:
 * under /dev/shm when there is one (no disk writes, fdatasync is free),
 * else under /tmp.
 */
static inline const char *fuzz_scratch(void)
{
	if (!fuzz_dir[0]) {
		const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
								   "/tmp";

		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/jt-fuzz.XXXXXX", base);
		if (!mkdtemp(fuzz_dir)) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(fuzz_scratch_remove);
	}
	return fuzz_dir;
}

/* Write n bytes to path (abort on failure: not the code under test). */
static inline void fuzz_write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f)) {
		perror(path);
		abort();
	}
}

#endif
