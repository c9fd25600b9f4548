// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * imds.c - EC2's instance metadata service, version 2, in one thread
 * (see imds.h).
 *
 * IMDSv2: PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds
 * gives a token; every GET carries it in X-aws-ec2-metadata-token.  An
 * expired or unknown token is answered 401: the token is fetched again
 * and the request repeated once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"
#include "imds.h"
#include "netaddr.h"
#include "json_read.h"
#include "log.h"
#include "util.h"

#define TOKEN_MAX 512			/* AWS's are 56 bytes */
#define ANSWER_MAX 16384		/* the identity document is ~500 */
#define WHY_MAX 256
/* fetch a new token this long before the old one expires */
#define TOKEN_MARGIN_S 300

#define PATH_TOKEN "/latest/api/token"
#define PATH_IDENTITY "/latest/dynamic/instance-identity/document"
#define PATH_LIFECYCLE "/latest/meta-data/instance-life-cycle"
#define PATH_ACTION "/latest/meta-data/spot/instance-action"
#define GCE_PREFIX "/computeMetadata/v1/"

enum imds_state { ST_PENDING, ST_OK, ST_ABSENT, ST_ERROR };

struct imds {
	char url[256];
	bool gcp;			/* Compute Engine's metadata server */
	unsigned poll_ms;
	struct sockaddr_storage addr;
	pthread_t thread;
	bool started;
	int efd;			/* the thread writes, the loop reads */

	pthread_mutex_t lock;
	pthread_cond_t cond;		/* CLOCK_MONOTONIC */
	/* under lock: what the thread publishes, and stop */
	bool stop;
	bool first_done;		/* the read at start is over */
	enum imds_state st;
	char why[WHY_MAX];
	struct jt_cloud cloud;
	char project[64];		/* GCE's project id, status only */
	bool polling;
	uint64_t polls, poll_errors, notices;
	char poll_why[WHY_MAX];
	struct imds_notice pending;
	bool have_pending;

	/* the thread's own */
	struct http_client *http;
	char token_hdr[TOKEN_MAX + 32];	/* "X-aws-ec2-metadata-token: ..." */
	uint64_t token_ns;		/* CLOCK_MONOTONIC when fetched, 0: none */
	struct imds_notice last;	/* the last notice handed over */
	bool have_last;
	struct jbuf ans;
};

/* ---- the parsers ----------------------------------------------------------- */


/* Are the n bytes at s all lower-case letters, digits or chars of extra? */
static bool only(const char *s, size_t n, const char *extra)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') ||
		      (s[i] && strchr(extra, s[i]))))
			return false;
	return true;
}

/* An instance id: "i-" and 8 or 17 hexadecimal digits. */
static bool is_instance_id(const char *s, size_t n)
{
	if ((n != 10 && n != 19) || s[0] != 'i' || s[1] != '-')
		return false;
	for (size_t i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* An instance type: family '.' size ("m5.large", "u-6tb1.metal"). */
static bool is_instance_type(const char *s, size_t n)
{
	const char *dot = memchr(s, '.', n);

	return n && dot && dot > s && dot < s + n - 1 && only(s, n, ".-");
}

/* A region: letters first, then letters, digits and '-' ("us-east-1"). */
static bool is_region(const char *s, size_t n)
{
	return n && s[0] >= 'a' && s[0] <= 'z' && memchr(s, '-', n) &&
	       only(s, n, "-");
}

/* A zone: as a region ("us-east-1a", "us-west-2-lax-1a"). */
static bool is_zone(const char *s, size_t n)
{
	return is_region(s, n) && s[n - 1] != '-';
}

/* One member of the identity document that is kept. */
struct id_field {
	const char *key;
	size_t off, size;		/* into struct jt_cloud */
	bool (*ok)(const char *s, size_t n);
	const char *form;		/* what ok() wants, for the reason */
};

#define CF(m) offsetof(struct jt_cloud, m), sizeof(((struct jt_cloud *)0)->m)
static const struct id_field id_fields[] = {
	{ "instanceId", CF(instance_id), is_instance_id,
	  "an instance id (i- and 8 or 17 hexadecimal digits)" },
	{ "instanceType", CF(instance_type), is_instance_type,
	  "an instance type (family.size)" },
	{ "region", CF(region), is_region, "a region name" },
	{ "availabilityZone", CF(zone), is_zone, "a zone name" },
};
#define N_ID_FIELDS (sizeof(id_fields) / sizeof(id_fields[0]))

/* Set the first reason only. */
#define FIRST_WHY(why, whylen, ...)                                  \
	do {                                                         \
		if ((why) && (whylen) && !(why)[0])                 \
			util_seterr((why), (whylen), __VA_ARGS__);   \
	} while (0)

/* Read a string member's value into dst when ok() likes it. */
static int read_field(struct jr *r, const struct id_field *f, char *dst,
		      char *why, size_t whylen)
{
	struct jr_str v;
	char buf[128];
	const char *s;
	size_t n;
	int err;

	if (jr_peek(r) != JR_STR) {
		FIRST_WHY(why, whylen, "%s is not a string", f->key);
		return jr_skip(r);
	}
	err = jr_str(r, &v);
	if (err)
		return err;
	s = jr_str_get(&v, buf, sizeof(buf), &n);
	if (!s || n >= f->size || !f->ok(s, n)) {
		FIRST_WHY(why, whylen, "%s is not %s", f->key, f->form);
		return 0;
	}
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* Read the instance identity document (see imds.h). */
int imds_parse_identity(const char *doc, size_t len, struct jt_cloud *c,
			char *why, size_t whylen)
{
	bool seen[N_ID_FIELDS] = { false };
	struct jr_str key;
	struct jr r;
	int err;

	if (why && whylen)
		why[0] = '\0';
	for (size_t i = 0; i < N_ID_FIELDS; i++)
		((char *)c + id_fields[i].off)[0] = '\0';
	jr_init(&r, doc, len);
	err = jr_obj_open(&r);
	while (!err && (err = jr_next_member(&r, &key)) > 0) {
		size_t i;

		for (i = 0; i < N_ID_FIELDS; i++)
			if (jr_str_eq(&key, id_fields[i].key,
				      strlen(id_fields[i].key)))
				break;
		/* the rest (account, image, addresses) is none of ours */
		if (i == N_ID_FIELDS || seen[i]) {
			err = jr_skip(&r);
			continue;
		}
		seen[i] = true;
		err = read_field(&r, &id_fields[i],
				 (char *)c + id_fields[i].off, why, whylen);
	}
	if (!err)
		err = jr_end(&r);
	if (err) {
		/* not the document AWS writes: nothing of it is kept */
		for (size_t i = 0; i < N_ID_FIELDS; i++)
			((char *)c + id_fields[i].off)[0] = '\0';
		if (why && whylen)
			util_seterr(why, whylen, "not a JSON object: %s at byte %zu",
				    r.err ? r.err : "expected an object",
				    r.err ? r.err_off : 0);
		return -EINVAL;
	}
	for (size_t i = 0; i < N_ID_FIELDS; i++)
		if (!seen[i])
			FIRST_WHY(why, whylen, "no %s", id_fields[i].key);
	/* a zone is in its region */
	if (c->zone[0] && c->region[0] &&
	    strncmp(c->zone, c->region, strlen(c->region))) {
		FIRST_WHY(why, whylen, "availabilityZone is not in the region");
		c->zone[0] = '\0';
	}
	return why && why[0] ? -EINVAL : 0;
}

/* Read meta-data/instance-life-cycle (see imds.h). */
int imds_parse_lifecycle(const char *s, size_t len, struct jt_cloud *c,
			 char *why, size_t whylen)
{
	c->lifecycle[0] = '\0';
	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' ||
		       s[len - 1] == ' '))
		len--;
	if (!len || len >= sizeof(c->lifecycle) || !only(s, len, "-") ||
	    s[0] == '-') {
		util_seterr(why, whylen, "instance-life-cycle is not a word"
			    " such as spot or on-demand");
		return -EINVAL;
	}
	memcpy(c->lifecycle, s, len);
	c->lifecycle[len] = '\0';
	return 0;
}

/* The last '/'-separated part of s[0..n) after "projects/P/KIND/":
 * its start in *v, its length returned; 0 when s has not that form. */
static size_t after_kind(const char *s, size_t n, const char *kind,
			 const char **v)
{
	size_t k = strlen(kind);
	const char *p = n > 9 && !memcmp(s, "projects/", 9) ?
			memchr(s + 9, '/', n - 9) : NULL;

	if (!p || (size_t)(s + n - p) <= k + 2 || memcmp(p + 1, kind, k) ||
	    p[k + 1] != '/')
		return 0;
	*v = p + k + 2;
	return memchr(*v, '/', s + n - *v) ? 0 : (size_t)(s + n - *v);
}

/* Copy s[0..n) into dst (size bytes) when ok; false when it does not fit
 * or is not ok. */
static bool take(char *dst, size_t size, const char *s, size_t n, bool ok)
{
	if (!ok || !n || n >= size)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

/* Read one attribute of the GCE metadata server (see imds.h). */
int imds_parse_gcp(enum imds_gcp_attr a, const char *s, size_t len,
		   struct jt_cloud *c, struct imds_gcp *g, char *why,
		   size_t whylen)
{
	static const char *const what[] = {
		[IMDS_GCP_PROJECT] = "project/project-id: not a project id",
		[IMDS_GCP_ZONE] = "instance/zone: not projects/P/zones/ZONE",
		[IMDS_GCP_MACHINE_TYPE] = "instance/machine-type: not"
			" projects/P/machineTypes/TYPE",
		[IMDS_GCP_ID] = "instance/id: not a number",
		[IMDS_GCP_PREEMPTIBLE] = "instance/scheduling/preemptible: not"
			" TRUE or FALSE",
		[IMDS_GCP_MODEL] = "instance/scheduling/provisioning-model:"
			" not a word such as STANDARD or SPOT",
	};
	const char *v = NULL;
	size_t n = 0;
	bool ok = false;

	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r' ||
		       s[len - 1] == ' '))
		len--;
	switch (a) {
	case IMDS_GCP_PROJECT:
		/* "my-project", or "example.com:my-project" */
		ok = take(g->project, sizeof(g->project), s, len,
			  len && s[0] >= 'a' && s[0] <= 'z' &&
			  only(s, len, "-.:"));
		break;
	case IMDS_GCP_ZONE:
		n = after_kind(s, len, "zones", &v);
		ok = n > 2 && is_zone(v, n) && v[n - 2] == '-' &&
		     take(c->zone, sizeof(c->zone), v, n, true) &&
		     take(c->region, sizeof(c->region), v, n - 2,
			  is_region(v, n - 2));
		break;
	case IMDS_GCP_MACHINE_TYPE:
		n = after_kind(s, len, "machineTypes", &v);
		ok = n && v[0] >= 'a' && v[0] <= 'z' &&
		     take(c->instance_type, sizeof(c->instance_type), v, n,
			  only(v, n, "-"));
		break;
	case IMDS_GCP_ID:
		ok = len <= 20 && take(c->instance_id, sizeof(c->instance_id),
				       s, len, len && s[0] != '0' &&
				       strspn(s, "0123456789") >= len);
		break;
	case IMDS_GCP_PREEMPTIBLE:
		ok = (len == 4 && !memcmp(s, "TRUE", 4)) ||
		     (len == 5 && !memcmp(s, "FALSE", 5));
		if (ok)
			g->preemptible = len == 4;
		break;
	case IMDS_GCP_MODEL:
		ok = take(g->model, sizeof(g->model), s, len,
			  strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") >= len);
		break;
	case IMDS_GCP__N:
		return -EINVAL;
	}
	if (!ok) {
		util_seterr(why, whylen, "%s", what[a]);
		return -EINVAL;
	}
	return 0;
}

/* Spot or on-demand from what the scheduling attributes said. */
void imds_gcp_lifecycle(const struct imds_gcp *g, struct jt_cloud *c)
{
	util_strlcpy(c->lifecycle, !strcmp(g->model, "SPOT") ||
		     g->preemptible ? "spot" : "on-demand",
		     sizeof(c->lifecycle));
}

/* Read spot/instance-action (see imds.h). */
int imds_parse_action(const char *doc, size_t len, struct imds_notice *n,
		      char *why, size_t whylen)
{
	static const char *const actions[] = { "terminate", "stop",
					       "hibernate" };
	bool have_action = false, have_time = false;
	struct jr_str key, v;
	struct jr r;
	int err;

	jr_init(&r, doc, len);
	err = jr_obj_open(&r);
	while (!err && (err = jr_next_member(&r, &key)) > 0) {
		bool is_action = jr_str_eq(&key, "action", 6);
		bool is_time = jr_str_eq(&key, "time", 4);
		int64_t secs;
		uint32_t ns;

		if ((!is_action || have_action) && (!is_time || have_time)) {
			err = jr_skip(&r);
			continue;
		}
		err = jr_str(&r, &v);
		if (err == -EDOM) {
			util_seterr(why, whylen, "%s is not a string",
				    is_action ? "action" : "time");
			return -EINVAL;
		}
		if (err)
			break;
		if (is_action) {
			for (size_t i = 0; i < 3 && !have_action; i++)
				if (jr_str_eq(&v, actions[i],
					      strlen(actions[i]))) {
					util_strlcpy(n->action, actions[i],
						     sizeof(n->action));
					have_action = true;
				}
			if (!have_action) {
				util_seterr(why, whylen, "action is not"
					    " terminate, stop or hibernate");
				return -EINVAL;
			}
		} else {
			/* AWS writes no escapes in a time: none is one */
			if (v.esc || json_parse_time(v.s, v.len, 0, &secs,
						     &ns) || secs < 0) {
				util_seterr(why, whylen, "time is not an"
					    " RFC 3339 time");
				return -EINVAL;
			}
			n->time_ns = (uint64_t)secs * 1000000000ull + ns;
			have_time = true;
		}
	}
	if (!err)
		err = jr_end(&r);
	if (err) {
		util_seterr(why, whylen, "not a JSON object: %s at byte %zu",
			    r.err ? r.err : "expected an object",
			    r.err ? r.err_off : 0);
		return -EINVAL;
	}
	if (!have_action || !have_time) {
		util_seterr(why, whylen, "no %s", have_action ? "time" : "action");
		return -EINVAL;
	}
	return 0;
}

/* ---- this machine's own facts --------------------------------------------- */

/* The first line of file dir/name ("" when unreadable) into out. */
static void fact(const char *dir, const char *name, char *out, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;

	out[0] = '\0';
	if (snprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "",
		     name ? name : "") >= (int)sizeof(path))
		return;
	n = util_read_file(path, out, len);
	if (n <= 0) {
		out[0] = '\0';
		return;
	}
	out[strcspn(out, "\n")] = '\0';
	util_printable(out);
}

/* Does a UUID begin with "ec2", as written or with its first field's
 * bytes swapped (SMBIOS before 2.6 stored it little-endian)? */
static bool ec2_uuid(const char *u)
{
	char sw[9];

	if (!strncasecmp(u, "ec2", 3))
		return true;
	if (strlen(u) < 8)
		return false;
	for (int i = 0; i < 4; i++) {
		sw[2 * i] = u[6 - 2 * i];
		sw[2 * i + 1] = u[7 - 2 * i];
	}
	sw[8] = '\0';
	return !strncasecmp(sw, "ec2", 3);
}

/* This machine's own facts about EC2 (see imds.h). */
bool imds_local_ec2(const char *dmi_dir, const char *hyp_uuid, char *why,
		    size_t whylen)
{
	char vendor[128], tag[128], uuid[64], huuid[64];

	fact(dmi_dir, "sys_vendor", vendor, sizeof(vendor));
	fact(dmi_dir, "board_asset_tag", tag, sizeof(tag));
	fact(dmi_dir, "product_uuid", uuid, sizeof(uuid));
	fact(hyp_uuid, NULL, huuid, sizeof(huuid));
	if (!strcmp(vendor, "Amazon EC2")) {
		util_seterr(why, whylen, "%s/sys_vendor is \"%s\"", dmi_dir,
			    vendor);
		return true;
	}
	if (is_instance_id(tag, strlen(tag))) {
		util_seterr(why, whylen, "%s/board_asset_tag is an instance id,"
			    " %s", dmi_dir, tag);
		return true;
	}
	if (ec2_uuid(uuid) || ec2_uuid(huuid)) {
		util_seterr(why, whylen, "the %s UUID begins with ec2",
			    ec2_uuid(uuid) ? "product" : "hypervisor");
		return true;
	}
	if (!vendor[0] && !tag[0] && !uuid[0] && !huuid[0])
		util_seterr(why, whylen, "no DMI (%s) or hypervisor UUID (%s)"
			    " says so", dmi_dir, hyp_uuid);
	else
		util_seterr(why, whylen, "DMI sys_vendor \"%s\"%s%s%s", vendor,
			    tag[0] ? ", board_asset_tag \"" : "", tag,
			    tag[0] ? "\"" : "");
	return false;
}

/* This machine's own facts about Compute Engine (see imds.h). */
bool imds_local_gcp(const char *dmi_dir, char *why, size_t whylen)
{
	char product[128], vendor[128];

	fact(dmi_dir, "product_name", product, sizeof(product));
	fact(dmi_dir, "sys_vendor", vendor, sizeof(vendor));
	if (!strcmp(product, "Google Compute Engine") ||
	    !strcmp(vendor, "Google")) {
		util_seterr(why, whylen, "%s/%s is \"%s\"", dmi_dir,
			    product[0] ? "product_name" : "sys_vendor",
			    product[0] ? product : vendor);
		return true;
	}
	util_seterr(why, whylen, "DMI product_name \"%s\", sys_vendor \"%s\"",
		    product, vendor);
	return false;
}

/* ---- the thread ------------------------------------------------------------- */

/* CLOCK_MONOTONIC in ms. */
static uint64_t mono_ms(void)
{
	return util_now_ns(CLOCK_MONOTONIC) / 1000000ull;
}

/*
 * Can a TCP connection to the service be made within tmo_ms?  Asked
 * before anything else so that an agent off EC2 learns that nothing is
 * there without loading libcurl (6.8 MB of resident memory, see http.c).
 */
static int probe(const struct sockaddr_storage *ss, unsigned tmo_ms)
{
	socklen_t len = ss->ss_family == AF_INET6 ?
			sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	struct pollfd p = { .events = POLLOUT };
	int e = 0, fd, n;
	socklen_t el = sizeof(e);

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)ss, len))
		goto out;
	if (errno != EINPROGRESS) {
		e = -errno;
		goto out;
	}
	p.fd = fd;
	n = poll(&p, 1, (int)tmo_ms);
	if (n == 0)
		e = -ETIMEDOUT;
	else if (n < 0)
		e = -errno;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		e = -errno;
	else
		e = -e;
out:
	close(fd);
	return e;
}

/* Milliseconds left until deadline, at most cap, at least 1 (a request
 * past the deadline fails at once, as out of time). */
static unsigned left_ms(uint64_t deadline, unsigned cap)
{
	uint64_t now = mono_ms();

	if (now + 1 >= deadline)
		return 1;
	return deadline - now < cap ? (unsigned)(deadline - now) : cap;
}

/* Get a token: PUT /latest/api/token; 0 or -errno with err set
 * (-EBADMSG: the answer is not a token). */
static int get_token(struct imds *m, unsigned tmo, char *err, size_t errlen)
{
	static const char *const ttl[] = {
		"X-aws-ec2-metadata-token-ttl-seconds: " UTIL_STR(IMDS_TOKEN_TTL_S),
		NULL
	};
	struct http_req rq = { .method = "PUT", .suffix = PATH_TOKEN,
			       .headers = ttl, .timeout_ms = tmo,
			       .max_answer = TOKEN_MAX };
	int e;

	m->token_ns = 0;
	explicit_bzero(m->token_hdr, sizeof(m->token_hdr));
	jbuf_reset(&m->ans);
	e = http_request(m->http, &rq, &m->ans, NULL, err, errlen);
	if (e)
		return e;
	/* it goes into a header line: printable ASCII, no CR or LF */
	for (size_t i = 0; i < m->ans.len; i++)
		if (m->ans.buf[i] < 0x21 || m->ans.buf[i] > 0x7e)
			e = -EBADMSG;
	if (e || !m->ans.len) {
		util_seterr(err, errlen, "the token is not printable text");
		e = -EBADMSG;
	} else {
		snprintf(m->token_hdr, sizeof(m->token_hdr),
			 "X-aws-ec2-metadata-token: %.*s", (int)m->ans.len,
			 m->ans.buf);
		m->token_ns = util_now_ns(CLOCK_MONOTONIC);
	}
	jbuf_reset(&m->ans);	/* wipes the token */
	return e;
}

/*
 * GET path with the token (fetched first when there is none or it is
 * old; again after a 401) into m->ans; the status in *status.
 */
static int get(struct imds *m, const char *path, unsigned tmo, long *status,
	       char *err, size_t errlen)
{
	const char *hdrs[] = { m->token_hdr, NULL };
	struct http_req rq = { .method = "GET", .suffix = path,
			       .headers = hdrs, .timeout_ms = tmo,
			       .max_answer = ANSWER_MAX };
	uint64_t old_ns = (uint64_t)(IMDS_TOKEN_TTL_S - TOKEN_MARGIN_S) *
			  1000000000ull;
	int e = 0;

	*status = 0;
	for (int tries = 0; tries < 2; tries++) {
		if (!m->token_ns ||
		    util_now_ns(CLOCK_MONOTONIC) - m->token_ns > old_ns) {
			e = get_token(m, tmo, err, errlen);
			if (e)
				return e;
		}
		jbuf_reset(&m->ans);
		e = http_request(m->http, &rq, &m->ans, status, err, errlen);
		if (*status != 401)
			break;
		m->token_ns = 0;	/* expired: a new one, once */
	}
	return e;
}

/* Tell the event loop that there is news. */
static void wake(struct imds *m)
{
	uint64_t one = 1;

	if (write(m->efd, &one, sizeof(one)) < 0)
		log_debug("cloud: eventfd: %s", strerror(errno));
}

/* Publish a reason: printable, for status and the log. */
static void set_why(char *dst, const char *what, const char *why)
{
	snprintf(dst, WHY_MAX, "%s%s%s", what, *what ? ": " : "", why);
	util_printable(dst);
}

/*
 * Compute Engine: GET each attribute of imds_gcp_attr with
 * "Metadata-Flavor: Google" (no token) into c and g, within deadline.
 * provisioning-model is missing on older VMs (404): preemptible alone
 * says then.  The first reason into why; an absent server into *st.
 */
static void read_gcp(struct imds *m, uint64_t deadline, unsigned req_ms,
		     struct jt_cloud *c, struct imds_gcp *g, char *why,
		     enum imds_state *st)
{
	static const char *const paths[IMDS_GCP__N] = {
		[IMDS_GCP_PROJECT] = "project/project-id",
		[IMDS_GCP_ZONE] = "instance/zone",
		[IMDS_GCP_MACHINE_TYPE] = "instance/machine-type",
		[IMDS_GCP_ID] = "instance/id",
		[IMDS_GCP_PREEMPTIBLE] = "instance/scheduling/preemptible",
		[IMDS_GCP_MODEL] = "instance/scheduling/provisioning-model",
	};
	static const char *const hdrs[] = { "Metadata-Flavor: Google", NULL };
	char err[WHY_MAX], path[96];

	for (int a = 0; a < IMDS_GCP__N; a++) {
		struct http_req rq = { .method = "GET", .suffix = path,
				       .headers = hdrs,
				       .timeout_ms = left_ms(deadline, req_ms),
				       .max_answer = ANSWER_MAX };
		long status = 0;
		int e;

		snprintf(path, sizeof(path), GCE_PREFIX "%s", paths[a]);
		jbuf_reset(&m->ans);
		err[0] = '\0';
		e = http_request(m->http, &rq, &m->ans, &status, err,
				 sizeof(err));
		if (a == IMDS_GCP_MODEL && status == 404)
			continue;	/* not said: preemptible decides */
		if (a == IMDS_GCP_PROJECT && e && status != 404) {
			/* no answer at all: no metadata server for us */
			*st = ST_ABSENT;
			set_why(why, paths[a], err);
			return;
		}
		if (!e)
			e = imds_parse_gcp(a, jbuf_str(&m->ans), m->ans.len, c,
					   g, err, sizeof(err));
		if (e && !why[0])
			set_why(why, e == -EINVAL ? "" : paths[a], err);
	}
	util_strlcpy(c->provider, "gcp", sizeof(c->provider));
	imds_gcp_lifecycle(g, c);
	*st = why[0] ? ST_ERROR : ST_OK;
}

/*
 * Read the token, identity document and life cycle, within deadline
 * (CLOCK_MONOTONIC ms), each request within req_ms; publish the result.
 */
static void read_identity(struct imds *m, uint64_t deadline, unsigned req_ms)
{
	struct imds_gcp g = { 0 };
	struct jt_cloud c = { 0 };
	enum imds_state st = ST_ERROR;
	char err[WHY_MAX] = "", why[WHY_MAX] = "";
	bool news, first;
	long status;
	int e;

	e = probe(&m->addr, left_ms(deadline, req_ms));
	if (e) {
		st = ST_ABSENT;
		set_why(why, "no connection", strerror(-e));
		goto publish;
	}
	if (!m->http) {
		struct jt_sink_config sc = { .url = m->url, .tls_verify = true,
					     .timeout_ms = IMDS_POLL_REQUEST_MS };

		e = http_client_new(&sc, &m->http, err, sizeof(err));
		if (e) {
			set_why(why, "", err);
			goto publish;
		}
	}
	if (m->gcp) {
		read_gcp(m, deadline, req_ms, &c, &g, why, &st);
		if (st == ST_ABSENT)
			memset(&c, 0, sizeof(c));
		goto publish;
	}
	e = get_token(m, left_ms(deadline, req_ms), err, sizeof(err));
	if (e) {
		/*
		 * No answer, or not a token (an IMDS that is turned off says
		 * 403, so does a proxy off EC2 that takes every connection):
		 * no service for us.  A token that is not one is garbage.
		 */
		if (e != -EBADMSG && e != -EMSGSIZE)
			st = ST_ABSENT;
		set_why(why, "token", err);
		goto publish;
	}
	util_strlcpy(c.provider, "aws", sizeof(c.provider));
	e = get(m, PATH_IDENTITY, left_ms(deadline, req_ms), &status, err,
		sizeof(err));
	if (!e)
		e = imds_parse_identity(jbuf_str(&m->ans), m->ans.len, &c, err,
					sizeof(err));
	if (e)
		set_why(why, "identity document", err);
	e = get(m, PATH_LIFECYCLE, left_ms(deadline, req_ms), &status, err,
		sizeof(err));
	if (!e)
		e = imds_parse_lifecycle(jbuf_str(&m->ans), m->ans.len, &c, err,
					 sizeof(err));
	if (e && !why[0])
		set_why(why, "instance-life-cycle", err);
	st = why[0] ? ST_ERROR : ST_OK;
publish:
	pthread_mutex_lock(&m->lock);
	news = m->st != st || strcmp(m->why, why);
	m->st = st;
	memcpy(m->why, why, sizeof(m->why));
	m->cloud = c;
	memcpy(m->project, g.project, sizeof(m->project));
	/* no spot notice comes to an on-demand instance; GCE's preemption
	 * is not polled */
	m->polling = c.provider[0] && strcmp(c.lifecycle, "on-demand") &&
		     !m->gcp;
	first = !m->first_done;
	m->first_done = true;
	pthread_mutex_unlock(&m->lock);
	if (first)
		wake(m);
	if (!news)
		return;
	if (st == ST_OK)
		log_info("cloud: %s instance %s (%s, %s, %s)", c.provider,
			 c.instance_id, c.instance_type, c.zone, c.lifecycle);
	else if (st == ST_ERROR)
		log_warn("cloud: instance metadata at %s: %s", m->url, why);
	else
		log_info("cloud: no instance metadata at %s (%s): not on %s,"
			 " or its metadata service is off; asking again every"
			 " %u s", m->url, why, m->gcp ? "Compute Engine" :
			 "EC2", IMDS_RETRY_MS / 1000);
}

/* Ask spot/instance-action once; hand a new notice to the loop. */
static void poll_action(struct imds *m)
{
	struct imds_notice n = { 0 };
	char err[WHY_MAX] = "", why[WHY_MAX] = "";
	bool fresh = false;
	long status;
	int e;

	e = get(m, PATH_ACTION, IMDS_POLL_REQUEST_MS, &status, err,
		sizeof(err));
	if (status == 404)
		e = 1;			/* no notice: the usual answer */
	else if (e)
		set_why(why, "instance-action", err);
	else if (imds_parse_action(jbuf_str(&m->ans), m->ans.len, &n, err,
				   sizeof(err)))
		set_why(why, "instance-action", err);
	n.seen_ns = util_now_ns(CLOCK_REALTIME);
	pthread_mutex_lock(&m->lock);
	m->polls++;
	if (why[0]) {
		m->poll_errors++;
		memcpy(m->poll_why, why, sizeof(m->poll_why));
	} else if (!e && (!m->have_last || strcmp(n.action, m->last.action) ||
			  n.time_ns != m->last.time_ns)) {
		/* once per notice: AWS repeats it until it acts */
		m->last = n;
		m->have_last = true;
		m->pending = n;
		m->have_pending = true;
		m->notices++;
		fresh = true;
	}
	pthread_mutex_unlock(&m->lock);
	if (fresh)
		wake(m);
	if (why[0])
		log_debug("cloud: %s", why);
}

/* Wait ms (or until stop); true when asked to stop. */
static bool nap(struct imds *m, unsigned ms)
{
	uint64_t until = util_now_ns(CLOCK_MONOTONIC) + ms * 1000000ull;
	struct timespec ts = { .tv_sec = until / 1000000000ull,
			       .tv_nsec = until % 1000000000ull };
	bool stop;

	pthread_mutex_lock(&m->lock);
	while (!m->stop && util_now_ns(CLOCK_MONOTONIC) < until)
		pthread_cond_timedwait(&m->cond, &m->lock, &ts);
	stop = m->stop;
	pthread_mutex_unlock(&m->lock);
	return stop;
}

/* The thread: the identity at start, then the polls or the retries. */
static void *imds_main(void *arg)
{
	struct imds *m = arg;

	read_identity(m, mono_ms() + IMDS_START_BUDGET_MS,
		      IMDS_START_REQUEST_MS);
	for (;;) {
		bool reached, polling;

		pthread_mutex_lock(&m->lock);
		reached = m->cloud.provider[0];
		polling = m->polling;
		pthread_mutex_unlock(&m->lock);
		if (nap(m, polling ? m->poll_ms : IMDS_RETRY_MS))
			break;
		/* no token yet: one connect attempt a minute */
		if (!reached)
			read_identity(m, mono_ms() + IMDS_START_BUDGET_MS,
				      IMDS_START_REQUEST_MS);
		else if (polling)
			poll_action(m);
	}
	http_client_free(m->http);
	m->http = NULL;
	explicit_bzero(m->token_hdr, sizeof(m->token_hdr));
	return NULL;
}

/* ---- the event loop's side ---------------------------------------------------- */

/* Start the thread (see imds.h). */
int imds_start(const struct imds_opts *o, struct imds **out)
{
	pthread_condattr_t ca;
	struct imds *m;
	char why[128];
	int e;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->efd = -1;
	jbuf_init_wipe(&m->ans);	/* it holds the token at times */
	if (util_strlcpy(m->url, o->url, sizeof(m->url)) >= sizeof(m->url) ||
	    netaddr_url(m->url, &m->addr, why, sizeof(why))) {
		log_error("cloud.imds_url: %s", why);
		free(m);
		return -EINVAL;
	}
	m->poll_ms = o->poll_ms ? o->poll_ms : 5000;
	m->gcp = o->gcp;
	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->efd < 0) {
		e = -errno;
		free(m);
		return e;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_condattr_destroy(&ca);
	e = util_thread_start(&m->thread, imds_main, m);
	if (e) {
		imds_stop(m);
		return e;
	}
	m->started = true;
	*out = m;
	return 0;
}

/* Stop the thread and free (see imds.h). */
void imds_stop(struct imds *m)
{
	if (!m)
		return;
	if (m->started) {
		pthread_mutex_lock(&m->lock);
		m->stop = true;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
	}
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	if (m->efd >= 0)
		close(m->efd);
	jbuf_free(&m->ans);
	free(m);
}

/* The eventfd the loop watches. */
int imds_fd(const struct imds *m)
{
	return m ? m->efd : -1;
}

/* The cloud facts known now (see imds.h). */
void imds_identity(struct imds *m, struct jt_cloud *out)
{
	memset(out, 0, sizeof(*out));
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	*out = m->cloud;
	pthread_mutex_unlock(&m->lock);
}

/* Is the read at start over? */
bool imds_identity_done(struct imds *m)
{
	bool done;

	if (!m)
		return true;
	pthread_mutex_lock(&m->lock);
	done = m->first_done;
	pthread_mutex_unlock(&m->lock);
	return done;
}

/* The next new notice (see imds.h). */
bool imds_take_notice(struct imds *m, struct imds_notice *n)
{
	uint64_t v;
	bool got;

	if (!m)
		return false;
	if (read(m->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_debug("cloud: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&m->lock);
	got = m->have_pending;
	if (got)
		*n = m->pending;
	m->have_pending = false;
	pthread_mutex_unlock(&m->lock);
	return got;
}

/* Is the service answering garbage (see imds.h)? */
bool imds_failing(struct imds *m, char *why, size_t len)
{
	bool bad;

	if (!m)
		return false;
	pthread_mutex_lock(&m->lock);
	bad = m->st == ST_ERROR;
	if (bad)
		snprintf(why, len, "%s", m->why);
	pthread_mutex_unlock(&m->lock);
	return bad;
}

/* Status lines (see imds.h). */
void imds_status(struct imds *m, FILE *out)
{
	static const char *const names[] = {
		[ST_PENDING] = "pending", [ST_OK] = "ok",
		[ST_ABSENT] = "absent", [ST_ERROR] = "error",
	};
	struct jt_cloud c;

	if (!m) {
		fprintf(out, "cloud.imds: off (cloud.imds = \"off\")\n");
		return;
	}
	pthread_mutex_lock(&m->lock);
	c = m->cloud;
	fprintf(out, "cloud.imds: %s%s%s\n", names[m->st], m->why[0] ? ": " : "",
		m->why);
	fprintf(out, "cloud.imds_url: %s\n", m->url);
	fprintf(out, "cloud.provider: %s\n", m->gcp ? "gcp" : "aws");
	if (m->project[0])
		fprintf(out, "cloud.project: %s\n", m->project);
	if (c.provider[0])
		fprintf(out, "cloud.instance: %s %s %s %s %s\n", c.provider,
			c.instance_id[0] ? c.instance_id : "-",
			c.instance_type[0] ? c.instance_type : "-",
			c.zone[0] ? c.zone : "-",
			c.lifecycle[0] ? c.lifecycle : "-");
	if (m->polling)
		fprintf(out, "cloud.spot_poll: every %u.%03u s\n",
			m->poll_ms / 1000, m->poll_ms % 1000);
	else
		fprintf(out, "cloud.spot_poll: off (%s)\n",
			m->gcp ? "Compute Engine: not polled" :
			c.provider[0] ? "on-demand instance" : "no IMDS");
	fprintf(out, "cloud.spot_polls: %" PRIu64 "\n", m->polls);
	fprintf(out, "cloud.spot_notices: %" PRIu64 "\n", m->notices);
	fprintf(out, "cloud.spot_errors: %" PRIu64 "\n", m->poll_errors);
	fprintf(out, "cloud.spot_last_error: %s\n",
		m->poll_why[0] ? m->poll_why : "none");
	pthread_mutex_unlock(&m->lock);
}
