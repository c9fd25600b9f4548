// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http.c - blocking HTTP requests over libcurl for the network sinks, the
 * CLI and the IMDS reader.  One client per thread; the handle keeps its
 * connection alive between requests.
 *
 * libcurl is loaded (dlopen) with the first client: an agent that stores
 * only locally does without it and the 28 libraries it pulls in (TLS,
 * Kerberos, LDAP, SSH...), whose start-up alone made 6.8 MB of its
 * resident memory.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "creds.h"
#include "http.h"
#include "util.h"

struct http_client {
	CURL *curl;
	struct curl_slist *headers;
	char *url;
	struct creds creds;	/* from the sink's credentials_file */
	unsigned timeout_ms;	/* a request's, unless it has its own */
	int cancel;		/* set by http_client_cancel(), any thread */
	char curl_err[CURL_ERROR_SIZE];
	struct jbuf gz;		/* compressed body */
	struct jbuf url_buf;	/* url + suffix */
};

/* Set one curl option, remembering the first failure in *ok. */
#define SETOPT(c, opt, val, ok)                                   \
	do {                                                      \
		if (cu.easy_setopt((c), (opt), (val)) != CURLE_OK) \
			(ok) = false;                             \
	} while (0)

/* The libcurl functions we call, from dlopen. */
static struct {
	__typeof__(&curl_global_init) global_init;
	__typeof__(&curl_easy_init) easy_init;
	__typeof__(&curl_easy_setopt) easy_setopt;
	__typeof__(&curl_easy_perform) easy_perform;
	__typeof__(&curl_easy_getinfo) easy_getinfo;
	__typeof__(&curl_easy_cleanup) easy_cleanup;
	__typeof__(&curl_easy_strerror) easy_strerror;
	__typeof__(&curl_slist_append) slist_append;
	__typeof__(&curl_slist_free_all) slist_free_all;
} cu;

#define CU(f) { "curl_" #f, offsetof(__typeof__(cu), f) }
static const struct {
	const char *name;
	size_t off;
} cu_syms[] = {
	CU(global_init), CU(easy_init), CU(easy_setopt), CU(easy_perform),
	CU(easy_getinfo), CU(easy_cleanup), CU(easy_strerror),
	CU(slist_append), CU(slist_free_all),
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_rc;
static char global_err[256];

/* Load libcurl (kept for the life of the process) and set it up. */
static void global_init(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	global_rc = -EIO;
	if (!h) {
		util_seterr(global_err, sizeof(global_err),
			    "cannot load libcurl: %s", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(cu_syms) / sizeof(cu_syms[0]); i++) {
		void *f = dlsym(h, cu_syms[i].name);

		if (!f) {
			util_seterr(global_err, sizeof(global_err),
				    "libcurl.so.4 lacks %s", cu_syms[i].name);
			return;
		}
		memcpy((char *)&cu + cu_syms[i].off, &f, sizeof(f));
	}
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		util_seterr(global_err, sizeof(global_err),
			    "libcurl initialisation failed");
		return;
	}
	global_rc = 0;
}

/* libcurl's process-wide set-up, once (see http.h). */
int http_global_init(void)
{
	pthread_once(&global_once, global_init);
	return global_rc;
}

/* curl progress callback, about once a second and on every read:
 * non-zero stops the transfer (CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn,
		       curl_off_t ut, curl_off_t un)
{
	struct http_client *c = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return __atomic_load_n(&c->cancel, __ATOMIC_RELAXED);
}

/* A client for the target of one sink (see http.h). */
int http_client_new(const struct jt_sink_config *s, struct http_client **out,
		    char *err, size_t errlen)
{
	struct http_client *c;
	bool ok = true;
	int e;

	*out = NULL;
	if (http_global_init()) {
		util_seterr(err, errlen, "%s", global_err);
		return -EIO;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	jbuf_init(&c->gz);
	jbuf_init_wipe(&c->url_buf);	/* the query may hold a secret */
	if (s->credentials_file && *s->credentials_file) {
		e = creds_load("credentials_file", s->credentials_file,
			       &c->creds, err, errlen);
		if (e)
			goto fail;
	}
	/* the file's query goes after the URL's own */
	if (asprintf(&c->url, "%s%s%s", s->url ? s->url : "",
		     !c->creds.query ? "" : s->url && strchr(s->url, '?') ?
		     "&" : "?", c->creds.query ? c->creds.query : "") < 0)
		c->url = NULL;
	c->curl = cu.easy_init();
	if (!c->url || !c->curl) {
		e = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < s->n_headers + c->creds.n_headers; i++) {
		const char *h = i < s->n_headers ? s->headers[i] :
				c->creds.headers[i - s->n_headers];
		struct curl_slist *l = cu.slist_append(c->headers, h);

		if (!l) {
			e = -ENOMEM;
			goto fail;
		}
		c->headers = l;
	}
	/* no "Expect: 100-continue" round trip on big batches */
	c->headers = cu.slist_append(c->headers, "Expect:");
	if (!c->headers) {
		e = -ENOMEM;
		goto fail;
	}

	SETOPT(c->curl, CURLOPT_NOSIGNAL, 1L, ok);
	SETOPT(c->curl, CURLOPT_ERRORBUFFER, c->curl_err, ok);
	c->timeout_ms = s->timeout_ms;
	SETOPT(c->curl, CURLOPT_PROTOCOLS_STR, "http,https", ok);
	SETOPT(c->curl, CURLOPT_FOLLOWLOCATION, 0L, ok);
	SETOPT(c->curl, CURLOPT_USERAGENT, "jobtraced/" JT_VERSION, ok);
	SETOPT(c->curl, CURLOPT_NOPROGRESS, 0L, ok);
	SETOPT(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress, ok);
	SETOPT(c->curl, CURLOPT_XFERINFODATA, c, ok);
	SETOPT(c->curl, CURLOPT_SSL_VERIFYPEER, s->tls_verify ? 1L : 0L, ok);
	SETOPT(c->curl, CURLOPT_SSL_VERIFYHOST, s->tls_verify ? 2L : 0L, ok);
	if (s->tls_ca_file && *s->tls_ca_file)
		SETOPT(c->curl, CURLOPT_CAINFO, s->tls_ca_file, ok);
	if (s->tls_cert && *s->tls_cert)
		SETOPT(c->curl, CURLOPT_SSLCERT, s->tls_cert, ok);
	if (s->tls_key && *s->tls_key)
		SETOPT(c->curl, CURLOPT_SSLKEY, s->tls_key, ok);
	if (c->creds.user) {
		SETOPT(c->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC, ok);
		SETOPT(c->curl, CURLOPT_USERNAME, c->creds.user, ok);
		SETOPT(c->curl, CURLOPT_PASSWORD,
		       c->creds.password ? c->creds.password : "", ok);
	}
	if (!ok) {
		char pub[256];

		util_seterr(err, errlen, "%s: libcurl rejected an option",
			    util_url_public(c->url, pub, sizeof(pub)));
		e = -EINVAL;
		goto fail;
	}
	*out = c;
	return 0;

fail:
	http_client_free(c);
	return e;
}

/* Release a client; accepts NULL.  The password is wiped first. */
void http_client_free(struct http_client *c)
{
	if (!c)
		return;
	if (c->curl)
		cu.easy_cleanup(c->curl);
	cu.slist_free_all(c->headers);
	creds_free(&c->creds);
	if (c->url)
		explicit_bzero(c->url, strlen(c->url));
	free(c->url);
	jbuf_free(&c->gz);
	jbuf_free(&c->url_buf);
	free(c);
}

/* Gzip body into c->gz. */
static int gzip_body(struct http_client *c, const void *body, size_t len)
{
	z_stream z;
	size_t bound;
	char *out;
	int rc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	jbuf_reset(&c->gz);
	bound = deflateBound(&z, len);
	out = jbuf_room(&c->gz, bound);
	if (!out) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)body;
	z.avail_in = len;
	z.next_out = (Bytef *)out;
	z.avail_out = bound;
	rc = deflate(&z, Z_FINISH);
	jbuf_added(&c->gz, z.total_out);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -EIO;
}

/* Where an answer goes: a jbuf, with a cap on its size (0: none). */
struct sink_buf {
	struct jbuf *b;
	size_t max;
	bool over;
};

/* curl write callback: append the answer to a jbuf, up to its cap (past
 * it the transfer stops: a garbage server cannot make us buffer more). */
static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct sink_buf *sb = arg;

	if (sb->max && sb->b->len + size * n > sb->max) {
		sb->over = true;
		return 0;
	}
	if (jbuf_put(sb->b, p, size * n))
		return 0;
	return size * n;
}

/* curl header callback: keep the ETag header's value (http_req.etag). */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	const struct http_req *rq = arg;
	size_t len = size * n, i = 5, end = len;

	if (len > 5 && !strncasecmp(p, "ETag:", 5)) {
		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (end > i && (p[end - 1] == '\r' || p[end - 1] == '\n' ||
				   p[end - 1] == ' '))
			end--;
		if (end - i >= rq->etag_len)
			end = i;	/* too long to be ours: none */
		memcpy(rq->etag, p + i, end - i);
		rq->etag[end - i] = '\0';
		util_printable(rq->etag);
	}
	return len;
}

/* Append header h to *l; on failure free the whole list. */
static bool add_header(struct curl_slist **l, const char *h)
{
	struct curl_slist *n = cu.slist_append(*l, h);

	if (!n) {
		cu.slist_free_all(*l);
		*l = NULL;
		return false;
	}
	*l = n;
	return true;
}

/*
 * The headers of request rq: its own (in *own, NULL for none: freed by
 * free_request_headers()) followed by the client's, in *all.  0 or
 * -ENOMEM.
 */
static int request_headers(struct http_client *c, const struct http_req *rq,
			   struct curl_slist **own, struct curl_slist **all)
{
	struct curl_slist *l = NULL, *t;
	char ct[128];

	*own = NULL;
	*all = c->headers;
	if (rq->body) {
		snprintf(ct, sizeof(ct), "Content-Type: %s",
			 rq->content_type ? rq->content_type :
			 "application/octet-stream");
		if (!add_header(&l, ct))
			return -ENOMEM;
	}
	if (rq->body && rq->gzip &&
	    !add_header(&l, "Content-Encoding: gzip"))
		return -ENOMEM;
	for (size_t i = 0; rq->headers && rq->headers[i]; i++)
		if (!add_header(&l, rq->headers[i]))
			return -ENOMEM;
	if (!l)
		return 0;
	for (t = l; t->next; t = t->next)
		;
	t->next = c->headers;
	*own = *all = l;
	return 0;
}

/* Unlink the client's headers from the request's own and free those. */
static void free_request_headers(struct http_client *c,
				 struct curl_slist *own)
{
	struct curl_slist *t = own;

	if (!own)
		return;
	while (t->next != c->headers)
		t = t->next;
	t->next = NULL;
	cu.slist_free_all(own);
}

/* One request to the client's URL + suffix (see http.h). */
int http_request(struct http_client *c, const struct http_req *rq,
		 struct jbuf *resp, long *status_out, char *err, size_t errlen)
{
	struct curl_slist *hdrs, *own;
	struct jbuf answer;
	struct sink_buf sb;
	const void *body = rq->body;
	size_t len = rq->len;
	long status = 0, tmo;
	CURLcode rc;
	int e = 0;

	if (status_out)
		*status_out = 0;
	if (__atomic_load_n(&c->cancel, __ATOMIC_RELAXED)) {
		util_seterr(err, errlen, "cancelled");
		return -ECANCELED;
	}
	jbuf_init_wipe(&answer);
	jbuf_reset(&c->url_buf);
	if (jbuf_put(&c->url_buf, c->url, strlen(c->url)))
		return -ENOMEM;
	if (rq->suffix && *rq->suffix) {
		const char *sfx = rq->suffix;

		/* a URL with a query of its own: the suffix's joins it */
		if (*sfx == '?' && strchr(c->url, '?')) {
			jbuf_put(&c->url_buf, "&", 1);
			sfx++;
		}
		if (jbuf_put(&c->url_buf, sfx, strlen(sfx)))
			return -ENOMEM;
	}
	if (body && rq->gzip) {
		e = gzip_body(c, body, len);
		if (e) {
			util_seterr(err, errlen, "gzip: %s", strerror(-e));
			return e;
		}
		body = c->gz.buf;
		len = c->gz.len;
	}
	if (request_headers(c, rq, &own, &hdrs)) {
		util_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	sb = (struct sink_buf){ .b = resp ? resp : &answer,
				.max = rq->max_answer };
	tmo = rq->timeout_ms ? (long)rq->timeout_ms : (long)c->timeout_ms;
	c->curl_err[0] = '\0';
	cu.easy_setopt(c->curl, CURLOPT_URL, c->url_buf.buf);
	cu.easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	cu.easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, tmo);
	cu.easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS,
		       tmo < 5000 ? tmo : 5000L);
	if (body) {
		cu.easy_setopt(c->curl, CURLOPT_POST, 1L);
		cu.easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
		cu.easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			       (curl_off_t)len);
	} else {
		/* no body and no Content-Length, as curl -X PUT sends it */
		cu.easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
	}
	cu.easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST,
		       rq->method && strcmp(rq->method, body ? "POST" : "GET") ?
		       rq->method : NULL);
	cu.easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	cu.easy_setopt(c->curl, CURLOPT_WRITEDATA, &sb);
	if (rq->etag && rq->etag_len)
		rq->etag[0] = '\0';
	cu.easy_setopt(c->curl, CURLOPT_HEADERFUNCTION,
		       rq->etag && rq->etag_len ? on_header : NULL);
	/* no header function: curl would hand the headers to on_data with
	 * HEADERDATA as its buffer, unless HEADERDATA is NULL */
	cu.easy_setopt(c->curl, CURLOPT_HEADERDATA, rq->etag && rq->etag_len ?
		       (void *)rq : NULL);
	rc = cu.easy_perform(c->curl);
	free_request_headers(c, own);
	if (rc != CURLE_OK) {
		if (sb.over)
			util_seterr(err, errlen, "answer longer than %zu bytes",
				    rq->max_answer);
		else	/* curl's own message can quote the server */
			util_seterr(err, errlen, "%s", c->curl_err[0] &&
				    !rq->secret ? c->curl_err :
				    cu.easy_strerror(rc));
		e = sb.over ? -EMSGSIZE :
		    rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT :
		    rc == CURLE_COULDNT_CONNECT ? -ECONNREFUSED :
		    rc == CURLE_ABORTED_BY_CALLBACK ? -ECANCELED : -EIO;
		goto out;
	}
	cu.easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status_out)
		*status_out = status;
	if (status < 200 || status > 299) {
		const struct jbuf *a = sb.b;
		const char *msg = a->buf && !rq->secret ? a->buf : "";
		size_t n = strcspn(msg, "\n");

		util_seterr(err, errlen, "HTTP %ld%s%.*s", status, n ? ": " : "",
		       (int)(n > 300 ? 300 : n), msg);
		e = status == 401 || status == 403 ? -EACCES : -EPROTO;
	}
out:
	jbuf_free(&answer);
	return e;
}

/* POST body to the client's URL + suffix (see http.h). */
int http_post(struct http_client *c, const char *suffix,
	      const char *content_type, const void *body, size_t len,
	      bool gzip, struct jbuf *resp, char *err, size_t errlen)
{
	struct http_req rq = { .method = "POST", .suffix = suffix,
			       .content_type = content_type,
			       .body = body ? body : "", .len = len,
			       .gzip = gzip };

	return http_request(c, &rq, resp, NULL, err, errlen);
}

/* A client of the HTTP server at socket_path (see http.h). */
int http_client_new_unix(const char *socket_path, unsigned timeout_ms,
			 struct http_client **out, char *err, size_t errlen)
{
	/* the host is not looked up: the socket is the connection */
	struct jt_sink_config sc = { .url = "http://localhost",
				     .timeout_ms = timeout_ms };
	bool ok = true;
	int e;

	e = http_client_new(&sc, out, err, errlen);
	if (e)
		return e;
	SETOPT((*out)->curl, CURLOPT_UNIX_SOCKET_PATH, socket_path, ok);
	SETOPT((*out)->curl, CURLOPT_PROTOCOLS_STR, "http", ok);
	if (!ok) {
		util_seterr(err, errlen, "%s: libcurl rejected an option",
			    socket_path);
		http_client_free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

/* Stop the running request and the later ones (see http.h). */
void http_client_cancel(struct http_client *c)
{
	__atomic_store_n(&c->cancel, 1, __ATOMIC_RELAXED);
}

/* Percent-encode s for a URL query into b. */
void http_urlencode(struct jbuf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char e[3];

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		    ch == '.' || ch == '~') {
			jbuf_put(b, s, 1);
			continue;
		}
		e[0] = '%';
		e[1] = hex[ch >> 4];
		e[2] = hex[ch & 15];
		jbuf_put(b, e, 3);
	}
}
