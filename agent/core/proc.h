/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.h - one observed process: what the kernel told us plus the job it
 * belongs to.  Shared by the process table, the record encoder and stores.
 */
#ifndef JOBTRACE_PROC_H
#define JOBTRACE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JT_STR_SMALL 64
#define JT_STR_MEDIUM 128
#define JT_PATH_MAX 4352	/* a file's path as a record keeps it */

/* Job fields of schema v1 ("" when unknown). */
struct jt_job {
	char scheduler[16];	/* "slurm", "awsbatch", ... */
	char id[JT_STR_SMALL];
	char step[JT_STR_SMALL];
	char run[JT_STR_MEDIUM];
	char pipeline[JT_STR_MEDIUM];
	char task[JT_STR_MEDIUM];
	char user[JT_STR_SMALL];
	char account[JT_STR_SMALL];
	char cost_center[JT_STR_SMALL];
};

/* Where a process's time went besides the CPU (record member wait). */
struct jt_waits {
	double run_queue_s;	/* runnable, waiting for a CPU */
	double reclaim_s;	/* direct reclaim */
	double thrashing_s;
	double swapin_s;
	double compact_s;
	double net_s;		/* asleep in a network system call */
	double children_s;	/* asleep in wait4/waitid */
	uint64_t nvcsw;		/* voluntary context switches */
	uint64_t nivcsw;	/* involuntary */
};

/* Cumulative counters of a process (exit totals or a live sample). */
struct jt_counters {
	double cpu_user_s;
	double cpu_sys_s;
	uint64_t peak_rss_bytes;	/* program's own high-water mark */
	uint64_t maxrss_kernel_bytes;	/* kernel's signal->maxrss */
	uint64_t rss_bytes;		/* current (samples only) */
	uint64_t read_bytes;
	uint64_t write_bytes;		/* dirtied by this process */
	uint64_t cancelled_write_bytes;	/* its truncates/deletes took back */
	uint64_t rchar;
	uint64_t wchar;
	double blkio_delay_s;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	struct jt_waits w;
};

/* What signals.c follows of a process (zero at its start). */
struct jt_sigstate {
	uint64_t progress_ns;		/* its counters last moved, 0: never
					 * sampled (boottime) */
	bool stalled;			/* a stall signal is out */
	bool io_bound;			/* in an io_bound episode */
	uint64_t io_t0_ns;		/* the io window's start, 0: none */
	double io_delay0_s;		/* blkio delay then */
	unsigned child_gen;		/* the last pass that saw a live child */
	bool cpu_starved;		/* in a cpu_starved episode */
	bool mem_pressure;		/* in a memory_pressure episode */
	uint64_t wait_t0_ns;		/* the wait window's start, 0: none */
	double run_queue0_s;		/* run-queue wait then */
	double mem_wait0_s;		/* reclaim + thrashing + swap-in then */
	bool net_wait;			/* in a net_wait episode */
	double net0_s;			/* network wait then */
};

/* How a file was opened (struct jt_file.flags), over all its opens; the
 * record's names are record.c's, in this order. */
#define JT_FF_READ	0x01
#define JT_FF_WRITE	0x02
#define JT_FF_CREATE	0x04
#define JT_FF_APPEND	0x08
#define JT_FF_TRUNCATE	0x10
#define JT_FF_DIRECTORY	0x20
#define JT_FF_DIRECT	0x40
#define JT_FF_ALL	0x7f

/* One file of a process's files, as its record lists it. */
struct jt_file {
	char *path;			/* malloc'd: what the rules kept */
	uint32_t flags;			/* JT_FF_* */
	uint64_t opens;
	uint64_t read_bytes;
	uint64_t write_bytes;
	uint64_t size_bytes;		/* when size_known */
	bool size_known;
	bool mmap;			/* mapped: bytes through it not known */
	bool deleted;			/* unlinked while open, gone at the end */
};

/* What files_rest and files_nonregular count. */
struct jt_files_count {
	uint64_t count;			/* rest: files; nonregular: pipes */
	uint64_t opens;			/* rest: opens; nonregular: sockets */
	uint64_t read_bytes;
	uint64_t write_bytes;
};

/* The files a process opened (files.h keeps it). */
struct jt_files {
	struct jt_file *v;		/* malloc'd, n used of cap */
	size_t n, cap;
	struct jt_files_count rest;	/* count, opens, bytes */
	struct jt_files_count nonreg;	/* pipes, sockets, bytes */
};

/* How far along a running process is: its largest input (samples). */
struct jt_progress {
	bool set;
	char path[256];			/* as the rules keep it */
	uint64_t offset_bytes;
	uint64_t size_bytes;
	unsigned gen;			/* the sample pass that found it, 0:
					 * none (procfiles_progress) */
	unsigned child_gen;		/* the last pass that saw a live child
					 * (one may read what it has open) */
};

/* Process lifetime state bits (struct jt_proc.state). */
#define JT_PID_MAX 4194304	/* the kernel's PID_MAX_LIMIT: the largest pid */

#define JT_PS_EXECED 0x1	/* exe/argv come from an exec event */
#define JT_PS_EXITED 0x2	/* exit totals are final */
#define JT_PS_EXE_TRUNC 0x4	/* the kernel cut exe's path */
#define JT_PS_ARGV_TRUNC 0x8	/* argv was longer than captured */
#define JT_PS_NO_FORK 0x10	/* fork event missing (lost or before start) */
#define JT_PS_EXIT_LOST 0x20	/* gone without an exit event */
#define JT_PS_EXCLUDED 0x40	/* rules excluded it: never a record */
#define JT_PS_EXCL_TREE 0x80	/* ... and its descendants */
#define JT_PS_EXE_SYSTEM 0x100	/* exe names a file only root could put
				 * there (exetrust.h): the rules' p.exe_system */
#define JT_PS_EXE_CHECK 0x200	/* exe is a script's, or read from /proc:
				 * checked in user space if a rule asks */
#define JT_PS_IN_CT 0x400	/* counted as a process of its container */
#define JT_PS_YOUNG_DUE 0x800	/* a pass was due for its first sample */

struct files_raw;

struct jt_proc {
	/* identity: (pid, start_ns) never repeats on a boot */
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;		/* CLOCK_BOOTTIME ns */
	uint64_t parent_start_ns;
	uint64_t end_ns;		/* CLOCK_BOOTTIME ns, 0 while running */
	uint32_t uid;
	uint32_t state;			/* JT_PS_* */

	char comm[16];
	char *exe;			/* malloc'd, NULL if unknown */
	char *argv;			/* malloc'd NUL-separated, argv_len bytes */
	size_t argv_len;
	char *cgroup;			/* malloc'd, NULL if unknown */
	char container[JT_STR_MEDIUM];	/* "runtime:id" or "" */
	struct jt_job job;
	char tool_name[JT_STR_SMALL];
	char tool_category[32];
	char tool_version[32];

	/* exit */
	int exit_code;			/* -1 when killed by a signal */
	int exit_signal;		/* 0 when exited normally */
	bool core_dumped;
	bool oom_killed;

	/* 1 + levels from its memory cgroup up to its job's (step's) own
	 * memory cgroup; 0 when the job has none there */
	uint8_t memcg_job_up;
	uint8_t memcg_step_up;

	struct jt_counters c;		/* totals at exit, latest sample before */
	uint64_t sample_ns;		/* when c was last sampled (boottime) */
	struct jt_counters prev;	/* previous sample, for rates */
	uint64_t prev_sample_ns;
	uint64_t last_seen_ns;		/* last event or sample (boottime) */
	unsigned sample_gen;		/* iterator pass that last saw it */
	uint32_t gen;			/* bumped when exe, argv, comm or the
					 * tool change (the rules' ancestor cache) */
	struct jt_sigstate sig;		/* signals.c's */
	struct files_raw *fraw;		/* files.h: what it opened so far,
					 * NULL: none (or not recorded) */
	struct jt_files *files;		/* the record's, at its end; NULL:
					 * files not recorded (null) */
	struct jt_progress progress;	/* the latest sample's */
};

#endif
