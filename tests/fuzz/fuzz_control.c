// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_control.c - the control socket's request parser (control_parse,
 * control_get) on a line as the agent reads it from a client: up to the
 * first line end.  Whatever it accepts must hold what control.h promises.
 */
#include <stdbool.h>

#include "control.h"
#include "fuzz.h"

/* Is s 1 to 32 of the characters control.h allows for a name? */
static bool word_ok(const char *s, bool dash)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 32 &&
	       strspn(s, dash ? "abcdefghijklmnopqrstuvwxyz_-" :
				"abcdefghijklmnopqrstuvwxyz_") == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_req req;
	const char *why;
	char *line = fuzz_strndup(data, size);

	if (!line)
		return 0;
	line[strcspn(line, "\r\n")] = '\0';
	if (control_parse(line, &req, &why) != 0) {
		FUZZ_CHECK(why && *why);
		free(line);
		return 0;
	}
	FUZZ_CHECK(why == NULL);
	FUZZ_CHECK(req.cmd && word_ok(req.cmd, true));
	FUZZ_CHECK(req.n <= CONTROL_MAX_FIELDS);
	for (size_t i = 0; i < req.n; i++) {
		const char *v = req.f[i].val;

		FUZZ_CHECK(word_ok(req.f[i].key, false));
		FUZZ_CHECK(strlen(v) <= CONTROL_MAX_VALUE);
		for (const unsigned char *c = (const unsigned char *)v; *c; c++)
			FUZZ_CHECK(*c >= 0x20 && *c != 0x7f);
		/* no key repeats, so each finds its own value */
		FUZZ_CHECK(control_get(&req, req.f[i].key) == v);
	}
	FUZZ_CHECK(control_get(&req, "no-such-key") == NULL);
	free(line);
	return 0;
}
