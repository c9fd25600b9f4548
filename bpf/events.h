/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * events.h - the whole contract between bpf/jobtrace.bpf.c and the agent.
 *
 * Plain C, fixed-width types, no kernel headers.  Every struct's size is
 * pinned with _Static_assert on both sides; change a layout only together
 * with JT_EVENTS_VERSION.
 */
#ifndef JOBTRACE_EVENTS_H
#define JOBTRACE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define JT_EVENTS_VERSION 7

#define JT_COMM_LEN 16
#define JT_FILENAME_LEN 256
#define JT_NAME_LEN 64		/* a file's own name (its dentry's), cut */
#define JT_EXE_DEPTH 24		/* folders checked above an exec'd file */
#define JT_ARGV_LEN 2048	/* NUL-separated argv bytes, truncated */
#define JT_CGROUP_LEN 512	/* one cgroup path, '/'-joined */
#define JT_CGROUP_DEPTH 12	/* deepest cgroup level walked */
#define JT_MEMCG_LEVELS 6	/* memory cgroup and ancestors read at exit */
#define JT_PATH_LEN 256		/* a path as an open(2) call gave it, cut */

enum jt_event_type {
	JT_EV_FORK = 1,
	JT_EV_EXEC = 2,
	JT_EV_EXIT = 3,
	JT_EV_OOM = 4,
	JT_EV_FOPEN = 5,	/* a tracked process opened a file (or one it had) */
	JT_EV_FCLOSE = 6,	/* ... closed it, or ended with it open */
};

/* Indices of the per-CPU drop/diagnostic counter array `jt_counters`. */
enum jt_counter {
	JT_CNT_RB_DROP_FORK = 0,	/* ring buffer full: fork lost */
	JT_CNT_RB_DROP_EXEC,		/* ring buffer full: exec lost */
	JT_CNT_RB_DROP_EXIT,		/* ring buffer full: exit lost */
	JT_CNT_RB_DROP_OOM,		/* ring buffer full: oom lost */
	JT_CNT_TRACK_FULL,		/* tracked-pid map full at fork */
	JT_CNT_EXCLUDED,		/* events of excluded processes kept in the kernel */
	JT_CNT_EXIT_EARLY,		/* exit sent before the last switch (map full) */
	JT_CNT_RB_DROP_FILE,		/* ring buffer full: a file open or close lost */
	JT_CNT_FSLOT_FULL,		/* fd map full: the file counted as rest */
	JT_CNT_BLKIO_IMPOSSIBLE,	/* a thread's blkio_delay longer than its
					 * life: the kernel's figure left out */
	JT_CNT_NR,
};

/* Flags in struct jt_tracked.flags and event flags. */
#define JT_TF_OOM 0x1		/* oom/mark_victim chose this process */
#define JT_TF_EXCLUDED 0x2	/* rules excluded it: its events stay in the kernel */
#define JT_TF_EXCL_TREE 0x4	/* ... and its descendants are excluded too */

#define JT_XF_MM_AT_EXIT 0x1	/* peak_rss read from the program's own mm */
#define JT_XF_OOM 0x4		/* OOM killed */
#define JT_XF_DELAYACCT 0x8	/* blkio delay accounting data present */

#define JT_EF_ARGV_TRUNC 0x1	/* argv longer than what was captured */
#define JT_EF_EXE_TRUNC 0x2	/* filename cut at JT_FILENAME_LEN - 1 bytes */
/* The file run (exe_name) is root's: a regular file owned by root, and so
 * is every folder above it up to its file system's root (at most
 * JT_EXE_DEPTH), none writable by others or by a group other than root's
 * (but for a sticky folder above the file's own, like /tmp), on a mount
 * that honours setuid bits (not a user's FUSE, udisks or container image
 * mount).  Only root chose its name. */
#define JT_EF_EXE_ROOT 0x4
/* An interpreter runs the file named (a #! script, binfmt_misc): the file
 * run, exe_name and JT_EF_EXE_ROOT are the interpreter's, not filename's */
#define JT_EF_SCRIPT 0x8

/* A thread's own I/O counters (task_struct.ioac, never signal_struct's,
 * which also holds every reaped child's). */
struct jt_io {
	__u64 rchar;
	__u64 wchar;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 cancelled_write_bytes;
};
_Static_assert(sizeof(struct jt_io) == 40, "jt_io layout");

/*
 * Where a thread's time went besides its CPU, as the kernel keeps it:
 * run_delay is sched_info.run_delay (runnable, waiting for a CPU: the 2nd
 * field of /proc/PID/schedstat); the memory waits are delay accounting's
 * (task_struct.delays: freepages_delay is direct reclaim, then thrashing,
 * swap-in and compaction), wall-clock durations that can hold CPU spent
 * reclaiming; nvcsw/nivcsw are the context-switch counts getrusage(2)
 * reports (dead threads' from signal_struct, live ones' own).  net_ns and
 * child_ns are measured, not kept by the kernel: a thread's sleeps that
 * began in a network system call (recv*, send*, accept, connect, or
 * read/write/readv/writev on a socket) or in wait4/waitid, from the
 * switch that put it to sleep to the wakeup that ended it (x86-64
 * system call numbers); summed per process in jt_tracked.wait_acc as
 * each sleep ends (a sleep still going on is not in them yet).
 */
struct jt_wait {
	__u64 run_delay_ns;
	__u64 reclaim_ns;
	__u64 thrashing_ns;
	__u64 swapin_ns;
	__u64 compact_ns;
	__u64 nvcsw;
	__u64 nivcsw;
	__u64 net_ns;
	__u64 child_ns;
};
_Static_assert(sizeof(struct jt_wait) == 72, "jt_wait layout");

/*
 * What a process's files that are not listed add up to (struct
 * jt_tracked): non-regular files (pipes, sockets, others), and the files
 * the kernel could not follow one by one (the fd map was full).
 */
struct jt_fcount {
	__u64 a;		/* nonreg: pipes; lost: files */
	__u64 b;		/* nonreg: sockets; lost: opens */
	__u64 read_bytes;
	__u64 write_bytes;
};
_Static_assert(sizeof(struct jt_fcount) == 32, "jt_fcount layout");

/* Value of the tracked-pid map (key: tgid).  Written by fork/iterator,
 * net counters added by the socket tracepoints, dead threads' counters
 * added at their last context switch, read and deleted at exit. */
struct jt_tracked {
	__u64 start_ns;		/* task start_boottime, ns */
	__u64 rx_bytes;
	__u64 tx_bytes;
	__u64 blkio_acc_ns;	/* blkio delay of threads that exited earlier */
	__u64 peak_pages;	/* highest RSS seen by samples or the OOM kill */
	struct jt_io io_acc;	/* own I/O of threads that exited earlier */
	__u32 flags;		/* JT_TF_* */
	__u32 inet;		/* 1: it has used an IPv4/IPv6 socket (bytes, or
				 * a network system call that slept); a store
				 * of its own, not a flag: no read-modify-write */
	/* waits of threads that exited earlier (their nvcsw/nivcsw are in
	 * signal_struct, as getrusage(2) has them: left 0 here) */
	struct jt_wait wait_acc;
	__u64 nslots;		/* its entries in the fd map (fslots) */
	struct jt_fcount nonreg;	/* pipes, sockets, other non-regular */
	struct jt_fcount lost;		/* files beyond the fd map */
	/* the inode at fd 0, 1, 2 at its last exec when that was no regular
	 * file or directory (0: a regular file, a directory, no file, or
	 * closed since): a pipe or socket there was counted in nonreg then,
	 * with no slot in the fd map, and is neither counted nor walked again
	 * while it is at that fd; a tty or /dev/null is not walked at the
	 * exit */
	__u64 std_inode[3];
};
_Static_assert(sizeof(struct jt_tracked) == 256, "jt_tracked layout");

/* Kinds of an open file (struct jt_fslot.kind). */
#define JT_FK_REG 1		/* regular file */
#define JT_FK_DIR 2		/* directory */
#define JT_FK_PIPE 3		/* pipe or FIFO */
#define JT_FK_SOCK 4		/* socket */
#define JT_FK_OTHER 5		/* device, eventfd, anon inode, ... */

/* struct jt_fslot.flags and struct jt_ev_fclose.flags */
#define JT_FS_MMAP 0x1		/* mapped: bytes through it not known */
#define JT_FS_SIZE 0x2		/* size is known (fclose) */
#define JT_FS_DELETED 0x4	/* no name left (i_nlink 0) at close/exit */
#define JT_FS_AT_EXIT 0x8	/* fclose: still open when the process ended */
#define JT_FS_STALE 0x10	/* fclose: closed unseen (exec's O_CLOEXEC),
				 * found when its fd was reused or at exit */
#define JT_FS_INHERITED 0x20	/* fopen: an fd it had, its open unseen */
#define JT_FS_NAME_PARENT 0x40	/* fopen at an exec: no path, its parent
				 * (pid's ppid) has this inode at this fd
				 * and told its name */

/*
 * Value of the fd map (key: tgid << 32 | fd): one open file of a tracked
 * process, from its open (or first use) to its close or the process's
 * end.  The syscall exits add the bytes each read and write moved.
 */
struct jt_fslot {
	__u64 inode;		/* the kernel's inode address (identity) */
	__u64 dev;
	__u64 ino;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 size;		/* at the close's entry, with JT_FS_SIZE */
	__u32 kind;		/* JT_FK_* */
	__u32 flags;		/* JT_FS_MMAP; JT_FS_SIZE, JT_FS_DELETED at
				 * the close's entry */
	__u64 file;		/* the struct file last seen at the fd: read
				 * again at exit when the fd was closed since */
	__u64 base;		/* its offset when the exec made the slot (an
				 * open shared with the parent): bytes are
				 * the offset's movement since */
};
_Static_assert(sizeof(struct jt_fslot) == 72, "jt_fslot layout");

struct jt_ev_hdr {
	__u32 type;		/* enum jt_event_type */
	__u32 pid;		/* tgid */
	__u64 ts_ns;		/* bpf_ktime_get_boot_ns() */
	__u64 start_ns;		/* process start, boottime ns (identity) */
};
_Static_assert(sizeof(struct jt_ev_hdr) == 24, "jt_ev_hdr layout");

#define JT_TITLE_LEN 64

struct jt_ev_fork {
	struct jt_ev_hdr hdr;
	__u32 ppid;
	__u32 uid;
	__u64 parent_start_ns;
	char comm[JT_COMM_LEN];
	/* the parent's process title when the parent is a slurmstepd
	 * ("slurmstepd: [7.batch]"), read while it surely still exists */
	char parent_title[JT_TITLE_LEN];
};
_Static_assert(sizeof(struct jt_ev_fork) == 120, "jt_ev_fork layout");

struct jt_ev_exec {
	struct jt_ev_hdr hdr;
	__u32 ppid;
	__u32 uid;
	__u64 parent_start_ns;
	__u64 cgroup_id;		/* cgroup v2 id (kernfs node id) */
	__u16 argv_len;			/* bytes used in argv[] */
	__u16 flags;			/* JT_EF_* */
	__u16 cg2_len;			/* bytes used in cg2[], no NUL */
	__u16 cg1_len;			/* bytes used in cg1[], no NUL */
	char comm[JT_COMM_LEN];
	char filename[JT_FILENAME_LEN];	/* bprm->filename, maybe cut */
	char exe_name[JT_NAME_LEN];	/* the file run's own name, "" if longer */
	char cg2[JT_CGROUP_LEN];	/* cgroup v2 path ("/..." or "/") */
	char cg1[JT_CGROUP_LEN];	/* v1 memory-controller path, "" if none */
	char argv[JT_ARGV_LEN];		/* last: only argv_len bytes are sent */
};
_Static_assert(sizeof(struct jt_ev_exec) == 3464, "jt_ev_exec layout");
/* An exec record is JT_EXEC_FIXED_SIZE + argv_len bytes long. */
#define JT_EXEC_FIXED_SIZE 1416
_Static_assert(__builtin_offsetof(struct jt_ev_exec, argv) == JT_EXEC_FIXED_SIZE,
	       "jt_ev_exec argv offset");

/*
 * Thread-group totals at the exit of the last thread.  The last thread's
 * own part is added at its last context switch, when the kernel's CPU
 * figure is final (the one wait4 reports), and the event is sent then
 * (at exit when sched_switch is missing or the `exiting` map is full:
 * JT_CNT_EXIT_EARLY).  Everything here is the process's own: I/O of its threads,
 * never of its reaped children.
 */
struct jt_ev_exit {
	struct jt_ev_hdr hdr;
	__u32 ppid;
	__u32 exit_status;	/* wait(2) status: code << 8 | signal */
	__u32 flags;		/* JT_XF_* */
	__u32 nr_threads_seen;	/* threads summed */
	__u64 runtime_ns;	/* sum_exec_runtime of all threads */
	__u64 utime_ns;		/* tick-based split, used for the ratio */
	__u64 stime_ns;
	__u64 peak_rss_bytes;	/* program's own high-water mark */
	__u64 maxrss_kernel_bytes; /* signal->maxrss (getrusage's figure) */
	struct jt_io io;
	__u64 blkio_delay_ns;
	__u64 rx_bytes;
	__u64 tx_bytes;
	/* memory cgroup charge peaks (page_counter watermark: v1
	 * memory.max_usage_in_bytes, v2 memory.peak) of the process's memory
	 * cgroup [0] and its ancestors [1..]; memcg_levels of them are set */
	__u64 memcg_peak_bytes[JT_MEMCG_LEVELS];
	__u32 memcg_levels;
	__u32 pad;
	char comm[JT_COMM_LEN];
	struct jt_wait wait;	/* all threads', like runtime_ns */
	struct jt_fcount nonreg;	/* its non-regular files (jt_tracked) */
	struct jt_fcount lost;		/* files beyond the kernel's fd map */
};
_Static_assert(sizeof(struct jt_ev_exit) == 352, "jt_ev_exit layout");

struct jt_ev_oom {
	struct jt_ev_hdr hdr;
	__u32 uid;
	__u32 pad;
	__u64 total_vm_pages;
	__u64 rss_pages;
	char comm[JT_COMM_LEN];
};
_Static_assert(sizeof(struct jt_ev_oom) == 64, "jt_ev_oom layout");

/* A tracked process opened a regular file or a directory (once an open). */
struct jt_ev_fopen {
	struct jt_ev_hdr hdr;
	__s32 fd;
	__s32 dirfd;		/* openat's: AT_FDCWD (-100) or a folder's fd */
	__u32 oflags;		/* the open's O_* flags (inherited: f_flags) */
	__u16 kind;		/* JT_FK_REG or JT_FK_DIR */
	__u16 flags;		/* JT_FS_INHERITED, JT_FS_NAME_PARENT */
	__u64 dev;
	__u64 ino;
	__u64 size;		/* i_size at the open */
	__u32 tid;
	__u32 path_len;		/* bytes in path, no NUL; 0: not known */
	char path[JT_PATH_LEN];	/* as the call gave it (maybe relative) */
};
_Static_assert(sizeof(struct jt_ev_fopen) == 328, "jt_ev_fopen layout");

/* ... and closed it, or ended with it open: its bytes and size. */
struct jt_ev_fclose {
	struct jt_ev_hdr hdr;
	__s32 fd;
	__u32 flags;		/* JT_FS_* */
	__u64 dev;
	__u64 ino;
	__u64 read_bytes;
	__u64 write_bytes;
	__u64 size;		/* with JT_FS_SIZE */
	__u32 kind;
	__u32 pad;
};
_Static_assert(sizeof(struct jt_ev_fclose) == 80, "jt_ev_fclose layout");

/*
 * Written by the task iterator into its seq_file, one per thread of a
 * tracked process (or per process in discovery mode).  User space sums
 * the threads of a tgid.
 */
#define JT_SF_LEADER 0x1	/* this thread is the group leader */
#define JT_SF_DISCOVERED 0x2	/* discovery pass: newly tracked */

struct jt_sample {
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 ppid;
	__u32 uid;
	__u64 start_ns;		/* leader's start_boottime */
	__u64 parent_start_ns;
	__u64 runtime_ns;	/* this thread; leader adds dead threads' */
	__u64 utime_ns;
	__u64 stime_ns;
	__u64 rss_bytes;	/* leader only: current RSS */
	__u64 hiwater_rss_bytes; /* leader only */
	struct jt_io io;	/* this thread's own; the leader adds dead
				 * threads' (never reaped children's) */
	__u64 blkio_delay_ns;	/* this thread; leader adds dead threads' */
	__u64 rx_bytes;		/* leader only, from the tracked map */
	__u64 tx_bytes;
	__u32 flags;		/* JT_SF_* */
	__u32 pad;
	char comm[JT_COMM_LEN];
	struct jt_wait wait;	/* this thread; leader adds dead threads' */
};
_Static_assert(sizeof(struct jt_sample) == 232, "jt_sample layout");

#endif /* JOBTRACE_EVENTS_H */
