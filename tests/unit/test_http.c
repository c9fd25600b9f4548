// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_http.c - unit tests for agent/lib/http.c against a one-shot server on
 * loopback: libcurl, loaded at the first client, posts and reads back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "creds.h"
#include "http.h"
#include "util.h"

/* A server that answers one request. */
struct server {
	int fd;
	int port;
	char req[8192];		/* what it received */
	size_t len;
	const char *answer;	/* the whole answer, NULL: 200 "ok\n" */
};

/* Accept one connection, read the request with its body (none without
 * a Content-Length), answer s->answer. */
static void *serve(void *arg)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
				 "Connection: close\r\n\r\nok\n";
	struct server *s = arg;
	const char *answer = s->answer ? s->answer : ok;
	int c = accept(s->fd, NULL, NULL);
	const char *end, *cl;
	ssize_t n;

	if (c < 0)
		return NULL;
	while (s->len < sizeof(s->req) - 1 &&
	       (n = read(c, s->req + s->len, sizeof(s->req) - 1 - s->len)) > 0) {
		s->len += (size_t)n;
		s->req[s->len] = '\0';
		end = strstr(s->req, "\r\n\r\n");
		cl = strcasestr(s->req, "Content-Length: ");
		if (end && (!cl || s->len >= (size_t)(end + 4 - s->req) +
					     strtoul(cl + 16, NULL, 10)))
			break;
	}
	if (write(c, answer, strlen(answer)) < 0)
		s->len = 0;
	close(c);
	return NULL;
}

/* Listen on a free loopback port. */
static void listen_any(struct server *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 1), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
}

/* A POST reaches the server with its body and type; the answer comes back. */
static void test_post(void **state)
{
	struct server s = { 0 };
	struct jt_sink_config sk = { 0 };
	struct http_client *c = NULL;
	struct jbuf resp;
	pthread_t t;
	char url[64], err[256] = "";

	(void)state;
	listen_any(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/in", s.port);
	sk.url = url;
	sk.timeout_ms = 5000;
	sk.tls_verify = true;
	assert_int_equal(http_client_new(&sk, &c, err, sizeof(err)), 0);
	assert_int_equal(pthread_create(&t, NULL, serve, &s), 0);
	jbuf_init(&resp);
	assert_int_equal(http_post(c, "?q=1", "application/x-ndjson",
				   "{\"a\":1}\n", 8, false, &resp, err,
				   sizeof(err)), 0);
	pthread_join(t, NULL);
	assert_non_null(strstr(s.req, "POST /in?q=1 HTTP/1.1\r\n"));
	assert_non_null(strstr(s.req, "Content-Type: application/x-ndjson\r\n"));
	assert_non_null(strstr(s.req, "\r\n\r\n{\"a\":1}\n"));
	assert_int_equal(resp.len, 3);
	assert_memory_equal(resp.buf, "ok\n", 3);
	jbuf_free(&resp);
	http_client_free(c);
	close(s.fd);
}

/* A client for a server on a free port; *c to free. */
static void client_for(struct server *s, struct http_client **c)
{
	struct jt_sink_config sk = { .timeout_ms = 5000, .tls_verify = true };
	char url[64], err[256] = "";

	listen_any(s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
	sk.url = url;
	assert_int_equal(http_client_new(&sk, c, err, sizeof(err)), 0);
}

/* One request of rq to a server answering answer: its return value. */
static int one_request(struct server *s, const struct http_req *rq,
		       const char *answer, struct jbuf *resp, long *status,
		       char *err, size_t errlen)
{
	struct http_client *c = NULL;
	pthread_t t;
	int e;

	client_for(s, &c);
	s->answer = answer;
	assert_int_equal(pthread_create(&t, NULL, serve, s), 0);
	e = http_request(c, rq, resp, status, err, errlen);
	pthread_join(t, NULL);
	http_client_free(c);
	close(s->fd);
	return e;
}

/* A PUT without a body sends no Content-Length, no Content-Type, and the
 * request's own headers; a GET after it on the same handle is a GET. */
static void test_put_get_headers(void **state)
{
	static const char *const hdrs[] = { "X-Test-Ttl: 21600", NULL };
	struct http_req put = { .method = "PUT", .suffix = "/latest/api/token",
				.headers = hdrs, .timeout_ms = 2000 };
	struct server s = { 0 };
	struct jbuf resp;
	char err[256] = "";
	long status = -1;

	(void)state;
	jbuf_init(&resp);
	assert_int_equal(one_request(&s, &put, NULL, &resp, &status, err,
				     sizeof(err)), 0);
	assert_int_equal(status, 200);
	assert_non_null(strstr(s.req, "PUT /latest/api/token HTTP/1.1\r\n"));
	assert_non_null(strstr(s.req, "\r\nX-Test-Ttl: 21600\r\n"));
	assert_null(strcasestr(s.req, "Content-Length"));
	assert_null(strcasestr(s.req, "Content-Type"));
	assert_memory_equal(resp.buf, "ok\n", 3);
	jbuf_free(&resp);
}

/* The status of an answer that is not 2xx is given, with the reason;
 * an answer past max_answer stops the transfer. */
static void test_status_and_cap(void **state)
{
	struct http_req get = { .method = "GET", .suffix = "/x",
				.max_answer = 16 };
	struct server s = { 0 };
	char err[256] = "";
	long status = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(one_request(&s, &get,
		"HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\n"
		"Connection: close\r\n\r\nnot found\n", NULL, &status, err,
		sizeof(err)), -EPROTO);
	assert_int_equal(status, 404);
	assert_string_equal(err, "HTTP 404: not found");
	assert_non_null(strstr(s.req, "GET /x HTTP/1.1\r\n"));
	memset(&s, 0, sizeof(s));
	assert_int_equal(one_request(&s, &get,
		"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n"
		"Connection: close\r\n\r\n", NULL, &status, err,
		sizeof(err)), -EACCES);
	assert_int_equal(status, 401);
	memset(&s, 0, sizeof(s));
	assert_int_equal(one_request(&s, &get,
		"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n"
		"Connection: close\r\n\r\n0123456789012345678901234567890123456789",
		NULL, &status, err, sizeof(err)), -EMSGSIZE);
	assert_string_equal(err, "answer longer than 16 bytes");
}

/* Nobody listening: a refusal, said in err. */
static void test_refused(void **state)
{
	struct server s = { 0 };
	struct jt_sink_config sk = { 0 };
	struct http_client *c = NULL;
	char url[64], err[256] = "";

	(void)state;
	listen_any(&s);
	close(s.fd);	/* the port is free again: nobody listens */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", s.port);
	sk.url = url;
	sk.timeout_ms = 5000;
	assert_int_equal(http_client_new(&sk, &c, err, sizeof(err)), 0);
	assert_int_equal(http_post(c, NULL, NULL, "x", 1, false, NULL, err,
				   sizeof(err)), -ECONNREFUSED);
	assert_true(err[0] != '\0');
	http_client_free(c);
}

/* Write text to path with mode (root's, as the test runs). */
static void write_mode(const char *path, const char *text, mode_t mode)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* A credentials file of text is refused with a message holding want. */
static void bad_creds(const char *path, const char *text, const char *want)
{
	struct creds cr;
	char err[512] = "";

	write_mode(path, text, 0600);
	assert_int_equal(creds_load("credentials_file", path, &cr, err,
				    sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, want));
}

/*
 * A sink's credentials_file: basic authentication, a header and a query
 * joined to the URL's own query, the suffix after them; refused when
 * another user could read or change it (the file, a link to it, a folder
 * above it) or when a line is wrong.
 */
static void test_credentials(void **state)
{
	char dir[] = "/tmp/jt_cred_XXXXXX", path[96], link[96], url[96];
	char sub[96], err[512] = "";
	struct jt_sink_config sk = { .timeout_ms = 5000, .tls_verify = true };
	struct server s = { 0 };
	struct http_client *c = NULL;
	struct creds cr;
	pthread_t t;

	(void)state;
	if (geteuid() != 0)
		skip();	/* the file must be root's */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fleet.cred", dir);
	write_mode(path, "# the fleet's\nuser = jt\n\npassword = pw-canary\n"
		   "header = X-Api-Key: key-canary\nquery = ?token=tok-canary\n",
		   0600);
	listen_any(&s);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/in?db=x", s.port);
	sk.url = url;
	sk.credentials_file = path;
	assert_int_equal(http_client_new(&sk, &c, err, sizeof(err)), 0);
	assert_int_equal(pthread_create(&t, NULL, serve, &s), 0);
	assert_int_equal(http_post(c, "?query=INSERT", NULL, "x", 1, false,
				   NULL, err, sizeof(err)), 0);
	pthread_join(t, NULL);
	http_client_free(c);
	close(s.fd);
	assert_non_null(strstr(s.req, "POST /in?db=x&token=tok-canary&query=INSERT HTTP/1.1\r\n"));
	/* "jt:pw-canary" */
	assert_non_null(strstr(s.req, "Authorization: Basic anQ6cHctY2FuYXJ5\r\n"));
	assert_non_null(strstr(s.req, "X-Api-Key: key-canary\r\n"));

	/* others may read it, or it is a link, or not root's folder */
	chmod(path, 0640);
	assert_int_equal(creds_load("credentials_file", path, &cr, err,
				    sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "mode 0640: credentials must be root's"));
	assert_int_equal(http_client_new(&sk, &c, err, sizeof(err)), -EPERM);
	chmod(path, 0600);
	snprintf(link, sizeof(link), "%s/link.cred", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(creds_load("credentials_file", link, &cr, err,
				    sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	snprintf(sub, sizeof(sub), "%s/d", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	snprintf(link, sizeof(link), "%s/d/x.cred", dir);
	write_mode(link, "user = a\n", 0600);
	assert_int_equal(creds_load("credentials_file", link, &cr, err,
				    sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "is writable by group and others"));
	unlink(link);
	rmdir(sub);

	/* lines that are wrong are named */
	bad_creds(path, "user = a\npasswd = b\n",
		  "fleet.cred:2: unknown key 'passwd'");
	bad_creds(path, "password = b\n", "a password without 'user = NAME'");
	bad_creds(path, "header = no colon here\n", "fleet.cred:1: header");
	bad_creds(path, "query = a b\n", "fleet.cred:1: query");
	write_mode(path, "header = Authorization: Bearer t\n", 0600);
	assert_int_equal(creds_load("credentials_file", path, &cr, err,
				    sizeof(err)), 0);
	assert_int_equal(cr.n_headers, 1);
	assert_null(cr.user);
	creds_free(&cr);
	unlink(path);
	snprintf(link, sizeof(link), "%s/link.cred", dir);
	unlink(link);
	rmdir(dir);
}

/* What status and messages show of a URL: no userinfo, query, fragment. */
static void test_url_public(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(util_url_public("https://u:pw@ch:8443/db?x=1#f",
					    out, sizeof(out)),
			    "https://ch:8443/db");
	assert_string_equal(util_url_public("http://a@b@host/p@q?token=t", out,
					    sizeof(out)), "http://host/p@q");
	assert_string_equal(util_url_public("http://host?t=1", out,
					    sizeof(out)), "http://host");
	assert_string_equal(util_url_public("http://127.0.0.1:8686/jobtrace",
					    out, sizeof(out)),
			    "http://127.0.0.1:8686/jobtrace");
	assert_string_equal(util_url_public("u:p@host/x", out, sizeof(out)),
			    "host/x");
	assert_string_equal(util_url_public("http://u:p@longhostname/", out, 12),
			    "http://long");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_put_get_headers),
		cmocka_unit_test(test_status_and_cap),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_url_public),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
