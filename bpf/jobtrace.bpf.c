// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * jobtrace.bpf.c - the kernel side of jobtrace.
 *
 * Thin programs: read, filter against the tracked-pid map, count, submit.
 * Only BTF tracepoints and the task iterator are used (no kprobes, no
 * fentry).  The layouts of everything sent to user space live in events.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define PF_KTHREAD 0x00200000
#define PF_EXITING 0x00000004
#define SIGNAL_GROUP_EXIT 0x00000004
#define AF_INET 2
#define AF_INET6 10
#define MAX_THREADS_WALKED 8192
#define MNT_NOSUID_FLAG 0x01	/* vfsmount.mnt_flags: MNT_NOSUID */
#define S_IFMT_ 00170000
#define S_IFREG_ 0100000
#define S_IFDIR_ 0040000
#define S_ISVTX_ 0001000

/* Set by the agent before load. */
const volatile __u32 agent_tgid = 0;		/* never track the agent */
const volatile __u32 argv_max = JT_ARGV_LEN;	/* argv bytes to copy */
const volatile __u32 page_size = 4096;
const volatile __u64 wakeup_bytes = 256 * 1024; /* wake user space past this */

/* Set by the agent between iterator runs: 1 = track every process seen. */
__u32 iter_discover = 0;

/* Events to user space: fork, exec, exit, oom (struct jt_ev_*). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* tgid -> jt_tracked: processes we follow.  Fork and the iterator add;
 * the last thread's last switch (or its exit, when the event is not held
 * for the switch) and the agent remove; net tracepoints add byte counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__type(key, __u32);
	__type(value, struct jt_tracked);
} tracked SEC(".maps");

/* enum jt_counter -> count, per CPU; read and summed by the agent. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JT_CNT_NR);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Scratch space for building one cgroup path (masked offsets need 2x). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[2 * JT_CGROUP_LEN]);
} cg_scratch SEC(".maps");

/* Room to build one sample in the iterator (its stack is near the limit). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jt_sample);
} sample_scratch SEC(".maps");

/* Room to build one exec or exit event before copying it out. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jt_ev_exec);
} exec_scratch SEC(".maps");
_Static_assert(sizeof(struct jt_ev_exec) >= sizeof(struct jt_ev_exit),
	       "the scratch holds an exit event");

/* Kernels before 6.15 name the kernfs parent pointer `parent`. */
struct kernfs_node___old {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

/* Kernels before 6.2 keep RSS counters as plain atomics. */
struct mm_rss_stat___old {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));
struct mm_struct___old {
	struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

/* Add one to a per-CPU counter. */
static __always_inline void count(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &idx);

	if (v)
		(*v)++;
}

/* Reserve room for an event, counting a loss if the ring buffer is full. */
static __always_inline void *reserve(__u64 size, __u32 drop_idx)
{
	void *e = bpf_ringbuf_reserve(&events, size, 0);

	if (!e)
		count(drop_idx);
	return e;
}

/* Wake the agent only once enough data has piled up; it also drains on
 * a short timer, so a quiet node costs no wakeups at all. */
static __always_inline __u64 wakeup_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* Submit a reserved event. */
static __always_inline void submit(void *e)
{
	bpf_ringbuf_submit(e, wakeup_flags());
}

/* Parent of a kernfs node on old and new kernels. */
static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(struct kernfs_node, __parent))
		return BPF_CORE_READ(kn, __parent);
	return BPF_CORE_READ((struct kernfs_node___old *)kn, parent);
}

#define NAMES_MAX 16	/* deepest path joined (cgroups: JT_CGROUP_DEPTH) */

/*
 * Join names[depth - 1] .. names[0] (the root's child first) with '/'
 * into out (len bytes, at most JT_CGROUP_LEN), through the per-CPU
 * scratch; returns the bytes written ("/" for depth 0).
 */
static __always_inline __u16 join_names(const char **names, int depth,
					char *out, __u32 len)
{
	__u32 zero = 0, pos = 0;
	__u64 off;
	char *buf;

	if (depth == 0) {
		out[0] = '/';
		return 1;
	}
	buf = bpf_map_lookup_elem(&cg_scratch, &zero);
	if (!buf)
		return 0;
	for (int i = NAMES_MAX - 1; i >= 0; i--) {
		long n;

		if (i >= depth)
			continue;
		if (pos >= len - 1)
			break;
		off = pos;
		barrier_var(off);	/* keep the mask: the verifier needs it */
		off &= JT_CGROUP_LEN - 1;
		buf[off] = '/';
		off = pos + 1;
		barrier_var(off);
		off &= JT_CGROUP_LEN - 1;
		n = bpf_probe_read_kernel_str(&buf[off], JT_CGROUP_LEN,
					      names[i]);
		pos++;
		if (n > 1)
			pos += n - 1;
	}
	if (pos > len)
		pos = len;
	bpf_probe_read_kernel(out, len, buf);
	return pos;
}

/* Write the '/'-joined path of cgroup node kn into out; returns bytes. */
static __always_inline __u16 cgroup_path(struct kernfs_node *kn, char *out)
{
	const char *names[NAMES_MAX] = {};
	int depth = 0;

	for (int i = 0; i < JT_CGROUP_DEPTH; i++) {
		struct kernfs_node *parent;

		if (!kn)
			break;
		parent = kn_parent(kn);
		if (!parent)
			break;	/* kn is the hierarchy's root */
		names[i] = BPF_CORE_READ(kn, name);
		depth = i + 1;
		kn = parent;
	}
	return join_names(names, depth, out, JT_CGROUP_LEN);
}

/* Resident pages of an mm (file + anon + shmem, like get_mm_rss()). */
static __always_inline __u64 mm_rss_pages(struct mm_struct *mm)
{
	long file, anon, shmem;

	if (bpf_core_type_exists(struct mm_rss_stat___old)) {
		struct mm_struct___old *o = (void *)mm;

		file = BPF_CORE_READ(o, rss_stat.count[0].counter);
		anon = BPF_CORE_READ(o, rss_stat.count[1].counter);
		shmem = BPF_CORE_READ(o, rss_stat.count[3].counter);
	} else {
		file = BPF_CORE_READ(mm, rss_stat[0].count);
		anon = BPF_CORE_READ(mm, rss_stat[1].count);
		shmem = BPF_CORE_READ(mm, rss_stat[3].count);
	}
	file = file < 0 ? 0 : file;
	anon = anon < 0 ? 0 : anon;
	shmem = shmem < 0 ? 0 : shmem;
	return file + anon + shmem;
}

/* The program's own RSS high-water mark in pages (VmHWM). */
static __always_inline __u64 mm_peak_pages(struct mm_struct *mm)
{
	__u64 hw = BPF_CORE_READ(mm, hiwater_rss);
	__u64 rss = mm_rss_pages(mm);

	return rss > hw ? rss : hw;
}

/* Per thread read by the iterator: the block-I/O delay last given for
 * it and what the kernel's faulty jumps added, left out (task_blkio_ns). */
struct blkio_seen {
	__u64 last_ns;
	__u64 off_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct blkio_seen);
} blkio_seen SEC(".maps");

/* t's blkio_seen, made if create (t must be a trusted pointer). */
#define blkio_seen_of(t, create) \
	((struct blkio_seen *)bpf_task_storage_get(&blkio_seen, (t), 0, \
		(create) ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0))

/*
 * Block-I/O delay of one thread (0 without delay accounting).
 *
 * A wakeup that ends an I/O wait whose start was never stamped adds the
 * whole clock since boot (/proc/PID/stat's delayacct_blkio_ticks shows
 * it too).  On 6.18 it comes with contention: a dd writing 1 MiB blocks
 * O_DIRECT beside a busy loop on its core shows it in 12 of 20 runs,
 * none alone (likely EEVDF's delayed dequeue: a task that blocks with
 * negative lag is dequeued later, and __block_task's
 * delayacct_blkio_start() stamps the task running then).  A thread
 * cannot have waited longer than it lived: a figure past that (1 ms
 * allowed between the two clocks) holds such a jump.  The jump is left
 * out and counted, and the thread's figure carries on from the last one
 * given (s: the iterator's reads remember it per thread, blkio_seen_of),
 * so that a thread read before keeps its earlier waits and counts its
 * later ones; without s (a thread reached through a walk, never read)
 * the figure is 0.  A jump from a stale start (a wait stamped before)
 * stays within the bound and cannot be told from a real wait, unless the
 * thread waited nearly all its life: a throttled O_DIRECT dd beside a
 * busy loop on its core passes its life by 80-100 ms in 5 runs of 10,
 * none in 20 alone (/proc's field 42: bench/blkio-overshoot.sh).  Such
 * an overshoot (under BLKIO_OVERSHOOT_NS; a jump by the clock since boot
 * adds at least the time from boot to the thread's start) is cut to the
 * life, counted the same: the waits read since the last pass stay.
 */
#define BLKIO_OVERSHOOT_NS 1000000000ull
static __always_inline __u64 task_blkio_ns(struct task_struct *t,
					   struct blkio_seen *s)
{
	struct task_delay_info *d = BPF_CORE_READ(t, delays);
	__u64 v, life;

	if (!d)
		return 0;
	v = BPF_CORE_READ(d, blkio_delay);
	if (!v)
		return 0;
	if (s)
		v = v > s->off_ns ? v - s->off_ns : 0;
	life = bpf_ktime_get_boot_ns() - BPF_CORE_READ(t, start_boottime);
	if (v <= life + 1000000) {
		if (s)
			s->last_ns = v;
		return v;
	}
	count(JT_CNT_BLKIO_IMPOSSIBLE);
	if (v - life < BLKIO_OVERSHOOT_NS) {
		__u64 keep = life;

		if (s) {
			if (s->last_ns > keep)	/* never below what was given */
				keep = s->last_ns;
			s->off_ns += v - keep;
			s->last_ns = keep;
		}
		return keep;
	}
	if (!s)
		return 0;
	if (v > s->last_ns)
		s->off_ns += v - s->last_ns;
	return s->last_ns;
}

/* task_blkio_ns for a sample pass: a thread with a delay is remembered. */
static __noinline __u64 task_blkio_read(struct task_struct *t)
{
	struct task_delay_info *d = BPF_CORE_READ(t, delays);

	if (!d || !BPF_CORE_READ(d, blkio_delay))
		return 0;
	return task_blkio_ns(t, blkio_seen_of(t, true));
}

/* Add one thread's waits (run queue, memory delays) and, when own_cs,
 * its context switches to *w. */
static __always_inline void wait_add(struct jt_wait *w, struct task_struct *t,
				     bool own_cs)
{
	struct task_delay_info *d = BPF_CORE_READ(t, delays);

	w->run_delay_ns += BPF_CORE_READ(t, sched_info.run_delay);
	if (d) {
		w->reclaim_ns += BPF_CORE_READ(d, freepages_delay);
		w->thrashing_ns += BPF_CORE_READ(d, thrashing_delay);
		w->swapin_ns += BPF_CORE_READ(d, swapin_delay);
		w->compact_ns += BPF_CORE_READ(d, compact_delay);
	}
	if (own_cs) {
		w->nvcsw += BPF_CORE_READ(t, nvcsw);
		w->nivcsw += BPF_CORE_READ(t, nivcsw);
	}
}

/* Add a sum of waits to another. */
static __always_inline void wait_sum(struct jt_wait *w, const struct jt_wait *add)
{
	w->run_delay_ns += add->run_delay_ns;
	w->reclaim_ns += add->reclaim_ns;
	w->thrashing_ns += add->thrashing_ns;
	w->swapin_ns += add->swapin_ns;
	w->compact_ns += add->compact_ns;
	w->nvcsw += add->nvcsw;
	w->nivcsw += add->nivcsw;
	w->net_ns += add->net_ns;
	w->child_ns += add->child_ns;
}

/* Add a dead thread's waits to *w shared with other CPUs (its context
 * switches are signal_struct's by now: not added). */
static __always_inline void wait_add_atomic(struct jt_wait *w,
					    struct task_struct *t)
{
	struct jt_wait x = {};

	wait_add(&x, t, false);
	__sync_fetch_and_add(&w->run_delay_ns, x.run_delay_ns);
	__sync_fetch_and_add(&w->reclaim_ns, x.reclaim_ns);
	__sync_fetch_and_add(&w->thrashing_ns, x.thrashing_ns);
	__sync_fetch_and_add(&w->swapin_ns, x.swapin_ns);
	__sync_fetch_and_add(&w->compact_ns, x.compact_ns);
}

/* Context switches of the threads already released (getrusage's). */
static __always_inline void wait_add_signal(struct jt_wait *w,
					    struct signal_struct *sig)
{
	w->nvcsw += BPF_CORE_READ(sig, nvcsw);
	w->nivcsw += BPF_CORE_READ(sig, nivcsw);
}

/* Start time of the process (thread group) a task belongs to. */
static __always_inline __u64 proc_start(struct task_struct *t)
{
	return BPF_CORE_READ(t, group_leader, start_boottime);
}

/* Is comm "slurmstepd"?  (A forked child still has its parent's comm.) */
static __always_inline bool is_slurmstepd(const char *comm)
{
	static const char want[] = "slurmstepd";

	for (int i = 0; i < sizeof(want); i++)
		if (comm[i] != want[i])
			return false;
	return true;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(jt_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	struct jt_tracked *pt, t = {};
	struct jt_ev_fork *e;
	struct task_struct *rp;

	if (ctgid != BPF_CORE_READ(child, pid))
		return 0;	/* a new thread, not a process */
	pt = bpf_map_lookup_elem(&tracked, &ptgid);
	if (!pt)
		return 0;
	t.start_ns = BPF_CORE_READ(child, start_boottime);
	/* an excluded tree stays excluded; an excluded wrapper's child is
	 * followed again */
	if (pt->flags & JT_TF_EXCL_TREE)
		t.flags = JT_TF_EXCLUDED | JT_TF_EXCL_TREE;
	t.inet = pt->inet;	/* its sockets are the child's too */
	if (bpf_map_update_elem(&tracked, &ctgid, &t, BPF_ANY)) {
		count(JT_CNT_TRACK_FULL);
		return 0;
	}
	if (t.flags & JT_TF_EXCLUDED) {
		count(JT_CNT_EXCLUDED);
		return 0;
	}
	e = reserve(sizeof(*e), JT_CNT_RB_DROP_FORK);
	if (!e)
		return 0;
	rp = BPF_CORE_READ(child, real_parent);
	e->hdr.type = JT_EV_FORK;
	e->hdr.pid = ctgid;
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->hdr.start_ns = t.start_ns;
	e->ppid = BPF_CORE_READ(rp, tgid);
	e->parent_start_ns = proc_start(rp);
	e->uid = BPF_CORE_READ(child, cred, uid.val);
	BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
	e->parent_title[0] = '\0';
	if (is_slurmstepd(e->comm)) {
		/* the parent is the running task: its title is readable now,
		 * even if it exits before the agent sees this event */
		struct mm_struct *mm = BPF_CORE_READ(parent, mm);

		bpf_probe_read_user_str(e->parent_title, sizeof(e->parent_title),
					(void *)BPF_CORE_READ(mm, arg_start));
	}
	submit(e);
	return 0;
}

/* Is the inode root's: owned by root, writable by nobody else (a group
 * other than root's neither), of type fmt?  With sticky, a sticky folder
 * may be writable by all: others cannot rename root's entries in it.
 * (BTF pointers of a tp_btf program: plain loads, no probe reads.) */
static __always_inline bool inode_root(struct inode *ino, __u32 fmt,
				       bool sticky)
{
	__u32 mode;

	if (!ino)
		return false;
	mode = ino->i_mode;
	if ((mode & S_IFMT_) != fmt || ino->i_uid.val)
		return false;
	if (sticky && (mode & S_ISVTX_))
		return true;
	if (mode & 0002)
		return false;
	return !(mode & 0020) || ino->i_gid.val == 0;
}

/*
 * The file an exec runs: its own name into name (size JT_NAME_LEN, "" when
 * longer), and whether it and every folder above it are root's
 * (JT_EF_EXE_ROOT in events.h).  The folders are the file's real ones
 * (d_parent), whatever path or link named it.
 */
static __always_inline bool exe_root(struct linux_binprm *bprm, char *name)
{
	struct file *f = bprm->file;
	struct dentry *d, *up;

	name[0] = '\0';
	if (!f || !(d = f->f_path.dentry))
		return false;
	if (d->d_name.len < JT_NAME_LEN)
		bpf_probe_read_kernel_str(name, JT_NAME_LEN, d->d_name.name);
	if (!f->f_path.mnt || (f->f_path.mnt->mnt_flags & MNT_NOSUID_FLAG))
		return false;
	if (!inode_root(d->d_inode, S_IFREG_, false))
		return false;
	for (int i = 0; i < JT_EXE_DEPTH; i++) {
		up = d->d_parent;
		if (!up || up == d)
			return true;	/* the file system's root */
		/* its own folder never sticky: a link made there keeps
		 * root as the owner under another's name */
		if (!inode_root(up->d_inode, S_IFDIR_, i > 0))
			return false;
		d = up;
	}
	return false;	/* deeper than we look */
}

static __always_inline void files_at_exec(struct jt_tracked *t,
					  struct task_struct *p, __u32 tgid);

SEC("tp_btf/sched_process_exec")
int BPF_PROG(jt_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct task_struct *rp;
	struct jt_tracked *t;
	struct jt_ev_exec *e;
	struct css_set *cgs;
	struct mm_struct *mm;
	__u64 start, end, len;
	const char *fname;
	__u32 zero = 0;
	long n;

	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t)
		return 0;
	if (t->flags & JT_TF_EXCL_TREE) {
		count(JT_CNT_EXCLUDED);
		return 0;
	}
	/* a new program in an excluded wrapper is classified afresh */
	t->flags &= ~JT_TF_EXCLUDED;
	e = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!e)
		return 0;
	rp = BPF_CORE_READ(p, real_parent);
	e->hdr.type = JT_EV_EXEC;
	e->hdr.pid = tgid;
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->hdr.start_ns = proc_start(p);
	e->ppid = BPF_CORE_READ(rp, tgid);
	e->parent_start_ns = proc_start(rp);
	e->uid = BPF_CORE_READ(p, cred, uid.val);
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	e->flags = 0;
	fname = BPF_CORE_READ(bprm, filename);
	n = bpf_probe_read_kernel_str(e->filename, sizeof(e->filename), fname);
	if (n == sizeof(e->filename)) {
		/* the buffer is full: the path was cut unless it is exactly
		 * 255 bytes long (its NUL is the byte the last place got) */
		char c = 0;

		bpf_probe_read_kernel(&c, 1, fname + sizeof(e->filename) - 1);
		if (c)
			e->flags |= JT_EF_EXE_TRUNC;
	}
	if (exe_root(bprm, e->exe_name))
		e->flags |= JT_EF_EXE_ROOT;
	if (BPF_CORE_READ(bprm, interp) != fname)
		e->flags |= JT_EF_SCRIPT;

	mm = BPF_CORE_READ(p, mm);
	start = BPF_CORE_READ(mm, arg_start);
	end = BPF_CORE_READ(mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > argv_max) {
		len = argv_max;
		e->flags |= JT_EF_ARGV_TRUNC;
	}
	if (len > JT_ARGV_LEN - 1) {
		len = JT_ARGV_LEN - 1;
		e->flags |= JT_EF_ARGV_TRUNC;
	}
	len &= JT_ARGV_LEN - 1;
	if (bpf_probe_read_user(e->argv, len, (void *)start))
		len = 0;
	e->argv_len = len;

	cgs = BPF_CORE_READ(p, cgroups);
	e->cgroup_id = BPF_CORE_READ(cgs, dfl_cgrp, kn, id);
	e->cg2_len = cgroup_path(BPF_CORE_READ(cgs, dfl_cgrp, kn), e->cg2);
	e->cg1_len = 0;
	if (bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id)) {
		int id = bpf_core_enum_value(enum cgroup_subsys_id,
					     memory_cgrp_id);
		struct cgroup_subsys_state *css;

		if (id >= 0 && id < CGROUP_SUBSYS_COUNT) {
			css = BPF_CORE_READ(cgs, subsys[id]);
			if (css)
				e->cg1_len = cgroup_path(
					BPF_CORE_READ(css, cgroup, kn), e->cg1);
		}
	}
	/* only the argv bytes in use travel: most command lines are short */
	len = JT_EXEC_FIXED_SIZE + e->argv_len;
	if (len > sizeof(*e))
		len = sizeof(*e);
	if (bpf_ringbuf_output(&events, e, len, wakeup_flags()))
		count(JT_CNT_RB_DROP_EXEC);
	files_at_exec(t, p, tgid);
	return 0;
}

/* Add one thread's own I/O counters to *io. */
static __always_inline void io_add(struct jt_io *io, struct task_struct *t)
{
	io->rchar += BPF_CORE_READ(t, ioac.rchar);
	io->wchar += BPF_CORE_READ(t, ioac.wchar);
	io->read_bytes += BPF_CORE_READ(t, ioac.read_bytes);
	io->write_bytes += BPF_CORE_READ(t, ioac.write_bytes);
	io->cancelled_write_bytes += BPF_CORE_READ(t, ioac.cancelled_write_bytes);
}

/* Add a sum of counters to another. */
static __always_inline void io_sum(struct jt_io *io, const struct jt_io *add)
{
	io->rchar += add->rchar;
	io->wchar += add->wchar;
	io->read_bytes += add->read_bytes;
	io->write_bytes += add->write_bytes;
	io->cancelled_write_bytes += add->cancelled_write_bytes;
}

/* Add one thread's own I/O counters to *io shared with other CPUs. */
static __always_inline void io_add_atomic(struct jt_io *io,
					  struct task_struct *t)
{
	struct jt_io x = {};

	io_add(&x, t);
	__sync_fetch_and_add(&io->rchar, x.rchar);
	__sync_fetch_and_add(&io->wchar, x.wchar);
	__sync_fetch_and_add(&io->read_bytes, x.read_bytes);
	__sync_fetch_and_add(&io->write_bytes, x.write_bytes);
	__sync_fetch_and_add(&io->cancelled_write_bytes,
			     x.cancelled_write_bytes);
}

/* Add one thread's CPU, I/O and block-I/O delay to an exit event. */
static __always_inline void thread_add(struct jt_ev_exit *e,
				       struct task_struct *t,
				       struct blkio_seen *s)
{
	e->runtime_ns += BPF_CORE_READ(t, se.sum_exec_runtime);
	e->utime_ns += BPF_CORE_READ(t, utime);
	e->stime_ns += BPF_CORE_READ(t, stime);
	io_add(&e->io, t);
	e->blkio_delay_ns += task_blkio_ns(t, s);
	wait_add(&e->wait, t, true);
	e->nr_threads_seen++;
}

/* State of a walk over a thread group's thread list. */
struct thread_walk {
	struct list_head *head;
	struct list_head *pos;
	struct task_struct *skip;	/* the exiting thread, added later */
	struct jt_ev_exit *e;
};

/* Add one listed thread to the event; stops at the list head. */
static long walk_thread(__u32 i, struct thread_walk *w)
{
	struct list_head *pos = w->pos, *next;
	struct task_struct *t;

	next = BPF_CORE_READ(pos, next);
	if (!next || next == w->head)
		return 1;
	w->pos = next;
	t = (void *)next - bpf_core_field_offset(struct task_struct,
						 thread_node);
	if (t != w->skip)
		thread_add(w->e, t, NULL);
	return 0;
}

/* Exit events waiting for their last thread's last context switch
 * (key: that thread's tid).  Exit adds, the switch sends and deletes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct jt_ev_exit);
} exiting SEC(".maps");

/* Set by the agent before load: 1 when jt_switch is attached. */
const volatile __u32 defer_exit = 0;

/* Charge peaks of the task's memory cgroup and its ancestors. */
static __always_inline void memcg_peaks(struct jt_ev_exit *e,
					struct task_struct *p)
{
	struct cgroup_subsys_state *css;
	int id;

	e->memcg_levels = 0;
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return;
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return;
	css = BPF_CORE_READ(p, cgroups, subsys[id]);
	for (int i = 0; i < JT_MEMCG_LEVELS; i++) {
		struct mem_cgroup *mc;

		if (!css)
			break;
		mc = (void *)css - bpf_core_field_offset(struct mem_cgroup, css);
		e->memcg_peak_bytes[i] =
			BPF_CORE_READ(mc, memory.watermark) * page_size;
		e->memcg_levels = i + 1;
		css = BPF_CORE_READ(css, parent);
	}
}

/* ---- files: what tracked processes have open ------------------------------
 *
 * By default no program runs at system calls: a syscall tracepoint
 * (tp_btf/sys_exit, syscalls:*) puts every call of every process on the
 * node on the kernel's slow path (bench/filecand-latest.txt: 4 KiB reads
 * 1.07 times slower with tracepoints on openat and close only).  The
 * kernel already keeps what a record needs per open file: its offset
 * (f_pos), its inode's size and link count, how it was opened (f_flags,
 * f_mode), its name.  jt_files (iter/task_file) reads them for the
 * tracked processes at each sample pass (the name with bpf_d_path); the
 * last thread's exit (jt_exit: the fd table is still attached) reads them
 * for the files still open (the name from the dentry chain); the exec
 * makes slots for the regular files on fds 0-2 (files_at_exec), which
 * short tools close just before they exit, and counts a pipe or socket
 * there without one.  A file's
 * bytes are its offset when last seen: exact for a file read or written
 * from its start without seeks and seen at the end; a file opened and
 * closed between two passes is not seen; pread/pwrite and mmap move no
 * offset.  files.follow_opens adds jt_open (syscalls:sys_exit_open,
 * openat, openat2, creat) and jt_close (syscalls:sys_enter_close), paying
 * that slow path: every open is seen with the flags asked, every close
 * with the offset and size then.  doc/architecture.md, "Files".
 */

/* tgid << 32 | fd -> jt_fslot: the open files of tracked processes seen
 * by a pass or the exit walk.  A reused fd, and the process's end
 * (jt_exit), send and remove it.  Full: counted in jt_tracked.lost. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct jt_fslot);
} fslots SEC(".maps");

/* Set by the agent before load: 1 when files are recorded. */
const volatile __u32 files_enabled = 0;

#define S_IFIFO_ 0010000
#define S_IFSOCK_ 0140000
#define FMODE_WRITE_ 0x2
#define MAX_FDS_WALKED 65536

/* The kind of file an inode mode is. */
static __always_inline __u32 mode_kind(__u32 mode)
{
	switch (mode & S_IFMT_) {
	case S_IFREG_:
		return JT_FK_REG;
	case S_IFDIR_:
		return JT_FK_DIR;
	case S_IFIFO_:
		return JT_FK_PIPE;
	case S_IFSOCK_:
		return JT_FK_SOCK;
	default:
		return JT_FK_OTHER;
	}
}

/* Whether a file of this kind is listed (a regular file or directory),
 * not only counted. */
static __always_inline bool kind_listed(__u32 kind)
{
	return kind == JT_FK_REG || kind == JT_FK_DIR;
}

/* Fill a slot from an open file (its device and inode number only when it
 * is listed: a regular file or a directory); false when there is none, or
 * it is one that is neither listed nor counted (JT_FK_OTHER: a tty,
 * /dev/null), so that it costs no slot (a slot at its fd of a file closed
 * since is sent stale at the exit, walk_slot). */
static __always_inline bool slot_of(struct file *f, struct jt_fslot *s)
{
	struct inode *ino = f ? BPF_CORE_READ(f, f_inode) : NULL;

	if (!ino)
		return false;
	s->kind = mode_kind(BPF_CORE_READ(ino, i_mode));
	if (s->kind == JT_FK_OTHER)
		return false;
	s->inode = (__u64)ino;
	s->file = (__u64)f;
	if (kind_listed(s->kind)) {
		s->dev = BPF_CORE_READ(ino, i_sb, s_dev);
		s->ino = BPF_CORE_READ(ino, i_ino);
	}
	return true;
}

/* What the kernel keeps for an open file, into its slot: the offset (its
 * movement since the exec for a slot the exec made) as the bytes written
 * (opened for writing) or read, the size, whether it has a name left
 * (JT_FS_SIZE, JT_FS_DELETED). */
static __always_inline void slot_seen(struct jt_fslot *s, struct file *f)
{
	struct inode *ino = (struct inode *)s->inode;
	__u64 pos = BPF_CORE_READ(f, f_pos);

	pos = pos >= s->base ? pos - s->base : pos;
	if (BPF_CORE_READ(f, f_mode) & FMODE_WRITE_)
		s->write_bytes = pos;
	else
		s->read_bytes = pos;
	s->size = BPF_CORE_READ(ino, i_size);
	s->flags |= JT_FS_SIZE;
	if (!BPF_CORE_READ(ino, __i_nlink))
		s->flags |= JT_FS_DELETED;
}

/*
 * Send a slot's sums and forget it.  flags: JT_FS_AT_EXIT (the file is
 * still open at the process's end, seen just now), JT_FS_STALE (its fd
 * was closed since the pass that saw it: sums and size as seen then).
 */
static __always_inline void slot_close(struct jt_tracked *t, __u64 key,
				       struct jt_fslot *s, __u32 flags,
				       __u64 start_ns)
{
	struct jt_ev_fclose *e;

	if (kind_listed(s->kind)) {
		e = reserve(sizeof(*e), JT_CNT_RB_DROP_FILE);
		if (e) {
			e->hdr.type = JT_EV_FCLOSE;
			e->hdr.pid = key >> 32;
			e->hdr.ts_ns = bpf_ktime_get_boot_ns();
			e->hdr.start_ns = start_ns;
			e->fd = (__s32)(__u32)key;
			e->flags = flags | (s->flags & (JT_FS_MMAP | JT_FS_SIZE |
							JT_FS_DELETED));
			e->dev = s->dev;
			e->ino = s->ino;
			e->read_bytes = s->read_bytes;
			e->write_bytes = s->write_bytes;
			e->size = (e->flags & JT_FS_SIZE) ? s->size : 0;
			e->kind = s->kind;
			e->pad = 0;
			submit(e);
		}
	}
	if (!bpf_map_delete_elem(&fslots, &key) && t->nslots)
		__sync_fetch_and_add(&t->nslots, -1);
}

/* State of a walk up a dentry chain (file_name). */
struct name_walk {
	struct dentry *d;
	struct mount *m;
	const char *names[NAMES_MAX];
	__u32 depth;
	__u32 done;		/* 1: at the root of the root mount */
};

/* One step up: to the parent, or from a mount's root to its mountpoint. */
static long name_step(__u32 i, struct name_walk *w)
{
	struct dentry *d = w->d, *up = BPF_CORE_READ(d, d_parent);
	struct mount *m = w->m, *pm;
	__u32 k;

	if (d == BPF_CORE_READ(m, mnt.mnt_root)) {
		pm = BPF_CORE_READ(m, mnt_parent);
		if (pm == m) {
			w->done = 1;
			return 1;
		}
		w->d = BPF_CORE_READ(m, mnt_mountpoint);
		w->m = pm;
		return 0;
	}
	if (up == d) {		/* a root not mounted here (another ns) */
		w->done = 1;
		return 1;
	}
	k = w->depth;
	if (k >= NAMES_MAX)
		return 1;
	w->names[k & (NAMES_MAX - 1)] =
		(const char *)BPF_CORE_READ(d, d_name.name);
	w->depth = k + 1;
	w->d = up;
	return 0;
}

/* The absolute name of an open file from its dentry chain, crossing
 * mounts, into out (JT_PATH_LEN); its length, 0 when deeper than
 * NAMES_MAX.  For the exit walk: bpf_d_path is for iterators only. */
static __always_inline __u32 file_name(struct file *f, char *out)
{
	struct name_walk w = {};

	w.d = BPF_CORE_READ(f, f_path.dentry);
	w.m = container_of(BPF_CORE_READ(f, f_path.mnt), struct mount, mnt);
	bpf_loop(4 * NAMES_MAX, name_step, &w, 0);
	if (!w.done)
		return 0;
	return join_names(w.names, w.depth, out, JT_PATH_LEN - 1);
}

/* How send_open() names a file. */
enum fnaming {
	FNAME_WALK,	/* the dentry chain (file_name) */
	FNAME_D_PATH,	/* bpf_d_path: in an iterator only */
	FNAME_PARENT,	/* not here: the agent has it from the parent's open
			 * of the same inode at the same fd (JT_FS_NAME_PARENT) */
};

/*
 * Tell the agent of a regular file or folder open at fd (seen the first
 * time) with the O_* flags oflags, named as how says.  The name is
 * absolute; a deleted file's ends at its own name.
 */
static __always_inline void send_open(__u32 tgid, __u64 start_ns, __s32 fd,
				      const struct jt_fslot *s, struct file *f,
				      __u32 oflags, enum fnaming how)
{
	struct jt_ev_fopen *e = reserve(sizeof(*e), JT_CNT_RB_DROP_FILE);
	long n = 0;

	if (!e)
		return;
	e->hdr.type = JT_EV_FOPEN;
	e->hdr.pid = tgid;
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->hdr.start_ns = start_ns;
	e->fd = fd;
	e->dirfd = -100;	/* AT_FDCWD: the name is absolute */
	e->oflags = oflags;
	e->kind = s->kind;
	e->flags = 0;
	e->dev = s->dev;
	e->ino = s->ino;
	e->size = BPF_CORE_READ(f, f_inode, i_size);
	e->tid = tgid;
	if (how == FNAME_PARENT) {
		e->flags = JT_FS_NAME_PARENT;
	} else if (how == FNAME_D_PATH) {
		n = bpf_d_path((struct path *)&f->f_path, e->path, sizeof(e->path));
		/* " (deleted)": 10 bytes before the NUL */
		if (n > 11 && (s->flags & JT_FS_DELETED)) {
			__u32 cut = (n - 11) & (JT_PATH_LEN - 1);

			if (e->path[cut] == ' ')
				n = cut + 1;
		}
	} else {
		n = file_name(f, e->path) + 1;
	}
	if (n <= 1) {
		e->path[0] = '\0';
		n = 1;
	}
	e->path_len = n - 1;
	submit(e);
}

/* A pipe or socket counted for t (files_nonregular). */
static __always_inline void nonreg_count(struct jt_tracked *t, __u32 kind)
{
	if (kind == JT_FK_PIPE)
		__sync_fetch_and_add(&t->nonreg.a, 1);
	else if (kind == JT_FK_SOCK)
		__sync_fetch_and_add(&t->nonreg.b, 1);
}

/* The file at fd of a process (its fd table arr of max fds), NULL when
 * none. */
static __always_inline struct file *arr_file(struct file **arr, __u32 max,
					     __u32 fd)
{
	struct file *f = NULL;

	if (fd < max)
		bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
	return f;
}

/* f's inode when f (or NULL) at fd of t is the file its last exec found
 * there that was no regular file or directory (std_inode): a pipe or
 * socket counted then, not again; else 0. */
static __always_inline __u64 std_known(struct jt_tracked *t, __u32 fd,
				       struct file *f)
{
	__u64 ino;

	if (fd >= 3 || !f)
		return 0;
	ino = t->std_inode[fd];
	return ino && (__u64)BPF_CORE_READ(f, f_inode) == ino ? ino : 0;
}

/* fd of t no longer has the file its exec found there. */
static __always_inline void std_forget(struct jt_tracked *t, __u32 fd)
{
	if (fd < 3)
		t->std_inode[fd] = 0;
}

/*
 * Whether t has a slot of inode at fd, one of 0-2 where the exec found a
 * pipe or socket (made by a pass before the exec: counted then).  A slot
 * of another file there was closed unseen since: sent stale and
 * forgotten, as file_seen() does.
 */
static __always_inline bool std_slot(struct jt_tracked *t, __u32 tgid,
				     __u32 fd, __u64 inode)
{
	__u64 key = (__u64)tgid << 32 | fd;
	struct jt_fslot *s;

	if (!t->nslots)
		return false;
	s = bpf_map_lookup_elem(&fslots, &key);
	if (!s)
		return false;
	if (s->inode == inode)
		return true;
	slot_close(t, key, s, JT_FS_STALE, t->start_ns);
	return false;
}

/* file_seen()'s oflags when they are the file's f_flags (no O_* value:
 * O_* flags are below 1 << 31). */
#define OFLAGS_OF_FILE 0xffffffffu

/* Where file_seen() is called from. */
enum fseen {
	FSEEN_PASS,	/* a sample pass (iterator: bpf_d_path) */
	FSEEN_EXEC,	/* its exec, fds 0-2: a slot, the dentry chain */
	FSEEN_EXIT,	/* the exit walk: sent closed, JT_FS_AT_EXIT */
	FSEEN_OPEN,	/* its open (files.follow_opens): a new slot */
	FSEEN_CLOSE,	/* its close (files.follow_opens): sent closed */
};

/*
 * Whether process ptgid (the parent at an exec or the exit) has a slot
 * of inode at fd: its open was sent, so the agent has the name (a job's
 * log on every tool's fd 1 or 2, named once rather than by each).
 */
static __always_inline bool parent_has(__u32 ptgid, __u32 fd, __u64 inode)
{
	__u64 key = (__u64)ptgid << 32 | fd;
	struct jt_fslot *s;

	if (!ptgid)
		return false;
	s = bpf_map_lookup_elem(&fslots, &key);
	return s && s->inode == inode;
}

/*
 * An open file f at fd of tracked process t: its slot made (and the open
 * sent with the O_* flags oflags) the first time, its offset and size
 * read every time.  A slot of another file at fd (any slot at an open)
 * was closed unseen since: sent first, stale.  At exit or at its close, a
 * file seen the first time is sent open and closed, without a slot.
 * oflags: OFLAGS_OF_FILE for the file's own f_flags, read only for a
 * listed file (a pipe's are not needed).  ptgid: at an exec or the exit,
 * the parent's tgid (0 elsewhere), whose slot of the same file names it.
 * 0, or -1 when the map is full (the file counted as lost).
 */
static __always_inline int file_seen(struct jt_tracked *t, __u32 tgid,
				     __u32 fd, struct file *f, enum fseen how,
				     __u32 oflags, __u32 ptgid)
{
	__u64 key = (__u64)tgid << 32 | fd;
	struct jt_fslot n = {}, *s;
	bool named;

	if (!slot_of(f, &n))
		return 0;
	named = kind_listed(n.kind);
	s = bpf_map_lookup_elem(&fslots, &key);
	if (s && (s->inode != n.inode || how == FSEEN_OPEN)) {
		slot_close(t, key, s, JT_FS_STALE, t->start_ns);
		s = NULL;
	}
	if (s) {
		s->file = (__u64)f;
		if (named)
			slot_seen(s, f);
		return 0;
	}
	if (how == FSEEN_EXEC)
		n.base = BPF_CORE_READ(f, f_pos);
	if (named) {
		slot_seen(&n, f);
		if (oflags == OFLAGS_OF_FILE)
			oflags = BPF_CORE_READ(f, f_flags);
	}
	if (how == FSEEN_EXIT || how == FSEEN_CLOSE) {
		nonreg_count(t, n.kind);
		if (named) {
			send_open(tgid, t->start_ns, fd, &n, f, oflags,
				  parent_has(ptgid, fd, n.inode) ?
				  FNAME_PARENT : FNAME_WALK);
			slot_close(t, key, &n, how == FSEEN_EXIT ?
				   JT_FS_AT_EXIT : 0, t->start_ns);
		}
		return 0;
	}
	if (bpf_map_update_elem(&fslots, &key, &n, BPF_NOEXIST)) {
		count(JT_CNT_FSLOT_FULL);
		if (named) {
			__sync_fetch_and_add(&t->lost.a, 1);
			__sync_fetch_and_add(&t->lost.b, 1);
		}
		return -1;
	}
	__sync_fetch_and_add(&t->nslots, 1);
	nonreg_count(t, n.kind);
	if (!named)
		return 0;
	if (how == FSEEN_PASS)
		send_open(tgid, t->start_ns, fd, &n, f, oflags, FNAME_D_PATH);
	else
		send_open(tgid, t->start_ns, fd, &n, f, oflags,
			  parent_has(ptgid, fd, n.inode) ? FNAME_PARENT :
							   FNAME_WALK);
	return 0;
}

/* A sample pass over the open files of the tracked processes (threads
 * sharing their fd table are not visited again by the kernel). */
SEC("iter/task_file")
int jt_files(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task;
	struct file *f = ctx->file;
	__u32 fd = ctx->fd, tgid;
	struct jt_tracked *t;
	__u64 std;

	barrier_var(fd);	/* one read of ctx: no pointer into it kept */
	if (!task || !f || !files_enabled)
		return 0;
	/* an ending process is the exit's: a slot made after its walk
	 * would outlive it */
	if (task->flags & PF_EXITING)
		return 0;
	tgid = task->tgid;
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t || (t->flags & JT_TF_EXCLUDED))
		return 0;
	/* the exec's pipe or socket: counted (a pass during the exec may
	 * count it a second time, before std_inode is set) */
	std = std_known(t, fd, f);
	if (std)
		std_slot(t, tgid, fd, std);
	else
		file_seen(t, tgid, fd, f, FSEEN_PASS, OFLAGS_OF_FILE, 0);
	return 0;
}

/* ---- files.follow_opens: every open and close of a tracked process ------- */

#define O_WRONLY_ 01
#define O_CREAT_ 0100
#define O_TRUNC_ 01000
#define FMODE_CREATED_ 0x100000	/* f_mode: this open created the file */
#define NR_OPEN_ 2		/* x86-64 system call numbers */
#define NR_CREAT_ 85
#define NR_OPENAT_ 257
#define NR_OPENAT2_ 437

/* The file at fd of the current process, NULL when none. */
static __always_inline struct file *fd_file(__u32 fd)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(p, files, fdt);

	if (!fdt)
		return NULL;
	return arr_file(BPF_CORE_READ(fdt, fd), BPF_CORE_READ(fdt, max_fds),
			fd);
}

/* The O_* flags open call nr asked for (from its registers, which its
 * exit still has); O_CREAT only when this open created the file. */
static __always_inline __u32 open_flags(long nr, struct file *f)
{
	struct pt_regs *r = (struct pt_regs *)
		bpf_task_pt_regs(bpf_get_current_task_btf());
	struct open_how *how;
	__u64 fl = 0;

	switch (nr) {
	case NR_OPEN_:
		fl = BPF_CORE_READ(r, si);
		break;
	case NR_OPENAT_:
		fl = BPF_CORE_READ(r, dx);
		break;
	case NR_CREAT_:
		fl = O_WRONLY_ | O_CREAT_ | O_TRUNC_;
		break;
	case NR_OPENAT2_:
		how = (struct open_how *)BPF_CORE_READ(r, dx);
		bpf_probe_read_user(&fl, sizeof(fl), &how->flags);
		break;
	}
	if (!(BPF_CORE_READ(f, f_mode) & FMODE_CREATED_))
		fl &= ~(__u64)O_CREAT_;
	return fl;
}

/* The end of an open of a tracked process: a slot for its fd, the open
 * sent with its flags and its name from the dentry chain. */
static __always_inline int opened(long nr, long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct jt_tracked *t;
	struct file *f;

	if (ret < 0)
		return 0;
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t || (t->flags & JT_TF_EXCLUDED))
		return 0;
	f = fd_file(ret);
	if (f)
		file_seen(t, tgid, ret, f, FSEEN_OPEN, open_flags(nr, f), 0);
	return 0;
}

/* The exit of open, openat, openat2 and creat (the agent attaches this
 * program to the four tracepoints).  Their record (syscall_trace_exit) is
 * the call's number as an int where raw_syscalls' has a long id, then the
 * return value: the low 32 bits tell which call. */
SEC("tracepoint/syscalls/sys_exit_openat")
int jt_open(struct trace_event_raw_sys_exit *ctx)
{
	return opened((__s32)ctx->id, ctx->ret);
}

/* A close by a tracked process, at its entry (the file is still at fd):
 * its offset and size read, the slot sent and forgotten (a file whose
 * open was not seen is sent open and closed). */
SEC("tracepoint/syscalls/sys_enter_close")
int jt_close(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, fd = ctx->args[0];
	__u64 key = (__u64)tgid << 32 | fd, std;
	struct jt_tracked *t;
	struct jt_fslot *s;
	struct file *f;

	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t || (t->flags & JT_TF_EXCLUDED))
		return 0;
	f = fd_file(fd);
	if (!f)
		return 0;
	std = std_known(t, fd, f);
	if (std) {
		/* the exec's pipe or socket, counted then, leaves fd */
		std_forget(t, fd);
		if (!std_slot(t, tgid, fd, std))
			return 0;
	} else if (file_seen(t, tgid, fd, f, FSEEN_CLOSE, OFLAGS_OF_FILE, 0)) {
		return 0;
	}
	s = bpf_map_lookup_elem(&fslots, &key);
	if (s)
		slot_close(t, key, s, 0, t->start_ns);
	return 0;
}

/* State of a walk over a process's fd table (files_at_exit, at_exec). */
struct fd_walk {
	struct jt_tracked *t;
	struct file **arr;
	__u32 tgid;
	__u32 max;
	__u32 how;		/* enum fseen: FSEEN_EXIT or FSEEN_EXEC; a
				 * constant the verifier must see (alone in
				 * its 8 bytes: no write there after) */
	__u32 pad;
	unsigned long *open_fds;	/* the table's bitmap (at exit) */
	__u64 bits;		/* at exit: open_fds[word - 1]'s fds not walked
				 * yet; at the exec: the fds to walk */
	__u64 word;		/* the next word of open_fds to read */
	__u64 ptgid;		/* the parent's tgid (file_seen) */
};

/* One fd of a process at its end or exec: its file seen.  1: the map is
 * full (stop). */
static __always_inline long fd_seen(__u32 fd, struct fd_walk *w)
{
	struct file *f = arr_file(w->arr, w->max, fd);

	if (f && file_seen(w->t, w->tgid, fd, f, w->how, OFLAGS_OF_FILE,
			   w->ptgid))
		return 1;
	return 0;
}

/* fd at the exec: its file seen (a regular file or directory). */
static long walk_fd(__u32 fd, struct fd_walk *w)
{
	if (fd >= w->max)
		return 1;
	if (!(w->bits >> fd & 1))
		return 0;
	return fd_seen(fd, w);
}

/*
 * The standard fds at an exec: each one's inode kept (t->std_inode) when
 * it is no regular file or directory, and a pipe or socket not there at
 * the exec before counted, without a slot (a process in a pipeline pays
 * no fd map entry for them).  A slot a pass made at that fd before this
 * exec keeps the file (counted then); a slot of another file there is sent
 * stale (std_slot).  Returns the fds that are a
 * regular file or directory, for the slots the walk makes.
 */
static __always_inline __u64 std_at_exec(struct jt_tracked *t,
					 struct file **arr, __u32 max,
					 __u32 tgid)
{
	struct inode *ino;
	struct file *f;
	__u64 listed = 0;
	__u32 kind;

#pragma unroll
	for (int fd = 0; fd < 3; fd++) {
		f = arr_file(arr, max, fd);
		ino = f ? BPF_CORE_READ(f, f_inode) : NULL;
		kind = ino ? mode_kind(BPF_CORE_READ(ino, i_mode)) : 0;
		if (!kind || kind_listed(kind)) {
			t->std_inode[fd] = 0;
			listed |= ino ? 1ULL << fd : 0;
			continue;
		}
		if (t->std_inode[fd] == (__u64)ino)
			continue;
		if (kind != JT_FK_OTHER && std_slot(t, tgid, fd, (__u64)ino)) {
			t->std_inode[fd] = 0;
			continue;
		}
		t->std_inode[fd] = (__u64)ino;
		nonreg_count(t, kind);
	}
	return listed;
}

/* The standard fds of an ending process that hold the file its last exec
 * found there, counted then (std_at_exec): not walked. */
static __always_inline __u64 std_at_exit(struct jt_tracked *t,
					 struct file **arr, __u32 max)
{
	struct file *f;
	__u64 known = 0;

#pragma unroll
	for (int fd = 0; fd < 3; fd++) {
		if (!t->std_inode[fd])
			continue;
		f = arr_file(arr, max, fd);
		if (std_known(t, fd, f))
			known |= 1ULL << fd;
	}
	return known;
}

#define FD_WORDS_STEP 16	/* open_fds words read in one step at most */

/* The index of the lowest set bit of v (not 0). */
static __always_inline __u32 low_bit(__u64 v)
{
	__u32 n = 0;

	v &= -v;
	for (int k = 32; k > 0; k >>= 1) {
		if (!(v & ((1ULL << k) - 1))) {
			v >>= k;
			n += k;
		}
	}
	return n;
}

/* The next open fd of an ending process (its table's open_fds bitmap,
 * so that a sparse table, fds 0-2 and a shell's 255, costs five steps,
 * not 256): its file seen.  Past the table's last word: stop. */
static long walk_open(__u32 i, struct fd_walk *w)
{
	__u32 words = (w->max + 63) / 64, fd;

	for (int k = 0; k < FD_WORDS_STEP && !w->bits; k++) {
		if (w->word >= words)
			return 1;
		bpf_probe_read_kernel(&w->bits, sizeof(w->bits),
				      &w->open_fds[w->word]);
		w->word++;
	}
	if (!w->bits)
		return 0;	/* FD_WORDS_STEP empty words: go on */
	fd = (w->word - 1) * 64 + low_bit(w->bits);
	w->bits &= w->bits - 1;
	if (fd >= w->max)
		return 1;
	return fd_seen(fd, w);
}

/*
 * One slot of an ending process: sent (still open or closed since the
 * pass that saw it), forgotten.  A file closed since is read again
 * through the struct file last seen when that still is the slot's file
 * (another process shares the open, or it was freed and not reused: the
 * kernel's file cache is SLAB_TYPESAFE_BY_RCU since 6.7, so the memory
 * is still a struct file): the offset and size at its close, as for the
 * standard fds that coreutils and most tools close just before they exit.
 */
static long walk_slot(__u32 fd, struct fd_walk *w)
{
	__u64 key = (__u64)w->tgid << 32 | fd;
	struct jt_fslot *s;
	struct file *f, *last;

	if (!w->t->nslots)
		return 1;
	s = bpf_map_lookup_elem(&fslots, &key);
	if (!s)
		return 0;
	f = arr_file(w->arr, w->max, fd);
	if (f && (__u64)BPF_CORE_READ(f, f_inode) == s->inode) {
		slot_close(w->t, key, s, JT_FS_AT_EXIT, w->t->start_ns);
		return 0;
	}
	last = (struct file *)s->file;
	if (last && (__u64)BPF_CORE_READ(last, f_inode) == s->inode &&
	    kind_listed(s->kind))
		slot_seen(s, last);
	slot_close(w->t, key, s, JT_FS_STALE, w->t->start_ns);
	return 0;
}

/* The files of a process at its end (its last thread's exit: the fd
 * table is still there): each seen a last time, then every slot sent. */
static __always_inline void files_at_exit(struct jt_tracked *t,
					  struct task_struct *p, __u32 tgid,
					  __u32 ptgid)
{
	struct fdtable *fdt = BPF_CORE_READ(p, files, fdt);
	struct fd_walk w = { t, NULL, tgid, 0, FSEEN_EXIT };

	if (!files_enabled)
		return;
	w.ptgid = ptgid;
	if (fdt && !(t->flags & JT_TF_EXCLUDED)) {
		w.arr = BPF_CORE_READ(fdt, fd);
		w.open_fds = BPF_CORE_READ(fdt, open_fds);
		w.max = BPF_CORE_READ(fdt, max_fds);
		if (w.max) {
			bpf_probe_read_kernel(&w.bits, sizeof(w.bits),
					      w.open_fds);
			w.bits &= ~std_at_exit(t, w.arr, w.max);
			w.word = 1;
		}
		bpf_loop(MAX_FDS_WALKED, walk_open, &w, 0);
	}
	if (t->nslots)
		bpf_loop(MAX_FDS_WALKED, walk_slot, &w, 0);
}

/* The standard fds of a process at its exec: slots for the regular files
 * and folders on them, which a tool shorter than a pass (head > out,
 * wc < in) closes before its end (walk_slot reads them again there); the
 * others counted (std_at_exec). */
static __always_inline void files_at_exec(struct jt_tracked *t,
					  struct task_struct *p, __u32 tgid)
{
	struct fdtable *fdt = BPF_CORE_READ(p, files, fdt);
	struct fd_walk w = { t, NULL, tgid, 0, FSEEN_EXEC };
	__u32 max;

	if (!files_enabled || !fdt)
		return;
	max = BPF_CORE_READ(fdt, max_fds);
	w.arr = BPF_CORE_READ(fdt, fd);
	w.max = max < 3 ? max : 3;
	w.bits = std_at_exec(t, w.arr, w.max, tgid);
	if (!w.bits)
		return;
	w.ptgid = BPF_CORE_READ(p, real_parent, tgid);
	bpf_loop(3, walk_fd, &w, 0);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(jt_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid = BPF_CORE_READ(p, pid);
	__u32 ptgid;
	struct thread_walk w = {};
	struct signal_struct *sig;
	struct jt_tracked *t;
	struct jt_ev_exit *e;
	struct mm_struct *mm;
	__u64 peak, kmax;
	__u32 sflags, zero = 0;

	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t)
		return 0;
	sig = BPF_CORE_READ(p, signal);
	if (BPF_CORE_READ(sig, live.counter) != 0)
		return 0;	/* the group goes on; see jt_switch */
	/* its open files' sums go out before the exit event; an excluded
	 * one's slots (made before it was excluded) go too */
	ptgid = BPF_CORE_READ(p, real_parent, tgid);
	files_at_exit(t, p, tgid, ptgid);
	if (t->flags & JT_TF_EXCLUDED) {
		count(JT_CNT_EXCLUDED);
		goto untrack;
	}
	/* built in the per-CPU scratch, then kept or sent */
	e = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!e)
		goto untrack;
	__builtin_memset(e, 0, sizeof(*e));
	e->hdr.type = JT_EV_EXIT;
	e->hdr.pid = tgid;
	e->hdr.start_ns = proc_start(p);
	e->ppid = ptgid;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);

	/* exit status as wait(2) reports it */
	sflags = BPF_CORE_READ(sig, flags);
	if (sflags & SIGNAL_GROUP_EXIT)
		e->exit_status = BPF_CORE_READ(sig, group_exit_code);
	else
		e->exit_status = BPF_CORE_READ(p, exit_code);
	if ((t->flags & JT_TF_OOM) || BPF_CORE_READ(sig, oom_mm))
		e->flags |= JT_XF_OOM;

	/*
	 * CPU: threads already released are in signal_struct (as wait4
	 * counts them).  I/O: signal_struct's also holds reaped children's,
	 * so only the threads' own counters: those that died earlier were
	 * added to t->io_acc at their last switch (read first: a thread is
	 * then either there or still listed, never both), the listed ones
	 * are walked, and this thread is added last.
	 */
	e->io = t->io_acc;
	e->blkio_delay_ns = t->blkio_acc_ns;
	e->wait = t->wait_acc;
	wait_add_signal(&e->wait, sig);
	e->runtime_ns = BPF_CORE_READ(sig, sum_sched_runtime);
	e->utime_ns = BPF_CORE_READ(sig, utime);
	e->stime_ns = BPF_CORE_READ(sig, stime);
	w.head = (void *)sig + bpf_core_field_offset(struct signal_struct,
						     thread_head);
	w.pos = w.head;
	w.skip = p;
	w.e = e;
	bpf_loop(MAX_THREADS_WALKED, walk_thread, &w, 0);

	/* the program's own peak: its mm is still attached on 6.16+ */
	peak = t->peak_pages;
	mm = BPF_CORE_READ(p, mm);
	if (mm) {
		__u64 own = mm_peak_pages(mm);

		if (own > peak)
			peak = own;
		e->flags |= JT_XF_MM_AT_EXIT;
	}
	kmax = BPF_CORE_READ(sig, maxrss);
	if (peak > kmax)
		kmax = peak;
	e->peak_rss_bytes = peak * page_size;
	e->maxrss_kernel_bytes = kmax * page_size;
	if (BPF_CORE_READ(p, delays))
		e->flags |= JT_XF_DELAYACCT;
	e->rx_bytes = t->rx_bytes;
	e->tx_bytes = t->tx_bytes;
	memcg_peaks(e, p);
	e->nonreg = t->nonreg;
	e->lost = t->lost;

	/*
	 * This thread still runs: its CPU is final after its last switch,
	 * which sends the event.  The process stays tracked until then, so
	 * that a sample pass in between (an OOM victim frees its memory for
	 * milliseconds after this point) sees it alive rather than gone
	 * without an exit: it is tracked, or its exit is in the ring buffer.
	 */
	if (defer_exit && !bpf_map_update_elem(&exiting, &tid, e, BPF_ANY))
		return 0;
	if (defer_exit)
		count(JT_CNT_EXIT_EARLY);
	thread_add(e, p, blkio_seen_of(p, false));
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	if (bpf_ringbuf_output(&events, e, sizeof(*e), wakeup_flags()))
		count(JT_CNT_RB_DROP_EXIT);
untrack:
	bpf_map_delete_elem(&tracked, &tgid);
	return 0;
}

/* What a tracked thread's sleep is waiting for (struct jt_sleep.kind). */
#define JT_SLEEP_NET 1		/* the network: see struct jt_wait */
#define JT_SLEEP_CHILD 2	/* a child: wait4, waitid */

/* A tracked thread asleep in a network or wait system call. */
struct jt_sleep {
	__u64 since_ns;		/* its switch out, bpf_ktime_get_ns() */
	__u32 tgid;
	__u32 kind;		/* JT_SLEEP_* */
};

/* tid -> its sleep, from the switch that began it to the wakeup that ends
 * it (LRU: a thread that died asleep is pushed out in time). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct jt_sleep);
} sleeping SEC(".maps");

#define NR_READ_ 0		/* x86-64 system call numbers */
#define NR_WRITE_ 1
#define NR_READV_ 19
#define NR_WRITEV_ 20
#define NR_CONNECT_ 42
#define NR_ACCEPT_ 43
#define NR_SENDTO_ 44
#define NR_RECVFROM_ 45
#define NR_SENDMSG_ 46
#define NR_RECVMSG_ 47
#define NR_WAIT4_ 61
#define NR_WAITID_ 247
#define NR_ACCEPT4_ 288
#define NR_RECVMMSG_ 299
#define NR_SENDMMSG_ 307

/* Whether fd of the current task is an IPv4 or IPv6 socket (what the byte
 * counters count: not a Unix socket to a local daemon). */
static __always_inline bool inet_fd(__u64 fd)
{
	struct file *f = fd_file(fd);
	struct socket *so;
	__u16 family;

	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT_) != S_IFSOCK_)
		return false;
	so = BPF_CORE_READ(f, private_data);
	family = BPF_CORE_READ(so, sk, __sk_common.skc_family);
	return family == AF_INET || family == AF_INET6;
}

/* The wait a sleep in system call nr can be (x86-64 numbers): a child's,
 * the network's if its fd is an IP socket (JT_SLEEP_NET), or 0 for
 * anything else (nanosleep, futex, a file lock, poll/select/epoll: their
 * sleep is the rest).  read/write and their vector forms are JT_SLEEP_RW:
 * the network's only on an IP socket of a process that has used one. */
#define JT_SLEEP_RW 3
static __always_inline __u32 sleep_call(long nr)
{
	switch (nr) {
	case NR_WAIT4_:
	case NR_WAITID_:
		return JT_SLEEP_CHILD;
	case NR_READ_:
	case NR_WRITE_:
	case NR_READV_:
	case NR_WRITEV_:
		return JT_SLEEP_RW;
	case NR_CONNECT_:
	case NR_ACCEPT_:
	case NR_ACCEPT4_:
	case NR_SENDTO_:
	case NR_RECVFROM_:
	case NR_SENDMSG_:
	case NR_RECVMSG_:
	case NR_RECVMMSG_:
	case NR_SENDMMSG_:
		return JT_SLEEP_NET;
	}
	return 0;
}

/*
 * A thread p (the current task) goes to sleep: if it sleeps in a system
 * call that can be a network or child wait (its registers at entry: one
 * load) and its process is tracked (one lookup), keep when and why.  A
 * read or write looks at its fd only in a process that has used an IP
 * socket (jt_tracked.inet): a pipe reader's sleep walks no fd table.
 */
static __always_inline void sleep_begin(struct task_struct *p)
{
	struct pt_regs *r = (struct pt_regs *)bpf_task_pt_regs(p);
	__u32 tgid = p->tgid, tid = p->pid, kind;
	struct jt_sleep s = {};
	struct jt_tracked *t;

	kind = sleep_call(r->orig_ax);
	if (!kind)
		return;
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t || (t->flags & JT_TF_EXCLUDED))
		return;
	if (kind == JT_SLEEP_RW && !t->inet)
		return;
	if (kind != JT_SLEEP_CHILD) {
		if (!inet_fd(r->di))
			return;
		if (!t->inet)
			t->inet = 1;
		kind = JT_SLEEP_NET;
	}
	s.kind = kind;
	s.tgid = tgid;
	s.since_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&sleeping, &tid, &s, BPF_ANY);
}

/* Add the part of thread tid's network or child wait that has gone on so
 * far to *w (a sample: the whole sleep goes to its process when it ends). */
static __always_inline void sleep_so_far(struct jt_wait *w, __u32 tid)
{
	struct jt_sleep *s = bpf_map_lookup_elem(&sleeping, &tid);
	__u64 d;

	if (!s)
		return;
	d = bpf_ktime_get_ns() - s->since_ns;
	if (s->kind == JT_SLEEP_CHILD)
		w->child_ns += d;
	else
		w->net_ns += d;
}

/*
 * A task woken: if it slept in a network or child wait, the sleep's
 * length goes to its process (one map miss for any other task).
 */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(jt_wakeup, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct jt_tracked *t;
	struct jt_sleep *s;
	__u64 d;

	__u32 tgid, kind;

	s = bpf_map_lookup_elem(&sleeping, &tid);
	if (!s)
		return 0;
	d = bpf_ktime_get_ns() - s->since_ns;
	tgid = s->tgid;
	kind = s->kind;
	/* out of the map before it goes to the process: a sample pass in
	 * between may miss the sleep for a moment, never count it twice
	 * (sleep_so_far and wait_acc) */
	bpf_map_delete_elem(&sleeping, &tid);
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (t && kind == JT_SLEEP_CHILD)
		__sync_fetch_and_add(&t->wait_acc.child_ns, d);
	else if (t)
		__sync_fetch_and_add(&t->wait_acc.net_ns, d);
	return 0;
}

/* Old kernels name the task state `state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

#define TASK_DEAD 0x80
#define TASK_SLEEPING_ 0x3	/* TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE */

/*
 * Every context switch: a tracked task that goes to sleep in a network or
 * child wait starts its sleep (sleep_begin); else only a dead task's last
 * one does anything.  Its
 * CPU time (and I/O) is final now.  The last thread of a process sends
 * the exit event kept for it; an earlier thread of a followed process
 * leaves its own I/O to the process (the group leader stays listed until
 * the end, so the walk at exit counts it).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(jt_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	struct jt_ev_exit *e;
	struct jt_tracked *t;
	__u32 tid, tgid;
	long state;

	if (bpf_core_field_exists(prev->__state))
		state = prev->__state;
	else
		state = ((struct task_struct___old *)prev)->state;
	if (!(state & TASK_DEAD)) {
		if (!preempt && (state & TASK_SLEEPING_))
			sleep_begin(prev);
		return 0;
	}
	tid = prev->pid;
	tgid = prev->tgid;
	e = bpf_map_lookup_elem(&exiting, &tid);
	if (e) {
		thread_add(e, prev, blkio_seen_of(prev, false));
		e->hdr.ts_ns = bpf_ktime_get_boot_ns();
		if (bpf_ringbuf_output(&events, e, sizeof(*e), wakeup_flags()))
			count(JT_CNT_RB_DROP_EXIT);
		bpf_map_delete_elem(&exiting, &tid);
		bpf_map_delete_elem(&tracked, &tgid);
		return 0;
	}
	if (tgid == tid)
		return 0;
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t)
		return 0;
	io_add_atomic(&t->io_acc, prev);
	__sync_fetch_and_add(&t->blkio_acc_ns,
			     task_blkio_ns(prev, blkio_seen_of(prev, false)));
	wait_add_atomic(&t->wait_acc, prev);
	return 0;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(jt_oom, struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct jt_tracked *t;
	struct jt_ev_oom *e;
	struct mm_struct *mm;
	__u64 rss = 0;

	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t)
		return 0;
	if (t->flags & JT_TF_EXCLUDED) {
		count(JT_CNT_EXCLUDED);
		return 0;
	}
	mm = BPF_CORE_READ(task, mm);
	if (mm) {
		rss = mm_peak_pages(mm);
		if (rss > t->peak_pages)
			t->peak_pages = rss;
	}
	t->flags |= JT_TF_OOM;
	e = reserve(sizeof(*e), JT_CNT_RB_DROP_OOM);
	if (!e)
		return 0;
	e->hdr.type = JT_EV_OOM;
	e->hdr.pid = tgid;
	e->hdr.ts_ns = bpf_ktime_get_boot_ns();
	e->hdr.start_ns = proc_start(task);
	e->uid = BPF_CORE_READ(task, cred, uid.val);
	e->total_vm_pages = mm ? BPF_CORE_READ(mm, total_vm) : 0;
	e->rss_pages = rss;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	submit(e);
	return 0;
}

/* Add bytes sent or received on an IP socket to the current process. */
static __always_inline void net_add(struct sock *sk, int ret, int tx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct jt_tracked *t;
	__u16 family;

	if (ret <= 0)
		return;
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t)
		return;
	if (t->flags & JT_TF_EXCLUDED) {
		count(JT_CNT_EXCLUDED);
		return;
	}
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != AF_INET && family != AF_INET6)
		return;
	if (!t->inet)
		t->inet = 1;
	if (tx)
		__sync_fetch_and_add(&t->tx_bytes, ret);
	else
		__sync_fetch_and_add(&t->rx_bytes, ret);
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(jt_sock_send, struct sock *sk, int ret, int flags)
{
	net_add(sk, ret, 1);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(jt_sock_recv, struct sock *sk, int ret, int flags)
{
	net_add(sk, ret, 0);
	return 0;
}

/* Track the process tgid a discovery pass found (its own frame: the
 * iterator's is near the stack limit).  0 if tracked now. */
static __noinline int discover(struct task_struct *task, __u32 tgid)
{
	struct jt_tracked nt = {};

	nt.start_ns = BPF_CORE_READ(task, start_boottime);
	if (bpf_map_update_elem(&tracked, &tgid, &nt, BPF_NOEXIST)) {
		count(JT_CNT_TRACK_FULL);
		return -1;
	}
	return 0;
}

SEC("iter/task")
int jt_iter(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct jt_sample *s;
	__u32 zero = 0;
	struct signal_struct *sig;
	struct jt_tracked *t;
	struct mm_struct *mm;
	bool discovered = false;
	__u32 tgid, tid;

	if (!task)
		return 0;
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	if (tgid == agent_tgid)
		return 0;
	tid = BPF_CORE_READ(task, pid);
	t = bpf_map_lookup_elem(&tracked, &tgid);
	if (!t) {
		if (!iter_discover || tid != tgid || discover(task, tgid))
			return 0;
		t = bpf_map_lookup_elem(&tracked, &tgid);
		if (!t)
			return 0;
		discovered = true;
	}
	if (t->flags & JT_TF_EXCLUDED)
		return 0;
	/* an untracked task costs the lookup above, not this */
	s = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!s)
		return 0;
	__builtin_memset(s, 0, sizeof(*s));
	s->pid = tgid;
	s->tid = tid;
	if (discovered)
		s->flags |= JT_SF_DISCOVERED;
	s->ppid = BPF_CORE_READ(task, real_parent, tgid);
	s->uid = BPF_CORE_READ(task, cred, uid.val);
	s->start_ns = proc_start(task);
	s->parent_start_ns = proc_start(BPF_CORE_READ(task, real_parent));
	s->runtime_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	s->utime_ns = BPF_CORE_READ(task, utime);
	s->stime_ns = BPF_CORE_READ(task, stime);
	io_add(&s->io, task);
	s->blkio_delay_ns = task_blkio_read(task);
	wait_add(&s->wait, task, true);
	sleep_so_far(&s->wait, s->tid);
	BPF_CORE_READ_STR_INTO(&s->comm, task, comm);
	if (s->tid == tgid) {
		s->flags |= JT_SF_LEADER;
		sig = BPF_CORE_READ(task, signal);
		s->runtime_ns += BPF_CORE_READ(sig, sum_sched_runtime);
		s->utime_ns += BPF_CORE_READ(sig, utime);
		s->stime_ns += BPF_CORE_READ(sig, stime);
		/* dead threads' own I/O, not signal_struct's (children's) */
		io_sum(&s->io, &t->io_acc);
		s->blkio_delay_ns += t->blkio_acc_ns;
		wait_sum(&s->wait, &t->wait_acc);
		wait_add_signal(&s->wait, sig);
		mm = BPF_CORE_READ(task, mm);
		if (mm) {
			__u64 peak = mm_peak_pages(mm);

			s->rss_bytes = mm_rss_pages(mm) * page_size;
			s->hiwater_rss_bytes = peak * page_size;
			if (peak > t->peak_pages)
				t->peak_pages = peak;
		}
		s->rx_bytes = t->rx_bytes;
		s->tx_bytes = t->tx_bytes;
	}
	bpf_seq_write(seq, s, sizeof(*s));
	return 0;
}
