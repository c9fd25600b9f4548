/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log.h - leveled logging to stderr or syslog. */
#ifndef JOBTRACE_LOG_H
#define JOBTRACE_LOG_H

#include <stdarg.h>

enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Set up logging: ident for syslog, use_syslog chooses the target. */
void log_init(const char *ident, int use_syslog, enum log_level level);
/* Change the verbosity at run time. */
void log_set_level(enum log_level level);
/* Current verbosity. */
enum log_level log_get_level(void);
/* Parse "error|warn|info|debug"; returns -EINVAL on anything else. */
int log_level_parse(const char *s, enum log_level *out);

void log_msg(enum log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level lvl, const char *fmt, va_list ap);

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/* Last error logged (for `jobtrace status`); never NULL. */
const char *log_last_error(void);

#endif
