// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sink_http.c - the sink backend that POSTs each batch as NDJSON (one
 * record a line) to any HTTP collector, and the HTTP client both network
 * backends post with.
 */
#include <errno.h>
#include <stdlib.h>

#include "http.h"
#include "sink_backend.h"

/* A network backend's state for cfg: a sink_net (strings borrowed from
 * cfg) at the start of size bytes, the rest zeroed. */
void *sink_net_new(const struct jt_sink_config *cfg, size_t size)
{
	struct sink_net *n = calloc(1, size);

	if (n)
		n->cfg = *cfg;
	return n;
}

/* The HTTP (NDJSON) backend's state for cfg. */
void *sink_http_new(const struct jt_sink_config *cfg)
{
	return sink_net_new(cfg, sizeof(struct sink_net));
}

/* Open a network backend's HTTP client. */
int sink_net_open(struct sink *k, char *err, size_t errlen)
{
	struct sink_net *n = sink_ctx(k);

	return http_client_new(&n->cfg, &n->http, err, errlen);
}

/* Free a network backend's HTTP client. */
void sink_net_close(struct sink *k)
{
	struct sink_net *n = sink_ctx(k);

	if (!n)
		return;
	http_client_free(n->http);
	n->http = NULL;
}

/* One record and its newline into the batch's body. */
static int nd_add(struct sink *k, struct sink_batch *b, const char *rec,
		  size_t len)
{
	struct jbuf *body = &b->part[0];

	(void)k;
	if (jbuf_put(body, rec, len) || jbuf_put(body, "\n", 1))
		return -ENOMEM;
	return 0;
}

/* POST the batch's body. */
static int nd_send(struct sink *k, struct sink_batch *b, char *err,
		   size_t errlen)
{
	struct sink_net *n = sink_ctx(k);

	return http_post(n->http, NULL, "application/x-ndjson",
			 b->part[0].buf, b->part[0].len, n->cfg.gzip, NULL,
			 err, errlen);
}

/* Close the client and free the state. */
static void nd_close(struct sink *k)
{
	sink_net_close(k);
	free(sink_ctx(k));
}

const struct sink_backend sink_http_backend = {
	.type = "http",
	.pipelined = true,
	.open = sink_net_open,
	.add = nd_add,
	.send = nd_send,
	.close = nd_close,
};
