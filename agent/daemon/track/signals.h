/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * signals.h - what went wrong in a job, live: stall, io_bound,
 * slower_than_usual and memory_near_limit `signal` records.
 *
 * - stall: a process of a job whose CPU time, I/O counters (rchar, wchar,
 *   read_bytes, write_bytes) and network bytes have not moved for
 *   signals.stall_after, and no live child process (a parent waiting for
 *   its child is not stalled).  One record when that is reached (phase start,
 *   with the kernel's wait state of the process read then, for it alone,
 *   from /proc/PID/stat and /proc/PID/wchan), one when a counter moves
 *   again or the process exits (phase end).
 * - io_bound: a process whose block-I/O delay (delay accounting, summed
 *   over its threads) over one window of signals.io_window wall time is
 *   more than signals.io_above of it.  Windows follow one another (each
 *   starts where the last ended); an episode is a run of such windows, one
 *   record at its first.
 * - slower_than_usual: a job with a pipeline and a task (a workflow task
 *   instance) that ended after more than signals.slower_factor x the
 *   median duration of the earlier ends of the same pipeline and task
 *   (and user) the SQLite store holds, when it holds at least
 *   signals.slower_min_runs.
 *   Its evidence splits its processes' time (timesplit.h: the job's usage
 *   sums) against the median of each part over the earlier runs' end
 *   records' usage, and names the part that grew most.
 *   The store is read on a thread of its own, never on the event loop.
 * - cpu_starved, memory_pressure: a process whose run-queue wait (or
 *   memory waits: direct reclaim, thrashing, swap-in) over a window of
 *   signals.io_window is more than signals.cpu_starved_above (0.3)
 *   (signals.memory_pressure_above, 0.1) of it; cpu_starved names the
 *   other jobs running on the node then.  One record an episode.
 * - net_wait: the same with its network wait (wait.net_s: asleep in a
 *   network system call) above signals.net_wait_above (0.5).  A sleep is
 *   counted as it goes on (the sample pass adds a sleep not over yet).
 * - memory_near_limit: a running job with a registered memory cgroup
 *   whose charge (v2 memory.current, v1 memory.usage_in_bytes) reaches
 *   signals.memory_near of its limit (memory.max, memory.limit_in_bytes).
 *   The episode ends when the charge falls below memory_near - 0.05 of it.
 *
 * Cost per sample pass: two walks over the tracked processes (one marks
 * the parents of live processes, one compares counters the pass already
 * read; no system call per process), and two
 * small file reads per running job that has a cgroup.  The wait state is
 * read once per stall, the store once per ended task instance.
 *
 * The decisions (signals_proc, signals_memory, signals_slower) are pure:
 * times are the caller's (CLOCK_BOOTTIME in the agent), so unit tests
 * drive them.
 */
#ifndef JOBTRACE_SIGNALS_H
#define JOBTRACE_SIGNALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "proc.h"
#include "timesplit.h"

struct jt_host;
struct jt_jobinfo;

/* Thresholds (the configuration's signals section). */
struct sig_params {
	uint64_t stall_after_ns;	/* signals.stall_after */
	uint64_t io_window_ns;		/* signals.io_window */
	double io_above;		/* signals.io_above, a fraction */
	double slower_factor;		/* signals.slower_factor */
	unsigned slower_min_runs;	/* signals.slower_min_runs */
	double memory_near;		/* signals.memory_near, a fraction */
	double cpu_starved_above;	/* signals.cpu_starved_above */
	double memory_pressure_above;	/* signals.memory_pressure_above */
	double net_wait_above;		/* signals.net_wait_above */
};

enum sig_kind {
	SIG_STALL,
	SIG_STALL_END,
	SIG_IO_BOUND,
	SIG_SLOWER,
	SIG_MEMORY,
	SIG_CPU_STARVED,
	SIG_MEM_PRESSURE,
	SIG_NET_WAIT,
	SIG__N
};

/* What signals_proc found for one process at one sample. */
#define SIG_EV_STALL		0x1	/* a stall reached stall_after */
#define SIG_EV_STALL_END	0x2	/* a signalled stall is over */
#define SIG_EV_IO_BOUND		0x4	/* an io_bound episode began */
#define SIG_EV_CPU_STARVED	0x8	/* a cpu_starved episode began */
#define SIG_EV_MEM_PRESSURE	0x10	/* a memory_pressure episode began */
#define SIG_EV_NET_WAIT		0x20	/* a net_wait episode began */

/* The evidence of one signal (what applies to its kind). */
struct sig_out {
	enum sig_kind kind;
	uint64_t now_ns;		/* the record's time (boottime) */
	/* stall */
	double stalled_s;		/* without progress, so far or in all */
	uint64_t last_progress_ns;	/* boottime */
	char state[4];			/* /proc/PID/stat's state letter */
	char wchan[64];			/* /proc/PID/wchan, "" unknown */
	bool exited;			/* end: it exited (else resumed) */
	/* io_bound, cpu_starved, memory_pressure */
	double window_s, blkio_delay_s, fraction;
	double run_queue_s;		/* cpu_starved: over the window */
	double mem_wait_s;		/* memory_pressure: reclaim, thrashing,
					 * swap-in over the window */
	double net_wait_s;		/* net_wait: over the window */
	const char *jobs;		/* cpu_starved: the other jobs running
					 * then, "scheduler:id" NUL-separated */
	size_t jobs_len;
	/* slower_than_usual */
	double duration_s, median_s, factor;
	unsigned runs;
	struct sig_part {		/* where its time went (timesplit.h) */
		const char *name, *label;
		double s;		/* the run's */
		double median_s;	/* the earlier runs', < 0: not known */
	} parts[TIMESPLIT_MAX];
	size_t nparts;
	const char *grew;		/* the part that grew most, NULL: none */
	double grew_s;			/* by how much */
	/* memory_near_limit (fraction too) */
	uint64_t mem_bytes, limit_bytes;
	const char *mem_source;		/* cgroup_v1 or cgroup_v2 */
};

/*
 * One sample of a process at now_ns: c its counters now, prev at its
 * previous sample (have_prev false: none); waiting: it has a live child
 * process (a shell or workflow engine waiting for its tool is not stalled:
 * counted as progress).  Returns SIG_EV_* bits and fills
 * stall (SIG_EV_STALL, SIG_EV_STALL_END) and io (SIG_EV_IO_BOUND); a
 * stall's state and wchan are left for the caller.
 */
unsigned signals_proc(struct jt_sigstate *s, const struct sig_params *p,
		      uint64_t now_ns, const struct jt_counters *prev,
		      const struct jt_counters *c, bool have_prev, bool waiting,
		      struct sig_out *stall, struct sig_out *io);
/*
 * The waits of a process at now_ns, c its counters now: over windows of
 * signals.io_window (one after the other, like io_bound's), a run-queue
 * wait above cpu_starved_above of the window's wall begins a cpu_starved
 * episode (SIG_EV_CPU_STARVED, *cpu filled), reclaim + thrashing +
 * swap-in above memory_pressure_above a memory_pressure one
 * (SIG_EV_MEM_PRESSURE, *mem filled), network wait above net_wait_above
 * a net_wait one (SIG_EV_NET_WAIT, *net filled).  One record an episode.
 */
unsigned signals_wait(struct jt_sigstate *s, const struct sig_params *p,
		      uint64_t now_ns, const struct jt_counters *c,
		      struct sig_out *cpu, struct sig_out *mem,
		      struct sig_out *net);
/* The process is gone at now_ns: true, with *out filled, when it was in a
 * signalled stall (its end record, exited). */
bool signals_proc_gone(struct jt_sigstate *s, uint64_t now_ns,
		       struct sig_out *out);

/*
 * A job's memory cgroup charges mem of limit (UINT64_MAX or 0: no limit)
 * at now_ns; *near is its episode state.  True, with *out filled, when an
 * episode begins.
 */
bool signals_memory(bool *near, const struct sig_params *p, uint64_t now_ns,
		    uint64_t mem, uint64_t limit, struct sig_out *out);
/* Parse a cgroup memory file's number ("max": UINT64_MAX); 0 or -EINVAL. */
int signals_parse_mem(const char *buf, size_t len, uint64_t *out);
/*
 * Read the charge and limit of the memory cgroup folder dir (v2 or v1
 * file names): 0 or -errno.
 */
int signals_read_memcg(const char *dir, bool v2, uint64_t *mem,
		       uint64_t *limit);

/* Median of runs[0..n) (sorted in place); n > 0. */
double signals_median(double *runs, size_t n);
/*
 * A task instance of duration_s against the durations of its earlier runs
 * runs[0..n) (sorted in place): true, with *out filled, when it is slower
 * than usual.
 */
bool signals_slower(const struct sig_params *p, double duration_s,
		    double *runs, size_t n, struct sig_out *out);
/*
 * Where a slower run's time went (run: its processes' sums) against the
 * earlier runs' earlier[0..n) (a wall_s below 0: its record has none):
 * fills out's parts, each with its earlier median, and grew, the part
 * whose increase over its median is largest.  0 or -ENOMEM.
 */
int signals_slower_parts(const struct timesplit_in *run,
			 const struct timesplit_in *earlier, size_t n,
			 struct sig_out *out);
/*
 * The durations of the earlier ends of job's (user, pipeline, task) in
 * the SQLite store at path, but job's own (scheduler, id): at most max of
 * the latest into runs, and, when splits is not NULL, where their time
 * went (their usage objects; wall_s -1 when a record has none) into
 * splits.  Returns how many, or -errno.  Another user's runs never count:
 * pipeline and task names are the users' to choose, and runs of theirs
 * under another's names would set what "usual" is for that user.
 */
int signals_store_runs(const char *path, const struct jt_job *job,
		       double *runs, struct timesplit_in *splits, size_t max);
/* Read /proc/PID/stat's state and /proc/PID/wchan into out. */
void signals_wait_state(uint32_t pid, struct sig_out *out);

/*
 * Encode a signal as a `signal` record: job (NULL: none), batch, the
 * process p (NULL: none).  The record's id follows from its kind, the job
 * or process and its time.
 */
void signals_record(struct jbuf *b, const struct jt_host *h,
		    const struct sig_out *s, const struct jt_job *job,
		    const struct jt_batch *batch, const struct jt_proc *p);

/* The kind's name in records ("stall" for both stall phases). */
const char *signals_kind_name(enum sig_kind k);

/*
 * Slower-than-usual checks run on threads (at most SIG_SLOW_THREADS at
 * once, one per ended task instance); their results wait here for the
 * event loop.
 */
#define SIG_SLOW_THREADS 4

struct sig_slow_done {
	struct sig_out out;
	struct jt_job job;
	bool slower;
};

struct sig_slow;

/* A queue; NULL when out of memory. */
struct sig_slow *signals_slow_new(void);
/* Wait for running checks and free; accepts NULL. */
void signals_slow_free(struct sig_slow *q);
/*
 * Check the job ji that just ended against the store at path (a thread).
 * 0, -EBUSY (SIG_SLOW_THREADS running: skipped), -EINVAL (no pipeline or
 * task, no end) or -errno.
 */
int signals_slow_check(struct sig_slow *q, const char *path,
		       const struct sig_params *p, const struct jt_jobinfo *ji,
		       uint64_t now_ns);
/* Take one finished check (joined): true with *d filled. */
bool signals_slow_take(struct sig_slow *q, struct sig_slow_done *d);
/* Checks skipped because all threads were busy, or that failed. */
uint64_t signals_slow_skipped(const struct sig_slow *q);

/* The agent's `signals_*` status lines from the counts per kind. */
void signals_status(const uint64_t counts[SIG__N], uint64_t skipped,
		    FILE *out);

struct jobs;
struct proc_table;

/* The agent's side: where records go, what is counted. */
struct sig_agent {
	const struct jt_host *host;	/* borrowed */
	struct jobs *jobs;		/* borrowed */
	struct jbuf jb;
	void (*put)(void *ctx, struct jbuf *b);	/* one record for the spool */
	void *ctx;
	struct sig_slow *slow;		/* owned */
	uint64_t counts[SIG__N];
};

/* Set up (slow checks' queue, a buffer); 0 or -ENOMEM. */
int signals_agent_init(struct sig_agent *a);
/* Wait for slow checks, free; accepts a zeroed one. */
void signals_agent_fini(struct sig_agent *a);
/*
 * After the sample pass gen: stall and io_bound for every live process of
 * a job it saw, memory_near_limit for every running job with a cgroup
 * (memory controller on v2 when v2), and the finished slow checks.
 */
void signals_agent_pass(struct sig_agent *a, const struct sig_params *p,
			struct proc_table *procs, unsigned gen, bool v2);
/* Process p is gone at now_ns (boottime): its stall's end. */
void signals_agent_gone(struct sig_agent *a, struct jt_proc *p,
			uint64_t now_ns);
/* Job ji ended: check it against its earlier runs in the store at path
 * (NULL: no store, no check). */
void signals_agent_job_end(struct sig_agent *a, const struct sig_params *p,
			   const struct jt_jobinfo *ji, const char *path,
			   uint64_t now_ns);
/* Emit the finished slow checks. */
void signals_agent_poll(struct sig_agent *a);

#endif
