/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_files.h - scratch files for unit tests (include after cmocka.h).
 */
#ifndef JOBTRACE_TEST_FILES_H
#define JOBTRACE_TEST_FILES_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

/* Write text to dir/name, failing the test if it cannot; returns the path
 * (a static buffer, valid until the next call). */
static inline const char *test_write_file(const char *dir, const char *name,
					  const char *text)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Remove one entry of a scratch folder (an nftw callback). */
static inline int test_rm_entry(const char *path, const struct stat *st,
				int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove the scratch folder dir and everything in it. */
static inline int test_remove_tree(const char *dir)
{
	return nftw(dir, test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Remove an SQLite store dir/NAME with its WAL files, and dir (empty by
 * then). */
static inline void test_remove_store(const char *db, const char *dir)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char path[PATH_MAX];

	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s%s", db, sfx[i]);
		unlink(path);
	}
	rmdir(dir);
}

#endif
