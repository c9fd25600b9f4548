// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * decode.c - turn raw ring-buffer and iterator bytes into checked events.
 *
 * Nothing from the kernel is trusted blindly: a record must have exactly the
 * size of its type (an exec record: its fixed part plus the argv bytes it
 * says it carries), every string is NUL-terminated before use and every
 * length is clamped to its array.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

/* 128-bit products keep runtime * ticks exact (64-bit targets only). */
__extension__ typedef unsigned __int128 u128;

/* Size a record of this type must have, 0 for an unknown type. */
static size_t event_size(uint32_t type)
{
	switch (type) {
	case JT_EV_FORK:
		return sizeof(struct jt_ev_fork);
	case JT_EV_EXEC:
		return sizeof(struct jt_ev_exec);
	case JT_EV_EXIT:
		return sizeof(struct jt_ev_exit);
	case JT_EV_OOM:
		return sizeof(struct jt_ev_oom);
	case JT_EV_FOPEN:
		return sizeof(struct jt_ev_fopen);
	case JT_EV_FCLOSE:
		return sizeof(struct jt_ev_fclose);
	default:
		return 0;
	}
}

/* Clamp a cgroup path length and terminate the path there. */
static void fix_cgroup(char *path, __u16 *len)
{
	if (*len > JT_CGROUP_LEN - 1)
		*len = JT_CGROUP_LEN - 1;
	path[*len] = '\0';
}

/* Make the strings and lengths of an exec event safe to use. */
static void fix_exec(struct jt_ev_exec *e)
{
	e->comm[JT_COMM_LEN - 1] = '\0';
	e->filename[JT_FILENAME_LEN - 1] = '\0';
	e->exe_name[JT_NAME_LEN - 1] = '\0';
	if (e->argv_len > JT_ARGV_LEN)
		e->argv_len = JT_ARGV_LEN;
	fix_cgroup(e->cg2, &e->cg2_len);
	fix_cgroup(e->cg1, &e->cg1_len);
}

/*
 * Copy one ring-buffer record of len bytes into *ev after checking its type
 * and size; strings are forced NUL-terminated and the exec lengths clamped
 * to their arrays.  Returns the event type, or -EINVAL (unknown type) /
 * -EMSGSIZE (wrong size).
 */
int decode_event(const void *data, size_t len, union jt_event *ev)
{
	uint32_t type;
	size_t want;

	if (!data || !ev)
		return -EINVAL;
	if (len < sizeof(type))
		return -EMSGSIZE;	/* too short to even carry a type */
	memcpy(&type, data, sizeof(type));	/* data may be unaligned */
	want = event_size(type);
	if (!want)
		return -EINVAL;
	if (type == JT_EV_EXEC) {
		__u16 argv_len;

		if (len < JT_EXEC_FIXED_SIZE || len > want)
			return -EMSGSIZE;
		memcpy(&argv_len, (const char *)data +
		       offsetof(struct jt_ev_exec, argv_len), sizeof(argv_len));
		if (argv_len != len - JT_EXEC_FIXED_SIZE)
			return -EMSGSIZE;
	} else if (len != want) {
		return -EMSGSIZE;
	}
	memcpy(ev, data, len);
	switch (type) {
	case JT_EV_FORK:
		ev->fork.comm[JT_COMM_LEN - 1] = '\0';
		ev->fork.parent_title[JT_TITLE_LEN - 1] = '\0';
		break;
	case JT_EV_EXEC:
		fix_exec(&ev->exec);
		break;
	case JT_EV_EXIT:
		ev->exit.comm[JT_COMM_LEN - 1] = '\0';
		if (ev->exit.memcg_levels > JT_MEMCG_LEVELS)
			ev->exit.memcg_levels = JT_MEMCG_LEVELS;
		break;
	case JT_EV_OOM:
		ev->oom.comm[JT_COMM_LEN - 1] = '\0';
		break;
	case JT_EV_FOPEN:
		/* the path ends at its length, never past its array */
		if (ev->fopen.path_len > JT_PATH_LEN - 1)
			ev->fopen.path_len = JT_PATH_LEN - 1;
		ev->fopen.path[ev->fopen.path_len] = '\0';
		ev->fopen.path_len = (__u32)strlen(ev->fopen.path);
		break;
	}
	return (int)type;
}

/*
 * Split a wait(2) status into code/signal/core.  A dead task's status is
 * never "stopped", so anything that is not a normal exit is a signal.
 */
void decode_exit_status(uint32_t status, struct jt_exit_status *out)
{
	if (!out)
		return;
	if ((status & 0x7f) == 0) {
		out->code = (int)((status >> 8) & 0xff);
		out->signal = 0;
		out->core_dumped = 0;
	} else {
		out->code = -1;
		out->signal = (int)(status & 0x7f);
		out->core_dumped = (status & 0x80) ? 1 : 0;
	}
}

/*
 * Split CPU time like the kernel's cputime_adjust(): the precise runtime is
 * divided in the ratio of the tick-sampled utime:stime.  Seconds out.
 * As in the kernel, no ticks at all (or no system ticks) gives everything
 * to user time, and no user ticks gives everything to system time.
 */
void decode_cpu_split(uint64_t runtime_ns, uint64_t utime_ns,
		      uint64_t stime_ns, double *user_s, double *sys_s)
{
	uint64_t utime, stime;

	if (stime_ns == 0) {
		utime = runtime_ns;
		stime = 0;
	} else if (utime_ns == 0) {
		utime = 0;
		stime = runtime_ns;
	} else {
		u128 total = (u128)stime_ns + utime_ns;

		/* stime_ns < total, so the quotient is < runtime_ns */
		stime = (uint64_t)((u128)stime_ns * runtime_ns / total);
		utime = runtime_ns - stime;
	}
	if (user_s)
		*user_s = (double)utime / 1e9;
	if (sys_s)
		*sys_s = (double)stime / 1e9;
}

/*
 * Iterate over the jt_sample records in buf (len bytes, as read from the
 * task iterator).  Returns the number of whole records; a trailing partial
 * record is ignored and reported through *partial (may be NULL).
 * buf must be aligned for struct jt_sample (any malloc'd buffer is); a
 * misaligned buffer is a caller bug and yields no records, all partial.
 */
size_t decode_samples(const void *buf, size_t len,
		      const struct jt_sample **first, size_t *partial)
{
	size_t nr = 0, rest = len;

	if (buf && (uintptr_t)buf % _Alignof(struct jt_sample) == 0) {
		nr = len / sizeof(struct jt_sample);
		rest = len % sizeof(struct jt_sample);
	}
	if (!buf)
		rest = 0;
	if (first)
		*first = nr ? (const struct jt_sample *)buf : NULL;
	if (partial)
		*partial = rest;
	return nr;
}

/*
 * Copy argv bytes (NUL-separated, possibly without a final NUL) into a
 * fresh malloc'd buffer that always ends in NUL; returns NULL on ENOMEM.
 * *argc_out gets the number of arguments (may be NULL): every NUL ends one
 * argument (so empty arguments count), and bytes after the last NUL are one
 * more, truncated, argument.  NULL argv is taken as empty.
 */
char *decode_argv_dup(const char *argv, size_t len, size_t *argc_out)
{
	size_t argc = 0, i;
	char *out;

	if (!argv)
		len = 0;
	if (len == SIZE_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	out = malloc(len + 1);
	if (!out)
		return NULL;
	if (len)
		memcpy(out, argv, len);
	out[len] = '\0';
	for (i = 0; i < len; i++)
		if (out[i] == '\0')
			argc++;
	if (len && out[len - 1] != '\0')
		argc++;
	if (argc_out)
		*argc_out = argc;
	return out;
}
