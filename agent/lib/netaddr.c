// SPDX-License-Identifier: GPL-2.0-or-later
/* netaddr.c - an "http://ADDRESS[:PORT]" setting read as a socket address. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netaddr.h"
#include "util.h"

/* Check url and put its address into *ss (see netaddr.h). */
int netaddr_url(const char *url, struct sockaddr_storage *ss,
		  char *why, size_t whylen)
{
	struct sockaddr_storage tmp = { 0 };
	const char *h, *e;
	char host[64];
	unsigned long port = 80;
	size_t n;
	int af;

	if (strncmp(url, "http://", 7)) {
		util_seterr(why, whylen, "must start with http:// (IMDS speaks"
			    " plain HTTP)");
		return -EINVAL;
	}
	h = url + 7;
	if (*h == '[') {
		e = strchr(++h, ']');
		if (!e) {
			util_seterr(why, whylen, "no ']' after the IPv6 address");
			return -EINVAL;
		}
		n = (size_t)(e++ - h);
		af = AF_INET6;
	} else {
		e = h + strcspn(h, ":/");
		n = (size_t)(e - h);
		af = AF_INET;
	}
	if (n >= sizeof(host)) {
		util_seterr(why, whylen, "the host is too long");
		return -EINVAL;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	if (*e == ':') {
		char *end;

		if (e[1] < '0' || e[1] > '9') {
			util_seterr(why, whylen, "expected a port after ':'");
			return -EINVAL;
		}
		errno = 0;
		port = strtoul(e + 1, &end, 10);
		if (errno || !port || port > 65535) {
			util_seterr(why, whylen, "the port must be 1 to 65535");
			return -EINVAL;
		}
		e = end;
	}
	while (*e == '/')
		e++;
	if (*e) {
		util_seterr(why, whylen, "only http://ADDRESS[:PORT]: the"
			    " agent adds the /latest/... paths");
		return -EINVAL;
	}
	/* an address, never a name: no DNS lookup to wait for */
	if (af == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&tmp;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			af = -1;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&tmp;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			af = -1;
	}
	if (af < 0) {
		util_seterr(why, whylen, "the host must be an IP address, as"
			    " IMDS's are (169.254.169.254, [fd00:ec2::254])");
		return -EINVAL;
	}
	if (ss)
		*ss = tmp;
	return 0;
}
