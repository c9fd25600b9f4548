/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decode.h - turn raw ring-buffer and iterator bytes into checked events.
 * Nothing from the kernel is trusted blindly: sizes are checked, strings
 * are bounded and NUL-terminated before use.
 */
#ifndef JOBTRACE_DECODE_H
#define JOBTRACE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

union jt_event {
	struct jt_ev_hdr hdr;
	struct jt_ev_fork fork;
	struct jt_ev_exec exec;
	struct jt_ev_exit exit;
	struct jt_ev_oom oom;
	struct jt_ev_fopen fopen;
	struct jt_ev_fclose fclose;
};

/*
 * Copy one ring-buffer record of len bytes into *ev after checking its type
 * and size; strings are forced NUL-terminated and the exec lengths clamped
 * to their arrays.  Returns the event type, or -EINVAL (unknown type) /
 * -EMSGSIZE (wrong size).
 */
int decode_event(const void *data, size_t len, union jt_event *ev);

/* Decoded wait(2) status. */
struct jt_exit_status {
	int code;		/* exit code, or -1 when killed by a signal */
	int signal;		/* terminating signal, 0 for a normal exit */
	int core_dumped;
};
/* Split a wait(2) status into code/signal/core. */
void decode_exit_status(uint32_t status, struct jt_exit_status *out);

/*
 * Split CPU time like the kernel's cputime_adjust(): the precise runtime is
 * divided in the ratio of the tick-sampled utime:stime.  Seconds out.
 */
void decode_cpu_split(uint64_t runtime_ns, uint64_t utime_ns,
		      uint64_t stime_ns, double *user_s, double *sys_s);

/*
 * Iterate over the jt_sample records in buf (len bytes, as read from the
 * task iterator).  Returns the number of whole records; a trailing partial
 * record is ignored and reported through *partial (may be NULL).
 */
size_t decode_samples(const void *buf, size_t len,
		      const struct jt_sample **first, size_t *partial);

/*
 * Copy argv bytes (NUL-separated, possibly without a final NUL) into a
 * fresh malloc'd buffer that always ends in NUL; returns NULL on ENOMEM.
 * *argc_out gets the number of arguments (may be NULL).
 */
char *decode_argv_dup(const char *argv, size_t len, size_t *argc_out);

#endif
