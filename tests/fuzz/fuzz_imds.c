// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_imds.c - the readers of what EC2's instance metadata service
 * answers (agent/daemon/cloud/imds.c): each input is read as an identity document, a
 * life cycle, an instance-action notice and a cloud.imds_url.  What is
 * kept is of AWS's form or empty, always terminated, and the same twice.
 */
#include <errno.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "netaddr.h"
#include "imds.h"

/* Is s terminated within n bytes and made of a-z, 0-9 and extra only? */
static int plain(const char *s, size_t n, const char *extra)
{
	const char *end = memchr(s, '\0', n);

	if (!end)
		return 0;
	for (; s < end; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *doc = (const char *)data;
	struct jt_cloud c, again;
	struct imds_notice n = { 0 };
	struct sockaddr_storage ss;
	char why[256], *url;
	int e;

	memset(&c, 0x5a, sizeof(c));
	e = imds_parse_identity(doc, size, &c, why, sizeof(why));
	FUZZ_CHECK(e == 0 || (e == -EINVAL && why[0]));
	FUZZ_CHECK(plain(c.instance_id, sizeof(c.instance_id), "-"));
	FUZZ_CHECK(plain(c.instance_type, sizeof(c.instance_type), ".-"));
	FUZZ_CHECK(plain(c.region, sizeof(c.region), "-"));
	FUZZ_CHECK(plain(c.zone, sizeof(c.zone), "-"));
	FUZZ_CHECK(!c.instance_id[0] || !strncmp(c.instance_id, "i-", 2));
	FUZZ_CHECK(!c.zone[0] || !c.region[0] ||
		   !strncmp(c.zone, c.region, strlen(c.region)));
	FUZZ_CHECK(e || (c.instance_id[0] && c.instance_type[0] &&
			 c.region[0] && c.zone[0]));
	memset(&again, 0, sizeof(again));
	memcpy(again.provider, c.provider, sizeof(c.provider));
	memcpy(again.lifecycle, c.lifecycle, sizeof(c.lifecycle));
	FUZZ_CHECK(imds_parse_identity(doc, size, &again, why, sizeof(why)) == e);
	FUZZ_CHECK(!strcmp(again.instance_id, c.instance_id) &&
		   !strcmp(again.instance_type, c.instance_type) &&
		   !strcmp(again.region, c.region) && !strcmp(again.zone, c.zone));

	e = imds_parse_lifecycle(doc, size, &c, why, sizeof(why));
	FUZZ_CHECK(e == 0 || e == -EINVAL);
	FUZZ_CHECK(plain(c.lifecycle, sizeof(c.lifecycle), "-"));
	FUZZ_CHECK(!e == !!c.lifecycle[0]);

	e = imds_parse_action(doc, size, &n, why, sizeof(why));
	FUZZ_CHECK(e == 0 || (e == -EINVAL && why[0]));
	FUZZ_CHECK(e || !strcmp(n.action, "terminate") ||
		   !strcmp(n.action, "stop") || !strcmp(n.action, "hibernate"));

	url = fuzz_strndup(data, size);
	if (url) {
		e = netaddr_url(url, &ss, why, sizeof(why));
		FUZZ_CHECK(e == 0 || e == -EINVAL);
		FUZZ_CHECK(e || (!strncmp(url, "http://", 7) &&
				 (ss.ss_family == AF_INET ||
				  ss.ss_family == AF_INET6)));
		free(url);
	}
	return 0;
}
