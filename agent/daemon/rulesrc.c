// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rulesrc.c - the bundle sources of the rules and their fetcher thread
 * (rulesrc.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "rulesrc.h"
#include "rulesrc_ch.h"
#include "util.h"

/* ---- the https:// (and loopback http://) source ------------------------- */

/* A bundle's URL and its client. */
struct url_src {
	struct http_client *hc;
	char pub[512];			/* the URL as it may be shown */
};

/* The source of cfg->rules_source, a URL. */
static int url_open(const struct jt_config *cfg, void **ctx, char *err,
		    size_t errlen)
{
	struct jt_sink_config sc = { .url = cfg->rules_source,
				     .timeout_ms = RULESRC_TIMEOUT_MS,
				     .tls_verify = true };
	struct url_src *u = calloc(1, sizeof(*u));
	int ret;

	if (!u)
		return -ENOMEM;
	util_url_public(cfg->rules_source, u->pub, sizeof(u->pub));
	ret = http_global_init();
	if (!ret)
		ret = http_client_new(&sc, &u->hc, err, errlen);
	else
		util_seterr(err, errlen, "%s: libcurl cannot be loaded", u->pub);
	if (ret) {
		free(u);
		return ret;
	}
	*ctx = u;
	return 0;
}

/* GET the bundle with If-None-Match: have_tag (rulesrc_fetch_fn). */
static int url_fetch(void *ctx, const char *have_tag, struct jbuf *out,
		     char *tag, size_t taglen, char *err, size_t errlen)
{
	struct url_src *u = ctx;
	char inm[RULESRC_TAG_MAX + 32], why[512];
	const char *hdrs[2] = { NULL, NULL };
	struct http_req rq = { .method = "GET", .headers = hdrs,
			       .max_answer = RULEBUNDLE_MAX_BYTES,
			       .etag = tag, .etag_len = taglen };
	long status = 0;
	int ret;

	if (*have_tag) {
		snprintf(inm, sizeof(inm), "If-None-Match: %s", have_tag);
		hdrs[0] = inm;
	}
	ret = http_request(u->hc, &rq, out, &status, why, sizeof(why));
	if (status == 304)
		return 1;
	if (ret)
		util_seterr(err, errlen, "%s: %s", u->pub, why);
	return ret;
}

/* End a running fetch of a URL source (from another thread). */
static void url_cancel(void *ctx)
{
	struct url_src *u = ctx;

	http_client_cancel(u->hc);
}

/* Release a URL source. */
static void url_close(void *ctx)
{
	struct url_src *u = ctx;

	if (!u)
		return;
	http_client_free(u->hc);
	free(u);
}

/* The bundle sources, one row each. */
static const struct rulesrc_ops sources[] = {
	[RULESRC_URL] = { "url", url_open, url_fetch, url_close, url_cancel },
	[RULESRC_CLICKHOUSE] = { "clickhouse", rulesrc_clickhouse_open,
				 rulesrc_clickhouse_fetch,
				 rulesrc_clickhouse_close,
				 rulesrc_clickhouse_cancel },
};

/* The kind of source of a rules.source value. */
enum rulesrc_type rulesrc_type_of(const char *source)
{
	if (!strcmp(source, "clickhouse"))
		return RULESRC_CLICKHOUSE;
	if (!strncmp(source, "https://", 8) || !strncmp(source, "http://", 7))
		return RULESRC_URL;
	return RULESRC_FOLDER;
}

/* The row of a bundle source type. */
const struct rulesrc_ops *rulesrc_ops_of(enum rulesrc_type t)
{
	return t == RULESRC_FOLDER ? NULL : &sources[t];
}

/* ---- the bundles kept in STATE/rules ------------------------------------- */

/* STATE/rules/name into buf. */
static const char *state_path(char *buf, size_t len, const char *state,
			      const char *name)
{
	snprintf(buf, len, "%s/rules/%s", state, name);
	return buf;
}

/* Remove a folder of plain files (a bundle's extraction). */
static void remove_flat(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* Extract checked bundle b into STATE/rules/<sha256>/ (kept when there:
 * written by us from the same checked files), its path into dir. */
int rulesrc_install(const char *state, const struct rulebundle *b,
		    char *dir, size_t dirlen, char *err, size_t errlen)
{
	char tmp[PATH_MAX], name[96];
	static unsigned seq;
	struct stat st;
	int ret;

	snprintf(name, sizeof(name), "%s", b->sha256);
	state_path(dir, dirlen, state, name);
	if (!lstat(dir, &st) && S_ISDIR(st.st_mode))
		return 0;
	snprintf(name, sizeof(name), "%.16s.%d.%u.tmp", b->sha256, (int)getpid(),
		 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	state_path(tmp, sizeof(tmp), state, name);
	ret = rulebundle_extract(b, tmp, err, errlen);
	if (ret)
		return ret;
	if (rename(tmp, dir)) {
		ret = -errno;
		util_seterr(err, errlen, "%s: %s", dir, strerror(errno));
		remove_flat(tmp);
	}
	return ret;
}

/* Write len bytes at p to path through a temporary file and a rename. */
static int write_file(const char *path, const void *p, size_t len)
{
	char tmp[PATH_MAX];
	int fd, ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -errno;
	if (write(fd, p, len) != (ssize_t)len || fsync(fd))
		ret = errno ? -errno : -EIO;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/* The bundle b (its tar t) loaded: it becomes STATE/rules/current.tar,
 * tagged tag, the one a restarted agent starts with.  0 or -errno. */
int rulesrc_keep(const char *state, const struct jbuf *t, const char *tag)
{
	char path[PATH_MAX], line[RULESRC_TAG_MAX + 2];
	int ret;

	state_path(path, sizeof(path), state, "current.tar");
	ret = write_file(path, t->buf, t->len);
	if (ret)
		return ret;
	snprintf(line, sizeof(line), "%s\n", tag);
	state_path(path, sizeof(path), state, "current.tag");
	return write_file(path, line, strlen(line));
}

/* Read STATE/rules/name (at most max bytes) into b. */
static int read_state(const char *state, const char *name, size_t max,
		      struct jbuf *b)
{
	char path[PATH_MAX], *room;
	ssize_t n;
	int fd, ret = 0;

	state_path(path, sizeof(path), state, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	room = jbuf_room(b, max + 1);
	if (!room) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, room, max + 1);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n > max)
		ret = -EFBIG;
	else
		jbuf_added(b, n);
	close(fd);
	return ret;
}

/*
 * The last bundle that loaded (STATE/rules/current.tar), checked again
 * with cfg's key and installed: 0 with *out filled, -ENOENT when there is
 * none, -errno with err filled.
 */
int rulesrc_last_good(const struct jt_config *cfg, struct rulesrc_bundle *out,
		      char *err, size_t errlen)
{
	struct rulebundle b = { 0 };
	struct jbuf t, tag;
	char why[512];
	int ret;

	jbuf_init(&t);
	jbuf_init(&tag);
	memset(out, 0, sizeof(*out));
	ret = read_state(cfg->state_dir, "current.tar", RULEBUNDLE_MAX_BYTES, &t);
	if (ret) {
		if (ret != -ENOENT)
			util_seterr(err, errlen, "%s/rules/current.tar: %s",
				    cfg->state_dir, strerror(-ret));
		goto cleanup;
	}
	ret = rulebundle_open(t.buf, t.len, *cfg->rules_public_key ?
			      cfg->rules_public_key : NULL, &b, why, sizeof(why));
	if (ret) {
		util_seterr(err, errlen, "%s/rules/current.tar: %s",
			    cfg->state_dir, why);
		goto cleanup;
	}
	ret = rulesrc_install(cfg->state_dir, &b, out->dir, sizeof(out->dir),
			      err, errlen);
	if (ret)
		goto cleanup;
	if (!read_state(cfg->state_dir, "current.tag", RULESRC_TAG_MAX - 1, &tag))
		util_strlcpy(out->tag, jbuf_str(&tag), sizeof(out->tag));
	out->tag[strcspn(out->tag, "\n")] = '\0';
	memcpy(out->version, b.version, sizeof(out->version));
	memcpy(out->sha256, b.sha256, sizeof(out->sha256));
cleanup:
	rulebundle_free(&b);
	jbuf_free(&t);
	jbuf_free(&tag);
	return ret;
}

/* ---- the fetcher thread ---------------------------------------------------- */

struct rulesrc {
	const struct rulesrc_ops *ops;
	void *ctx;
	char state[PATH_MAX];
	char key[PATH_MAX];		/* "" none */
	uint64_t poll_ns;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* CLOCK_MONOTONIC: stop wakes it */
	bool stop;
	/* under mu */
	char have_tag[RULESRC_TAG_MAX];
	char have_sha[65];		/* the last bundle handed over */
	char loaded_sha[65];		/* the bundle in force */
	bool ready;
	struct rulesrc_bundle next;
	struct jbuf next_tar;		/* next's bytes, for rulesrc_keep */
	struct rulesrc_status st;
	unsigned seed;
};

/* A random wait of up to a tenth of the poll interval. */
static uint64_t jitter(struct rulesrc *s)
{
	uint64_t tenth = s->poll_ns / 10;

	return tenth ? (uint64_t)rand_r(&s->seed) * 1000003ull % tenth : 0;
}

/* Wait ns unless stopped: false when stopped. */
static bool wait_ns(struct rulesrc *s, uint64_t ns)
{
	struct timespec ts;
	uint64_t at;
	bool go;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	at = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec + ns;
	ts.tv_sec = at / 1000000000ull;
	ts.tv_nsec = at % 1000000000ull;
	pthread_mutex_lock(&s->mu);
	while (!s->stop &&
	       pthread_cond_timedwait(&s->cv, &s->mu, &ts) != ETIMEDOUT)
		;
	go = !s->stop;
	pthread_mutex_unlock(&s->mu);
	return go;
}

/* Note a failed poll: its error kept, counted. */
static void poll_failed(struct rulesrc *s, const char *err, const char *tag)
{
	pthread_mutex_lock(&s->mu);
	s->st.refused++;
	util_strlcpy(s->st.last_error, err, sizeof(s->st.last_error));
	if (tag)		/* this bundle is not asked for again */
		util_strlcpy(s->have_tag, tag, sizeof(s->have_tag));
	pthread_mutex_unlock(&s->mu);
	log_warn("rules: %s (the rules in force stay)", err);
}

/* A fetched bundle t (tagged tag): checked, installed, handed over. */
static void take_bundle(struct rulesrc *s, struct jbuf *t, const char *tag)
{
	struct rulebundle b = { 0 };
	char err[512], why[512], dir[PATH_MAX];
	bool same;

	if (rulebundle_open(t->buf, t->len, *s->key ? s->key : NULL, &b, why,
			    sizeof(why))) {
		snprintf(err, sizeof(err), "%s: %s", s->st.source, why);
		poll_failed(s, err, tag);
		goto cleanup;
	}
	pthread_mutex_lock(&s->mu);
	same = !strcmp(b.sha256, s->have_sha);
	if (same) {
		util_strlcpy(s->have_tag, tag, sizeof(s->have_tag));
		s->st.last_error[0] = '\0';
	}
	pthread_mutex_unlock(&s->mu);
	if (same)
		goto cleanup;
	if (rulesrc_install(s->state, &b, dir, sizeof(dir), why, sizeof(why))) {
		snprintf(err, sizeof(err), "%s: %s", s->st.source, why);
		poll_failed(s, err, NULL);
		goto cleanup;
	}
	pthread_mutex_lock(&s->mu);
	memset(&s->next, 0, sizeof(s->next));
	util_strlcpy(s->next.dir, dir, sizeof(s->next.dir));
	memcpy(s->next.version, b.version, sizeof(s->next.version));
	memcpy(s->next.sha256, b.sha256, sizeof(s->next.sha256));
	util_strlcpy(s->next.tag, tag, sizeof(s->next.tag));
	s->next.fetched_at = util_now_ns(CLOCK_REALTIME);
	jbuf_reset(&s->next_tar);
	jbuf_put(&s->next_tar, t->buf, t->len);
	s->ready = true;
	util_strlcpy(s->have_tag, tag, sizeof(s->have_tag));
	memcpy(s->have_sha, b.sha256, sizeof(s->have_sha));
	s->st.fetched++;
	s->st.last_fetch = s->next.fetched_at;
	s->st.last_error[0] = '\0';
	pthread_mutex_unlock(&s->mu);
	log_info("rules: %s: bundle %s (sha256 %.12s) fetched and checked",
		 s->st.source, b.version, b.sha256);
cleanup:
	rulebundle_free(&b);
}

/* True when name is a bundle's folder or a temporary one. */
static bool bundle_dir_name(const char *name)
{
	size_t n = strlen(name);

	return (n == 64 && strspn(name, "0123456789abcdef") == 64) ||
	       (n > 4 && !strcmp(name + n - 4, ".tmp") &&
		strspn(name, "0123456789abcdef") == 16);
}

/* Remove the bundles' folders but the one in force and the last one
 * handed over (only this thread makes them). */
static void prune(struct rulesrc *s)
{
	char dir[PATH_MAX], keep[2][65], path[PATH_MAX + 80];
	struct dirent *e;
	DIR *d;

	pthread_mutex_lock(&s->mu);
	memcpy(keep[0], s->have_sha, 65);
	memcpy(keep[1], s->loaded_sha, 65);
	pthread_mutex_unlock(&s->mu);
	d = opendir(state_path(dir, sizeof(dir), s->state, ""));
	if (!d)
		return;
	while ((e = readdir(d)))
		if (bundle_dir_name(e->d_name) && strcmp(e->d_name, keep[0]) &&
		    strcmp(e->d_name, keep[1])) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			remove_flat(path);
		}
	closedir(d);
}

/* The loop loaded the bundle sha256: its folder is kept. */
void rulesrc_loaded(struct rulesrc *s, const char *sha256)
{
	pthread_mutex_lock(&s->mu);
	util_strlcpy(s->loaded_sha, sha256, sizeof(s->loaded_sha));
	pthread_mutex_unlock(&s->mu);
}

/* One poll of the source. */
static void poll_once(struct rulesrc *s, struct jbuf *t)
{
	char have[RULESRC_TAG_MAX], tag[RULESRC_TAG_MAX] = "", err[512] = "";
	int ret;

	prune(s);
	pthread_mutex_lock(&s->mu);
	memcpy(have, s->have_tag, sizeof(have));
	pthread_mutex_unlock(&s->mu);
	jbuf_reset(t);
	ret = s->ops->fetch(s->ctx, have, t, tag, sizeof(tag), err, sizeof(err));
	pthread_mutex_lock(&s->mu);
	s->st.polls++;
	s->st.last_poll = util_now_ns(CLOCK_REALTIME);
	if (ret == 1)
		s->st.unchanged++;
	pthread_mutex_unlock(&s->mu);
	if (ret < 0)
		poll_failed(s, err, NULL);
	else if (ret == 0 && t->oom)
		poll_failed(s, "out of memory for the bundle", NULL);
	else if (ret == 0)
		take_bundle(s, t, tag);
}

/* The fetcher: a jitter, then a poll every poll_interval plus a jitter. */
static void *fetcher(void *arg)
{
	struct rulesrc *s = arg;
	struct jbuf t;

	jbuf_init(&t);
	if (wait_ns(s, jitter(s)))
		do
			poll_once(s, &t);
		while (wait_ns(s, s->poll_ns + jitter(s)));
	jbuf_free(&t);
	return NULL;
}

/* Start following cfg's bundle source. */
int rulesrc_start(const struct jt_config *cfg, const struct rulesrc_bundle *have,
		  struct rulesrc **out, char *err, size_t errlen)
{
	struct rulesrc *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	char dir[PATH_MAX];
	int ret;

	if (!s)
		return -ENOMEM;
	s->ops = rulesrc_ops_of(rulesrc_type_of(cfg->rules_source));
	util_strlcpy(s->state, cfg->state_dir, sizeof(s->state));
	util_strlcpy(s->key, cfg->rules_public_key, sizeof(s->key));
	util_url_public(cfg->rules_source, s->st.source, sizeof(s->st.source));
	s->poll_ns = cfg->rules_poll_ms * 1000000ull;
	s->seed = (unsigned)(util_now_ns(CLOCK_REALTIME) ^ getpid());
	if (have) {
		util_strlcpy(s->have_tag, have->tag, sizeof(s->have_tag));
		memcpy(s->have_sha, have->sha256, sizeof(s->have_sha));
		memcpy(s->loaded_sha, have->sha256, sizeof(s->loaded_sha));
	}
	jbuf_init(&s->next_tar);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	ret = util_mkdir_p(state_path(dir, sizeof(dir), s->state, ""), 0700);
	if (ret) {
		util_seterr(err, errlen, "%s: %s", dir, strerror(-ret));
		goto fail;
	}
	ret = s->ops ? s->ops->open(cfg, &s->ctx, err, errlen) : -EINVAL;
	if (ret)
		goto fail;
	ret = util_thread_start(&s->th, fetcher, s);
	if (ret) {
		util_seterr(err, errlen, "rules: cannot start the fetcher: %s",
			    strerror(-ret));
		goto fail;
	}
	s->started = true;
	*out = s;
	return 0;
fail:
	rulesrc_stop(s);
	return ret;
}

/* Hand a waiting bundle over to the loop; its tar into tar when not NULL. */
bool rulesrc_take(struct rulesrc *s, struct rulesrc_bundle *b, struct jbuf *tar)
{
	bool got;

	pthread_mutex_lock(&s->mu);
	got = s->ready;
	if (got) {
		*b = s->next;
		if (tar) {
			jbuf_reset(tar);
			jbuf_put(tar, s->next_tar.buf, s->next_tar.len);
		}
		s->ready = false;
	}
	pthread_mutex_unlock(&s->mu);
	return got;
}

/* Copy the source's status. */
void rulesrc_get_status(struct rulesrc *s, struct rulesrc_status *st)
{
	pthread_mutex_lock(&s->mu);
	*st = s->st;
	pthread_mutex_unlock(&s->mu);
}

/* Stop the thread and free. */
void rulesrc_stop(struct rulesrc *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->started && s->ops->cancel)
		s->ops->cancel(s->ctx);
	if (s->started)
		pthread_join(s->th, NULL);
	if (s->ops && s->ops->close)
		s->ops->close(s->ctx);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	jbuf_free(&s->next_tar);
	free(s);
}
