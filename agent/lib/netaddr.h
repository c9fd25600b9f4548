/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netaddr.h - an "http://ADDRESS[:PORT]" setting (the instance metadata
 * services' form: an address, never a name, so no DNS lookup is waited
 * for) read as a socket address.
 */
#ifndef JOBTRACE_NETADDR_H
#define JOBTRACE_NETADDR_H

#include <stddef.h>
#include <sys/socket.h>

/*
 * Check url ("http://" then an IPv4 address or a bracketed IPv6 one, an
 * optional port, nothing after but '/') and put its address in *ss when
 * ss is not NULL.  0, or -EINVAL with the reason in why.
 */
int netaddr_url(const char *url, struct sockaddr_storage *ss, char *why,
		size_t whylen);

#endif
