// SPDX-License-Identifier: GPL-2.0-or-later
/* record.c - schema v1 records (one JSON object per line). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_parse.h"
#include "record.h"
#include "util.h"

/* Fill host name, boot id and where the memory controller is. */
int record_host_init(struct jt_host *h, const char *hostname)
{
	char buf[64], cg[4096];
	ssize_t n;

	memset(h, 0, sizeof(*h));
	if (hostname && *hostname)
		util_strlcpy(h->name, hostname, sizeof(h->name));
	else if (gethostname(h->name, sizeof(h->name) - 1))
		util_strlcpy(h->name, "localhost", sizeof(h->name));
	n = util_read_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf));
	if (n > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		util_strlcpy(h->boot_id, buf, sizeof(h->boot_id));
	}
	n = util_read_file("/proc/cgroups", cg, sizeof(cg));
	h->memcg_v2 = n > 0 && cg_memory_on_v2(cg) == 1;
	record_host_sync_clock(h);
	return 0;
}

/* Recompute the boottime -> realtime offset. */
void record_host_sync_clock(struct jt_host *h)
{
	uint64_t b1 = util_now_ns(CLOCK_BOOTTIME);
	uint64_t r = util_now_ns(CLOCK_REALTIME);
	uint64_t b2 = util_now_ns(CLOCK_BOOTTIME);

	h->boot_to_real_ns = (int64_t)r - (int64_t)(b1 + (b2 - b1) / 2);
}

/* Boottime ns to realtime ns. */
uint64_t record_realtime(const struct jt_host *h, uint64_t boot_ns)
{
	return (uint64_t)((int64_t)boot_ns + h->boot_to_real_ns);
}

/* 64-bit FNV-1a over a buffer, continuing from seed. */
static uint64_t fnv1a(uint64_t seed, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		seed ^= p[i];
		seed *= 0x100000001b3ull;
	}
	return seed;
}

/* Final avalanche so nearby keys give unrelated ids. */
static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Format two 64-bit halves as a version-8 (custom) UUID. */
static void uuid_fmt(uint64_t a, uint64_t b, char out[37])
{
	a = (a & ~0xf000ull) | 0x8000ull;		/* version 8 */
	b = (b & ~(3ull << 62)) | (2ull << 62);		/* RFC 4122 variant */
	snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx",
		 (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
		 (unsigned)a & 0xffff, (unsigned)(b >> 48),
		 (unsigned long long)(b & 0xffffffffffffull));
}

/* Deterministic record id for any (type, key, time) on this boot. */
void record_make_id(const struct jt_host *h, const char *type,
		    const char *key, uint64_t ns, char out[37])
{
	uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;

	a = fnv1a(a, h->boot_id, strlen(h->boot_id));
	a = fnv1a(a, type, strlen(type) + 1);
	a = fnv1a(a, key, strlen(key) + 1);
	a = fnv1a(a, &ns, sizeof(ns));
	b = fnv1a(b, &a, sizeof(a));
	b = fnv1a(b, h->name, strlen(h->name));
	uuid_fmt(mix(a), mix(b ^ a), out);
}

/* Deterministic record id for a process: same process, same id. */
void record_process_id(const struct jt_host *h, const struct jt_proc *p,
		       char out[37])
{
	char key[16];

	snprintf(key, sizeof(key), "%u", p->pid);
	record_make_id(h, "process", key, p->start_ns, out);
}

/*
 * The record id of p's parent process: what record_process_id() gives the
 * parent, whose pid is p->ppid and whose start is p->parent_start_ns.
 */
void record_parent_id(const struct jt_host *h, const struct jt_proc *p,
		      char out[37])
{
	char key[16];

	snprintf(key, sizeof(key), "%u", p->ppid);
	record_make_id(h, "process", key, p->parent_start_ns, out);
}

/* Write key: string, or null when empty. */
static void kv_opt(struct jbuf *b, const char *key, const char *val)
{
	json_key(b, key);
	if (val && *val)
		json_str(b, val);
	else
		json_null(b);
}

/* Open a record and write the fields every record starts with. */
void record_head(struct jbuf *b, const char *type, const struct jt_host *h,
		 const char *id)
{
	json_obj_open(b);
	json_kv_str(b, "type", type);
	json_kv_u64(b, "schema", JT_SCHEMA_VERSION);
	json_kv_str(b, "host", h->name);
	json_kv_str(b, "id", id);
}

/* The job object, or null when the process belongs to no known job. */
static void job_obj(struct jbuf *b, const struct jt_job *j)
{
	json_key(b, "job");
	if (!j->id[0] && !j->run[0] && !j->pipeline[0] && !j->task[0]) {
		json_null(b);
		return;
	}
	json_obj_open(b);
	kv_opt(b, "scheduler", j->scheduler);
	kv_opt(b, "id", j->id);
	kv_opt(b, "step", j->step);
	kv_opt(b, "run", j->run);
	kv_opt(b, "pipeline", j->pipeline);
	kv_opt(b, "task", j->task);
	kv_opt(b, "user", j->user);
	kv_opt(b, "account", j->account);
	kv_opt(b, "cost_center", j->cost_center);
	json_obj_close(b);
}

/* Identity, program and job fields shared by process and sample records. */
static void proc_fields(struct jbuf *b, const struct jt_host *h,
			const struct jt_proc *p)
{
	const char *a = p->argv, *end = p->argv + p->argv_len;

	json_kv_u64(b, "pid", p->pid);
	json_kv_u64(b, "ppid", p->ppid);
	json_key(b, "parent_id");
	/* without the parent's start (known only from its exit) no record
	 * has the id it would give */
	if (p->ppid && p->parent_start_ns) {
		char parent_id[37];

		record_parent_id(h, p, parent_id);
		json_str(b, parent_id);
	} else {
		json_null(b);
	}
	json_key(b, "start_time");
	json_time(b, record_realtime(h, p->start_ns));
	kv_opt(b, "exe", p->exe);
	json_kv_bool(b, "exe_truncated", p->state & JT_PS_EXE_TRUNC);
	json_kv_str(b, "comm", p->comm);
	json_key(b, "argv");
	json_arr_open(b);
	while (a && a < end) {
		size_t n = strnlen(a, end - a);

		json_strn(b, a, n);
		a += n + 1;
	}
	json_arr_close(b);
	json_kv_bool(b, "argv_truncated", p->state & JT_PS_ARGV_TRUNC);
	json_kv_u64(b, "uid", p->uid);
	kv_opt(b, "cgroup", p->cgroup);
	kv_opt(b, "container", p->container);
	job_obj(b, &p->job);
	json_key(b, "tool");
	json_obj_open(b);
	kv_opt(b, "name", p->tool_name);
	kv_opt(b, "category", p->tool_category);
	kv_opt(b, "version", p->tool_version);
	json_obj_close(b);
}

/* Counter objects shared by process and sample records. */
static void counter_fields(struct jbuf *b, const struct jt_counters *c,
			   bool sample)
{
	json_key(b, "cpu");
	json_obj_open(b);
	json_kv_double(b, "user_s", c->cpu_user_s);
	json_kv_double(b, "sys_s", c->cpu_sys_s);
	json_obj_close(b);
	json_key(b, "mem");
	json_obj_open(b);
	json_kv_u64(b, "peak_rss_bytes", c->peak_rss_bytes);
	if (sample)
		json_kv_u64(b, "rss_bytes", c->rss_bytes);
	else
		json_kv_u64(b, "maxrss_kernel_bytes", c->maxrss_kernel_bytes);
	json_obj_close(b);
	json_key(b, "io");
	json_obj_open(b);
	json_kv_u64(b, "read_bytes", c->read_bytes);
	json_kv_u64(b, "write_bytes", c->write_bytes);
	json_kv_u64(b, "cancelled_write_bytes", c->cancelled_write_bytes);
	json_kv_u64(b, "rchar", c->rchar);
	json_kv_u64(b, "wchar", c->wchar);
	json_kv_double(b, "blkio_delay_s", c->blkio_delay_s);
	json_obj_close(b);
	json_key(b, "net");
	json_obj_open(b);
	json_kv_u64(b, "rx_bytes", c->rx_bytes);
	json_kv_u64(b, "tx_bytes", c->tx_bytes);
	json_obj_close(b);
}

/* key: v, or null when not known. */
static void kv_u64_opt(struct jbuf *b, const char *key, bool known, uint64_t v)
{
	json_key(b, key);
	if (known)
		json_u64(b, v);
	else
		json_null(b);
}

/* key: a time, or null when 0 (not yet / not known). */
static void kv_time_opt(struct jbuf *b, const char *key, uint64_t realtime_ns)
{
	json_key(b, key);
	if (realtime_ns)
		json_time(b, realtime_ns);
	else
		json_null(b);
}

/* Encode a finished process as a schema v1 `process` record. */
void record_process(struct jbuf *b, const struct jt_host *h,
		    const struct jt_proc *p, const char *id)
{
	record_head(b, "process", h, id);
	proc_fields(b, h, p);
	kv_time_opt(b, "end_time", p->end_ns ? record_realtime(h, p->end_ns) : 0);
	json_key(b, "exit");
	json_obj_open(b);
	json_key(b, "code");
	if (p->state & JT_PS_EXIT_LOST || p->exit_signal)
		json_null(b);
	else
		json_i64(b, p->exit_code);
	json_key(b, "signal");
	if (p->exit_signal)
		json_i64(b, p->exit_signal);
	else
		json_null(b);
	json_kv_bool(b, "core_dumped", p->core_dumped);
	json_kv_bool(b, "oom_killed", p->oom_killed);
	json_kv_bool(b, "lost", p->state & JT_PS_EXIT_LOST);
	json_obj_close(b);
	counter_fields(b, &p->c, false);
	json_obj_close(b);
}

/* The usage figures of a job or step ("source" of the memory peak:
 * its cgroup's charge peak, else the peak of its processes' RSS sum). */
static void usage_fields(struct jbuf *b, const struct jt_usage *u, bool v2)
{
	json_kv_double(b, "cpu_s", u->cpu_s);
	json_kv_u64(b, "processes", u->processes);
	json_key(b, "mem_peak_bytes");
	if (u->cgroup_peak_bytes)
		json_u64(b, u->cgroup_peak_bytes);
	else if (u->rss_sum_peak_bytes)
		json_u64(b, u->rss_sum_peak_bytes);
	else
		json_null(b);
	json_key(b, "mem_peak_source");
	if (u->cgroup_peak_bytes)
		json_str(b, v2 ? "cgroup_v2" : "cgroup_v1");
	else if (u->rss_sum_peak_bytes)
		json_str(b, "samples");
	else
		json_null(b);
}

/* Encode a `job` record. */
void record_job(struct jbuf *b, const struct jt_host *h,
		const struct jt_jobinfo *ji, const char *phase, const char *id)
{
	record_head(b, "job", h, id);
	json_kv_str(b, "phase", phase);
	job_obj(b, &ji->job);
	kv_opt(b, "name", ji->name);
	kv_opt(b, "partition", ji->partition);
	kv_opt(b, "node", ji->node[0] ? ji->node : h->name);
	kv_u64_opt(b, "uid", ji->uid_known, ji->uid);
	kv_time_opt(b, "start_time", ji->start_ns);
	kv_time_opt(b, "end_time", ji->end_ns);
	json_key(b, "allocation");
	json_obj_open(b);
	kv_u64_opt(b, "cpus", ji->cpus, ji->cpus);
	kv_u64_opt(b, "mem_bytes", ji->mem_bytes, ji->mem_bytes);
	kv_u64_opt(b, "gpus", ji->gpus, ji->gpus);
	json_obj_close(b);
	json_key(b, "exit_code");
	if (ji->exit_known)
		json_i64(b, ji->exit_code);
	else
		json_null(b);
	json_key(b, "cost");
	json_null(b);	/* prices arrive with the cloud integration */
	if (!strcmp(phase, "end")) {
		json_key(b, "usage");
		json_obj_open(b);
		usage_fields(b, &ji->usage, h->memcg_v2);
		json_key(b, "steps");
		json_arr_open(b);
		for (unsigned i = 0; i < ji->nsteps; i++) {
			json_obj_open(b);
			json_kv_str(b, "step", ji->steps[i].step);
			usage_fields(b, &ji->steps[i].u, h->memcg_v2);
			json_obj_close(b);
		}
		json_arr_close(b);
		json_obj_close(b);
	}
	json_obj_close(b);
}

/* Encode a running process's counters as a `sample` record. */
void record_sample(struct jbuf *b, const struct jt_host *h,
		   const struct jt_proc *p, const char *id)
{
	record_head(b, "sample", h, id);
	json_key(b, "time");
	json_time(b, record_realtime(h, p->sample_ns));
	proc_fields(b, h, p);
	counter_fields(b, &p->c, true);
	json_obj_close(b);
}
