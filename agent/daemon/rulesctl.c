// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rulesctl.c - the rules loaded, watched and loaded again (rulesctl.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "log.h"
#include "rules.h"
#include "rulesctl.h"

/* Nothing loaded or watched yet. */
void rulesctl_init(struct rulesctl *rc, struct rules *rules, const char *dir)
{
	*rc = (struct rulesctl){ .rules = rules, .dir = dir, .fd = -1 };
}

/* Rebuild the rules from the folder; on failure the running rules stay. */
int rulesctl_reload(struct rulesctl *rc, char *err, size_t errlen)
{
	struct rules_stats st;
	bool was_builtin;
	int ret;

	rc->reload_at = 0;
	rules_get_stats(rc->rules, &st);
	was_builtin = st.builtin;
	ret = rules_load_dir(rc->rules, rc->dir, err, errlen);
	rc->failing = ret != 0;
	if (ret) {
		log_error("rules: %s (%s)", err,
			  !st.files ? "no rules are loaded: every argument is withheld"
			  : was_builtin ? "the built-in rules stay in force, every argument withheld"
					: "the previous rules stay in force");
		return ret;
	}
	rules_get_stats(rc->rules, &st);
	log_info("rules loaded from %s: %u files, %u rules, %u self-tests passed%s",
		 rc->dir, st.files, st.rules, st.selftests,
		 was_builtin ? "; the built-in rules no longer stand in, arguments are recorded again" : "");
	return 0;
}

/* Watch the rules folder so a saved file takes effect within a second. */
static void watch(struct rulesctl *rc)
{
	rc->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (rc->fd < 0 ||
	    inotify_add_watch(rc->fd, rc->dir,
			      IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
			      IN_DELETE | IN_CREATE | IN_ATTRIB) < 0)
		log_warn("cannot watch %s (%s): rules change on SIGHUP or `jobtrace reload` only",
			 rc->dir, strerror(errno));
}

/*
 * The rules at start: the folder's, or when they do not load (a syntax
 * error, a failing self-test), the built-in copies of the default rules
 * with every argument withheld, so that a broken file never switches
 * redaction off; the folder is loaded again when a file in it changes.
 */
void rulesctl_start(struct rulesctl *rc)
{
	char err[512], berr[512];

	if (rulesctl_reload(rc, err, sizeof(err))) {
		if (rules_load_builtin(rc->rules, berr, sizeof(berr)))
			log_error("rules: the built-in rules do not load either (%s): every "
				  "process is recorded under its program's name with its "
				  "arguments withheld until %s loads", berr, rc->dir);
		else
			log_warn("rules: %s did not load: the built-in default rules stand in and "
				 "every argument after the program's name is recorded as [REDACTED] "
				 "until it loads (a saved fix is loaded at once, or run `jobtrace reload`)",
				 rc->dir);
	}
	watch(rc);
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

/* A reload that is due. */
void rulesctl_tick(struct rulesctl *rc, uint64_t now)
{
	char err[512];

	if (rc->reload_at && now >= rc->reload_at)
		rulesctl_reload(rc, err, sizeof(err));
}

/* Stop watching. */
void rulesctl_fini(struct rulesctl *rc)
{
	if (rc->fd >= 0)
		close(rc->fd);
	rc->fd = -1;
}
