/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * schema.h - schema v1 records, described once.
 *
 * Every record type is a table of its members in the order the JSON has
 * them: key, type, whether it may be null, the column it becomes when
 * records are flattened into tables (nested names joined with '_': job.id
 * is job_id), and a doc line.  That one description drives the JSON writer
 * (schema_write), the columns of the SQLite store, the ClickHouse DDL and
 * row encoder (chschema.c) and the field tables of doc/records.md
 * (`jobtrace schema markdown`, checked by tests/unit/test_schema).
 *
 * The members are written as X-macro lists, one line a member:
 *
 *	X(SLOT, "key", TYPE, flags, "column", "column2", sub, "doc")
 *
 * SLOT names the member's value: a record is written from an array of
 * struct sv indexed by enum sf_slot (SF_SLOT).  A line can appear in
 * several record types (the job object is in process, sample, job and
 * signal records); it has one slot, so a value set once serves them all.
 * Adding a field is one line here plus setting its value where the record
 * is built.
 *
 * sub is SF_SUB(table) for an object (SFT_OBJ) or an array of objects
 * (SFT_OBJARR), else SF_NOSUB.  A doc line has no ';' (it becomes a
 * comment in SQL that clients split at semicolons).  column2 is a time's microseconds column (ClickHouse keeps a
 * DateTime in whole seconds) and a SFT_COUNTS's counts column.
 */
#ifndef JOBTRACE_SCHEMA_H
#define JOBTRACE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"

enum sf_type {
	SFT_OBJ,		/* nested object: sub holds its members */
	SFT_STR,		/* string */
	SFT_BOOL,	/* true or false */
	SFT_U8,		/* unsigned integers of that width */
	SFT_U32,
	SFT_U64,
	SFT_I32,		/* signed 32-bit integer */
	SFT_F64,		/* seconds and other fractions: up to 6 decimals */
	SFT_TIME,	/* RFC 3339 UTC with microseconds */
	SFT_STRARR,	/* array of strings */
	SFT_COUNTS,	/* object {name: count}, names not known in advance */
	SFT_OBJARR,	/* array of objects: sub describes one element */
	SFT_RECTIME,	/* no member: the record's own time, derived (job) */
};

/* flags */
#define SF_NULL		0x01	/* may be null */
#define SF_PHASE	0x02	/* job: "phase" says which time is the record's */
#define SF_START	0x04	/* job: start_time */
#define SF_END		0x08	/* job: end_time */
#define SF_OPT		0x10	/* may be left out (job usage: end records only) */
#define SF_OLDSTR	0x20	/* older signal records gave the object as this
				 * member's value alone ("job": "42") */
#define SF_MONEY	0x40	/* F64 with 12 decimals, not 6: amounts of
				 * money add up over many tiny jobs */

struct sf_field {
	const char *key;		/* member name ("" for SFT_RECTIME) */
	unsigned char keylen;
	unsigned char type;		/* enum sf_type */
	unsigned char flags;		/* SF_NULL ... */
	unsigned short slot;		/* enum sf_slot (sf_step_slot in steps) */
	const char *col;		/* column, NULL for none (SFT_OBJ, SFT_OBJARR) */
	const char *col2;		/* SFT_TIME: microseconds, SFT_COUNTS: counts */
	const struct sf_field *sub;	/* SFT_OBJ, SFT_OBJARR, see above */
	unsigned char nsub;
	const char *doc;		/* one line, for DDL comments and the doc */
};

/* ---- the members ---------------------------------------------------------- */

/* Every record starts with "type" (the record type: written by
 * schema_write, the table's name) and these. */
#define SF_HEAD(X) \
	X(SCHEMA, "schema", U8, 0, "schema", NULL, SF_NOSUB, "record schema version (1)") \
	X(HOST, "host", STR, 0, "host", NULL, SF_NOSUB, "node name") \
	X(ID, "id", STR, 0, "id", NULL, SF_NOSUB, \
	  "record id (UUID text), the same for the same record (for a process: its pid and start), so a sink de-duplicates a retry")

#define SF_JOB(X) \
	X(JOB_SCHEDULER, "scheduler", STR, SF_NULL, "job_scheduler", NULL, SF_NOSUB, \
	  "slurm, aws-batch (a container's AWS_BATCH_JOB_ID), or what the hook said") \
	X(JOB_ID, "id", STR, SF_NULL | SF_OLDSTR, "job_id", NULL, SF_NOSUB, "the scheduler's job id, or user:UID:ID for a user's own job (jobtrace run)") \
	X(JOB_STEP, "step", STR, SF_NULL, "job_step", NULL, SF_NOSUB, \
	  "the scheduler's step: batch, extern, 0, ...") \
	X(JOB_RUN, "run", STR, SF_NULL, "job_run", NULL, SF_NOSUB, "workflow run") \
	X(JOB_PIPELINE, "pipeline", STR, SF_NULL, "job_pipeline", NULL, SF_NOSUB, "workflow name") \
	X(JOB_TASK, "task", STR, SF_NULL, "job_task", NULL, SF_NOSUB, \
	  "workflow step: Snakemake rule, Nextflow process, --trace-step") \
	X(JOB_USER, "user", STR, SF_NULL, "job_user", NULL, SF_NOSUB, "from the hooks") \
	X(JOB_ACCOUNT, "account", STR, SF_NULL, "job_account", NULL, SF_NOSUB, "from the hooks") \
	X(JOB_COST_CENTER, "cost_center", STR, SF_NULL, "job_cost_center", NULL, SF_NOSUB, \
	  "from the hooks or the rules, by default the account") \
	X(JOB_ATTEMPT, "attempt", U32, SF_NULL, "job_attempt", NULL, SF_NOSUB, \
	  "AWS Batch: the attempt, from 1 (AWS_BATCH_JOB_ATTEMPT)") \
	X(JOB_ARRAY_INDEX, "array_index", U32, SF_NULL, "job_array_index", NULL, SF_NOSUB, \
	  "an array job's task: AWS Batch's AWS_BATCH_JOB_ARRAY_INDEX, Slurm's ArrayTaskId (the job id is then ARRAYJOBID_TASK)") \
	X(JOB_NODE_INDEX, "node_index", U32, SF_NULL, "job_node_index", NULL, SF_NOSUB, \
	  "AWS Batch: a multi-node job's node (AWS_BATCH_JOB_NODE_INDEX)") \
	X(JOB_QUEUE, "queue", STR, SF_NULL, "job_queue", NULL, SF_NOSUB, \
	  "AWS Batch: the job queue (AWS_BATCH_JQ_NAME)") \
	X(JOB_COMPUTE_ENV, "compute_environment", STR, SF_NULL, "job_compute_environment", NULL, \
	  SF_NOSUB, "AWS Batch: the compute environment (AWS_BATCH_CE_NAME)") \
	X(JOB_ECS_TASK_ARN, "ecs_task_arn", STR, SF_NULL, "job_ecs_task_arn", NULL, SF_NOSUB, \
	  "AWS Batch: the ECS task that runs it (label com.amazonaws.ecs.task-arn)")

#define SF_TOOL(X) \
	X(TOOL_NAME, "name", STR, SF_NULL | SF_OLDSTR, "tool_name", NULL, SF_NOSUB, \
	  "as the rules decide, by default the executable's base name") \
	X(TOOL_CATEGORY, "category", STR, SF_NULL, "tool_category", NULL, SF_NOSUB, "as the rules decide") \
	X(TOOL_VERSION, "version", STR, SF_NULL, "tool_version", NULL, SF_NOSUB, "as the rules decide")

#define SF_EXIT(X) \
	X(EXIT_CODE, "code", I32, SF_NULL, "exit_code", NULL, SF_NOSUB, \
	  "exit status of a normal exit, null when killed or lost") \
	X(EXIT_SIGNAL, "signal", I32, SF_NULL, "exit_signal", NULL, SF_NOSUB, \
	  "the signal that killed it, null for a normal exit") \
	X(EXIT_CORE_DUMPED, "core_dumped", BOOL, 0, "exit_core_dumped", NULL, SF_NOSUB, "it dumped core") \
	X(EXIT_OOM_KILLED, "oom_killed", BOOL, 0, "exit_oom_killed", NULL, SF_NOSUB, \
	  "killed by the OOM killer") \
	X(EXIT_LOST, "lost", BOOL, 0, "exit_lost", NULL, SF_NOSUB, \
	  "the exit event was lost: the counters are the last sample")

#define SF_CPU(X) \
	X(CPU_USER_S, "user_s", F64, 0, "cpu_user_s", NULL, SF_NOSUB, \
	  "user CPU seconds of all its threads, never its children's") \
	X(CPU_SYS_S, "sys_s", F64, 0, "cpu_sys_s", NULL, SF_NOSUB, "system CPU seconds, the same way")

#define SF_MEM_PEAK(X) \
	X(MEM_PEAK_RSS, "peak_rss_bytes", U64, 0, "mem_peak_rss_bytes", NULL, SF_NOSUB, \
	  "the program's own RSS high-water mark (after exec)")
#define SF_MEM_PROCESS(X) \
	SF_MEM_PEAK(X) \
	X(MEM_MAXRSS_KERNEL, "maxrss_kernel_bytes", U64, 0, "mem_maxrss_kernel_bytes", NULL, SF_NOSUB, \
	  "the kernel's maxrss that getrusage(2) reports, with the pre-exec image")
#define SF_MEM_SAMPLE(X) \
	SF_MEM_PEAK(X) \
	X(MEM_RSS, "rss_bytes", U64, 0, "mem_rss_bytes", NULL, SF_NOSUB, "current RSS")

#define SF_IO(X) \
	X(IO_READ_BYTES, "read_bytes", U64, 0, "io_read_bytes", NULL, SF_NOSUB, \
	  "read from storage by its own threads") \
	X(IO_WRITE_BYTES, "write_bytes", U64, 0, "io_write_bytes", NULL, SF_NOSUB, \
	  "dirtied for storage by its own threads") \
	X(IO_CANCELLED_WRITE_BYTES, "cancelled_write_bytes", U64, 0, "io_cancelled_write_bytes", NULL, SF_NOSUB, \
	  "dirty bytes its truncates and deletes took back before they were written") \
	X(IO_RCHAR, "rchar", U64, 0, "io_rchar", NULL, SF_NOSUB, "bytes passed to read(2) and friends") \
	X(IO_WCHAR, "wchar", U64, 0, "io_wchar", NULL, SF_NOSUB, "bytes passed to write(2) and friends") \
	X(IO_BLKIO_DELAY_S, "blkio_delay_s", F64, 0, "io_blkio_delay_s", NULL, SF_NOSUB, \
	  "seconds waiting for block I/O")

#define SF_NET(X) \
	X(NET_RX_BYTES, "rx_bytes", U64, 0, "net_rx_bytes", NULL, SF_NOSUB, "received on IPv4/IPv6 sockets") \
	X(NET_TX_BYTES, "tx_bytes", U64, 0, "net_tx_bytes", NULL, SF_NOSUB, "sent on IPv4/IPv6 sockets")

/* Where its time went besides the CPU (doc/wait.md): exact kernel
 * counters, its threads summed; block-I/O wait is io.blkio_delay_s. */
#define SF_WAIT(X) \
	X(WAIT_RUN_QUEUE_S, "run_queue_s", F64, 0, "wait_run_queue_s", NULL, SF_NOSUB, \
	  "runnable but waiting for a CPU (sched_info.run_delay, /proc/PID/schedstat's 2nd field)") \
	X(WAIT_RECLAIM_S, "reclaim_s", F64, 0, "wait_reclaim_s", NULL, SF_NOSUB, \
	  "in direct memory reclaim (delay accounting's freepages_delay, wall time that can hold CPU)") \
	X(WAIT_THRASHING_S, "thrashing_s", F64, 0, "wait_thrashing_s", NULL, SF_NOSUB, \
	  "faulting back pages of its working set reclaimed earlier (thrashing_delay)") \
	X(WAIT_SWAPIN_S, "swapin_s", F64, 0, "wait_swapin_s", NULL, SF_NOSUB, \
	  "reading pages back from swap (swapin_delay)") \
	X(WAIT_COMPACT_S, "compact_s", F64, 0, "wait_compact_s", NULL, SF_NOSUB, \
	  "in memory compaction (compact_delay)") \
	X(WAIT_NET_S, "net_s", F64, 0, "wait_net_s", NULL, SF_NOSUB, \
	  "asleep in a network system call on an IPv4/IPv6 socket, from the switch out to the wakeup (measured, doc/wait.md)") \
	X(WAIT_CHILDREN_S, "children_s", F64, 0, "wait_children_s", NULL, SF_NOSUB, \
	  "asleep in wait4/waitid for a child (measured the same way)") \
	X(WAIT_NVCSW, "nvcsw", U64, 0, "wait_nvcsw", NULL, SF_NOSUB, \
	  "voluntary context switches (it slept), as getrusage(2) counts them") \
	X(WAIT_NIVCSW, "nivcsw", U64, 0, "wait_nivcsw", NULL, SF_NOSUB, \
	  "involuntary context switches (it was preempted)")

/* The identity and program of a process (process and sample records). */
#define SF_PROC(X) \
	X(PID, "pid", U32, 0, "pid", NULL, SF_NOSUB, "thread-group id") \
	X(PPID, "ppid", U32, 0, "ppid", NULL, SF_NOSUB, "its parent's") \
	X(PARENT_ID, "parent_id", STR, SF_NULL, "parent_id", NULL, SF_NOSUB, \
	  "the id of the parent's own process record, null when its start is not known") \
	X(START_TIME, "start_time", TIME, 0, "start_time", "start_time_us", SF_NOSUB, \
	  "process start (the kernel's start_boottime)") \
	X(EXE, "exe", STR, SF_NULL, "exe", NULL, SF_NOSUB, \
	  "the path given to exec, at most 255 bytes (a forked child that did not exec: its parent's)") \
	X(EXE_TRUNCATED, "exe_truncated", BOOL, 0, "exe_truncated", NULL, SF_NOSUB, \
	  "the path was longer than 255 bytes and exe holds its first 255") \
	X(COMM, "comm", STR, 0, "comm", NULL, SF_NOSUB, "the kernel's 15-character name") \
	X(ARGV, "argv", STRARR, 0, "argv", NULL, SF_NOSUB, \
	  "the arguments, at most collector.argv_max_bytes, redacted by the rules") \
	X(ARGV_TRUNCATED, "argv_truncated", BOOL, 0, "argv_truncated", NULL, SF_NOSUB, \
	  "the command line was longer than captured") \
	X(UID, "uid", U32, 0, "uid", NULL, SF_NOSUB, "real uid at exec") \
	X(CGROUP, "cgroup", STR, SF_NULL, "cgroup", NULL, SF_NOSUB, \
	  "cgroup v2 path, or the v1 memory controller's when the v2 path is the root") \
	X(CONTAINER, "container", STR, SF_NULL, "container", NULL, SF_NOSUB, \
	  "runtime://id (docker, containerd, cri-o, podman, ecs)")

#define SF_JOB_OBJ(X) \
	X(JOB, "job", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_job_fields), \
	  "the job it belongs to, null for none")
#define SF_TOOL_OBJ(X) \
	X(TOOL, "tool", OBJ, 0, NULL, NULL, SF_SUB(sf_tool_fields), "the program, as the rules name it")

/* process: the end of a process */
#define SF_PROCESS_END(X) \
	X(END_TIME, "end_time", TIME, SF_NULL, "end_time", "end_time_us", SF_NOSUB, "exit") \
	X(EXIT, "exit", OBJ, 0, NULL, NULL, SF_SUB(sf_exit_fields), "how it ended")
/* process and sample: the counters */
#define SF_CPU_OBJ(X) \
	X(CPU, "cpu", OBJ, 0, NULL, NULL, SF_SUB(sf_cpu_fields), \
	  "precise runtime of all its threads, split in the tick ratio like getrusage(2)")
#define SF_MEM_PROCESS_OBJ(X) \
	X(MEM_PROCESS, "mem", OBJ, 0, NULL, NULL, SF_SUB(sf_mem_process_fields), "memory")
#define SF_MEM_SAMPLE_OBJ(X) \
	X(MEM_SAMPLE, "mem", OBJ, 0, NULL, NULL, SF_SUB(sf_mem_sample_fields), "memory so far")
#define SF_IO_NET_OBJ(X) \
	X(IO, "io", OBJ, 0, NULL, NULL, SF_SUB(sf_io_fields), \
	  "its own I/O: its threads', never its reaped children's") \
	X(NET, "net", OBJ, 0, NULL, NULL, SF_SUB(sf_net_fields), "network") \
	X(WAIT, "wait", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_wait_fields), \
	  "where its time went besides the CPU, null in records of agents before it")
/* process: the files it opened (one element of files) */
#define SF_FILE(X) \
	X(FILE_PATH, "path", STR, 0, "path", NULL, SF_NOSUB, \
	  "what the rules kept of its path: the path, sha256:HEX of it, or *.EXT") \
	X(FILE_FLAGS, "flags", STRARR, 0, "flags", NULL, SF_NOSUB, \
	  "how it was opened, over all its opens: read, write, create, append, truncate, directory, direct") \
	X(FILE_OPENS, "opens", U64, 0, "opens", NULL, SF_NOSUB, "how many times it was opened") \
	X(FILE_READ_BYTES, "read_bytes", U64, 0, "read_bytes", NULL, SF_NOSUB, \
	  "bytes read(2) and friends returned through it") \
	X(FILE_WRITE_BYTES, "write_bytes", U64, 0, "write_bytes", NULL, SF_NOSUB, \
	  "bytes write(2) and friends wrote through it") \
	X(FILE_SIZE_BYTES, "size_bytes", U64, SF_NULL, "size_bytes", NULL, SF_NOSUB, \
	  "its size when the process closed it or exited, null when not known") \
	X(FILE_MMAP, "mmap", BOOL, 0, "mmap", NULL, SF_NOSUB, \
	  "it was mapped: bytes read or written through the mapping are not known") \
	X(FILE_DELETED, "deleted", BOOL, 0, "deleted", NULL, SF_NOSUB, \
	  "unlinked while open, or (a file it created, truncated or wrote" \
	  " bytes to) its path gone when the process ended")

#define SF_FILES_REST(X) \
	X(FILES_REST_COUNT, "count", U64, 0, "files_rest_count", NULL, SF_NOSUB, \
	  "files beyond files.max_per_process and those the rules dropped") \
	X(FILES_REST_OPENS, "opens", U64, 0, "files_rest_opens", NULL, SF_NOSUB, "their opens") \
	X(FILES_REST_READ_BYTES, "read_bytes", U64, 0, "files_rest_read_bytes", NULL, SF_NOSUB, \
	  "bytes read through them") \
	X(FILES_REST_WRITE_BYTES, "write_bytes", U64, 0, "files_rest_write_bytes", NULL, SF_NOSUB, \
	  "bytes written through them")

#define SF_FILES_NONREG(X) \
	X(FILES_NONREG_PIPES, "pipes", U64, 0, "files_nonregular_pipes", NULL, SF_NOSUB, \
	  "pipes and FIFOs it opened or was given") \
	X(FILES_NONREG_SOCKETS, "sockets", U64, 0, "files_nonregular_sockets", NULL, SF_NOSUB, \
	  "sockets") \
	X(FILES_NONREG_READ_BYTES, "read_bytes", U64, 0, "files_nonregular_read_bytes", NULL, SF_NOSUB, \
	  "bytes read through pipes, sockets and other files that are not regular") \
	X(FILES_NONREG_WRITE_BYTES, "write_bytes", U64, 0, "files_nonregular_write_bytes", NULL, SF_NOSUB, \
	  "bytes written through them")

#define SF_FILES_OBJ(X) \
	X(FILES, "files", OBJARR, SF_NULL, "files", NULL, SF_SUB(sf_file_fields), \
	  "the regular files and directories it opened, the busiest first, at most files.max_per_process, null when files are not recorded") \
	X(FILES_REST, "files_rest", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_files_rest_fields), \
	  "the files counted, not listed (zeros when none), null with files") \
	X(FILES_NONREG, "files_nonregular", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_files_nonreg_fields), \
	  "pipes, sockets and other files that are not regular: counted, not listed, null with files")

/* sample: how far along a running process is */
#define SF_PROGRESS(X) \
	X(PROGRESS_PATH, "path", STR, 0, "progress_path", NULL, SF_NOSUB, \
	  "the largest regular file it has open for reading only, as the rules keep its path") \
	X(PROGRESS_OFFSET_BYTES, "offset_bytes", U64, 0, "progress_offset_bytes", NULL, SF_NOSUB, \
	  "its read offset at the sample's time (the pos of /proc/PID/fdinfo/N)") \
	X(PROGRESS_SIZE_BYTES, "size_bytes", U64, 0, "progress_size_bytes", NULL, SF_NOSUB, \
	  "its size then")
#define SF_PROGRESS_OBJ(X) \
	X(PROGRESS, "progress", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_progress_fields), \
	  "null when it has no regular file open for reading only, or files are not recorded")

/* sample, signal and host: when */
#define SF_TIME_AT(X) \
	X(TIME, "time", TIME, 0, "time", "time_us", SF_NOSUB, "when it was written or seen")

#define SF_ALLOCATION(X) \
	X(ALLOC_CPUS, "cpus", U32, SF_NULL, "allocation_cpus", NULL, SF_NOSUB, "CPUs allocated") \
	X(ALLOC_MEM_BYTES, "mem_bytes", U64, SF_NULL, "allocation_mem_bytes", NULL, SF_NOSUB, \
	  "memory allocated") \
	X(ALLOC_GPUS, "gpus", U32, SF_NULL, "allocation_gpus", NULL, SF_NOSUB, "GPUs allocated") \
	X(ALLOC_TIME_LIMIT_S, "time_limit_s", U32, SF_NULL, "allocation_time_limit_s", NULL, SF_NOSUB, \
	  "the job's time limit in seconds (hook --time-limit, else Slurm's TimeLimit), null when not known or unlimited")

/* What a job or one of its steps used (the job's and each step's). */
#define SF_USAGE_FIGURES(X) \
	X(USAGE_CPU_S, "cpu_s", F64, SF_NULL, "usage_cpu_s", NULL, SF_NOSUB, \
	  "user + system CPU of its finished processes that have a record") \
	X(USAGE_PROCESSES, "processes", U64, SF_NULL, "usage_processes", NULL, SF_NOSUB, \
	  "how many of its processes finished") \
	X(USAGE_MEM_PEAK_BYTES, "mem_peak_bytes", U64, SF_NULL, "usage_mem_peak_bytes", NULL, SF_NOSUB, \
	  "its memory cgroup's charge peak, else the peak sum of its processes' RSS or its largest process's peak, the larger") \
	X(USAGE_MEM_PEAK_SOURCE, "mem_peak_source", STR, SF_NULL, "usage_mem_peak_source", NULL, SF_NOSUB, \
	  "cgroup_v1, cgroup_v2, samples, largest_process, or null when none is known")

#define SF_STEP(X) \
	X(STEP, "step", STR, 0, NULL, NULL, SF_NOSUB, "the scheduler's step") \
	SF_USAGE_FIGURES(X)

#define SF_USAGE(X) \
	SF_USAGE_FIGURES(X) \
	X(USAGE_WALL_S, "wall_s", F64, SF_NULL, "usage_wall_s", NULL, SF_NOSUB, \
	  "its finished processes' wall times (end - start) added: the whole that doc/wait.md splits") \
	X(USAGE_BLKIO_DELAY_S, "blkio_delay_s", F64, SF_NULL, "usage_blkio_delay_s", NULL, SF_NOSUB, \
	  "their io.blkio_delay_s added") \
	X(USAGE_WAIT, "wait", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_wait_fields), \
	  "their wait objects added (columns wait_*, as in the process table)") \
	X(USAGE_STEPS, "steps", OBJARR, 0, NULL, NULL, SF_SUB(sf_step_fields), \
	  "the same figures per scheduler step, at most 16")

#define SF_JOB_PHASE(X) \
	X(RECTIME, "", RECTIME, 0, "time", "time_us", SF_NOSUB, \
	  "end_time for phase end, else start_time (else end_time)") \
	X(PHASE, "phase", STR, SF_PHASE, "phase", NULL, SF_NOSUB, \
	  "start (a hook registered the job, or Docker named a container's AWS Batch job) or end (a hook closed it, or the container has ended)")
#define SF_JOB_REC(X) \
	X(JOB_NAME, "name", STR, SF_NULL, "name", NULL, SF_NOSUB, "job name") \
	X(JOB_PARTITION, "partition", STR, SF_NULL, "partition", NULL, SF_NOSUB, "partition or queue") \
	X(JOB_NODE, "node", STR, SF_NULL, "node", NULL, SF_NOSUB, "the node, by default this host") \
	X(JOB_UID, "uid", U32, SF_NULL, "uid", NULL, SF_NOSUB, "the job's user id") \
	X(JOB_START_TIME, "start_time", TIME, SF_NULL | SF_START, "start_time", "start_time_us", SF_NOSUB, \
	  "job start") \
	X(JOB_END_TIME, "end_time", TIME, SF_NULL | SF_END, "end_time", "end_time_us", SF_NOSUB, "job end") \
	X(ALLOCATION, "allocation", OBJ, 0, NULL, NULL, SF_SUB(sf_allocation_fields), \
	  "what the scheduler allocated") \
	X(JOB_EXIT_CODE, "exit_code", I32, SF_NULL, "exit_code", NULL, SF_NOSUB, \
	  "the job's exit code: the code part of Slurm's ExitCode code:signal") \
	X(JOB_EXIT_SIGNAL, "exit_signal", I32, SF_NULL, "exit_signal", NULL, SF_NOSUB, \
	  "the signal part of it (0: none, 125: Slurm's mark of an OOM kill, no signal), null with exit_code") \
	X(JOB_STATE, "state", STR, SF_NULL, "state", NULL, SF_NOSUB, \
	  "end records: how it ended, in Slurm's words (COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE): slurmctld's, else what its exit tells") \
	X(COST, "cost", OBJ, SF_OPT, NULL, NULL, SF_SUB(sf_cost_fields), \
	  "what the job cost (end records only), formulas in the README section Cost") \
	X(USAGE, "usage", OBJ, SF_OPT, NULL, NULL, SF_SUB(sf_usage_fields), \
	  "what the job used (end records only)") \
	X(EFFICIENCY, "efficiency", OBJ, SF_OPT, NULL, NULL, SF_SUB(sf_efficiency_fields), \
	  "what the job used of what it was given (end records only)") \
	X(FLAGS, "flags", STRARR, SF_OPT, "flags", NULL, SF_NOSUB, \
	  "waste (end records only): cpu_underused, memory_overrequested, time_overrequested, thresholds in waste { }")

#define SF_COST(X) \
	X(COST_AMOUNT, "amount", F64, SF_NULL | SF_MONEY, "cost_amount", NULL, SF_NOSUB, \
	  "price_per_hour x share x elapsed_s / 3600 (rates: no share), 12 decimals, null when not known (note says why)") \
	X(COST_CURRENCY, "currency", STR, SF_NULL, "cost_currency", NULL, SF_NOSUB, \
	  "the price's currency (cost.currency, or the prices file's)") \
	X(COST_SOURCE, "source", STR, SF_NULL, "cost_source", NULL, SF_NOSUB, \
	  "where the price came from: config:node_hour, config:rates or prices:FILE") \
	X(COST_FORMULA, "formula", STR, SF_NULL, "cost_formula", NULL, SF_NOSUB, \
	  "allocation_share, usage_share, rates or usage_rates") \
	X(COST_PRICE_PER_HOUR, "price_per_hour", F64, SF_NULL, "cost_price_per_hour", NULL, SF_NOSUB, \
	  "the node's price per hour (rates: the job's own, its CPUs, GiB and GPUs at the rates)") \
	X(COST_SHARE, "share", F64, SF_NULL, "cost_share", NULL, SF_NOSUB, \
	  "the job's share of the node, at most 1: the largest of CPUs, memory and GPUs over the node's (null for rates)") \
	X(COST_ELAPSED_S, "elapsed_s", F64, SF_NULL, "cost_elapsed_s", NULL, SF_NOSUB, \
	  "end_time - start_time in seconds") \
	X(COST_NOTE, "note", STR, SF_NULL, "cost_note", NULL, SF_NOSUB, \
	  "why amount is null, or how it was attributed when the job had no allocation")

#define SF_EFFICIENCY(X) \
	X(EFF_CPU, "cpu", F64, SF_NULL, "efficiency_cpu", NULL, SF_NOSUB, \
	  "usage.cpu_s / (allocation.cpus x elapsed_s), null when a term is not known") \
	X(EFF_MEMORY, "memory", F64, SF_NULL, "efficiency_memory", NULL, SF_NOSUB, \
	  "usage.mem_peak_bytes / allocation.mem_bytes") \
	X(EFF_TIME, "time", F64, SF_NULL, "efficiency_time", NULL, SF_NOSUB, \
	  "elapsed_s / allocation.time_limit_s")

/* One part of where a task instance's time went (slower_than_usual). */
#define SF_PART(X) \
	X(PART_NAME, "part", STR, 0, "part", NULL, SF_NOSUB, \
	  "cpu, run_queue, blkio, memory, other (doc/wait.md)") \
	X(PART_S, "s", F64, 0, "s", NULL, SF_NOSUB, \
	  "its processes' seconds (job usage: their sums)") \
	X(PART_MEDIAN_S, "median_s", F64, SF_NULL, "median_s", NULL, SF_NOSUB, \
	  "the median of the earlier runs' seconds, null when none of their end records has them")

#define SF_EVIDENCE(X) \
	X(EV_RSS_BYTES, "rss_bytes", U64, SF_NULL, "evidence_rss_bytes", NULL, SF_NOSUB, \
	  "oom_kill: the victim's RSS") \
	X(EV_TOTAL_VM_BYTES, "total_vm_bytes", U64, SF_NULL, "evidence_total_vm_bytes", NULL, SF_NOSUB, \
	  "oom_kill: its virtual size") \
	X(EV_ACTION, "action", STR, SF_NULL, "evidence_action", NULL, SF_NOSUB, \
	  "spot_interruption: what EC2 will do, terminate, stop or hibernate") \
	X(EV_ACTION_TIME, "action_time", TIME, SF_NULL, "evidence_action_time", "evidence_action_time_us", SF_NOSUB, \
	  "spot_interruption: when EC2 will do it") \
	X(EV_IDLE_S, "idle_s", F64, SF_NULL, "evidence_idle_s", NULL, SF_NOSUB, \
	  "node_idle: seconds with no job process and the node's CPU below idle.cpu_below") \
	X(EV_CPU, "cpu", F64, SF_NULL, "evidence_cpu", NULL, SF_NOSUB, \
	  "node_idle: the node's CPU use over that time, a fraction of all its CPUs") \
	X(EV_COST, "cost", F64, SF_NULL | SF_MONEY, "evidence_cost", NULL, SF_NOSUB, \
	  "node_idle: the node's price per hour x idle_s / 3600, null when no price is known") \
	X(EV_CURRENCY, "currency", STR, SF_NULL, "evidence_currency", NULL, SF_NOSUB, \
	  "node_idle: the price's currency") \
	X(EV_PHASE, "phase", STR, SF_NULL, "evidence_phase", NULL, SF_NOSUB, \
	  "stall: start (stall_after reached) or end (it resumed or exited)") \
	X(EV_STALLED_S, "stalled_s", F64, SF_NULL, "evidence_stalled_s", NULL, SF_NOSUB, \
	  "stall: seconds with no CPU, I/O or network progress (end: the whole stall)") \
	X(EV_LAST_PROGRESS, "last_progress", TIME, SF_NULL, "evidence_last_progress", \
	  "evidence_last_progress_us", SF_NOSUB, "stall: the sample its counters last moved at") \
	X(EV_STATE, "state", STR, SF_NULL, "evidence_state", NULL, SF_NOSUB, \
	  "stall start: the process state letter of /proc/PID/stat (S sleeping, D uninterruptible, T stopped)") \
	X(EV_WCHAN, "wchan", STR, SF_NULL, "evidence_wchan", NULL, SF_NOSUB, \
	  "stall start: the kernel function it waits in (/proc/PID/wchan), null when not known") \
	X(EV_EXITED, "exited", BOOL, SF_NULL, "evidence_exited", NULL, SF_NOSUB, \
	  "stall end: true when it exited, false when it resumed") \
	X(EV_WINDOW_S, "window_s", F64, SF_NULL, "evidence_window_s", NULL, SF_NOSUB, \
	  "io_bound, cpu_starved, memory_pressure, net_wait: the wall time of the window (signals.io_window or a little more)") \
	X(EV_BLKIO_DELAY_S, "blkio_delay_s", F64, SF_NULL, "evidence_blkio_delay_s", NULL, SF_NOSUB, \
	  "io_bound: block-I/O delay of its threads over the window") \
	X(EV_RUN_QUEUE_S, "run_queue_s", F64, SF_NULL, "evidence_run_queue_s", NULL, SF_NOSUB, \
	  "cpu_starved: run-queue wait of its threads over the window") \
	X(EV_MEMORY_WAIT_S, "memory_wait_s", F64, SF_NULL, "evidence_memory_wait_s", NULL, SF_NOSUB, \
	  "memory_pressure: direct reclaim + thrashing + swap-in waits of its threads over the window") \
	X(EV_NET_WAIT_S, "net_wait_s", F64, SF_NULL, "evidence_net_wait_s", NULL, SF_NOSUB, \
	  "net_wait: its threads' sleeps in network system calls over the window (wait.net_s)") \
	X(EV_FRACTION, "fraction", F64, SF_NULL, "evidence_fraction", NULL, SF_NOSUB, \
	  "io_bound: blkio_delay_s / window_s, cpu_starved: run_queue_s / window_s, memory_pressure: memory_wait_s / window_s, net_wait: net_wait_s / window_s, memory_near_limit: mem_bytes / limit_bytes") \
	X(EV_DURATION_S, "duration_s", F64, SF_NULL, "evidence_duration_s", NULL, SF_NOSUB, \
	  "slower_than_usual: the task instance's (job's) end - start in seconds") \
	X(EV_MEDIAN_S, "median_s", F64, SF_NULL, "evidence_median_s", NULL, SF_NOSUB, \
	  "slower_than_usual: the median duration of its earlier runs in the store") \
	X(EV_RUNS, "runs", U32, SF_NULL, "evidence_runs", NULL, SF_NOSUB, \
	  "slower_than_usual: how many earlier runs (same pipeline, task and user) the median is of") \
	X(EV_FACTOR, "factor", F64, SF_NULL, "evidence_factor", NULL, SF_NOSUB, \
	  "slower_than_usual: duration_s / median_s") \
	X(EV_PARTS, "parts", OBJARR, SF_NULL, NULL, NULL, SF_SUB(sf_part_fields), \
	  "slower_than_usual: where the task instance's time went (doc/wait.md), each part with the median of the earlier runs'") \
	X(EV_GREW, "grew", STR, SF_NULL, "evidence_grew", NULL, SF_NOSUB, \
	  "slower_than_usual: the part whose increase over its earlier median is largest, null when none grew") \
	X(EV_GREW_S, "grew_s", F64, SF_NULL, "evidence_grew_s", NULL, SF_NOSUB, \
	  "slower_than_usual: that increase in seconds") \
	X(EV_MEM_BYTES, "mem_bytes", U64, SF_NULL, "evidence_mem_bytes", NULL, SF_NOSUB, \
	  "memory_near_limit: the job's memory cgroup charge") \
	X(EV_LIMIT_BYTES, "limit_bytes", U64, SF_NULL, "evidence_limit_bytes", NULL, SF_NOSUB, \
	  "memory_near_limit: its limit") \
	X(EV_SOURCE, "source", STR, SF_NULL, "evidence_source", NULL, SF_NOSUB, \
	  "memory_near_limit: cgroup_v1 or cgroup_v2")

#define SF_SIGNAL_KIND(X) \
	X(KIND, "kind", STR, 0, "kind", NULL, SF_NOSUB, \
	  "oom_kill, spot_interruption, node_idle, stall, io_bound, cpu_starved, memory_pressure, net_wait, slower_than_usual, memory_near_limit (README section Signals)")
#define SF_SIGNAL_JOBS(X) \
	X(SIG_JOBS, "jobs", STRARR, SF_NULL, "jobs", NULL, SF_NOSUB, \
	  "spot_interruption: the jobs running on the node, cpu_starved: the other jobs running on it then, as scheduler:id (job is set when there is one)")
#define SF_SIGNAL_PROC(X) \
	X(SIG_PID, "pid", U32, SF_NULL, "pid", NULL, SF_NOSUB, "the process it concerns") \
	X(SIG_COMM, "comm", STR, SF_NULL, "comm", NULL, SF_NOSUB, "its kernel name")
#define SF_EVIDENCE_OBJ(X) \
	X(EVIDENCE, "evidence", OBJ, 0, NULL, NULL, SF_SUB(sf_evidence_fields), "the numbers")

#define SF_DROPS(X) \
	X(DROP_RINGBUF_FORK, "ringbuf_fork", U64, 0, "drops_ringbuf_fork", NULL, SF_NOSUB, \
	  "fork events lost in the ring buffer") \
	X(DROP_RINGBUF_EXEC, "ringbuf_exec", U64, 0, "drops_ringbuf_exec", NULL, SF_NOSUB, "exec events lost") \
	X(DROP_RINGBUF_EXIT, "ringbuf_exit", U64, 0, "drops_ringbuf_exit", NULL, SF_NOSUB, "exit events lost") \
	X(DROP_RINGBUF_OOM, "ringbuf_oom", U64, 0, "drops_ringbuf_oom", NULL, SF_NOSUB, "OOM events lost") \
	X(DROP_TRACKED_MAP_FULL, "tracked_map_full", U64, 0, "drops_tracked_map_full", NULL, SF_NOSUB, \
	  "processes not tracked: the kernel's map was full") \
	X(DROP_EXITS_BEFORE_LAST_SWITCH, "exits_before_last_switch", U64, 0, \
	  "drops_exits_before_last_switch", NULL, SF_NOSUB, \
	  "exits sent at sched_process_exit (map full): their CPU can be short by the last slice") \
	X(DROP_EXITS_LOST, "exits_lost", U64, 0, "drops_exits_lost", NULL, SF_NOSUB, \
	  "processes whose exit was never seen") \
	X(DROP_SPOOL_WRITE_ERRORS, "spool_write_errors", U64, 0, "drops_spool_write_errors", NULL, SF_NOSUB, \
	  "records that never reached the spool for another reason than a full filesystem") \
	X(DROP_SPOOL_DISK_FULL, "spool_disk_full", U64, 0, "drops_spool_disk_full", NULL, SF_NOSUB, \
	  "records that never reached the spool: its filesystem was full") \
	X(DROP_SPOOL, "spool", COUNTS, 0, "drops_spool_sink", "drops_spool_count", SF_NOSUB, \
	  "per sink: records the spool dropped at its size limit or skipped as damaged") \
	X(DROP_STORE_SIZE_CAP, "store_size_cap", U64, 0, "drops_store_size_cap", NULL, SF_NOSUB, \
	  "records the SQLite store deleted before store.retention to keep within store.max_size_mib")

#define SF_HOST_REC(X) \
	X(HOST_PHASE, "phase", STR, 0, "phase", NULL, SF_NOSUB, \
	  "start, stop, spool_drop, store_size_cap, rules (the rules in force changed), or summary (hourly, with collector.record = \"jobs\")") \
	X(BOOT_ID, "boot_id", STR, SF_NULL, "boot_id", NULL, SF_NOSUB, "the kernel's boot id") \
	X(AGENT_VERSION, "agent_version", STR, SF_NULL, "agent_version", NULL, SF_NOSUB, "jobtraced's version") \
	X(EVENTS_SEEN, "events_seen", U64, 0, "events_seen", NULL, SF_NOSUB, "kernel events handled") \
	X(DROPS, "drops", OBJ, 0, NULL, NULL, SF_SUB(sf_drops_fields), "what was lost, each record counted once") \
	X(CLOUD, "cloud", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_cloud_fields), \
	  "what the cloud's instance metadata (EC2 IMDSv2, Compute Engine) says of the node, null when it has none") \
	X(PRICE, "price", OBJ, 0, NULL, NULL, SF_SUB(sf_price_fields), \
	  "what the node costs, from cost { } (README section Cost)") \
	X(OUTSIDE_JOBS, "outside_jobs", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_outside_fields), \
	  "with collector.record = \"jobs\": the processes outside any job, which have no record of their own, since the agent started (null when every process has its record)") \
	X(RULES, "rules", OBJ, SF_NULL, NULL, NULL, SF_SUB(sf_rules_fields), \
	  "the rules in force (rules.source of jobtrace.conf(5)), and a host record of phase rules is written whenever they change")

#define SF_RULES(X) \
	X(RULES_VERSION, "version", STR, SF_NULL, "rules_version", NULL, SF_NOSUB, \
	  "the bundle's version, null for a folder's rules") \
	X(RULES_SHA256, "sha256", STR, SF_NULL, "rules_sha256", NULL, SF_NOSUB, \
	  "the bundle's id, the SHA-256 of its MANIFEST, null for a folder's rules") \
	X(RULES_SOURCE, "source", STR, SF_NULL, "rules_source", NULL, SF_NOSUB, \
	  "where they came from: a folder, a URL (without secrets), clickhouse, or (built-in)") \
	X(RULES_ERROR, "error", STR, SF_NULL, "rules_error", NULL, SF_NOSUB, \
	  "why the source's latest rules are not in force (a fetch, a check or a load failed), null when they are")

#define SF_OUTSIDE(X) \
	X(OUTSIDE_PROCESSES, "processes", U64, SF_NULL, "outside_jobs_processes", NULL, SF_NOSUB, \
	  "processes that ended outside any job") \
	X(OUTSIDE_CPU_S, "cpu_s", F64, SF_NULL, "outside_jobs_cpu_s", NULL, SF_NOSUB, "their CPU, user + system") \
	X(OUTSIDE_READ_BYTES, "read_bytes", U64, SF_NULL, "outside_jobs_read_bytes", NULL, SF_NOSUB, \
	  "their bytes read from storage") \
	X(OUTSIDE_WRITE_BYTES, "write_bytes", U64, SF_NULL, "outside_jobs_write_bytes", NULL, SF_NOSUB, \
	  "their bytes written to storage")

#define SF_PRICE(X) \
	X(PRICE_PER_HOUR, "per_hour", F64, SF_NULL, "price_per_hour", NULL, SF_NOSUB, \
	  "the node's price per hour, null when not known (note says why)") \
	X(PRICE_CURRENCY, "currency", STR, SF_NULL, "price_currency", NULL, SF_NOSUB, "its currency") \
	X(PRICE_SOURCE, "source", STR, SF_NULL, "price_source", NULL, SF_NOSUB, \
	  "config:node_hour, config:rates or prices:FILE") \
	X(PRICE_NODE_CPUS, "node_cpus", U32, SF_NULL, "price_node_cpus", NULL, SF_NOSUB, \
	  "the node's CPUs for job shares (cost.node_cpus, else the online CPUs)") \
	X(PRICE_NODE_MEM_BYTES, "node_mem_bytes", U64, SF_NULL, "price_node_mem_bytes", NULL, SF_NOSUB, \
	  "the node's memory for job shares (cost.node_mem_gib, else MemTotal)") \
	X(PRICE_NOTE, "note", STR, SF_NULL, "price_note", NULL, SF_NOSUB, "why per_hour is null")

#define SF_CLOUD(X) \
	X(CLOUD_PROVIDER, "provider", STR, SF_NULL, "cloud_provider", NULL, SF_NOSUB, \
	  "aws (EC2's IMDS) or gcp (Compute Engine's metadata server)") \
	X(CLOUD_INSTANCE_ID, "instance_id", STR, SF_NULL, "cloud_instance_id", NULL, SF_NOSUB, \
	  "the identity document's instanceId (gcp: instance/id)") \
	X(CLOUD_INSTANCE_TYPE, "instance_type", STR, SF_NULL, "cloud_instance_type", NULL, SF_NOSUB, \
	  "its instanceType (gcp: the machine type of instance/machine-type)") \
	X(CLOUD_REGION, "region", STR, SF_NULL, "cloud_region", NULL, SF_NOSUB, \
	  "its region (gcp: the zone less its last -x)") \
	X(CLOUD_ZONE, "zone", STR, SF_NULL, "cloud_zone", NULL, SF_NOSUB, \
	  "its availabilityZone (gcp: instance/zone)") \
	X(CLOUD_LIFECYCLE, "lifecycle", STR, SF_NULL, "cloud_lifecycle", NULL, SF_NOSUB, \
	  "meta-data/instance-life-cycle: spot or on-demand (gcp: spot when"\
	  " scheduling/provisioning-model is SPOT or preemptible TRUE)")

/* ---- values ---------------------------------------------------------------- */

#define SF_ENUM(slot, ...) V_##slot,
#define SFS_ENUM(slot, ...) VS_##slot,
#define SFF_ENUM(slot, ...) VF_##slot,
#define SFP_ENUM(slot, ...) VP_##slot,

/* Every member's value slot (lines shared by several record types once). */
enum sf_slot {
	SF_HEAD(SF_ENUM)
	SF_JOB(SF_ENUM)
	SF_TOOL(SF_ENUM)
	SF_EXIT(SF_ENUM)
	SF_CPU(SF_ENUM)
	SF_MEM_PROCESS(SF_ENUM)
	SF_ENUM(MEM_RSS)
	SF_IO(SF_ENUM)
	SF_NET(SF_ENUM)
	SF_WAIT(SF_ENUM)
	SF_PROC(SF_ENUM)
	SF_JOB_OBJ(SF_ENUM)
	SF_TOOL_OBJ(SF_ENUM)
	SF_PROCESS_END(SF_ENUM)
	SF_CPU_OBJ(SF_ENUM)
	SF_MEM_PROCESS_OBJ(SF_ENUM)
	SF_MEM_SAMPLE_OBJ(SF_ENUM)
	SF_IO_NET_OBJ(SF_ENUM)
	SF_FILES_OBJ(SF_ENUM)
	SF_FILES_REST(SF_ENUM)
	SF_FILES_NONREG(SF_ENUM)
	SF_PROGRESS_OBJ(SF_ENUM)
	SF_PROGRESS(SF_ENUM)
	SF_TIME_AT(SF_ENUM)
	SF_ALLOCATION(SF_ENUM)
	SF_USAGE(SF_ENUM)
	SF_JOB_PHASE(SF_ENUM)
	SF_JOB_REC(SF_ENUM)
	SF_EVIDENCE(SF_ENUM)
	SF_SIGNAL_KIND(SF_ENUM)
	SF_SIGNAL_PROC(SF_ENUM)
	SF_SIGNAL_JOBS(SF_ENUM)
	SF_EVIDENCE_OBJ(SF_ENUM)
	SF_DROPS(SF_ENUM)
	SF_HOST_REC(SF_ENUM)
	SF_CLOUD(SF_ENUM)
	SF_COST(SF_ENUM)
	SF_EFFICIENCY(SF_ENUM)
	SF_PRICE(SF_ENUM)
	SF_OUTSIDE(SF_ENUM)
	SF_RULES(SF_ENUM)
	V__N
};

/* rules.c leaves these out of the rules' p.job: one range */
_Static_assert(V_JOB_ECS_TASK_ARN - V_JOB_ATTEMPT == 5,
	       "the AWS Batch members of the job object are one range");

/* The slots of one element of a job's usage.steps. */
enum sf_step_slot {
	SF_STEP(SFS_ENUM)
	VS__N
};

/* The slots of one element of a slower_than_usual's evidence.parts. */
enum sf_part_slot {
	SF_PART(SFP_ENUM)
	VP__N
};

/* The slots of one element of a process's files. */
enum sf_file_slot {
	SF_FILE(SFF_ENUM)
	VF__N
};

enum sv_state {
	SV_NULL,	/* null (the zeroed value) */
	SV_SET,
	SV_OMIT,	/* leave the member out (SF_OPT) */
	SV_RAW,		/* schema_read(): SFT_STRARR, SFT_COUNTS, SFT_OBJARR as
			 * their JSON text (s, n); schema_write() copies it */
};

struct sv_count {
	const char *name;
	uint64_t n;
};

/* A member's value, as its field's type says. */
struct sv {
	unsigned char st;		/* enum sv_state */
	uint32_t n;	/* SFT_STR: length; SFT_STRARR: bytes; SFT_COUNTS, SFT_OBJARR: elements */
	union {
		const char *s;		/* SFT_STR; SFT_STRARR: NUL-terminated strings */
		uint64_t u;		/* unsigned types, SFT_BOOL; SFT_TIME: realtime ns */
		int64_t i;		/* SFT_I32 */
		double d;		/* SFT_F64 */
		const struct sv_count *counts;	/* SFT_COUNTS */
		const struct sv *elems;	/* SFT_OBJARR: n arrays of nsub (VS__N, VF__N) */
	};
};

static inline void sv_u64(struct sv *v, uint64_t u)
{
	v->st = SV_SET;
	v->u = u;
}

static inline void sv_i64(struct sv *v, int64_t i)
{
	v->st = SV_SET;
	v->i = i;
}

static inline void sv_f64(struct sv *v, double d)
{
	v->st = SV_SET;
	v->d = d;
}

static inline void sv_bool(struct sv *v, bool b)
{
	v->st = SV_SET;
	v->u = b;
}

/* Set a string value; NULL is null. */
void sv_str(struct sv *v, const char *s);
/* Set a string value; NULL or empty is null. */
void sv_str_opt(struct sv *v, const char *s);

/* ---- record types ----------------------------------------------------------- */

struct sf_record {
	const char *name;		/* "process", ...: the type, the table's name */
	const struct sf_field *f;
	size_t n;
	const char *time;		/* the column of the record's own time */
	const char *doc;		/* what one record is, one sentence */
};

enum sf_rec {
	SF_REC_PROCESS,
	SF_REC_SAMPLE,
	SF_REC_JOB,
	SF_REC_SIGNAL,
	SF_REC_HOST,
	SF_REC__N
};

extern const struct sf_record sf_records[SF_REC__N];
/* The members of the job object (process, sample, job, signal records). */
extern const struct sf_field sf_job_fields[];
extern const size_t sf_job_nfields;
/* The record type named by the n bytes at type, or NULL. */
const struct sf_record *sf_record_find(const char *type, size_t n);
/* The member of object f that an older record's plain value in place of
 * the object stands for (SF_OLDSTR), or NULL. */
const struct sf_field *sf_old_member(const struct sf_field *f);

/* Write one record: "type", then its members from the values v[V__N]
 * (an SV_RAW array or counts as its text). */
void schema_write(struct jbuf *b, const struct sf_record *r,
		  const struct sv *v);

/*
 * Read a record of type r from json[0..len) into v[V__N] (zeroed first):
 * members of the description get values (strings point into json, or into
 * scratch when they had escapes, \u0000-\u00ff decoded as that byte: the
 * bytes json_strn() was given; times are realtime ns; arrays and counts
 * are SV_RAW), a member of another type than described stays null, other
 * members are checked and skipped.  0, -ENOMEM, or -EINVAL when the text
 * is not one valid JSON object (*why says what, when why is not NULL).
 */
int schema_read(const struct sf_record *r, const char *json, size_t len,
		struct sv *v, struct jbuf *scratch, const char **why);
/* The record type a record names in its "type" member, or NULL. */
const struct sf_record *schema_type_of(const char *json, size_t len);

/* Print the field table of doc/records.md (Markdown) for record type r. */
void schema_print_markdown_one(FILE *out, const struct sf_record *r);
/* ... and for every record type. */
void schema_print_markdown(FILE *out);

#endif
