// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c - leveled logging to stderr or syslog. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static int to_syslog;
static enum log_level cur_level = LOG_LVL_INFO;
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_error[512];	/* NUL at the end stays from zero init */

/* Set up logging: ident for syslog, use_syslog chooses the target. */
void log_init(const char *ident, int use_syslog, enum log_level level)
{
	to_syslog = use_syslog;
	cur_level = level;
	if (to_syslog)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* Change the verbosity at run time. */
void log_set_level(enum log_level level)
{
	cur_level = level;
}

/* Current verbosity. */
enum log_level log_get_level(void)
{
	return cur_level;
}

/* Parse a level name. */
int log_level_parse(const char *s, enum log_level *out)
{
	static const char *names[] = { "error", "warn", "info", "debug" };

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Format and emit one message at a level. */
void log_vmsg(enum log_level lvl, const char *fmt, va_list ap)
{
	static const char *tags[] = { "error", "warning", "info", "debug" };
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (lvl == LOG_LVL_ERROR) {
		/* sink threads log too */
		pthread_mutex_lock(&last_lock);
		memcpy(last_error, buf, sizeof(last_error) - 1);
		pthread_mutex_unlock(&last_lock);
	}
	if (lvl > cur_level)
		return;
	if (to_syslog) {
		syslog(prio[lvl], "%s", buf);
		return;
	}
	fprintf(stderr, "jobtrace: %s: %s\n", tags[lvl], buf);
}

/* Emit one message at a level. */
void log_msg(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lvl, fmt, ap);
	va_end(ap);
}

/* Last error message logged. */
const char *log_last_error(void)
{
	return last_error;
}
