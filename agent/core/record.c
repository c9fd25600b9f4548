// SPDX-License-Identifier: GPL-2.0-or-later
/* record.c - schema v1 records (one JSON object per line). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_parse.h"
#include "cost.h"
#include "jobstate.h"
#include "record.h"
#include "schema.h"
#include "util.h"

#define CLOCK_STEP_NS 1000000	/* 1 ms: a change of the clock offset taken */
#define CLOCK_READ_OK_NS 20000	/* a clock reading this tight is not repeated */
#define CLOCK_TRIES 8		/* readings at most, the tightest one counts */

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

/*
 * Recompute the boottime -> realtime offset.  A change under
 * CLOCK_STEP_NS is the measurement's own jitter (a microsecond or two
 * between the clock reads): keeping the offset then gives every record
 * of a process the same start_time, which reports match samples to
 * process records by.  A real step or a slew that adds up to it is taken.
 * The reading is the best of a few: a thread preempted between the clock
 * reads (a loaded node) would measure the offset wrong by the time it
 * waited, and could take that for a step.
 */
void record_host_sync_clock(struct jt_host *h)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0, d;

	for (int i = 0; i < CLOCK_TRIES && best > CLOCK_READ_OK_NS; i++) {
		uint64_t b1 = util_now_ns(CLOCK_BOOTTIME);
		uint64_t r = util_now_ns(CLOCK_REALTIME);
		uint64_t b2 = util_now_ns(CLOCK_BOOTTIME);

		if (b2 - b1 < best) {
			best = b2 - b1;
			off = (int64_t)r - (int64_t)(b1 + (b2 - b1) / 2);
		}
	}
	d = off - h->boot_to_real_ns;
	if (!h->boot_to_real_ns || d >= CLOCK_STEP_NS || d <= -CLOCK_STEP_NS)
		h->boot_to_real_ns = off;
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
	static const char hex[] = "0123456789abcdef";
	char *o = out;

	a = (a & ~0xf000ull) | 0x8000ull;		/* version 8 */
	b = (b & ~(3ull << 62)) | (2ull << 62);		/* RFC 4122 variant */
	/* 8-4-4-4-12 hex digits, as "%08x-%04x-%04x-%04x-%012llx" would,
	 * without printf (every record has an id, a process record two) */
	for (int i = 60; i >= 0; i -= 4) {
		*o++ = hex[(a >> i) & 0xf];
		if (i == 32 || i == 16)
			*o++ = '-';
	}
	*o++ = '-';
	for (int i = 60; i >= 0; i -= 4) {
		*o++ = hex[(b >> i) & 0xf];
		if (i == 48)
			*o++ = '-';
	}
	*o = '\0';
}

/*
 * Deterministic record id for any (type, key, time) on this boot.  Its
 * first 48 bits are the time in ms (the clock the caller gives: boot time
 * for processes), so records made one after the other have ids that sort
 * together and a store's unique index on them grows at its end instead of
 * touching a random page for every record (bench/README.md: 16.3-17.5 us
 * of sink CPU per record against 26.4-27.0 in stores of 100 000); the rest
 * is a hash of boot id, host, type and key.
 */
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
	/* the time first: ids of records made one after the other sort
	 * together, so a store's index on them grows at its end */
	uuid_fmt((ns / 1000000) << 16 | (mix(a) & 0xffff), mix(b ^ a), out);
}

/* Deterministic record id for a process: same process, same id. */
void record_process_id(const struct jt_host *h, const struct jt_proc *p,
		       char out[37])
{
	char key[16];

	util_utoa(p->pid, key);
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

	util_utoa(p->ppid, key);
	record_make_id(h, "process", key, p->parent_start_ns, out);
}

/* The members every record starts with ("type" is the writer's). */
void record_head_values(struct sv *v, const struct jt_host *h, const char *id)
{
	sv_u64(&v[V_SCHEMA], JT_SCHEMA_VERSION);
	sv_str(&v[V_HOST], h->name);
	sv_str(&v[V_ID], id);
}

/* The job object, or null when the process belongs to no known job. */
void record_job_values(struct sv *v, const struct jt_job *j)
{
	if (record_job_named(j))
		record_job_fill(v, j);
}

/* Whether j names a job (its records' job object is not null). */
bool record_job_named(const struct jt_job *j)
{
	return j->id[0] || j->run[0] || j->pipeline[0] || j->task[0];
}

/* The job object's own members (not AWS Batch's), whatever they are. */
void record_job_fill(struct sv *v, const struct jt_job *j)
{
	v[V_JOB].st = SV_SET;
	sv_str_opt(&v[V_JOB_SCHEDULER], j->scheduler);
	sv_str_opt(&v[V_JOB_ID], j->id);
	sv_str_opt(&v[V_JOB_STEP], j->step);
	sv_str_opt(&v[V_JOB_RUN], j->run);
	sv_str_opt(&v[V_JOB_PIPELINE], j->pipeline);
	sv_str_opt(&v[V_JOB_TASK], j->task);
	sv_str_opt(&v[V_JOB_USER], j->user);
	sv_str_opt(&v[V_JOB_ACCOUNT], j->account);
	sv_str_opt(&v[V_JOB_COST_CENTER], j->cost_center);
}

/* The AWS Batch members of the job object. */
void record_batch_values(struct sv *v, const struct jt_batch *b)
{
	if (!b || v[V_JOB].st != SV_SET)
		return;
	if (b->attempt)
		sv_u64(&v[V_JOB_ATTEMPT], b->attempt);
	if (b->has_array)
		sv_u64(&v[V_JOB_ARRAY_INDEX], b->array_index);
	if (b->has_node)
		sv_u64(&v[V_JOB_NODE_INDEX], b->node_index);
	sv_str_opt(&v[V_JOB_QUEUE], b->queue);
	sv_str_opt(&v[V_JOB_COMPUTE_ENV], b->compute_env);
	sv_str_opt(&v[V_JOB_ECS_TASK_ARN], b->ecs_task_arn);
}

/* The tool object. */
void record_tool_values(struct sv *v, const char *name, const char *category,
			const char *version)
{
	v[V_TOOL].st = SV_SET;
	sv_str_opt(&v[V_TOOL_NAME], name);
	sv_str_opt(&v[V_TOOL_CATEGORY], category);
	sv_str_opt(&v[V_TOOL_VERSION], version);
}

/* Identity, program and job of process and sample records; parent_id
 * (37 bytes) must live as long as v. */
static void proc_values(struct sv *v, const struct jt_host *h,
			const struct jt_proc *p, const struct jt_batch *batch,
			char *parent_id)
{
	sv_u64(&v[V_PID], p->pid);
	sv_u64(&v[V_PPID], p->ppid);
	/* without the parent's start (known only from its exit) no record
	 * has the id it would give */
	if (p->ppid && p->parent_start_ns) {
		record_parent_id(h, p, parent_id);
		sv_str(&v[V_PARENT_ID], parent_id);
	}
	sv_u64(&v[V_START_TIME], record_realtime(h, p->start_ns));
	sv_str_opt(&v[V_EXE], p->exe);
	sv_bool(&v[V_EXE_TRUNCATED], p->state & JT_PS_EXE_TRUNC);
	sv_str(&v[V_COMM], p->comm);
	v[V_ARGV].st = SV_SET;
	v[V_ARGV].s = p->argv;
	v[V_ARGV].n = p->argv ? p->argv_len : 0;
	sv_bool(&v[V_ARGV_TRUNCATED], p->state & JT_PS_ARGV_TRUNC);
	sv_u64(&v[V_UID], p->uid);
	sv_str_opt(&v[V_CGROUP], p->cgroup);
	sv_str_opt(&v[V_CONTAINER], p->container);
	record_job_values(v, &p->job);
	record_batch_values(v, batch);
	record_tool_values(v, p->tool_name, p->tool_category, p->tool_version);
}

/* The members of a wait object (a process's, a job's usage.wait). */
static void wait_values(struct sv *v, const struct jt_waits *w)
{
	sv_f64(&v[V_WAIT_RUN_QUEUE_S], w->run_queue_s);
	sv_f64(&v[V_WAIT_RECLAIM_S], w->reclaim_s);
	sv_f64(&v[V_WAIT_THRASHING_S], w->thrashing_s);
	sv_f64(&v[V_WAIT_SWAPIN_S], w->swapin_s);
	sv_f64(&v[V_WAIT_COMPACT_S], w->compact_s);
	sv_f64(&v[V_WAIT_NET_S], w->net_s);
	sv_f64(&v[V_WAIT_CHILDREN_S], w->children_s);
	sv_u64(&v[V_WAIT_NVCSW], w->nvcsw);
	sv_u64(&v[V_WAIT_NIVCSW], w->nivcsw);
}

/* The counters of process and sample records. */
static void counter_values(struct sv *v, const struct jt_counters *c)
{
	v[V_CPU].st = v[V_MEM_PROCESS].st = v[V_MEM_SAMPLE].st = SV_SET;
	v[V_IO].st = v[V_NET].st = v[V_WAIT].st = SV_SET;
	sv_f64(&v[V_CPU_USER_S], c->cpu_user_s);
	sv_f64(&v[V_CPU_SYS_S], c->cpu_sys_s);
	sv_u64(&v[V_MEM_PEAK_RSS], c->peak_rss_bytes);
	sv_u64(&v[V_MEM_MAXRSS_KERNEL], c->maxrss_kernel_bytes);
	sv_u64(&v[V_MEM_RSS], c->rss_bytes);
	sv_u64(&v[V_IO_READ_BYTES], c->read_bytes);
	sv_u64(&v[V_IO_WRITE_BYTES], c->write_bytes);
	sv_u64(&v[V_IO_CANCELLED_WRITE_BYTES], c->cancelled_write_bytes);
	sv_u64(&v[V_IO_RCHAR], c->rchar);
	sv_u64(&v[V_IO_WCHAR], c->wchar);
	sv_f64(&v[V_IO_BLKIO_DELAY_S], c->blkio_delay_s);
	sv_u64(&v[V_NET_RX_BYTES], c->rx_bytes);
	sv_u64(&v[V_NET_TX_BYTES], c->tx_bytes);
	wait_values(v, &c->w);
}

/* The names of the JT_FF_* bits, lowest first, as files[].flags has them. */
static const char file_flag_names[] =
	"read\0write\0create\0append\0truncate\0directory\0direct";
#define FILE_FLAGS_MAX sizeof(file_flag_names)

/* The names of flags, NUL-separated, into out[FILE_FLAGS_MAX]; its length. */
static size_t file_flags(uint32_t flags, char *out)
{
	const char *name = file_flag_names;
	size_t len = 0;

	for (uint32_t bit = 1; bit <= JT_FF_DIRECT; bit <<= 1) {
		size_t n = strlen(name) + 1;

		if (flags & bit) {
			memcpy(out + len, name, n);
			len += n;
		}
		name += n;
	}
	return len;
}

/*
 * The values of files, files_rest and files_nonregular from fs (NULL:
 * all null); elems[fs->n][VF__N] and flags[fs->n][FILE_FLAGS_MAX] hold
 * the elements' values and must live as long as v.
 */
static void files_values(struct sv *v, const struct jt_files *fs,
			 struct sv *elems, char *flags)
{
	const struct jt_files_count *r, *o;

	if (!fs)
		return;
	r = &fs->rest;
	o = &fs->nonreg;
	for (size_t i = 0; i < fs->n; i++) {
		const struct jt_file *f = &fs->v[i];
		struct sv *e = elems + i * VF__N;
		char *fl = flags + i * FILE_FLAGS_MAX;

		sv_str(&e[VF_FILE_PATH], f->path ? f->path : "");
		e[VF_FILE_FLAGS].st = SV_SET;
		e[VF_FILE_FLAGS].s = fl;
		e[VF_FILE_FLAGS].n = (uint32_t)file_flags(f->flags, fl);
		sv_u64(&e[VF_FILE_OPENS], f->opens);
		sv_u64(&e[VF_FILE_READ_BYTES], f->read_bytes);
		sv_u64(&e[VF_FILE_WRITE_BYTES], f->write_bytes);
		if (f->size_known)
			sv_u64(&e[VF_FILE_SIZE_BYTES], f->size_bytes);
		sv_bool(&e[VF_FILE_MMAP], f->mmap);
		sv_bool(&e[VF_FILE_DELETED], f->deleted);
	}
	v[V_FILES].st = SV_SET;
	v[V_FILES].n = (uint32_t)fs->n;
	v[V_FILES].elems = elems;
	v[V_FILES_REST].st = v[V_FILES_NONREG].st = SV_SET;
	sv_u64(&v[V_FILES_REST_COUNT], r->count);
	sv_u64(&v[V_FILES_REST_OPENS], r->opens);
	sv_u64(&v[V_FILES_REST_READ_BYTES], r->read_bytes);
	sv_u64(&v[V_FILES_REST_WRITE_BYTES], r->write_bytes);
	sv_u64(&v[V_FILES_NONREG_PIPES], o->count);
	sv_u64(&v[V_FILES_NONREG_SOCKETS], o->opens);
	sv_u64(&v[V_FILES_NONREG_READ_BYTES], o->read_bytes);
	sv_u64(&v[V_FILES_NONREG_WRITE_BYTES], o->write_bytes);
}

/* Encode a finished process as a schema v1 `process` record. */
void record_process(struct jbuf *b, const struct jt_host *h,
		    const struct jt_proc *p, const struct jt_batch *batch,
		    const char *id)
{
	struct sv v[V__N] = { 0 };
	const struct jt_files *fs = p->files;
	struct sv *elems = NULL;
	char parent_id[37];
	char *flags = NULL;

	record_head_values(v, h, id);
	proc_values(v, h, p, batch, parent_id);
	if (p->end_ns)
		sv_u64(&v[V_END_TIME], record_realtime(h, p->end_ns));
	v[V_EXIT].st = SV_SET;
	if (!(p->state & JT_PS_EXIT_LOST) && !p->exit_signal)
		sv_i64(&v[V_EXIT_CODE], p->exit_code);
	if (p->exit_signal)
		sv_i64(&v[V_EXIT_SIGNAL], p->exit_signal);
	sv_bool(&v[V_EXIT_CORE_DUMPED], p->core_dumped);
	sv_bool(&v[V_EXIT_OOM_KILLED], p->oom_killed);
	sv_bool(&v[V_EXIT_LOST], p->state & JT_PS_EXIT_LOST);
	counter_values(v, &p->c);
	if (fs && fs->n) {
		elems = calloc(fs->n, VF__N * sizeof(*elems));
		flags = malloc(fs->n * FILE_FLAGS_MAX);
		if (!elems || !flags) {
			b->oom = true;	/* the record is not written whole */
			goto cleanup;
		}
	}
	files_values(v, fs, elems, flags);
	schema_write(b, &sf_records[SF_REC_PROCESS], v);
cleanup:
	free(elems);
	free(flags);
}

/* The usage figures of a job or step (its memory peak and the "source"
 * of it as jobs_mem_peak() says); slots in the order of SF_USAGE_FIGURES
 * from cpu. */
static void usage_values(struct sv *cpu, const struct jt_usage *u, bool v2)
{
	static const char *const names[] = {
		[JT_MEM_SAMPLES] = "samples",
		[JT_MEM_LARGEST_PROCESS] = "largest_process",
	};
	struct sv *processes = cpu + 1, *peak = cpu + 2, *source = cpu + 3;
	enum jt_mem_source src;
	uint64_t v = jobs_mem_peak(u, &src);

	sv_f64(cpu, u->cpu_s);
	sv_u64(processes, u->processes);
	if (src == JT_MEM_NONE)
		return;
	sv_u64(peak, v);
	sv_str(source, src == JT_MEM_CGROUP ? (v2 ? "cgroup_v2" : "cgroup_v1") :
		       names[src]);
}

_Static_assert(V_USAGE_PROCESSES == V_USAGE_CPU_S + 1 &&
	       V_USAGE_MEM_PEAK_SOURCE == V_USAGE_CPU_S + 3 &&
	       VS_USAGE_PROCESSES == VS_USAGE_CPU_S + 1 &&
	       VS_USAGE_MEM_PEAK_SOURCE == VS_USAGE_CPU_S + 3,
	       "usage_values fills the usage figures in their order");

/* A figure that may be null (< 0). */
static void sv_f64_known(struct sv *v, double d)
{
	if (d >= 0)
		sv_f64(v, d);
}

/* An end record's cost object, efficiency object and flags; flags holds
 * the flag names (NUL after each) and must live as long as v. */
static void cost_values(struct sv *v, const struct cost_job *c, char *flags,
			size_t flagslen)
{
	size_t used = 0;

	v[V_COST].st = v[V_EFFICIENCY].st = v[V_FLAGS].st = SV_SET;
	if (!c) {
		sv_str(&v[V_COST_NOTE], "cost not computed");
		return;
	}
	sv_f64_known(&v[V_COST_AMOUNT], c->amount);
	sv_str_opt(&v[V_COST_CURRENCY], c->currency);
	sv_str_opt(&v[V_COST_SOURCE], c->source);
	sv_str(&v[V_COST_FORMULA], c->formula);
	sv_f64_known(&v[V_COST_PRICE_PER_HOUR], c->price_per_hour);
	sv_f64_known(&v[V_COST_SHARE], c->share);
	sv_f64_known(&v[V_COST_ELAPSED_S], c->elapsed_s);
	sv_str_opt(&v[V_COST_NOTE], c->note);
	sv_f64_known(&v[V_EFF_CPU], c->eff_cpu);
	sv_f64_known(&v[V_EFF_MEMORY], c->eff_memory);
	sv_f64_known(&v[V_EFF_TIME], c->eff_time);
	for (unsigned i = 0; i < COST_F__N; i++) {
		size_t n = strlen(cost_flag_names[i]) + 1;

		if (!(c->flags & (1u << i)) || used + n > flagslen)
			continue;
		memcpy(flags + used, cost_flag_names[i], n);
		used += n;
	}
	v[V_FLAGS].s = flags;
	v[V_FLAGS].n = (uint32_t)used;
}

/* Encode a `job` record. */
void record_job(struct jbuf *b, const struct jt_host *h,
		const struct jt_jobinfo *ji, const char *phase, const char *id,
		const struct cost_job *cost)
{
	struct sv v[V__N] = { 0 };
	struct sv steps[JT_JOB_STEPS][VS__N];
	char flags[128];

	record_head_values(v, h, id);
	sv_str(&v[V_PHASE], phase);
	record_job_values(v, &ji->job);
	/* the account pays unless a cost center was named */
	if (!ji->job.cost_center[0])
		sv_str_opt(&v[V_JOB_COST_CENTER], ji->job.account);
	if (!strcmp(ji->job.scheduler, "aws-batch") || ji->batch.has_array)
		record_batch_values(v, &ji->batch);
	sv_str_opt(&v[V_JOB_NAME], ji->name);
	sv_str_opt(&v[V_JOB_PARTITION], ji->partition);
	sv_str_opt(&v[V_JOB_NODE], ji->node[0] ? ji->node : h->name);
	if (ji->uid_known)
		sv_u64(&v[V_JOB_UID], ji->uid);
	if (ji->start_ns)
		sv_u64(&v[V_JOB_START_TIME], ji->start_ns);
	if (ji->end_ns)
		sv_u64(&v[V_JOB_END_TIME], ji->end_ns);
	v[V_ALLOCATION].st = SV_SET;
	if (ji->cpus)
		sv_u64(&v[V_ALLOC_CPUS], ji->cpus);
	if (ji->mem_bytes)
		sv_u64(&v[V_ALLOC_MEM_BYTES], ji->mem_bytes);
	if (ji->gpus)
		sv_u64(&v[V_ALLOC_GPUS], ji->gpus);
	if (ji->time_limit_s)
		sv_u64(&v[V_ALLOC_TIME_LIMIT_S], ji->time_limit_s);
	if (ji->exit_known) {
		sv_i64(&v[V_JOB_EXIT_CODE], ji->exit_code);
		sv_i64(&v[V_JOB_EXIT_SIGNAL], ji->exit_signal);
	}
	/* how it ended: its scheduler's word, else what its exit tells */
	if (!strcmp(phase, "end") && ji->state[0])
		sv_str(&v[V_JOB_STATE], ji->state);
	else if (!strcmp(phase, "end") && (ji->exit_known || ji->oom))
		sv_str(&v[V_JOB_STATE],
		       jobstate_of_exit(ji->exit_code, ji->exit_signal,
					ji->oom, false));
	if (strcmp(phase, "end")) {
		v[V_USAGE].st = v[V_COST].st = SV_OMIT;
		v[V_EFFICIENCY].st = v[V_FLAGS].st = SV_OMIT;
	} else {
		cost_values(v, cost, flags, sizeof(flags));
		unsigned n = ji->nsteps < JT_JOB_STEPS ? ji->nsteps : JT_JOB_STEPS;

		v[V_USAGE].st = SV_SET;
		usage_values(&v[V_USAGE_CPU_S], &ji->usage, h->memcg_v2);
		sv_f64(&v[V_USAGE_WALL_S], ji->usage.wall_s);
		sv_f64(&v[V_USAGE_BLKIO_DELAY_S], ji->usage.blkio_s);
		v[V_USAGE_WAIT].st = SV_SET;
		wait_values(v, &ji->usage.w);
		memset(steps, 0, n * sizeof(steps[0]));
		for (unsigned i = 0; i < n; i++) {
			sv_str(&steps[i][VS_STEP], ji->steps[i].step);
			usage_values(&steps[i][VS_USAGE_CPU_S], &ji->steps[i].u,
				     h->memcg_v2);
		}
		v[V_USAGE_STEPS].st = SV_SET;
		v[V_USAGE_STEPS].n = n;
		v[V_USAGE_STEPS].elems = &steps[0][0];
	}
	schema_write(b, &sf_records[SF_REC_JOB], v);
}

/* Encode a running process's counters as a `sample` record. */
void record_sample(struct jbuf *b, const struct jt_host *h,
		   const struct jt_proc *p, const struct jt_batch *batch,
		   const char *id)
{
	struct sv v[V__N] = { 0 };
	char parent_id[37];

	record_head_values(v, h, id);
	sv_u64(&v[V_TIME], record_realtime(h, p->sample_ns));
	proc_values(v, h, p, batch, parent_id);
	counter_values(v, &p->c);
	if (p->progress.set) {
		v[V_PROGRESS].st = SV_SET;
		sv_str(&v[V_PROGRESS_PATH], p->progress.path);
		sv_u64(&v[V_PROGRESS_OFFSET_BYTES], p->progress.offset_bytes);
		sv_u64(&v[V_PROGRESS_SIZE_BYTES], p->progress.size_bytes);
	}
	schema_write(b, &sf_records[SF_REC_SAMPLE], v);
}

/* Encode an OOM kill as a `signal` record; p is the victim's process, or
 * NULL when it is not tracked (then comm names the tool). */
void record_oom(struct jbuf *b, const struct jt_host *h,
		const struct jt_proc *p, const struct jt_batch *batch,
		const struct jt_oom *o, const char *id)
{
	struct sv v[V__N] = { 0 };

	record_head_values(v, h, id);
	sv_str(&v[V_KIND], "oom_kill");
	sv_u64(&v[V_TIME], record_realtime(h, o->boot_ns));
	if (p) {
		record_job_values(v, &p->job);
		record_batch_values(v, batch);
	}
	sv_u64(&v[V_SIG_PID], o->pid);
	sv_str(&v[V_SIG_COMM], o->comm);
	if (p)
		record_tool_values(v, p->tool_name, p->tool_category,
				   p->tool_version);
	else
		record_tool_values(v, o->comm, NULL, NULL);
	v[V_EVIDENCE].st = SV_SET;
	sv_u64(&v[V_EV_RSS_BYTES], o->rss_bytes);
	sv_u64(&v[V_EV_TOTAL_VM_BYTES], o->total_vm_bytes);
	schema_write(b, &sf_records[SF_REC_SIGNAL], v);
}

/* The host record's cloud object (null when there is no IMDS). */
void record_cloud_values(struct sv *v, const struct jt_cloud *c)
{
	if (!c || !c->provider[0])
		return;
	v[V_CLOUD].st = SV_SET;
	sv_str(&v[V_CLOUD_PROVIDER], c->provider);
	sv_str_opt(&v[V_CLOUD_INSTANCE_ID], c->instance_id);
	sv_str_opt(&v[V_CLOUD_INSTANCE_TYPE], c->instance_type);
	sv_str_opt(&v[V_CLOUD_REGION], c->region);
	sv_str_opt(&v[V_CLOUD_ZONE], c->zone);
	sv_str_opt(&v[V_CLOUD_LIFECYCLE], c->lifecycle);
}

/* The host record's price object. */
void record_price_values(struct sv *v, const struct cost_price *p)
{
	v[V_PRICE].st = SV_SET;
	sv_f64_known(&v[V_PRICE_PER_HOUR], p->per_hour);
	sv_str_opt(&v[V_PRICE_CURRENCY], p->currency);
	sv_str_opt(&v[V_PRICE_SOURCE], p->source);
	if (p->node_cpus)
		sv_u64(&v[V_PRICE_NODE_CPUS], p->node_cpus);
	if (p->node_mem_bytes)
		sv_u64(&v[V_PRICE_NODE_MEM_BYTES], p->node_mem_bytes);
	sv_str_opt(&v[V_PRICE_NOTE], p->note);
}

/* The host record's outside_jobs object. */
void record_outside_values(struct sv *v, const struct jt_outside *o)
{
	v[V_OUTSIDE_JOBS].st = SV_SET;
	sv_u64(&v[V_OUTSIDE_PROCESSES], o->processes);
	sv_f64(&v[V_OUTSIDE_CPU_S], o->cpu_s);
	sv_u64(&v[V_OUTSIDE_READ_BYTES], o->read_bytes);
	sv_u64(&v[V_OUTSIDE_WRITE_BYTES], o->write_bytes);
}

/* Encode a node_idle `signal` record: no job, no process, no tool. */
void record_node_idle(struct jbuf *b, const struct jt_host *h,
		      const struct idle_signal *s, const struct cost_price *p,
		      const char *id)
{
	struct sv v[V__N] = { 0 };

	record_head_values(v, h, id);
	sv_str(&v[V_KIND], "node_idle");
	sv_u64(&v[V_TIME], record_realtime(h, s->now_ns));
	record_tool_values(v, NULL, NULL, NULL);
	v[V_EVIDENCE].st = SV_SET;
	sv_f64(&v[V_EV_IDLE_S], s->idle_s);
	sv_f64(&v[V_EV_CPU], s->cpu);
	if (cost_node_time(p, s->idle_s) >= 0) {
		/* what the node cost while no one used it */
		sv_f64(&v[V_EV_COST], cost_node_time(p, s->idle_s));
		sv_str_opt(&v[V_EV_CURRENCY], p->currency);
	}
	schema_write(b, &sf_records[SF_REC_SIGNAL], v);
}

/* Encode a spot interruption notice as a `signal` record. */
void record_spot(struct jbuf *b, const struct jt_host *h,
		 const struct jt_spot *s,
		 const struct jt_jobinfo *const *running, size_t n,
		 const char *id)
{
	struct sv v[V__N] = { 0 };
	struct jbuf names;

	jbuf_init(&names);
	for (size_t i = 0; i < n; i++) {
		const struct jt_job *j = &running[i]->job;

		/* "scheduler:id" and its NUL, one after the other */
		if (jbuf_put(&names, j->scheduler, strlen(j->scheduler)) ||
		    jbuf_put(&names, ":", 1) ||
		    jbuf_put(&names, j->id, strlen(j->id) + 1))
			b->oom = true;
	}
	record_head_values(v, h, id);
	sv_str(&v[V_KIND], "spot_interruption");
	sv_u64(&v[V_TIME], s->seen_ns);
	if (n == 1)
		record_job_fill(v, &running[0]->job);
	v[V_SIG_JOBS].st = SV_SET;
	v[V_SIG_JOBS].s = names.buf;
	v[V_SIG_JOBS].n = names.len;
	record_tool_values(v, NULL, NULL, NULL);
	v[V_EVIDENCE].st = SV_SET;
	sv_str(&v[V_EV_ACTION], s->action);
	sv_u64(&v[V_EV_ACTION_TIME], s->action_ns);
	schema_write(b, &sf_records[SF_REC_SIGNAL], v);
	jbuf_free(&names);
}
