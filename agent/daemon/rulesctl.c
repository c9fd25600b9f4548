// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rulesctl.c - the rules loaded from their source, followed and loaded
 * again (rulesctl.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "rules.h"
#include "rulesctl.h"
#include "util.h"

/* Nothing loaded or watched yet. */
void rulesctl_init(struct rulesctl *rc, struct rules *rules, const char *dir)
{
	*rc = (struct rulesctl){ .rules = rules, .dir = dir, .fd = -1 };
}

/* Follow cfg's rules.source. */
void rulesctl_source(struct rulesctl *rc, const struct jt_config *cfg)
{
	rc->cfg = cfg;
	rc->type = rulesrc_type_of(cfg->rules_source);
	if (rc->type == RULESRC_FOLDER && *cfg->rules_source)
		rc->dir = cfg->rules_source;
	rc->poll_ns = cfg->rules_poll_ms * 1000000ull;
}

/* Load dir into the engine, logging what happened; the running rules stay
 * on failure. */
static int load(struct rulesctl *rc, const char *dir, const char *what,
		char *err, size_t errlen)
{
	struct rules_stats st;
	bool was_builtin;
	int ret;

	rc->reload_at = 0;
	rules_get_stats(rc->rules, &st);
	was_builtin = st.builtin;
	ret = rules_load_dir(rc->rules, dir, err, errlen);
	rc->failing = ret != 0;
	if (ret) {
		log_error("rules: %s%s (%s)", what, err,
			  !st.files ? "no rules are loaded: every argument is withheld"
			  : was_builtin ? "the built-in rules stay in force, every argument withheld"
					: "the previous rules stay in force");
		return ret;
	}
	rules_get_stats(rc->rules, &st);
	rc->loaded_at = util_now_ns(CLOCK_REALTIME);
	rc->changes++;
	log_info("rules loaded from %s%s: %u files, %u rules, %u self-tests passed%s",
		 what, dir, st.files, st.rules, st.selftests,
		 was_builtin ? "; the built-in rules no longer stand in, arguments are recorded again" : "");
	return 0;
}

/* Rebuild the rules from the folder (or the bundle in force). */
int rulesctl_reload(struct rulesctl *rc, char *err, size_t errlen)
{
	if (rc->type == RULESRC_FOLDER)
		return load(rc, rc->dir, "", err, errlen);
	if (!rc->cur.sha256[0]) {
		util_seterr(err, errlen, "no bundle from %s has loaded yet",
			    rc->cfg->rules_source);
		return -ENOENT;
	}
	return load(rc, rc->cur.dir, "", err, errlen);
}

/* A fold of the rule files' names, times, sizes and inodes: a change of
 * any is a new stamp (a folder that cannot be read: its errno). */
static uint64_t folder_stamp(const char *dir)
{
	struct dirent **names = NULL;
	uint64_t h = 1469598103934665603ull;
	int n = rules_dir_files(dir, &names), i;

	if (n < 0)
		return (uint64_t)-n;
	for (i = 0; i < n; i++) {
		struct stat st;
		uint64_t v[4] = { 0 };
		const unsigned char *p;
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (!stat(path, &st)) {
			v[0] = st.st_mtim.tv_sec * 1000000000ull + st.st_mtim.tv_nsec;
			v[1] = st.st_size;
			v[2] = st.st_ino;
			v[3] = st.st_ctim.tv_sec * 1000000000ull + st.st_ctim.tv_nsec;
		}
		for (p = (const unsigned char *)names[i]->d_name; *p; p++)
			h = (h ^ *p) * 1099511628211ull;
		for (p = (const unsigned char *)v; p < (const unsigned char *)(v + 4); p++)
			h = (h ^ *p) * 1099511628211ull;
		free(names[i]);
	}
	free(names);
	return h;
}

/*
 * Whether a folder on a file system of this type (statfs's f_type) is
 * local: one this node's kernel alone writes, whose stat costs no server
 * a request.  Any other (NFS, Lustre, GPFS, CIFS, Ceph, FUSE, a type not
 * named here) is polled every poll_interval only, so that a fleet's nodes
 * do not ask its servers several times a second.
 */
bool rulesctl_fs_local(long f_type)
{
	static const unsigned long local[] = {
		0xEF53,		/* ext2, ext3, ext4 */
		0x58465342,	/* xfs */
		0x9123683E,	/* btrfs */
		0x01021994,	/* tmpfs */
		0x858458F6,	/* ramfs */
		0x794C7630,	/* overlayfs (a container's root) */
		0x2FC12FC1,	/* zfs */
		0xF2F52010,	/* f2fs */
		0x73717368,	/* squashfs */
		0x3153464A,	/* jfs */
	};

	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((unsigned long)f_type == local[i])
			return true;
	return false;
}

/*
 * The interval of a polled folder (rules.inotify false): RULESCTL_LOCAL_POLL_NS
 * on a local file system, else (or when statfs fails: a folder not there
 * yet) poll_interval.  Asked again at every poll, so that a folder made
 * later, or a share mounted over it, changes the interval; a change is
 * logged.
 */
static void poll_choose(struct rulesctl *rc)
{
	uint64_t was = rc->poll_ns, ns = rc->cfg->rules_poll_ms * 1000000ull;
	struct statfs sf;
	int err = 0;

	if (statfs(rc->dir, &sf))
		err = errno;
	else if (rulesctl_fs_local(sf.f_type) && ns > RULESCTL_LOCAL_POLL_NS)
		ns = RULESCTL_LOCAL_POLL_NS;
	rc->poll_ns = ns;
	if (was == ns && rc->poll_told)
		return;
	rc->poll_told = true;
	if (err)
		log_warn("rules: cannot tell the file system of %s (%s): it is "
			 "polled every %g s (rules.poll_interval)", rc->dir,
			 strerror(err), ns / 1e9);
	else
		log_info("rules: %s followed by polling every %g s (%s)", rc->dir,
			 ns / 1e9, ns == RULESCTL_LOCAL_POLL_NS ? "a local file system" :
			 "a shared or unknown file system: rules.poll_interval");
}

/*
 * Follow the rules folder so that a saved file takes effect within a
 * second: with inotify when rules.inotify is true, else (the default) by
 * comparing its files every RULESCTL_LOCAL_POLL_NS when it is on a local
 * file system.  An inotify watch makes every read and write of every file
 * on that file system take fsnotify's slower path (about 30 ns a 4 KiB
 * read, bench/files-latest.txt) when nothing else watches it; a poll is a
 * stat of each rule file, four times a second, on the agent's own tick.
 */
static void watch(struct rulesctl *rc)
{
	if (rc->cfg && !rc->cfg->rules_inotify) {
		poll_choose(rc);
		return;
	}
	rc->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (rc->fd < 0 ||
	    inotify_add_watch(rc->fd, rc->dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
			      IN_DELETE | IN_CREATE | IN_ATTRIB) < 0)
		log_warn("cannot watch %s (%s): rules change %s", rc->dir,
			 strerror(errno), rc->poll_ns ?
			 "when polling sees it (rules.poll_interval)" :
			 "on SIGHUP or `jobtrace reload` only");
}

/* The built-in rules stand in: what failed is in err. */
static void builtin(struct rulesctl *rc, const char *what)
{
	char berr[512];

	if (rules_load_builtin(rc->rules, berr, sizeof(berr)))
		log_error("rules: the built-in rules do not load either (%s): every "
			  "process is recorded under its program's name with its "
			  "arguments withheld until %s loads", berr, what);
	else
		log_warn("rules: %s did not load: the built-in default rules stand in and "
			 "every argument after the program's name is recorded as [REDACTED] "
			 "until it loads%s", what, rc->type == RULESRC_FOLDER ?
			 " (a saved fix is loaded when the folder is next compared, or run `jobtrace reload`)" : "");
	rc->changes++;
}

/* At start with a bundle source: the last good bundle, then the fetcher. */
static void start_bundles(struct rulesctl *rc)
{
	char err[512] = "", pub[512];
	int ret;

	util_url_public(rc->cfg->rules_source, pub, sizeof(pub));
	ret = rulesrc_last_good(rc->cfg, &rc->cur, err, sizeof(err));
	if (!ret && !load(rc, rc->cur.dir, "the last good bundle kept in ", err,
			  sizeof(err))) {
		rc->from_state = true;
		log_info("rules: bundle %s (sha256 %.12s) kept from before, until %s answers",
			 rc->cur.version, rc->cur.sha256, pub);
	} else {
		if (ret != -ENOENT)
			log_error("rules: the last good bundle: %s", err);
		memset(&rc->cur, 0, sizeof(rc->cur));
		builtin(rc, pub);
	}
	ret = rulesrc_start(rc->cfg, rc->cur.sha256[0] ? &rc->cur : NULL,
			    &rc->src, err, sizeof(err));
	if (ret) {
		log_error("rules: %s: the rules in force stay until a restart", err);
		util_strlcpy(rc->load_error, err, sizeof(rc->load_error));
	}
}

/*
 * The rules at start: the folder's, or when they do not load (a syntax
 * error, a failing self-test), the built-in copies of the default rules
 * with every argument withheld, so that a broken file never switches
 * redaction off; the folder is loaded again when a file in it changes.
 */
void rulesctl_start(struct rulesctl *rc)
{
	char err[512];

	if (rc->type != RULESRC_FOLDER) {
		start_bundles(rc);
		return;
	}
	if (rulesctl_reload(rc, err, sizeof(err)))
		builtin(rc, rc->dir);
	rc->stamp = folder_stamp(rc->dir);
	watch(rc);
	rc->next_poll = util_now_ns(CLOCK_MONOTONIC) + rc->poll_ns;
}

/* A file in the rules folder changed: reload once things settle. */
void rulesctl_changed(struct rulesctl *rc, uint64_t now)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool relevant = false;
	ssize_t n;

	while ((n = read(rc->fd, buf, sizeof(buf))) > 0) {
		for (char *q = buf; q < buf + n;) {
			const struct inotify_event *ev = (const void *)q;
			size_t l = ev->len ? strlen(ev->name) : 0;

			/* editors' swap and backup files are not rules */
			if (l > 4 && strcmp(ev->name + l - 4, ".lua") == 0)
				relevant = true;
			q += sizeof(*ev) + ev->len;
		}
	}
	if (relevant)
		rc->reload_at = now + RULESCTL_SETTLE_NS;
}

/* Load a bundle the fetcher handed over; keep it when it loads. */
static void take_bundle(struct rulesctl *rc)
{
	struct rulesrc_bundle b;
	struct jbuf tar;
	char err[512], what[128];
	int ret;

	jbuf_init(&tar);
	if (!rulesrc_take(rc->src, &b, &tar))
		goto cleanup;
	snprintf(what, sizeof(what), "bundle %s (sha256 %.12s) in ", b.version,
		 b.sha256);
	if (load(rc, b.dir, what, err, sizeof(err))) {
		snprintf(rc->load_error, sizeof(rc->load_error),
			 "bundle %s (sha256 %.12s): %s", b.version, b.sha256, err);
		rc->changes++;	/* the error is news for the fleet too */
		goto cleanup;
	}
	rc->cur = b;
	rc->from_state = false;
	rc->load_error[0] = '\0';
	rulesrc_loaded(rc->src, b.sha256);
	ret = rulesrc_keep(rc->cfg->state_dir, &tar, b.tag);
	if (ret)
		log_warn("rules: cannot keep bundle %s in %s/rules (%s): a restart "
			 "starts with the previous one", b.version,
			 rc->cfg->state_dir, strerror(-ret));
cleanup:
	jbuf_free(&tar);
}

/* A reload that is due, a folder's poll, a bundle handed over. */
void rulesctl_tick(struct rulesctl *rc, uint64_t now)
{
	char err[512];
	bool poll, due;

	if (rc->src) {
		struct rulesrc_status st;

		take_bundle(rc);
		/* a refused bundle or a failing source is news for the fleet
		 * (a host record) when it starts and when it ends */
		rulesrc_get_status(rc->src, &st);
		if (strcmp(st.last_error, rc->fetch_error)) {
			memcpy(rc->fetch_error, st.last_error, sizeof(rc->fetch_error));
			rc->changes++;
		}
		return;
	}
	poll = rc->poll_ns && now >= rc->next_poll;
	due = rc->reload_at && now >= rc->reload_at;
	/* one look at the files a tick: a poll, or (polled only) the check
	 * that they stayed unchanged for the settle time before a load
	 * (inotify's IN_CLOSE_WRITE says a write ended, a poll cannot: a
	 * file still being written in place is not loaded cut short) */
	if (poll || (due && rc->fd < 0 && rc->poll_ns)) {
		uint64_t stamp = folder_stamp(rc->dir);

		if (poll) {
			if (rc->cfg && !rc->cfg->rules_inotify)
				poll_choose(rc);
			rc->next_poll = now + rc->poll_ns;
		}
		if (stamp != rc->stamp) {	/* the settle time from this change */
			rc->stamp = stamp;
			rc->reload_at = now + RULESCTL_SETTLE_NS;
			return;
		}
	}
	if (due)
		rulesctl_reload(rc, err, sizeof(err));
}

/* The error of the source now: the fetcher's, else the last load's. */
static void source_error(const struct rulesctl *rc, char *buf, size_t len)
{
	struct rulesrc_status st;
	struct rules_stats rs;

	buf[0] = '\0';
	if (rc->src) {
		rulesrc_get_status(rc->src, &st);
		util_strlcpy(buf, st.last_error, len);
	}
	if (!buf[0] && rc->type != RULESRC_FOLDER)
		util_strlcpy(buf, rc->load_error, len);
	if (!buf[0] && rc->type == RULESRC_FOLDER && rc->failing) {
		rules_get_stats(rc->rules, &rs);
		util_strlcpy(buf, rs.last_error, len);
	}
}

/* What a host record says of the rules in force. */
void rulesctl_host(const struct rulesctl *rc, struct rulesctl_host *h)
{
	struct rules_stats rs;

	memset(h, 0, sizeof(*h));
	rules_get_stats(rc->rules, &rs);
	if (rs.builtin)
		util_strlcpy(h->source_buf, RULES_BUILTIN_DIR, sizeof(h->source_buf));
	else if (rc->type == RULESRC_FOLDER)
		util_strlcpy(h->source_buf, rc->dir, sizeof(h->source_buf));
	else
		util_url_public(rc->cfg->rules_source, h->source_buf,
				sizeof(h->source_buf));
	h->source = h->source_buf;
	if (rc->type != RULESRC_FOLDER && rc->cur.sha256[0] && !rs.builtin) {
		h->version = rc->cur.version;
		h->sha256 = rc->cur.sha256;
	}
	source_error(rc, h->error_buf, sizeof(h->error_buf));
	h->error = h->error_buf[0] ? h->error_buf : NULL;
}

/* A CLOCK_REALTIME time in ns as RFC 3339 UTC, or "never". */
static const char *when(uint64_t ns, char *buf, size_t len)
{
	time_t t = ns / 1000000000ull;
	struct tm tm;

	if (!ns)
		return "never";
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	return buf;
}

/* The rules_source* lines of `jobtrace status`. */
void rulesctl_print(const struct rulesctl *rc, FILE *out)
{
	struct rulesctl_host h;
	struct rulesrc_status st = { 0 };
	char t1[32], t2[32];
	bool poll = rc->poll_ns != 0;

	rulesctl_host(rc, &h);
	if (rc->src)
		rulesrc_get_status(rc->src, &st);
	if (rc->type == RULESRC_FOLDER)
		fprintf(out, "rules_source: folder %s (%s%s)\n", rc->dir,
			rc->fd >= 0 ? "inotify, " : "", poll ?
			"polled" : "not polled");
	else
		fprintf(out, "rules_source: %s (bundles)\n",
			util_url_public(rc->cfg->rules_source, h.source_buf,
					sizeof(h.source_buf)));
	if (poll)
		fprintf(out, "rules_poll_interval: %g s\n", rc->poll_ns / 1e9);
	fprintf(out, "rules_version: %s\n", h.version ? h.version : "none (not a bundle)");
	fprintf(out, "rules_sha256: %s\n", h.sha256 ? h.sha256 : "none");
	if (rc->type != RULESRC_FOLDER) {
		fprintf(out, "rules_bundle_from: %s\n", !rc->cur.sha256[0] ? "none" :
			rc->from_state && !st.unchanged && !st.fetched ?
			"the state folder (the last good bundle; the source has not "
			"answered since the agent started)" : "the source");
		fprintf(out, "rules_fetched: %s\n", when(st.last_fetch, t1, sizeof(t1)));
		fprintf(out, "rules_polls: %llu, %llu unchanged, %llu fetched, %llu failed or refused; last %s\n",
			(unsigned long long)st.polls, (unsigned long long)st.unchanged,
			(unsigned long long)st.fetched, (unsigned long long)st.refused,
			when(st.last_poll, t2, sizeof(t2)));
	}
	fprintf(out, "rules_loaded: %s\n", when(rc->loaded_at, t1, sizeof(t1)));
	fprintf(out, "rules_source_error: %s\n", h.error ? h.error : "none");
}

/* Stop watching and fetching. */
void rulesctl_fini(struct rulesctl *rc)
{
	rulesrc_stop(rc->src);
	rc->src = NULL;
	if (rc->fd >= 0)
		close(rc->fd);
	rc->fd = -1;
}
