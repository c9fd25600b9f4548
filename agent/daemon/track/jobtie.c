// SPDX-License-Identifier: GPL-2.0-or-later
/* jobtie.c - tie a process tree to a job where no cgroup marks it. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobtie.h"
#include "util.h"

/* Parse the start time (field 22) of /proc/PID/stat text. */
int jobtie_parse_stat(const char *text, uint64_t *start_ticks)
{
	/* the name (field 2) may hold spaces and parentheses: the last ')'
	 * ends it */
	const char *s = strrchr(text, ')');
	char *end;

	if (!s)
		return -EINVAL;
	s++;
	/* fields 3 (state) to 21, then 22 */
	for (int field = 3; field <= 22; field++) {
		while (*s == ' ')
			s++;
		if (!*s)
			return -EINVAL;
		if (field == 22)
			break;
		s += strcspn(s, " ");
	}
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*start_ticks = strtoull(s, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	return 0;
}

/* Parse the real and effective uid of /proc/PID/status text. */
int jobtie_parse_status(const char *text, uint32_t *ruid, uint32_t *euid)
{
	const char *s = !strncmp(text, "Uid:", 4) ? text : strstr(text, "\nUid:");
	unsigned long r, e;
	char *end;

	if (!s)
		return -EINVAL;
	s = strchr(s, ':') + 1;
	errno = 0;
	r = strtoul(s, &end, 10);
	if (errno || end == s || r > UINT32_MAX)
		return -EINVAL;
	s = end;
	e = strtoul(s, &end, 10);
	if (errno || end == s || e > UINT32_MAX)
		return -EINVAL;
	*ruid = (uint32_t)r;
	*euid = (uint32_t)e;
	return 0;
}

/* Read the start time and uids of pid from /proc. */
int jobtie_read_proc(uint32_t pid, struct jobtie_procinfo *out)
{
	char path[64], buf[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	n = util_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	if (jobtie_parse_stat(buf, &out->start_ticks))
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
	n = util_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	return jobtie_parse_status(buf, &out->ruid, &out->euid);
}

/* What jobtie_find looks for, and the best match so far. */
struct find_ctx {
	uint32_t pid;
	uint64_t ticks;
	uint64_t ns_per_tick;
	struct jt_proc *found;
};

/* Is p the live process pid that started at the tick asked for? */
static void find_one(struct jt_proc *p, void *arg)
{
	struct find_ctx *c = arg;
	uint64_t t;

	if (p->pid != c->pid || (p->state & JT_PS_EXITED))
		return;
	t = p->start_ns / c->ns_per_tick;
	if (t + 1 < c->ticks || t > c->ticks + 1)
		return;
	if (!c->found || p->start_ns > c->found->start_ns)
		c->found = p;
}

/* The live entry of pid that started at start_ticks. */
struct jt_proc *jobtie_find(struct proc_table *t, uint32_t pid,
			    uint64_t start_ticks, long hz)
{
	struct find_ctx c = { .pid = pid, .ticks = start_ticks };

	if (hz <= 0 || hz > 1000000000)
		return NULL;
	c.ns_per_tick = 1000000000ull / (uint64_t)hz;
	proc_table_foreach(t, find_one, &c);
	return c.found;
}

/* The process pid as the table has it, if the peer may tie it. */
struct jt_proc *jobtie_root(struct proc_table *t, uint32_t pid,
			    bool privileged, uint32_t uid, char *err,
			    size_t errlen)
{
	struct jobtie_procinfo pi;
	struct jt_proc *p;
	int rc = jobtie_read_proc(pid, &pi);

	if (rc) {
		util_seterr(err, errlen, "--pid %" PRIu32 ": %s", pid,
			    rc == -ESRCH ? "no such process" : strerror(-rc));
		return NULL;
	}
	if (!privileged && (pi.ruid != uid || pi.euid != uid)) {
		util_seterr(err, errlen, "permission denied: --pid %" PRIu32
			    " is a process of uid %" PRIu32 ", not yours", pid,
			    pi.euid != uid ? pi.euid : pi.ruid);
		return NULL;
	}
	p = jobtie_find(t, pid, pi.start_ticks, sysconf(_SC_CLK_TCK));
	if (!p || (p->state & JT_PS_EXCL_TREE)) {
		util_seterr(err, errlen, "--pid %" PRIu32 ": not followed by the agent: the rules exclude it or an ancestor with all its descendants (jobtrace rules test shows why)",
			    pid);
		return NULL;
	}
	if (!privileged && p->uid != uid) {
		util_seterr(err, errlen, "permission denied: --pid %" PRIu32
			    " is a process of uid %" PRIu32 ", not yours", pid,
			    p->uid);
		return NULL;
	}
	return p;
}

/* Is p root or below it? */
bool jobtie_descends(const struct proc_table *t, const struct jt_proc *p,
		     const struct jt_proc *root)
{
	/* a bound: parent links of reused pids could in theory loop */
	for (int d = 0; p && d < JOBTIE_DEPTH_MAX; d++) {
		if (p == root)
			return true;
		p = proc_table_parent(t, p);
	}
	return false;
}

/* Give p the job ji, the rest of its fields as an exec would. */
static void tie(struct jt_proc *p, struct jobs *jobs,
		const struct jt_jobinfo *ji)
{
	memset(&p->job, 0, sizeof(p->job));
	util_strlcpy(p->job.scheduler, ji->job.scheduler,
		     sizeof(p->job.scheduler));
	util_strlcpy(p->job.id, ji->job.id, sizeof(p->job.id));
	/* the cgroups it is in are not the job's own */
	p->memcg_job_up = p->memcg_step_up = 0;
	jobs_fill(jobs, &p->job, p->cgroup);
}

/* The live entries of the table, for the walk. */
struct collect_ctx {
	struct jt_proc **v;
	size_t n, cap;
	bool failed;
};

/* Add p to the list when it is alive. */
static void collect(struct jt_proc *p, void *arg)
{
	struct collect_ctx *c = arg;

	if (c->failed || (p->state & JT_PS_EXITED))
		return;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct jt_proc **v = realloc(c->v, cap * sizeof(*v));

		if (!v) {
			c->failed = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = p;
}

/* Tie root and its live descendants (of uid with only_uid) to ji. */
size_t jobtie_tree(struct proc_table *t, struct jobs *jobs,
		   struct jt_proc *root, const struct jt_jobinfo *ji,
		   bool only_uid, uint32_t uid)
{
	struct collect_ctx c = { 0 };
	size_t tied = 0;

	/* tied before the walk, so that root itself counts even when the
	 * list cannot be made */
	tie(root, jobs, ji);
	tied++;
	proc_table_foreach(t, collect, &c);
	for (size_t i = 0; i < c.n; i++) {
		struct jt_proc *p = c.v[i];

		if (p == root || (only_uid && p->uid != uid) ||
		    !jobtie_descends(t, p, root))
			continue;
		tie(p, jobs, ji);
		tied++;
	}
	free(c.v);
	return tied;
}

/* Schedulers whose jobs the agent finds itself (cgroup, slurmstepd,
 * container): only their hooks, as root, register those. */
static const char *const found_schedulers[] = { "slurm", "aws-batch", NULL };

/* The registry key of the job r names, for a peer of uid. */
int jobtie_job_key(const struct control_req *r, bool privileged, uint32_t uid,
		   const char *dflt, char *sched, size_t slen, char *id, size_t idlen, char *err,
		   size_t errlen)
{
	const char *s = control_get(r, "scheduler");
	const char *v = control_get(r, "job");
	char own[32];
	int n;

	if (!s || !*s)
		s = !privileged ? "local" : dflt ? dflt : "slurm";
	if (!v)
		v = "";
	snprintf(own, sizeof(own), JOBTIE_USER_NS "%" PRIu32 ":", uid);
	if (privileged) {
		if (!strcmp(r->cmd, "job-start") &&
		    !strncmp(v, JOBTIE_USER_NS, strlen(JOBTIE_USER_NS))) {
			util_seterr(err, errlen, "--job %s: an id beginning with '" JOBTIE_USER_NS
				    "' is a user's own job (jobtrace run as that user); a hook cannot register or join one",
				    v);
			return -EPERM;
		}
		n = snprintf(id, idlen, "%s", v);
	} else {
		for (const char *const *f = found_schedulers; *f; f++) {
			if (strcmp(s, *f))
				continue;
			util_seterr(err, errlen, "--scheduler %s: the agent finds %s jobs itself and their hooks register them; a user's own job takes another scheduler name (local by default)",
				    s, s);
			return -EPERM;
		}
		/* a user's jobs are their own: "user:UID:ID" */
		n = snprintf(id, idlen, "%s%s", strncmp(v, own, strlen(own)) ?
			     own : "", v);
	}
	if (n < 0 || (size_t)n >= idlen) {
		util_seterr(err, errlen, "--job %s: at most %zu bytes%s", v,
			    idlen - 1 - (privileged ? 0 : strlen(own)),
			    privileged ? "" : " for a user's job (kept as "
			    JOBTIE_USER_NS "UID:ID)");
		return -EINVAL;
	}
	if (strlen(s) >= slen) {
		util_seterr(err, errlen, "--scheduler: at most %zu bytes",
			    slen - 1);
		return -EINVAL;
	}
	util_strlcpy(sched, s, slen);
	return 0;
}

/* May a peer without control rights send r? */
int jobtie_permit(const struct control_req *r, uint32_t uid,
		  const struct jt_jobinfo *ji, size_t user_jobs,
		  const char **why)
{
	bool mine = ji && ji->by_user && ji->uid_known && ji->uid == uid;
	const char *v = control_get(r, "uid");
	char own[16];

	snprintf(own, sizeof(own), "%" PRIu32, uid);
	*why = NULL;
	if (control_get(r, "cgroup"))
		*why = "a cgroup holds other users' processes too: --cgroup is not for users";
	else if (v && strcmp(v, own))
		*why = "--uid must be your own";
	else if (strcmp(r->cmd, "job-start")) {
		if (!mine)
			*why = "a user may change only a job registered with their own --pid or jobtrace run";
	} else if (!control_get(r, "pid"))
		*why = "a user may only tie processes of their own with --pid or jobtrace run";
	else if (ji && !mine)
		*why = "the job is registered by a hook or another user and cannot be joined";
	else if (!ji && user_jobs >= JOBTIE_USER_JOBS)
		*why = "a user may hold at most " UTIL_STR(JOBTIE_USER_JOBS)
		       " jobs, ended ones for an hour too";
	return *why ? -EPERM : 0;
}

/* The name of uid, or its number. */
void jobtie_user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[16384];

	if (getpwuid_r((uid_t)uid, &pw, tmp, sizeof(tmp), &res) == 0 && res &&
	    res->pw_name && *res->pw_name)
		util_strlcpy(buf, res->pw_name, len);
	else
		snprintf(buf, len, "%" PRIu32, uid);
}
