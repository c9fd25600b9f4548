// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * filecand.bpf.c - the kernel programs of issue 27's candidate designs,
 * one per hook, each doing what the design would do for an untracked
 * process (one map miss) so that bench/filecand.sh can time the hook
 * alone with kernel.bpf_stats_enabled:
 *   c_sysexit   tp_btf/sys_exit: the i27-kernel design's hook (reference)
 *   c_openat    syscalls:sys_exit_openat, a plain tracepoint: it runs for
 *               openat only, but any syscall tracepoint sets
 *               TIF_SYSCALL_TRACEPOINT on every task (the slow path); a
 *               tracked process's open makes a slot with the flags asked
 *               (the syscall's registers) and the name (dentry chain)
 *   c_close     syscalls:sys_enter_close: a tracked slot's offset and size
 *               read, sent and forgotten
 *   c_getpages  tp_btf/mm_filemap_get_pages (buffered reads)
 *   c_dirty     tp_btf/writeback_dirty_folio (buffered writes, per folio)
 *   c_dio       tp_btf/iomap_dio_rw_begin (O_DIRECT on iomap file systems)
 *   c_prepexec  tp_btf/sched_prepare_exec (exec only)
 *   c_exitwalk  tp_btf/sched_process_exit: the fd table walked at the
 *               last thread's exit, per regular file f_pos, i_size,
 *               f_mode and its name (d_parent chain, bounded)
 *   c_files     iter/task_file: a tracked process's open files with
 *               bpf_d_path, f_pos, i_size (the sample pass of design a)
 * Not built by make: bench/filecand.sh builds it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define S_IFMT_ 00170000
#define S_IFREG_ 0100000
#define NAME_PARTS 16
#define PART_LEN 64
#define MAX_FDS 1024

/* Set by the loader: 1 = every process counts as tracked (-a): each hook
 * does a tracked process's work (c_exitwalk walks every exiting process,
 * the I/O hooks add to a slot, c_openat sends a named open); the iterator
 * reports only target_tgid. */
const volatile __u32 exit_all = 0;
const volatile __u32 target_tgid = 0;

/* tgid -> count: stands for jobtraced's tracked map (empty here: every
 * hook pays the miss an untracked process pays). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 131072);
	__type(key, __u32);
	__type(value, __u64);
} tracked SEC(".maps");

/* One regular file still open at a process's exit. */
struct cand_file {
	__u32 tgid;
	__u32 fd;
	__u64 pos;
	__u64 size;
	__u32 mode;
	__u32 parts;
	char name[NAME_PARTS][PART_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} files SEC(".maps");

/* Regular files seen by the exit walks and records not sent. */
__u64 exit_files = 0, exit_lost = 0;

/* (tgid, file or inode) -> bytes, offset: what a tracked process's I/O
 * hooks and opens keep per file. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} slots SEC(".maps");

/* The tracked map's answer for the current process (a miss here unless
 * exit_all): 1 when tracked. */
static __always_inline int tracked_hit(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *v = bpf_map_lookup_elem(&tracked, &tgid);

	if (v)
		__sync_fetch_and_add(v, 1);
	return v || exit_all;
}

/* A tracked process's I/O of n bytes on inode ino added to its slot. */
static __always_inline int slot_add(void *ino, __u64 n)
{
	__u64 key = bpf_get_current_pid_tgid() >> 32 << 32 ^ (__u64)ino;
	__u64 *v = bpf_map_lookup_elem(&slots, &key);

	if (v) {
		__sync_fetch_and_add(v, n);
		return 0;
	}
	bpf_map_update_elem(&slots, &key, &n, BPF_ANY);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(c_sysexit, struct pt_regs *regs, long ret)
{
	return tracked_hit();
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(c_getpages, struct address_space *m, unsigned long index,
	     unsigned long last)
{
	if (!tracked_hit() || !m)
		return 0;
	return slot_add(BPF_CORE_READ(m, host), (last - index + 1) * 4096);
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(c_dirty, struct folio *folio, struct address_space *m)
{
	if (!tracked_hit() || !m)
		return 0;
	return slot_add(BPF_CORE_READ(m, host), 4096);
}

SEC("tp_btf/iomap_dio_rw_begin")
int BPF_PROG(c_dio, struct kiocb *iocb, struct iov_iter *iter,
	     unsigned int dio_flags, size_t done_before)
{
	if (!tracked_hit() || !iocb || !iter)
		return 0;
	return slot_add(BPF_CORE_READ(iocb, ki_filp, f_inode),
			BPF_CORE_READ(iter, count));
}

SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(c_prepexec, struct task_struct *task, struct linux_binprm *bprm)
{
	return tracked_hit();
}

/* State of one exit walk. */
struct walk {
	struct file **arr;
	__u32 tgid;
	__u32 max;
};

/* One fd of an ending process: a regular file's offset, size and name. */
static long walk_fd(__u32 fd, struct walk *w)
{
	struct file *f = NULL;
	struct dentry *d;
	struct inode *ino;
	struct cand_file *e;
	__u32 mode;

	if (fd >= w->max)
		return 1;
	bpf_probe_read_kernel(&f, sizeof(f), &w->arr[fd]);
	if (!f)
		return 0;
	ino = BPF_CORE_READ(f, f_inode);
	mode = BPF_CORE_READ(ino, i_mode);
	if ((mode & S_IFMT_) != S_IFREG_)
		return 0;
	__sync_fetch_and_add(&exit_files, 1);
	e = bpf_ringbuf_reserve(&files, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&exit_lost, 1);
		return 0;
	}
	e->tgid = w->tgid;
	e->fd = fd;
	e->pos = BPF_CORE_READ(f, f_pos);
	e->size = BPF_CORE_READ(ino, i_size);
	e->mode = BPF_CORE_READ(f, f_mode);
	e->parts = 0;
	d = BPF_CORE_READ(f, f_path.dentry);
	for (int i = 0; i < NAME_PARTS; i++) {
		struct dentry *up = BPF_CORE_READ(d, d_parent);

		if (!up || up == d)
			break;
		bpf_probe_read_kernel_str(e->name[i], PART_LEN,
					  BPF_CORE_READ(d, d_name.name));
		e->parts = i + 1;
		d = up;
	}
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(c_exitwalk, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct fdtable *fdt;
	struct walk w;

	if (!bpf_map_lookup_elem(&tracked, &tgid) && !exit_all)
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	fdt = BPF_CORE_READ(p, files, fdt);
	if (!fdt)
		return 0;
	w.arr = BPF_CORE_READ(fdt, fd);
	w.tgid = tgid;
	w.max = BPF_CORE_READ(fdt, max_fds);
	bpf_loop(MAX_FDS, walk_fd, &w, 0);
	return 0;
}

/* The file at fd of the current process, NULL when none. */
static __always_inline struct file *fd_file(__u32 fd)
{
	struct task_struct *p = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(p, files, fdt);
	struct file **arr = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
	return f;
}

SEC("tracepoint/syscalls/sys_exit_openat")
int c_openat(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs;
	struct walk w = {};
	struct file *f;
	__u64 key, flags;
	long fd = ctx->ret;

	if (!tracked_hit() || fd < 0)
		return 0;
	f = fd_file(fd);
	if (!f)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	flags = BPF_CORE_READ(regs, dx);	/* openat's third argument */
	key = bpf_get_current_pid_tgid() >> 32 << 32 | fd;
	bpf_map_update_elem(&slots, &key, &flags, BPF_ANY);
	w.tgid = bpf_get_current_pid_tgid() >> 32;
	w.max = fd + 1;
	w.arr = BPF_CORE_READ(bpf_get_current_task_btf(), files, fdt, fd);
	walk_fd(fd, &w);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_close")
int c_close(struct trace_event_raw_sys_enter *ctx)
{
	__u32 fd = ctx->args[0];
	struct cand_file *e;
	struct file *f;
	__u64 key, *v;

	if (!tracked_hit())
		return 0;
	key = bpf_get_current_pid_tgid() >> 32 << 32 | fd;
	v = bpf_map_lookup_elem(&slots, &key);
	f = fd_file(fd);
	if (!v || !f)
		return 0;
	e = bpf_ringbuf_reserve(&files, sizeof(*e), 0);
	if (e) {
		e->tgid = key >> 32;
		e->fd = fd;
		e->pos = BPF_CORE_READ(f, f_pos);
		e->size = BPF_CORE_READ(f, f_inode, i_size);
		e->mode = *v;
		e->parts = 0;
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	}
	bpf_map_delete_elem(&slots, &key);
	return 0;
}

SEC("iter/task_file")
int c_files(struct bpf_iter__task_file *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct file *f = ctx->file;
	static char path[256];
	struct inode *ino;

	if (!task || !f || (target_tgid && task->tgid != target_tgid))
		return 0;
	ino = f->f_inode;
	if (!ino || (ino->i_mode & S_IFMT_) != S_IFREG_)
		return 0;
	if (bpf_d_path((struct path *)&f->f_path, path, sizeof(path)) < 0)
		path[0] = '\0';
	BPF_SEQ_PRINTF(seq, "tgid=%d fd=%u pos=%llu size=%llu f_mode=%x nlink=%u path=%s\n",
		       task->tgid, ctx->fd, f->f_pos, ino->i_size, f->f_mode,
		       ino->__i_nlink, path);
	return 0;
}
