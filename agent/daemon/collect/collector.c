// SPDX-License-Identifier: GPL-2.0-or-later
/* collector.c - loads and drives the BPF programs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "jobtrace.skel.h"
#include "log.h"
#include "ringbuf.h"
#include "stages.h"

struct collector {
	struct jobtrace_bpf *skel;
	struct ringbuf *rb;
	struct collector_cb cb;
	struct bpf_link *iter_link;
	struct bpf_link *files_link;	/* jt_files, NULL: files not recorded */
	struct bpf_link *open_links[5];	/* files.follow_opens: open_tps */
	char *iter_buf;
	size_t iter_cap;
	int ncpus;
	char missing[256];
	int rb_err;
	bool files;		/* jt_files is loaded */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static bool libbpf_verbose;

/* libbpf's messages go through our logger, debug unless verbose. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	enum log_level lvl = level == LIBBPF_WARN ? LOG_LVL_WARN : LOG_LVL_DEBUG;
	char *buf = NULL, *line, *save = NULL;

	if (level == LIBBPF_DEBUG && !libbpf_verbose)
		return 0;
	if (vasprintf(&buf, fmt, ap) < 0)
		return 0;
	/* verifier logs are long: one log line per line of text */
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		log_msg(lvl, "%s%s", strncmp(line, "libbpf: ", 8) ? "libbpf: " : "",
			line);
	free(buf);
	return 0;
}

/* Ring-buffer callback: check and hand one event to the agent. */
static int on_rb(void *ctx, void *data, size_t len)
{
	struct collector *c = ctx;
	union jt_event ev;
	enum stage prev = stages_enter(STAGE_DECODE);
	int type = decode_event(data, len, &ev);

	if (type < 0) {
		log_warn("bad event from the kernel (%zu bytes): %s", len,
			 strerror(-type));
		stages_leave(prev);
		return 0;
	}
	/* what the agent makes of it: the tracker's stages nest in it */
	stages_enter(STAGE_TRACK);
	c->cb.event(c->cb.ctx, &ev);
	stages_leave(prev);
	return 0;
}

/* Does the running kernel have the BTF tracepoint `name`? */
static bool have_tp(const struct btf *vmlinux, const char *name)
{
	char tname[128];

	snprintf(tname, sizeof(tname), "btf_trace_%s", name);
	return btf__find_by_name_kind(vmlinux, tname, BTF_KIND_TYPEDEF) > 0;
}

/* Record a missing optional signal and stop its program from loading. */
static void skip_prog(struct collector *c, struct bpf_program *prog,
		      const char *tp, const char *what)
{
	size_t n = strlen(c->missing);

	bpf_program__set_autoload(prog, false);
	snprintf(c->missing + n, sizeof(c->missing) - n, "%s%s",
		 n ? "," : "", tp);
	log_warn("kernel has no tracepoint %s: %s will not be recorded", tp,
		 what);
}

/* files.follow_opens' tracepoints (syscalls:*, plain ones), in the order
 * of struct collector's open_links; the last is jt_close's, the others
 * jt_open's. */
static const char *const open_tps[] = {
	"sys_exit_openat", "sys_exit_open", "sys_exit_openat2",
	"sys_exit_creat", "sys_enter_close",
};
_Static_assert(ARRAY_SIZE(open_tps) ==
	       ARRAY_SIZE(((struct collector *)0)->open_links), "open_tps");

#define TRACEFS "/sys/kernel/tracing"

/*
 * Load files.follow_opens' programs or not (before the load); they are
 * attached by attach_opens(), not by the skeleton.
 */
static void load_opens(struct collector *c, bool on)
{
	struct bpf_program *progs[] = { c->skel->progs.jt_open,
					c->skel->progs.jt_close };

	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		bpf_program__set_autoattach(progs[i], false);
		if (!on)
			bpf_program__set_autoload(progs[i], false);
	}
}

/*
 * Attach files.follow_opens' programs: plain tracepoints, whose ids
 * libbpf reads from tracefs, mounted here when it is not.  0 or -errno
 * (logged, naming the tracepoint).
 */
static int attach_opens(struct collector *c)
{
	size_t last = ARRAY_SIZE(open_tps) - 1;

	if (access(TRACEFS "/events", F_OK) &&
	    access("/sys/kernel/debug/tracing/events", F_OK)) {
		if (mount("nodev", TRACEFS, "tracefs", 0, NULL))
			log_warn("cannot mount tracefs on " TRACEFS ": %s",
				 strerror(errno));
		else
			log_info("mounted tracefs on " TRACEFS
				 " (files.follow_opens)");
	}
	for (size_t i = 0; i <= last; i++) {
		c->open_links[i] = bpf_program__attach_tracepoint(
			i == last ? c->skel->progs.jt_close :
				    c->skel->progs.jt_open,
			"syscalls", open_tps[i]);
		if (!c->open_links[i]) {
			int err = -errno;

			log_error("files.follow_opens: cannot attach syscalls:%s: %s",
				  open_tps[i], strerror(-err));
			return err;
		}
	}
	log_info("files.follow_opens: every open and close of a tracked process followed (system-call tracepoints)");
	return 0;
}

/* Leave out the programs whose tracepoint this kernel does not have. */
static void skip_missing(struct collector *c, const struct btf *vmlinux)
{
	const struct {
		const char *tp;
		struct bpf_program *prog;
		const char *what;
	} opt[] = {
		{ "mark_victim", c->skel->progs.jt_oom, "OOM kills" },
		{ "sock_send_length", c->skel->progs.jt_sock_send,
		  "network bytes sent" },
		{ "sock_recv_length", c->skel->progs.jt_sock_recv,
		  "network bytes received" },
		{ "sched_wakeup", c->skel->progs.jt_wakeup,
		  "network and child waits" },
	};

	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (!have_tp(vmlinux, opt[i].tp))
			skip_prog(c, opt[i].prog, opt[i].tp, opt[i].what);
}

/* Open, load and attach everything. */
int collector_open(const struct collector_opts *o,
		   const struct collector_cb *cb, struct collector **out)
{
	struct collector *c = NULL;
	struct btf *vmlinux = NULL;
	int err;

	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_log);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		log_error("this kernel has no BTF (/sys/kernel/btf/vmlinux: %s): "
			  "jobtrace needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
			  strerror(errno));
		return -ENOTSUP;
	}
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		err = -errno;
		log_error("cannot read the kernel's BTF: %s", strerror(-err));
		return err;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto cleanup;
	}
	c->cb = *cb;
	c->ncpus = libbpf_num_possible_cpus();
	c->skel = jobtrace_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_error("cannot open the BPF object: %s", strerror(-err));
		goto cleanup;
	}
	for (const char **tp = (const char *[]){ "sched_process_fork",
		"sched_process_exec", "sched_process_exit", NULL }; *tp; tp++) {
		if (!have_tp(vmlinux, *tp)) {
			log_error("kernel has no tracepoint %s: cannot follow processes",
				  *tp);
			err = -ENOTSUP;
			goto cleanup;
		}
	}
	skip_missing(c, vmlinux);

	/* files: read from the kernel's open files at each sample pass and
	 * at a process's end; no program at system calls */
	c->files = o->files;
	bpf_program__set_autoattach(c->skel->progs.jt_files, false);
	if (!c->files)
		bpf_program__set_autoload(c->skel->progs.jt_files, false);
	c->skel->rodata->files_enabled = c->files;
	load_opens(c, c->files && o->follow_opens);

	/* a dead task's CPU is final only after its last context switch */
	if (have_tp(vmlinux, "sched_switch"))
		c->skel->rodata->defer_exit = 1;
	else
		skip_prog(c, c->skel->progs.jt_switch, "sched_switch",
			  "the CPU of a process's last time slice");

	c->skel->rodata->agent_tgid = getpid();
	c->skel->rodata->argv_max = o->argv_max;
	c->skel->rodata->page_size = sysconf(_SC_PAGESIZE);
	c->skel->rodata->wakeup_bytes = (uint64_t)o->ringbuf_kib * 1024 / 8;
	bpf_map__set_max_entries(c->skel->maps.events, o->ringbuf_kib * 1024);
	bpf_map__set_max_entries(c->skel->maps.tracked, o->max_tracked);

	err = jobtrace_bpf__load(c->skel);
	if (err) {
		log_error("cannot load the BPF programs: %s (run with --verbose for the verifier log)",
			  strerror(-err));
		goto cleanup;
	}
	err = jobtrace_bpf__attach(c->skel);
	if (err) {
		log_error("cannot attach the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	err = ringbuf_open(bpf_map__fd(c->skel->maps.events),
			   bpf_map__max_entries(c->skel->maps.events), on_rb,
			   c, &c->rb);
	if (err) {
		log_error("cannot set up the ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	c->iter_link = bpf_program__attach_iter(c->skel->progs.jt_iter, NULL);
	if (!c->iter_link) {
		err = -errno;
		log_error("cannot attach the task iterator: %s", strerror(-err));
		goto cleanup;
	}
	if (c->files) {
		c->files_link = bpf_program__attach_iter(c->skel->progs.jt_files,
							 NULL);
		if (!c->files_link) {
			err = -errno;
			log_error("cannot attach the file iterator: %s",
				  strerror(-err));
			goto cleanup;
		}
		if (o->follow_opens) {
			err = attach_opens(c);
			if (err)
				goto cleanup;
		}
	}
	*out = c;
	c = NULL;
	err = 0;
cleanup:
	btf__free(vmlinux);
	collector_close(c);
	return err;
}

/* Detach and free. */
void collector_close(struct collector *c)
{
	if (!c)
		return;
	bpf_link__destroy(c->iter_link);
	bpf_link__destroy(c->files_link);
	for (size_t i = 0; i < ARRAY_SIZE(c->open_links); i++)
		bpf_link__destroy(c->open_links[i]);
	ringbuf_free(c->rb);
	jobtrace_bpf__destroy(c->skel);
	free(c->iter_buf);
	free(c);
}

/* Does the kernel follow what processes open, read and write? */
bool collector_files(const struct collector *c)
{
	return c->files;
}

/* fd to poll for ring-buffer data. */
int collector_fd(const struct collector *c)
{
	return ringbuf_fd(c->rb);
}

/* Deliver every pending ring-buffer event. */
int collector_drain(struct collector *c)
{
	int n = ringbuf_consume(c->rb);

	if (n < 0 && n != -EINTR)
		log_warn("ring buffer: %s", strerror(-n));
	return n;
}

#define SETTLE_MAX 4096		/* held exits waited for, at most */

/* CLOCK_MONOTONIC in ms. */
static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for the exits held at the call to reach the ring buffer (see
 * collector.h); returns how many are still held. */
int collector_settle(struct collector *c, unsigned timeout_ms)
{
	int fd = bpf_map__fd(c->skel->maps.exiting);
	uint64_t deadline = mono_ms() + timeout_ms;
	static uint32_t keys[SETTLE_MAX];
	struct jt_ev_exit e;
	size_t n = 0, left;

	while (n < SETTLE_MAX &&
	       !bpf_map_get_next_key(fd, n ? &keys[n - 1] : NULL, &keys[n]))
		n++;
	for (;;) {
		collector_drain(c);
		left = 0;
		for (size_t i = 0; i < n; i++)
			if (!bpf_map_lookup_elem(fd, &keys[i], &e))
				keys[left++] = keys[i];
		n = left;
		if (!n || mono_ms() >= deadline)
			break;
		/* a dying task preempted before its last switch */
		usleep(1000);
	}
	return (int)n;
}

/* One pass of the file iterator: the tracked processes' open files, a
 * file seen the first time sent as an event (it prints nothing). */
static void files_pass(struct collector *c)
{
	char buf[64];
	int fd = bpf_iter_create(bpf_link__fd(c->files_link));

	if (fd < 0) {
		log_warn("file iterator: %s", strerror(errno));
		return;
	}
	while (read(fd, buf, sizeof(buf)) < 0 && errno == EINTR)
		;
	close(fd);
}

/* Run the file and the task iterators once and deliver the samples. */
int collector_sample(struct collector *c, bool discovery)
{
	size_t len = 0, partial = 0, n;
	const struct jt_sample *first;
	int fd, err = 0;
	ssize_t r;

	if (c->files_link)
		files_pass(c);
	c->skel->bss->iter_discover = discovery;
	fd = bpf_iter_create(bpf_link__fd(c->iter_link));
	if (fd < 0) {
		err = -errno;
		log_warn("task iterator: %s", strerror(-err));
		goto out;
	}
	for (;;) {
		if (c->iter_cap - len < 65536) {
			size_t cap = c->iter_cap ? c->iter_cap * 2 : 1 << 20;
			char *b = realloc(c->iter_buf, cap);

			if (!b) {
				err = -ENOMEM;
				goto out;
			}
			c->iter_buf = b;
			c->iter_cap = cap;
		}
		r = read(fd, c->iter_buf + len, c->iter_cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			log_warn("reading the task iterator: %s", strerror(-err));
			goto out;
		}
		if (r == 0)
			break;
		len += r;
	}
	n = decode_samples(c->iter_buf, len, &first, &partial);
	if (partial)
		log_warn("task iterator: %zu stray bytes", partial);
	c->cb.samples(c->cb.ctx, first, n, discovery);
	err = (int)n;
out:
	c->skel->bss->iter_discover = 0;
	if (fd >= 0)
		close(fd);
	return err;
}

/* Keep a process's events (and with tree, its descendants') in the kernel. */
int collector_exclude(struct collector *c, uint32_t pid, bool tree)
{
	struct jt_tracked t;

	if (bpf_map__lookup_elem(c->skel->maps.tracked, &pid, sizeof(pid), &t,
				 sizeof(t), 0))
		return -errno;	/* already gone */
	t.flags |= JT_TF_EXCLUDED | (tree ? JT_TF_EXCL_TREE : 0);
	if (bpf_map__update_elem(c->skel->maps.tracked, &pid, sizeof(pid), &t,
				 sizeof(t), BPF_EXIST))
		return -errno;
	return 0;
}

/* Does the kernel follow pid, the process that started at start_ns?  Its
 * entry goes when its last thread exits (an excluded one's too). */
bool collector_follows(struct collector *c, uint32_t pid, uint64_t start_ns)
{
	struct jt_tracked t;

	return !bpf_map__lookup_elem(c->skel->maps.tracked, &pid, sizeof(pid),
				     &t, sizeof(t), 0) &&
	       t.start_ns == start_ns;
}

/* Sum the per-CPU counters. */
int collector_counters(struct collector *c, uint64_t out[JT_CNT_NR])
{
	uint64_t vals[c->ncpus];

	for (uint32_t i = 0; i < JT_CNT_NR; i++) {
		out[i] = 0;
		if (bpf_map__lookup_elem(c->skel->maps.counters, &i, sizeof(i),
					 vals, sizeof(vals), 0))
			return -errno;
		for (int cpu = 0; cpu < c->ncpus; cpu++)
			out[i] += vals[cpu];
	}
	return 0;
}

/* Names of signals this kernel cannot give. */
const char *collector_missing(const struct collector *c)
{
	return c->missing;
}
