/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_files.h - scratch files for unit tests (include after cmocka.h).
 */
#ifndef JOBTRACE_TEST_FILES_H
#define JOBTRACE_TEST_FILES_H

#include <limits.h>
#include <stdio.h>

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

#endif
