// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_imds.c - unit tests for agent/daemon/cloud/imds.c: the readers of what EC2's
 * instance metadata service answers (AWS's documented examples, and odd
 * and hostile answers: nothing but the documented fields is kept, and a
 * field that is not of AWS's form stays empty), the URL check, and the
 * thread against a closed port (absent, quickly).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "netaddr.h"
#include "imds.h"
#include "test_files.h"
#include "util.h"

/* AWS's example of an instance identity document (EC2 user guide,
 * "Instance identity documents"), as the service writes it. */
static const char aws_doc[] =
	"{\n"
	"  \"accountId\" : \"0123456789\",\n"
	"  \"architecture\" : \"x86_64\",\n"
	"  \"availabilityZone\" : \"us-west-2b\",\n"
	"  \"billingProducts\" : null,\n"
	"  \"devpayProductCodes\" : null,\n"
	"  \"marketplaceProductCodes\" : [ \"1abc2defghijklm3nopqrs4tu\" ],\n"
	"  \"imageId\" : \"ami-0123456789abcdef0\",\n"
	"  \"instanceId\" : \"i-1234567890abcdef0\",\n"
	"  \"instanceType\" : \"t2.micro\",\n"
	"  \"kernelId\" : null,\n"
	"  \"pendingTime\" : \"2016-11-19T16:32:11Z\",\n"
	"  \"privateIp\" : \"10.158.112.84\",\n"
	"  \"ramdiskId\" : null,\n"
	"  \"region\" : \"us-west-2\",\n"
	"  \"version\" : \"2017-09-30\"\n"
	"}";

static char why[256];

/* Parse doc (a C string) as an identity document. */
static int parse_id(const char *doc, struct jt_cloud *c)
{
	memset(c, 0x5a, sizeof(*c));	/* no field may keep old bytes */
	c->provider[0] = '\0';
	return imds_parse_identity(doc, strlen(doc), c, why, sizeof(why));
}

/* Assert that why contains want. */
static void assert_why(const char *want)
{
	if (!strstr(why, want))
		fail_msg("reason \"%s\" lacks \"%s\"", why, want);
}

/* AWS's example: its four fields, exactly, and nothing else of it. */
static void test_identity_aws(void **state)
{
	struct jt_cloud c;

	(void)state;
	assert_int_equal(parse_id(aws_doc, &c), 0);
	assert_string_equal(why, "");
	assert_string_equal(c.instance_id, "i-1234567890abcdef0");
	assert_string_equal(c.instance_type, "t2.micro");
	assert_string_equal(c.region, "us-west-2");
	assert_string_equal(c.zone, "us-west-2b");
	/* the parser sets neither of these */
	assert_string_equal(c.provider, "");
	/* older ids have 8 digits; compact JSON; other zones of a region */
	assert_int_equal(parse_id("{\"instanceId\":\"i-0abc1234\","
				  "\"instanceType\":\"u-6tb1.112xlarge\","
				  "\"region\":\"us-gov-west-1\","
				  "\"availabilityZone\":\"us-gov-west-1-lax-1a\"}",
				  &c), 0);
	assert_string_equal(c.instance_id, "i-0abc1234");
	assert_string_equal(c.instance_type, "u-6tb1.112xlarge");
	assert_string_equal(c.zone, "us-gov-west-1-lax-1a");
	/* escapes are decoded before the check */
	assert_int_equal(parse_id("{\"instanceId\":\"\\u0069-0abc1234\","
				  "\"instanceType\":\"m5.large\","
				  "\"region\":\"eu\\u002dwest-1\","
				  "\"availabilityZone\":\"eu-west-1c\"}", &c), 0);
	assert_string_equal(c.instance_id, "i-0abc1234");
	assert_string_equal(c.region, "eu-west-1");
}

/* Text that is not one JSON object: nothing is kept, the reason says
 * where it went wrong. */
static void test_identity_not_json(void **state)
{
	static const char *const bad[] = {
		"", " ", "null", "[]", "\"i-1234567890abcdef0\"", "42",
		"<html><body>404 Not Found</body></html>",
		"{\"instanceId\":\"i-1234567890abcdef0\"",	/* cut */
		"{\"instanceId\":\"i-1234567890abcdef0\",}",
		"{\"instanceId\":\"i-1234567890abcdef0\"} {}",
		"{\"instanceId\" \"i-1234567890abcdef0\"}",
		"{'instanceId':'i-1234567890abcdef0'}",
		"{\"instanceId\":\"i-1234567890abcdef0\xff\"}",	/* not UTF-8 */
		"{\"instanceId\":\"\\ud800\"}",			/* lone surrogate */
		"{\"instanceId\":\"i-12345678\tx\"}",		/* raw control */
	};
	struct jt_cloud c;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_id(bad[i], &c), -EINVAL);
		assert_string_equal(c.instance_id, "");
		assert_string_equal(c.instance_type, "");
		assert_string_equal(c.region, "");
		assert_string_equal(c.zone, "");
		assert_true(why[0] != '\0');
	}
	parse_id("{\"instanceId\":\"i-1234567890abcdef0\"", &c);
	assert_why("not a JSON object");
	assert_why("at byte");
}

/* Fields of the wrong type or form stay empty; the others are kept and
 * the first reason is given. */
static void test_identity_odd_fields(void **state)
{
	static const struct {
		const char *doc, *why;
	} cases[] = {
		{ "{\"instanceId\":1234567890,\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceId is not a string" },
		{ "{\"instanceId\":\"I-1234567890ABCDEF0\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceId is not an instance id" },
		{ "{\"instanceId\":\"i-1234567890abcdef\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceId is not an instance id" },
		{ "{\"instanceId\":\"i-1234567890abcdefg\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceId is not an instance id" },
		{ "{\"instanceId\":null,\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceId is not a string" },
		{ "{\"instanceId\":{\"a\":[1,2,{}]},\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceId is not a string" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"t2 micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceType is not an instance type" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceType is not an instance type" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"t2.micro\\n\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}",
		  "instanceType is not an instance type" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\\u0000x\",\"availabilityZone\":\"us-west-2b\"}",
		  "region is not a region name" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"\\u001b[31m\",\"availabilityZone\":\"us-west-2b\"}",
		  "region is not a region name" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\",\"availabilityZone\":\"eu-west-1a\"}",
		  "availabilityZone is not in the region" },
		{ "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"t2.micro\","
		  "\"region\":\"us-west-2\"}",
		  "no availabilityZone" },
		{ "{}", "no instanceId" },
	};
	struct jt_cloud c;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_id(cases[i].doc, &c), -EINVAL);
		assert_why(cases[i].why);
	}
	/* the good fields of a partly bad document are kept */
	parse_id(cases[0].doc, &c);
	assert_string_equal(c.instance_id, "");
	assert_string_equal(c.instance_type, "t2.micro");
	assert_string_equal(c.zone, "us-west-2b");
	parse_id(cases[11].doc, &c);
	assert_string_equal(c.region, "us-west-2");
	assert_string_equal(c.zone, "");
}

/* Long values do not overflow the fields; a member twice: the first. */
static void test_identity_long_and_twice(void **state)
{
	char doc[8192], big[2048];
	struct jt_cloud c;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[2] = '.';
	snprintf(doc, sizeof(doc),
		 "{\"instanceId\":\"i-1234567890abcdef0\",\"instanceType\":\"%s\","
		 "\"region\":\"us-west-2-%s\",\"availabilityZone\":\"us-west-2b\"}",
		 big, big);
	assert_int_equal(parse_id(doc, &c), -EINVAL);
	assert_string_equal(c.instance_type, "");
	assert_string_equal(c.region, "");
	assert_string_equal(c.instance_id, "i-1234567890abcdef0");
	/* a name as long as the field fits: 63 bytes of instance type */
	memset(big, 'b', 63);
	big[1] = '.';
	big[63] = '\0';
	snprintf(doc, sizeof(doc),
		 "{\"instanceType\":\"%s\",\"instanceType\":\"m5.large\","
		 "\"instanceId\":\"i-1234567890abcdef0\",\"region\":\"us-west-2\","
		 "\"availabilityZone\":\"us-west-2b\"}", big);
	assert_int_equal(parse_id(doc, &c), 0);
	assert_string_equal(c.instance_type, big);
	/* 64 bytes do not */
	big[63] = 'b';
	big[64] = '\0';
	snprintf(doc, sizeof(doc),
		 "{\"instanceType\":\"%s\",\"instanceId\":\"i-1234567890abcdef0\","
		 "\"region\":\"us-west-2\",\"availabilityZone\":\"us-west-2b\"}", big);
	assert_int_equal(parse_id(doc, &c), -EINVAL);
	assert_string_equal(c.instance_type, "");
}

/* Deep nesting in a member that is skipped is read (and bounded) by the
 * JSON reader: too deep is refused, not a crash. */
static void test_identity_deep(void **state)
{
	char doc[4096];
	struct jt_cloud c;
	size_t n = 0;

	(void)state;
	n += snprintf(doc, sizeof(doc), "{\"x\":");
	for (int i = 0; i < 1000; i++)
		doc[n++] = '[';
	doc[n] = '\0';
	assert_int_equal(parse_id(doc, &c), -EINVAL);
	n = snprintf(doc, sizeof(doc), "%s", aws_doc) - 1;
	snprintf(doc + n, sizeof(doc) - n, ",\"extra\":[[[[[{\"a\":[]}]]]]]}");
	assert_int_equal(parse_id(doc, &c), 0);
	assert_string_equal(c.instance_id, "i-1234567890abcdef0");
}

/* The life cycle: a word, trailing white space cut. */
static void test_lifecycle(void **state)
{
	static const char *const bad[] = {
		"", "\n", "SPOT", "spot; rm -rf /", "spot\x1b[0m", "-spot",
		"on demand", "averyveryverylongword",
	};
	struct jt_cloud c;

	(void)state;
	assert_int_equal(imds_parse_lifecycle("spot", 4, &c, why, sizeof(why)), 0);
	assert_string_equal(c.lifecycle, "spot");
	assert_int_equal(imds_parse_lifecycle("on-demand\n", 10, &c, why,
					      sizeof(why)), 0);
	assert_string_equal(c.lifecycle, "on-demand");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(c.lifecycle, "spot");
		assert_int_equal(imds_parse_lifecycle(bad[i], strlen(bad[i]), &c,
						      why, sizeof(why)), -EINVAL);
		assert_string_equal(c.lifecycle, "");
	}
	/* a NUL inside is not a word either */
	assert_int_equal(imds_parse_lifecycle("sp\0t", 4, &c, why, sizeof(why)),
			 -EINVAL);
}

/* Parse an instance-action answer. */
static int parse_action(const char *doc, struct imds_notice *n)
{
	memset(n, 0, sizeof(*n));
	why[0] = '\0';
	return imds_parse_action(doc, strlen(doc), n, why, sizeof(why));
}

/* AWS's example notice, the three actions, and what is not a notice. */
static void test_action(void **state)
{
	static const struct {
		const char *doc, *why;
	} bad[] = {
		{ "", "not a JSON object" },
		{ "<?xml version=\"1.0\"?><Error/>", "not a JSON object" },
		{ "{\"action\": \"terminate\"}", "no time" },
		{ "{\"time\": \"2017-09-18T08:22:00Z\"}", "no action" },
		{ "{\"action\": \"reboot\", \"time\": \"2017-09-18T08:22:00Z\"}",
		  "action is not terminate, stop or hibernate" },
		{ "{\"action\": \"Terminate\", \"time\": \"2017-09-18T08:22:00Z\"}",
		  "action is not" },
		{ "{\"action\": 1, \"time\": \"2017-09-18T08:22:00Z\"}",
		  "action is not a string" },
		{ "{\"action\": \"stop\", \"time\": 1505722920}",
		  "time is not a string" },
		{ "{\"action\": \"stop\", \"time\": \"tomorrow\"}",
		  "time is not an RFC 3339 time" },
		{ "{\"action\": \"stop\", \"time\": \"2017-02-30T08:22:00Z\"}",
		  "time is not an RFC 3339 time" },
		{ "{\"action\": \"stop\", \"time\": \"2017-09-18T08:22:00\"}",
		  "time is not an RFC 3339 time" },
		{ "{\"action\": \"stop\", \"time\": \"1969-12-31T23:59:59Z\"}",
		  "time is not an RFC 3339 time" },
		{ "{\"action\": \"stop\", \"time\": \"2017-09-18T08:22:00\\u005a\"}",
		  "time is not an RFC 3339 time" },
		{ "{\"action\": \"stop\", \"time\": \"2017-09-18T08:22:00Z\"",
		  "not a JSON object" },
	};
	struct imds_notice n;

	(void)state;
	/* the EC2 user guide's example */
	assert_int_equal(parse_action("{\"action\": \"terminate\", \"time\":"
				      " \"2017-09-18T08:22:00Z\"}", &n), 0);
	assert_string_equal(n.action, "terminate");
	assert_true(n.time_ns == 1505722920ull * 1000000000ull);
	assert_int_equal(parse_action("{\"time\":\"2017-09-18T10:22:00.5+02:00\","
				      "\"other\":[1],\"action\":\"stop\"}", &n), 0);
	assert_string_equal(n.action, "stop");
	assert_true(n.time_ns == 1505722920500000000ull);
	assert_int_equal(parse_action("{\"action\":\"hibernate\","
				      "\"time\":\"2030-01-01T00:00:00Z\"}", &n), 0);
	assert_string_equal(n.action, "hibernate");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_action(bad[i].doc, &n), -EINVAL);
		assert_why(bad[i].why);
	}
}

/* The URL: http://, an address, a port, nothing else. */
static void test_url(void **state)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	static const char *const bad[] = {
		"", "169.254.169.254", "https://169.254.169.254",
		"http://", "http://localhost", "http://instance-data",
		"http://169.254.169.254.1", "http://169.254.169.254:",
		"http://169.254.169.254:x", "http://169.254.169.254:-1",
		"http://169.254.169.254:99999999999999999999",
		"http://169.254.169.254/latest", "http://169.254.169.254?a",
		"http://[fd00:ec2::254", "http://[not:an:address]",
		"http://fd00:ec2::254", "http://[fd00:ec2::254]x",
	};

	(void)state;
	assert_int_equal(netaddr_url("http://169.254.169.254", &ss, why,
				       sizeof(why)), 0);
	assert_int_equal(a4->sin_family, AF_INET);
	assert_int_equal(ntohs(a4->sin_port), 80);
	assert_int_equal(ntohl(a4->sin_addr.s_addr), 0xa9fea9fe);
	assert_int_equal(netaddr_url("http://127.0.0.1:8123/", &ss, why,
				       sizeof(why)), 0);
	assert_int_equal(ntohs(a4->sin_port), 8123);
	assert_int_equal(netaddr_url("http://[fd00:ec2::254]:81", &ss, why,
				       sizeof(why)), 0);
	assert_int_equal(a6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(a6->sin6_port), 81);
	assert_int_equal(a6->sin6_addr.s6_addr[0], 0xfd);
	assert_int_equal(a6->sin6_addr.s6_addr[15], 0x54);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (netaddr_url(bad[i], NULL, why, sizeof(why)) != -EINVAL)
			fail_msg("\"%s\" was taken", bad[i]);
}

/* A loopback port that nothing listens on. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	port = ntohs(a.sin_port);
	close(fd);		/* bound, never listened: refused */
	return port;
}

/* No service: the read at start is over at once (the loop is woken),
 * the identity empty; status says absent and why; stopping does not wait
 * for the next retry. */
static void test_thread_absent(void **state)
{
	struct imds *m = NULL;
	struct jt_cloud c;
	char url[64], *text = NULL;
	size_t len = 0;
	uint64_t t0, t1;
	FILE *out;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
	t0 = util_now_ns(CLOCK_MONOTONIC);
	assert_int_equal(imds_start(&(struct imds_opts){ .url = url,
							 .poll_ms = 1000 }, &m), 0);
	while (!imds_identity_done(m) &&
	       util_now_ns(CLOCK_MONOTONIC) - t0 < 5000000000ull)
		usleep(1000);
	t1 = util_now_ns(CLOCK_MONOTONIC);
	imds_identity(m, &c);
	assert_string_equal(c.provider, "");
	assert_string_equal(c.instance_id, "");
	{
		struct pollfd p = { .fd = imds_fd(m), .events = POLLIN };

		assert_int_equal(poll(&p, 1, 1000), 1);
		assert_false(imds_take_notice(m, &(struct imds_notice){ 0 }));
		assert_int_equal(poll(&p, 1, 0), 0);
	}
	/* a refused connection is known at once, well within the budget */
	if (t1 - t0 > 200000000ull)
		fail_msg("the identity took %llu ms",
			 (unsigned long long)((t1 - t0) / 1000000));
	out = open_memstream(&text, &len);
	imds_status(m, out);
	fclose(out);
	if (!strstr(text, "cloud.imds: absent: no connection: Connection refused\n") ||
	    !strstr(text, "cloud.spot_poll: off (no IMDS)\n"))
		fail_msg("status:\n%s", text);
	free(text);
	t0 = util_now_ns(CLOCK_MONOTONIC);
	imds_stop(m);
	t1 = util_now_ns(CLOCK_MONOTONIC);
	assert_true(t1 - t0 < 500000000ull);
	/* off: no reader at all */
	imds_identity(NULL, &c);
	assert_string_equal(c.provider, "");
	assert_true(imds_identity_done(NULL));
	assert_int_equal(imds_fd(NULL), -1);
	assert_false(imds_take_notice(NULL, &(struct imds_notice){ 0 }));
}

/* A status text of m. */
static char *status_text(struct imds *m)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	imds_status(m, out);
	fclose(out);
	return text;
}

/* A loopback service that takes connections and never answers: its
 * socket, its URL in url. */
static int hanging(char *url, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);	/* the kernel accepts; nobody reads */
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	snprintf(url, len, "http://127.0.0.1:%d", ntohs(a.sin_port));
	return fd;
}

/*
 * A service that takes the connection and never answers: imds_start
 * returns before the read is over (the identity is still pending when it
 * returns: a start that waited for the reader would find it over, since
 * the first request alone waits IMDS_START_REQUEST_MS for an answer that
 * never comes); the read then ends within its budget as absent, timed
 * out, and the loop is woken.  This is what lets the agent start in the
 * time it takes with cloud.imds = "off", without timing the start.
 * Compute Engine's server (gcp) the same, its first request the project's;
 * absent is the status's start then.
 */
static void hang_case(bool gcp, const char *absent)
{
	struct imds *m = NULL;
	char url[64], *text;
	int fd = hanging(url, sizeof(url));
	uint64_t t0, t1;

	t0 = util_now_ns(CLOCK_MONOTONIC);
	assert_int_equal(imds_start(&(struct imds_opts){ .url = url,
				    .poll_ms = 1000, .gcp = gcp }, &m), 0);
	assert_false(imds_identity_done(m));
	text = status_text(m);
	if (!strstr(text, "cloud.imds: pending\n"))
		fail_msg("status right after the start:\n%s", text);
	free(text);
	while (!imds_identity_done(m) &&
	       util_now_ns(CLOCK_MONOTONIC) - t0 < 5000000000ull)
		usleep(1000);
	t1 = util_now_ns(CLOCK_MONOTONIC);
	assert_true(imds_identity_done(m));
	/*
	 * It did wait for the service (the hang was real), not longer.
	 * libcurl times a request on its own clock, in whole milliseconds:
	 * its "timed out after 300 milliseconds" was less than 300 ms by
	 * ours, start to end, once in 150 runs of this test here (a release
	 * build beside four busy loops: 300 hanging services, EC2's and
	 * GCE's), so 2 ms less is still the request's whole wait.
	 */
	assert_true(t1 - t0 >= (IMDS_START_REQUEST_MS - 2) * 1000000ull);
	assert_true(t1 - t0 < (IMDS_START_BUDGET_MS + 500) * 1000000ull);
	{
		struct pollfd p = { .fd = imds_fd(m), .events = POLLIN };

		assert_int_equal(poll(&p, 1, 1000), 1);
	}
	text = status_text(m);
	if (!strstr(text, absent) || !strstr(text, "timed out") ||
	    !strstr(text, gcp ? "cloud.provider: gcp\n" :
		    "cloud.provider: aws\n"))
		fail_msg("status after the budget:\n%s", text);
	free(text);
	imds_stop(m);
	close(fd);
}

/* EC2's IMDS that hangs. */
static void test_thread_hangs(void **state)
{
	(void)state;
	hang_case(false, "cloud.imds: absent: token: ");
}

/* Compute Engine's server that hangs. */
static void test_gcp_thread_hangs(void **state)
{
	(void)state;
	hang_case(true, "cloud.imds: absent: project/project-id: ");
}

/* One GCE answer of attribute a into c and g: its return. */
static int gcp(enum imds_gcp_attr a, const char *s, struct jt_cloud *c,
	       struct imds_gcp *g)
{
	why[0] = '\0';
	return imds_parse_gcp(a, s, strlen(s), c, g, why, sizeof(why));
}

/*
 * Compute Engine's answers as its documentation gives them: the zone and
 * machine type as full resource paths (region from the zone), the id a
 * number, the scheduling words; then answers of another form, each
 * refused with its attribute named and the field left as it was.
 */
static void test_gcp_parse(void **state)
{
	static const struct { enum imds_gcp_attr a; const char *s, *want; }
	bad[] = {
		{ IMDS_GCP_ZONE, "us-central1-a", "instance/zone" },
		{ IMDS_GCP_ZONE, "projects/1/regions/us-central1", "instance/zone" },
		{ IMDS_GCP_ZONE, "projects/1/zones/us-central1-a/x", "instance/zone" },
		{ IMDS_GCP_ZONE, "projects/1/zones/Us-central1-a", "instance/zone" },
		{ IMDS_GCP_ZONE, "projects/1/zones/", "instance/zone" },
		{ IMDS_GCP_ZONE, "projects/1/zones/uscentral1", "instance/zone" },
		{ IMDS_GCP_MACHINE_TYPE, "e2-standard-4", "instance/machine-type" },
		{ IMDS_GCP_MACHINE_TYPE, "projects/1/machineTypes/e2 std",
		  "instance/machine-type" },
		{ IMDS_GCP_MACHINE_TYPE, "projects/1/machineTypes/e2-standard-4"
		  "-and-a-name-much-longer-than-any-machine-type-has-ever-been",
		  "instance/machine-type" },
		{ IMDS_GCP_ID, "12a4", "instance/id" },
		{ IMDS_GCP_ID, "-1", "instance/id" },
		{ IMDS_GCP_ID, "123456789012345678901", "instance/id" },
		{ IMDS_GCP_ID, "", "instance/id" },
		{ IMDS_GCP_PREEMPTIBLE, "true", "preemptible" },
		{ IMDS_GCP_PREEMPTIBLE, "TRUE FALSE", "preemptible" },
		{ IMDS_GCP_MODEL, "spot", "provisioning-model" },
		{ IMDS_GCP_MODEL, "SPOT\"", "provisioning-model" },
		{ IMDS_GCP_PROJECT, "My Project", "project/project-id" },
		{ IMDS_GCP_PROJECT, "<html>", "project/project-id" },
	};
	struct jt_cloud c = { 0 };
	struct imds_gcp g = { 0 };

	(void)state;
	assert_int_equal(gcp(IMDS_GCP_PROJECT, "my-project-123", &c, &g), 0);
	assert_string_equal(g.project, "my-project-123");
	assert_int_equal(gcp(IMDS_GCP_PROJECT, "example.com:proj", &c, &g), 0);
	assert_int_equal(gcp(IMDS_GCP_ZONE,
			     "projects/123456789012/zones/europe-west4-b\n",
			     &c, &g), 0);
	assert_string_equal(c.zone, "europe-west4-b");
	assert_string_equal(c.region, "europe-west4");
	assert_int_equal(gcp(IMDS_GCP_MACHINE_TYPE,
			     "projects/123456789012/machineTypes/n2-custom-4-8192",
			     &c, &g), 0);
	assert_string_equal(c.instance_type, "n2-custom-4-8192");
	assert_int_equal(gcp(IMDS_GCP_ID, "4520031799277581759", &c, &g), 0);
	assert_string_equal(c.instance_id, "4520031799277581759");
	assert_int_equal(gcp(IMDS_GCP_PREEMPTIBLE, "FALSE", &c, &g), 0);
	imds_gcp_lifecycle(&g, &c);
	assert_string_equal(c.lifecycle, "on-demand");
	assert_int_equal(gcp(IMDS_GCP_MODEL, "SPOT", &c, &g), 0);
	imds_gcp_lifecycle(&g, &c);
	assert_string_equal(c.lifecycle, "spot");
	/* a preemptible VM of before Spot: no model, preemptible TRUE */
	g = (struct imds_gcp){ 0 };
	assert_int_equal(gcp(IMDS_GCP_PREEMPTIBLE, "TRUE", &c, &g), 0);
	imds_gcp_lifecycle(&g, &c);
	assert_string_equal(c.lifecycle, "spot");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jt_cloud k = c;

		if (gcp(bad[i].a, bad[i].s, &k, &g) != -EINVAL ||
		    !strstr(why, bad[i].want))
			fail_msg("\"%s\": why \"%s\", want -EINVAL naming %s",
				 bad[i].s, why, bad[i].want);
		assert_string_equal(k.zone, c.zone);
		assert_string_equal(k.region, c.region);
		assert_string_equal(k.instance_type, c.instance_type);
		assert_string_equal(k.instance_id, c.instance_id);
	}
	/* a NUL inside an answer is no part of a word */
	assert_int_equal(imds_parse_gcp(IMDS_GCP_ID, "12\0" "3", 4, &c, &g, why,
					sizeof(why)), -EINVAL);
}

/* Compute Engine by DMI, as ds-identify decides; nothing else is. */
static void test_gcp_local(void **state)
{
	char dir[] = "/tmp/jt-test-dmi.XXXXXX", out[320];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_false(imds_local_gcp(dir, out, sizeof(out)));
	test_write_file(dir, "product_name", "Google Compute Engine\n");
	assert_true(imds_local_gcp(dir, out, sizeof(out)));
	assert_non_null(strstr(out, "product_name is \"Google Compute Engine\""));
	test_write_file(dir, "product_name", "Google Compute Engine Plus\n");
	test_write_file(dir, "sys_vendor", "Amazon EC2\n");
	assert_false(imds_local_gcp(dir, out, sizeof(out)));
	test_remove_tree(dir);
}

/* One machine's facts: DMI files (name, text; NULL ends) and the
 * hypervisor UUID (NULL: none); is it EC2, and why contains want. */
static void local_case(const char *const *dmi, const char *hyp, bool ec2,
		       const char *want)
{
	char dir[] = "/tmp/jt-test-dmi.XXXXXX", hpath[64];
	char out[320];
	bool got;

	assert_non_null(mkdtemp(dir));
	for (; dmi && dmi[0]; dmi += 2)
		test_write_file(dir, dmi[0], dmi[1]);
	snprintf(hpath, sizeof(hpath), "%s/hypervisor_uuid", dir);
	if (hyp)
		test_write_file(dir, "hypervisor_uuid", hyp);
	got = imds_local_ec2(dir, hpath, out, sizeof(out));
	test_remove_tree(dir);
	if (got != ec2 || !strstr(out, want))
		fail_msg("facts: EC2 %d, want %d; why \"%s\", want \"%s\"", got,
			 ec2, out, want);
}

/*
 * EC2 by the machine's own facts, as ds-identify decides: Nitro's
 * sys_vendor, an instance id as board asset tag, an ec2 UUID in either
 * byte order (product or Xen's hypervisor); anything else is not, nor
 * are no facts at all (a Firecracker VM has no DMI).
 */
static void test_local_facts(void **state)
{
	(void)state;
	local_case((const char *[]){ "sys_vendor", "Amazon EC2\n", NULL },
		   NULL, true, "sys_vendor is \"Amazon EC2\"");
	local_case((const char *[]){ "sys_vendor", "Amazon\n",
		   "board_asset_tag", "i-0123456789abcdef0\n", NULL }, NULL,
		   true, "an instance id, i-0123456789abcdef0");
	local_case((const char *[]){ "sys_vendor", "Xen\n", "product_uuid",
		   "EC2E1916-9099-7CAF-FD21-012345ABCDEF\n", NULL }, NULL,
		   true, "the product UUID begins with ec2");
	/* SMBIOS before 2.6: the first field's bytes the other way */
	local_case((const char *[]){ "product_uuid",
		   "16192eec-9099-7caf-fd21-012345abcdef\n", NULL }, NULL,
		   true, "product UUID");
	local_case(NULL, "ec2a3b4c-1111-2222-3333-444455556666\n", true,
		   "the hypervisor UUID begins with ec2");
	local_case((const char *[]){ "sys_vendor", "QEMU\n", "product_uuid",
		   "4c4c4544-0031-3010-8031-b2c04f4e3332\n", NULL }, NULL,
		   false, "DMI sys_vendor \"QEMU\"");
	/* near misses */
	local_case((const char *[]){ "sys_vendor", "Amazon EC2 Compatible\n",
		   "board_asset_tag", "i-XYZ\n", NULL }, NULL, false,
		   "board_asset_tag \"i-XYZ\"");
	local_case((const char *[]){ "sys_vendor", "\x1b[2JAmazon EC2\n",
		   NULL }, NULL, false, "?[2JAmazon EC2");
	local_case(NULL, NULL, false, "no DMI (");
}

/* Run every test. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_aws),
		cmocka_unit_test(test_identity_not_json),
		cmocka_unit_test(test_identity_odd_fields),
		cmocka_unit_test(test_identity_long_and_twice),
		cmocka_unit_test(test_identity_deep),
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_action),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_thread_absent),
		cmocka_unit_test(test_thread_hangs),
		cmocka_unit_test(test_gcp_parse),
		cmocka_unit_test(test_gcp_local),
		cmocka_unit_test(test_gcp_thread_hangs),
		cmocka_unit_test(test_local_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
