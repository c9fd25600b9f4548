/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http.h - blocking HTTP requests over libcurl, shared by the network
 * sinks (in their own threads), the CLI's ClickHouse queries, the
 * instance metadata reader (imds.c) and the Docker look-ups (dockerq.c,
 * over a Unix socket), each in its thread.
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

/* One request (http_request()). */
struct http_req {
	const char *method;		/* "GET", "PUT", "POST", ... */
	const char *suffix;		/* appended to the client's URL, or NULL */
	const char *const *headers;	/* "Name: value" lines, NULL-terminated,
					 * sent before the client's own; or NULL */
	const void *body;		/* NULL: none (no Content-Length either) */
	size_t len;
	const char *content_type;	/* of the body (octet-stream when NULL) */
	bool gzip;			/* compress the body */
	unsigned timeout_ms;		/* connect + transfer; 0: the client's */
	size_t max_answer;		/* longer answers fail (-EMSGSIZE); 0: no cap */
	bool secret;			/* the answer may name secrets: err never
					 * quotes it (give a jbuf_init_wipe()
					 * resp, so no copy stays either) */
	char *etag;			/* the answer's ETag header goes here
					 * ("" none, cut to etag_len), or NULL */
	size_t etag_len;
};

/*
 * Send rq to the client's URL + rq->suffix.  The answer's body is appended
 * to resp when it is not NULL, its status put in *status (0 when none
 * came; status may be NULL).  Returns 0 on a 2xx answer; -EACCES on 401
 * or 403, -EPROTO on another status, -ETIMEDOUT, -ECONNREFUSED, -EIO (no
 * answer), -EMSGSIZE (answer over rq->max_answer), -ECANCELED
 * (http_client_cancel()), with a one-line reason in err.
 */
int http_request(struct http_client *c, const struct http_req *rq,
		 struct jbuf *resp, long *status, char *err, size_t errlen);
/*
 * A client of an HTTP server on a Unix socket (the Docker Engine API):
 * requests go to "http://localhost" + suffix over the socket, each bounded
 * by timeout_ms.  Errors as http_client_new().
 */
int http_client_new_unix(const char *socket_path, unsigned timeout_ms,
			 struct http_client **out, char *err, size_t errlen);
/* Make the running request, and every later one, end with -ECANCELED
 * within a second; safe from any thread. */
void http_client_cancel(struct http_client *c);

/* Percent-encode s for a URL query into b (jbuf used as a byte buffer). */
void http_urlencode(struct jbuf *b, const char *s);


#endif
