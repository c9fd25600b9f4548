/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http.h - blocking HTTP POST over libcurl, shared by the network sinks
 * (in their own threads) and by the CLI's ClickHouse queries.
 */
#ifndef JOBTRACE_HTTP_H
#define JOBTRACE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "json.h"

struct http_client;

/* libcurl's process-wide set-up, done once (thread-safe); 0 or -EIO.
 * Call it from the main thread before any other thread runs libcurl. */
int http_global_init(void);

/*
 * A client for the target of one sink: URL, credentials (read from
 * s->credentials_file, which must be owned by root and not readable by
 * group or others), TLS options, timeout and extra headers.  On error
 * writes "what is wrong" (naming the file) into err and returns -errno.
 */
int http_client_new(const struct jt_sink_config *s, struct http_client **out,
		    char *err, size_t errlen);
void http_client_free(struct http_client *c);

/*
 * POST len bytes of body to the client's URL followed by suffix (for
 * example "?query=INSERT..."; NULL for none).  content_type is sent as
 * Content-Type.  When gzip is true the body is compressed and sent with
 * Content-Encoding: gzip.  The response body is appended to resp when it
 * is not NULL.  Returns 0 on a 2xx answer; otherwise -errno with a
 * one-line reason (curl's error or "HTTP 500: first line of the answer")
 * in err.
 */
int http_post(struct http_client *c, const char *suffix,
	      const char *content_type, const void *body, size_t len,
	      bool gzip, struct jbuf *resp, char *err, size_t errlen);

/* Percent-encode s for a URL query into b (jbuf used as a byte buffer). */
void http_urlencode(struct jbuf *b, const char *s);

#endif
