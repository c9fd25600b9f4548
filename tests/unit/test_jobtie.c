// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_jobtie.c - cmocka tests of tying a process tree to a job (jobtie.c),
 * the hooks' command line (hookargs.c) and `jobtrace run`'s child
 * (jobrun.c): the descendant walk over a made-up process table, who may
 * tie what, /proc parsing, and a real child's status and signals.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control.h"
#include "hookargs.h"
#include "jobrun.h"
#include "jobs.h"
#include "jobtie.h"
#include "proc_table.h"
#include "util.h"

#define NS_TICK 10000000ull	/* at 100 Hz */

/* ---- /proc parsing --------------------------------------------------- */

/* The start time is field 22, whatever the name holds. */
static void test_parse_stat(void **state)
{
	const char *plain = "4242 (sleep) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
			    "0 0 0 0 20 0 1 0 987654 8192 100 18446744073709551615";
	const char *odd = "77 (a) b ) c) R 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 "
			  "31337 1 1\n";
	uint64_t t = 0;

	(void)state;
	assert_int_equal(jobtie_parse_stat(plain, &t), 0);
	assert_true(t == 987654);
	assert_int_equal(jobtie_parse_stat(odd, &t), 0);
	assert_true(t == 31337);
	assert_int_equal(jobtie_parse_stat("12 (x) S 1 2 3", &t), -EINVAL);
	assert_int_equal(jobtie_parse_stat("no parenthesis", &t), -EINVAL);
	assert_int_equal(jobtie_parse_stat("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 "
					   "20 0 1 0 12x 1", &t), -EINVAL);
}

/* Real and effective uid from the Uid line. */
static void test_parse_status(void **state)
{
	uint32_t r = 0, e = 0;

	(void)state;
	assert_int_equal(jobtie_parse_status("Name:\tsh\nUmask:\t0022\n"
					     "Uid:\t1000\t0\t0\t0\nGid:\t0\n",
					     &r, &e), 0);
	assert_int_equal(r, 1000);
	assert_int_equal(e, 0);
	assert_int_equal(jobtie_parse_status("Uid:\t7 8 9 10\n", &r, &e), 0);
	assert_int_equal(r, 7);
	assert_int_equal(e, 8);
	assert_int_equal(jobtie_parse_status("Name:\tsh\nGid:\t0\n", &r, &e),
			 -EINVAL);
	assert_int_equal(jobtie_parse_status("Uid:\t\n", &r, &e), -EINVAL);
}

/* This test's own process, as /proc shows it. */
static void test_read_proc(void **state)
{
	struct jobtie_procinfo pi;

	(void)state;
	assert_int_equal(jobtie_read_proc((uint32_t)getpid(), &pi), 0);
	assert_int_equal(pi.ruid, getuid());
	assert_int_equal(pi.euid, geteuid());
	assert_true(pi.start_ticks > 0);
	assert_int_equal(jobtie_read_proc(JT_PID_MAX + 1, &pi), -ESRCH);
}

/* ---- the process table and the walk ------------------------------------ */

struct fx {
	struct proc_table *t;
	struct jobs *jobs;
	struct jt_jobinfo *ji;
};

/* A process pid of uid started at tick start, child of parent (or none). */
static struct jt_proc *add(struct fx *f, uint32_t pid, uint64_t start,
			   const struct jt_proc *parent, uint32_t uid)
{
	struct jt_proc *p = proc_table_get(f->t, pid, start * NS_TICK + 123, NULL);

	assert_non_null(p);
	p->uid = uid;
	if (parent) {
		p->ppid = parent->pid;
		p->parent_start_ns = parent->start_ns;
	}
	return p;
}

/* An empty table and a registry with job test:J1 (run R1, account A). */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || proc_table_new(&f->t) || jobs_new(&f->jobs))
		return -1;
	f->ji = jobs_get(f->jobs, "test", "J1", true);
	if (!f->ji)
		return -1;
	util_strlcpy(f->ji->job.run, "R1", sizeof(f->ji->job.run));
	util_strlcpy(f->ji->job.account, "A", sizeof(f->ji->job.account));
	util_strlcpy(f->ji->job.user, "alice", sizeof(f->ji->job.user));
	*state = f;
	return 0;
}

/* Free the table and the registry. */
static int teardown(void **state)
{
	struct fx *f = *state;

	proc_table_free(f->t);
	jobs_free(f->jobs);
	free(f);
	return 0;
}

/* The live process of a pid, by its start tick; a tick off is the same. */
static void test_find(void **state)
{
	struct fx *f = *state;
	struct jt_proc *old, *cur, *gone;

	old = add(f, 100, 50, NULL, 0);
	cur = add(f, 100, 900, NULL, 0);
	gone = add(f, 101, 70, NULL, 0);
	gone->state |= JT_PS_EXITED;
	assert_ptr_equal(jobtie_find(f->t, 100, 900, 100), cur);
	assert_ptr_equal(jobtie_find(f->t, 100, 901, 100), cur);
	assert_ptr_equal(jobtie_find(f->t, 100, 899, 100), cur);
	assert_ptr_equal(jobtie_find(f->t, 100, 50, 100), old);
	/* the table's process 100 is not the one /proc shows now */
	assert_null(jobtie_find(f->t, 100, 500, 100));
	assert_null(jobtie_find(f->t, 101, 70, 100));
	assert_null(jobtie_find(f->t, 102, 70, 100));
	assert_null(jobtie_find(f->t, 100, 900, 0));
}

/*
 * root 10 -> 11 -> 13 -> 14 (another uid); root -> 12; 15 under root has
 * exited; 16 lost its parent (exited, gone from the table); 20 -> 21 is
 * another tree with its own job.
 */
static void tree(struct fx *f, struct jt_proc **root, struct jt_proc **other)
{
	struct jt_proc *r, *a, *c, *x, *u;

	r = add(f, 10, 1, NULL, 1000);
	a = add(f, 11, 2, r, 1000);
	add(f, 12, 3, r, 1000);
	c = add(f, 13, 4, a, 1000);
	add(f, 14, 5, c, 2000);
	x = add(f, 15, 6, r, 1000);
	x->state |= JT_PS_EXITED;
	x = add(f, 16, 7, NULL, 1000);
	x->ppid = 99;
	x->parent_start_ns = 3 * NS_TICK;
	u = add(f, 20, 1, NULL, 1000);
	add(f, 21, 2, u, 1000);
	util_strlcpy(u->job.id, "other", sizeof(u->job.id));
	*root = r;
	*other = u;
}

/* Has the process of pid job J1 with the registry's fields? */
static bool in_j1(struct fx *f, uint32_t pid, uint64_t start)
{
	struct jt_proc *p = proc_table_lookup(f->t, pid, start * NS_TICK + 123);

	assert_non_null(p);
	if (strcmp(p->job.id, "J1"))
		return false;
	assert_string_equal(p->job.scheduler, "test");
	assert_string_equal(p->job.run, "R1");
	assert_string_equal(p->job.user, "alice");
	/* no cost center named: the account pays */
	assert_string_equal(p->job.cost_center, "A");
	return true;
}

/* Root and every live descendant, not the dead, orphans or others. */
static void test_tree_all(void **state)
{
	struct fx *f = *state;
	struct jt_proc *root, *other;

	tree(f, &root, &other);
	assert_true(jobtie_descends(f->t, root, root));
	assert_false(jobtie_descends(f->t, other, root));
	assert_int_equal(jobtie_tree(f->t, f->jobs, root, f->ji, false, 0), 5);
	assert_true(in_j1(f, 10, 1));
	assert_true(in_j1(f, 11, 2));
	assert_true(in_j1(f, 12, 3));
	assert_true(in_j1(f, 13, 4));
	assert_true(in_j1(f, 14, 5));
	assert_false(in_j1(f, 15, 6));
	assert_false(in_j1(f, 16, 7));
	assert_false(in_j1(f, 21, 2));
	assert_string_equal(other->job.id, "other");
}

/* A user's walk leaves out another uid's process, not what is below it. */
static void test_tree_uid(void **state)
{
	struct fx *f = *state;
	struct jt_proc *root, *other, *p;

	tree(f, &root, &other);
	p = add(f, 17, 8, proc_table_lookup(f->t, 14, 5 * NS_TICK + 123), 1000);
	assert_int_equal(jobtie_tree(f->t, f->jobs, root, f->ji, true, 1000), 5);
	assert_false(in_j1(f, 14, 5));
	assert_true(in_j1(f, 17, 8));
	/* a job another tie gave is replaced, and the cgroup levels go */
	p->memcg_job_up = 2;
	util_strlcpy(p->job.id, "old", sizeof(p->job.id));
	util_strlcpy(p->job.pipeline, "stale", sizeof(p->job.pipeline));
	assert_int_equal(jobtie_tree(f->t, f->jobs, p, f->ji, false, 0), 1);
	assert_true(in_j1(f, 17, 8));
	assert_string_equal(p->job.pipeline, "");
	assert_int_equal(p->memcg_job_up, 0);
}

/* A parent loop (only reused pids could make one) ends the walk. */
static void test_descends_loop(void **state)
{
	struct fx *f = *state;
	struct jt_proc *a = add(f, 30, 1, NULL, 0);
	struct jt_proc *b = add(f, 31, 2, a, 0);
	struct jt_proc *root = add(f, 32, 3, NULL, 0);

	a->ppid = b->pid;
	a->parent_start_ns = b->start_ns;
	assert_false(jobtie_descends(f->t, b, root));
	assert_true(jobtie_descends(f->t, b, a));
}

/* The test's own process found as the agent would, for whom it may. */
static void test_root(void **state)
{
	struct fx *f = *state;
	struct jobtie_procinfo pi;
	uint32_t me = (uint32_t)getpid(), uid = (uint32_t)getuid();
	long hz = sysconf(_SC_CLK_TCK);
	struct jt_proc *p;
	char err[320];

	assert_int_equal(jobtie_read_proc(me, &pi), 0);
	/* not in the table yet: not followed */
	assert_null(jobtie_root(f->t, me, true, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "not followed by the agent"));
	p = proc_table_get(f->t, me, pi.start_ticks * (1000000000ull / hz) + 5,
			   NULL);
	assert_non_null(p);
	p->uid = uid;
	assert_ptr_equal(jobtie_root(f->t, me, true, 0, err, sizeof(err)), p);
	assert_ptr_equal(jobtie_root(f->t, me, false, uid, err, sizeof(err)), p);
	assert_null(jobtie_root(f->t, me, false, uid + 1, err, sizeof(err)));
	assert_non_null(strstr(err, "permission denied: --pid"));
	assert_non_null(strstr(err, "not yours"));
	/* the uid the agent saw counts too (a process that changed its own) */
	p->uid = uid + 1;
	assert_null(jobtie_root(f->t, me, false, uid, err, sizeof(err)));
	assert_non_null(strstr(err, "not yours"));
	p->uid = uid;
	p->state |= JT_PS_EXCLUDED | JT_PS_EXCL_TREE;
	assert_null(jobtie_root(f->t, me, true, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "the rules exclude it"));
	/* excluded alone, its children followed: it can be tied */
	p->state &= ~JT_PS_EXCL_TREE;
	assert_ptr_equal(jobtie_root(f->t, me, true, 0, err, sizeof(err)), p);
	assert_null(jobtie_root(f->t, JT_PID_MAX + 1, true, 0, err,
				sizeof(err)));
	assert_non_null(strstr(err, "no such process"));
}

/* ---- who may ----------------------------------------------------------- */

/* Parse a request line (a copy kept in buf). */
static void req(struct control_req *r, char *buf, size_t len, const char *line)
{
	const char *why;

	util_strlcpy(buf, line, len);
	assert_int_equal(control_parse(buf, r, &why), 0);
}

/* Is r (a request line) permitted to uid for ji? */
static bool may(const char *line, uint32_t uid, const struct jt_jobinfo *ji,
		size_t held)
{
	struct control_req r;
	const char *why;
	char buf[512];
	int err;

	req(&r, buf, sizeof(buf), line);
	err = jobtie_permit(&r, uid, ji, held, &why);
	if (err)
		assert_non_null(why);
	return err == 0;
}

/* Users tie their own processes to their own jobs, nothing more. */
static void test_permit(void **state)
{
	struct jt_jobinfo hook = { .uid = 1000, .uid_known = true };
	struct jt_jobinfo mine = { .uid = 1000, .uid_known = true,
				   .by_user = true };
	struct jt_jobinfo theirs = { .uid = 2000, .uid_known = true,
				     .by_user = true };

	(void)state;
	assert_true(may("job-start\tjob=J\tpid=5", 1000, NULL, 0));
	assert_true(may("job-start\tjob=J\tpid=5\tuid=1000\tuser=x", 1000, NULL, 0));
	assert_true(may("job-start\tjob=J\tpid=5", 1000, &mine, 1));
	assert_true(may("job-end\tjob=J\texit_code=3", 1000, &mine, 1));
	assert_true(may("job-update\tjob=J\trun=R", 1000, &mine, 1));
	/* no pid: registering a job for others is a hook's */
	assert_false(may("job-start\tjob=J", 1000, NULL, 0));
	assert_false(may("job-start\tjob=J\tpid=5\tcgroup=/x", 1000, NULL, 0));
	assert_false(may("job-start\tjob=J\tpid=5\tuid=0", 1000, NULL, 0));
	/* a hook's job (even the user's own) and another user's */
	assert_false(may("job-start\tjob=J\tpid=5", 1000, &hook, 0));
	assert_false(may("job-start\tjob=J\tpid=5", 1000, &theirs, 0));
	assert_false(may("job-end\tjob=J", 1000, &hook, 0));
	assert_false(may("job-end\tjob=J", 1000, &theirs, 0));
	assert_false(may("job-update\tjob=J", 1000, NULL, 0));
	assert_false(may("job-update\tjob=J\tcgroup=/x", 1000, &mine, 1));
	/* a bound on what one user holds */
	assert_true(may("job-start\tjob=J\tpid=5", 1000, NULL, JOBTIE_USER_JOBS - 1));
	assert_false(may("job-start\tjob=J\tpid=5", 1000, NULL, JOBTIE_USER_JOBS));
	assert_true(may("job-start\tjob=J\tpid=5", 1000, &mine, JOBTIE_USER_JOBS));
}

/* The key of request line for uid (privileged or not): "sched|id", or
 * "!" and the message. */
static const char *key(const char *line, bool privileged, uint32_t uid)
{
	static char out[512];
	struct control_req r;
	char buf[512], sched[16], id[JT_STR_SMALL], err[256];
	int rc;

	req(&r, buf, sizeof(buf), line);
	rc = jobtie_job_key(&r, privileged, uid, NULL, sched, sizeof(sched), id,
			    sizeof(id), err, sizeof(err));
	if (rc)
		snprintf(out, sizeof(out), "!%s", err);
	else
		snprintf(out, sizeof(out), "%s|%s", sched, id);
	return out;
}

/* A user's jobs are in their own namespace; hooks keep out of it. */
static void test_job_key(void **state)
{
	char line[256];

	(void)state;
	/* hooks: the id as given, slurm by default */
	assert_string_equal(key("job-start\tjob=9001", true, 0), "slurm|9001");
	assert_string_equal(key("job-end\tjob=9001\tscheduler=pbs", true, 0),
			    "pbs|9001");
	/* a user: "user:UID:ID" under any scheduler, local by default */
	assert_string_equal(key("job-start\tjob=9001\tscheduler=pbs\tpid=5",
				false, 1000), "pbs|user:1000:9001");
	assert_string_equal(key("job-end\tjob=9001", false, 1000),
			    "local|user:1000:9001");
	/* their own full id is the same job; another's namespace is not */
	assert_string_equal(key("job-end\tjob=user:1000:9001", false, 1000),
			    "local|user:1000:9001");
	assert_string_equal(key("job-start\tjob=user:0:9001\tpid=5", false,
				1000), "local|user:1000:user:0:9001");
	assert_string_equal(key("job-start\tjob=user:10000:x\tpid=5", false,
				1000), "local|user:1000:user:10000:x");
	/* ids of any bytes stay as they are, behind the prefix */
	assert_string_equal(key("job-start\tjob=slurm:42%\xc3\xa9\tpid=5",
				false, 7), "local|user:7:slurm:42%\xc3\xa9");
	/* the schedulers the agent finds itself are not a user's */
	assert_non_null(strstr(key("job-start\tjob=4242\tscheduler=slurm\tpid=5",
				   false, 1000), "--scheduler slurm: the agent finds slurm jobs itself"));
	assert_int_equal(key("job-start\tjob=4242\tscheduler=aws-batch\tpid=5",
			     false, 1000)[0], '!');
	/* a hook never starts (so never joins) a user's job */
	assert_non_null(strstr(key("job-start\tjob=user:1000:9001\tpid=5", true,
				   0), "is a user's own job"));
	assert_string_equal(key("job-end\tjob=user:1000:9001\tscheduler=local",
				true, 0), "local|user:1000:9001");
	/* the prefix counts against the id's length */
	snprintf(line, sizeof(line), "job-start\tjob=%0*d\tpid=5",
		 JT_STR_SMALL - 1 - 10, 0);
	assert_int_equal(strlen(key(line, false, 1000)),
			 strlen("local|") + JT_STR_SMALL - 1);
	snprintf(line, sizeof(line), "job-start\tjob=%0*d\tpid=5",
		 JT_STR_SMALL - 1 - 9, 0);
	assert_non_null(strstr(key(line, false, 1000), "at most 53 bytes for a user's job"));
	assert_non_null(strstr(key("job-start\tjob=1\tscheduler=a-very-long-scheduler\tpid=5",
				   false, 1000), "--scheduler: at most 15 bytes"));
}

/* ---- the hooks' command line --------------------------------------------- */

/* Parse a command line given as words (NULL-terminated). */
static int parse(struct hookargs *h, const char *cmd, char *err, size_t len,
		 ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = (char *)cmd;
	va_start(ap, len);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = '\0';
	return hookargs_parse(h, cmd, argc, argv, err, len);
}

/* Options become fields; --pid is checked and for job-start only. */
static void test_hookargs_job(void **state)
{
	struct hookargs h;
	char err[256];

	(void)state;
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--cost-center", "CC", "--pid", "42", "--strict",
			       "--timeout-ms", "900", NULL), 0);
	assert_string_equal(h.line, "job-start\tjob=7\tcost_center=CC\tpid=42");
	assert_true(h.strict);
	assert_int_equal(h.timeout_ms, 900);
	assert_string_equal(h.job, "7");
	/* a time limit goes to the agent in seconds */
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--time-limit", "1-02:03:04", NULL), 0);
	assert_string_equal(h.line, "job-start\tjob=7\ttime_limit=93784");
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "7",
			       "--time-limit=600", "--", "true", NULL), 0);
	assert_string_equal(h.line, "job-start\tjob=7\ttime_limit=600");
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--time-limit", "01:61:00", NULL), -EINVAL);
	assert_string_equal(err, "--time-limit '01:61:00': seconds, or [D-]HH:MM:SS, above 0");
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--time-limit", "UNLIMITED", NULL), -EINVAL);
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--pid", "0", NULL), -EINVAL);
	assert_non_null(strstr(err, "--pid '0': not a process id"));
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--pid=4194305", NULL), -EINVAL);
	assert_non_null(strstr(err, "--pid '4194305'"));
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--job", "7",
			       "--pid", "5", NULL), -EINVAL);
	assert_non_null(strstr(err, "--pid is for job-start only"));
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--pid", "5",
			       NULL), -EINVAL);
	assert_non_null(strstr(err, "--job ID is required"));
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "stray", NULL), -EINVAL);
	assert_non_null(strstr(err, "unexpected argument 'stray'"));
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--run", "a\tb", NULL), -EINVAL);
	assert_non_null(strstr(err, "--run: tabs"));
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--timeout-ms", "5", NULL), -EINVAL);
	assert_non_null(strstr(err, "--timeout-ms '5'"));
	assert_int_equal(parse(&h, "job-update", err, sizeof(err), "--jbo", "7",
			       NULL), -EINVAL);
	assert_non_null(strstr(err, "'--jbo'"));
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--help", NULL), 0);
	assert_true(h.help);
	/* how it ended: Slurm's code:signal and state word, job-end only */
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--job", "7",
			       "--exit-code", "0", "--signal", "125", "--state",
			       "OUT_OF_MEMORY", NULL), 0);
	assert_string_equal(h.line, "job-end\tjob=7\texit_code=0\tsignal=125\tstate=OUT_OF_MEMORY");
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--job", "7",
			       "--state", "COMPLETING", NULL), -EINVAL);
	assert_non_null(strstr(err, "--state 'COMPLETING': one of COMPLETED,"));
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--job", "7",
			       "--state", "timeout", NULL), -EINVAL);
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--job", "7",
			       "--signal", "256", NULL), -EINVAL);
	assert_string_equal(err, "--signal '256': a number from 0 to 255");
	assert_int_equal(parse(&h, "job-end", err, sizeof(err), "--job", "7",
			       "--exit-code", "-1", NULL), -EINVAL);
	assert_string_equal(err, "--exit-code '-1': a number from 0 to 255");
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "7",
			       "--state", "FAILED", NULL), -EINVAL);
	assert_string_equal(err, "--state is for job-end only");
	assert_int_equal(parse(&h, "job-update", err, sizeof(err), "--job", "7",
			       "--signal", "9", NULL), -EINVAL);
	assert_string_equal(err, "--signal is for job-end only");
}

/* run: job-start for itself; the command starts at the first word or
 * after --, and its own options stay its own. */
static void test_hookargs_run(void **state)
{
	struct hookargs h;
	char err[256];

	(void)state;
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J",
			       "--run", "R", "--", "sh", "-c", "exit 3", NULL), 0);
	assert_string_equal(h.line, "job-start\tjob=J\trun=R");
	assert_int_equal(h.cmd_index, 6);
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J",
			       "make", "--job", "4", NULL), 0);
	assert_string_equal(h.line, "job-start\tjob=J");
	assert_int_equal(h.cmd_index, 3);
	assert_false(h.have_user);
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J",
			       "--user", "u", "--uid", "5", "--scheduler", "pbs",
			       "x", NULL), 0);
	assert_true(h.have_user && h.have_uid);
	assert_string_equal(h.scheduler, "pbs");
	assert_int_equal(hookargs_add(&h, "pid", "77"), 0);
	assert_string_equal(h.line, "job-start\tjob=J\tuser=u\tuid=5\tscheduler=pbs\tpid=77");
	assert_int_equal(hookargs_add(&h, "run", "a\nb"), -EINVAL);
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J", "--",
			       NULL), -EINVAL);
	assert_non_null(strstr(err, "give the command"));
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J",
			       "--pid", "5", "x", NULL), -EINVAL);
	assert_non_null(strstr(err, "--pid is for job-start only"));
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J",
			       "--exit-code", "5", "x", NULL), -EINVAL);
	assert_non_null(strstr(err, "--exit-code"));
	assert_int_equal(parse(&h, "run", err, sizeof(err), "--job", "J",
			       "--state", "CANCELLED", "x", NULL), -EINVAL);
	assert_string_equal(err, "--state: run reports its command's");
	assert_int_equal(parse(&h, "run", err, sizeof(err), "x", NULL), -EINVAL);
	assert_non_null(strstr(err, "--job ID is required"));
}

/* A line that would not fit is refused, not cut. */
static void test_hookargs_long(void **state)
{
	struct hookargs h;
	char err[256], *big = malloc(CONTROL_LINE_MAX);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', CONTROL_LINE_MAX - 1);
	big[CONTROL_LINE_MAX - 1] = '\0';
	assert_int_equal(parse(&h, "job-start", err, sizeof(err), "--job", "J",
			       "--name", big, NULL), -EINVAL);
	assert_non_null(strstr(err, "arguments too long (at --name)"));
	assert_string_equal(h.line, "job-start\tjob=J");
	free(big);
}

/* ---- run's child ------------------------------------------------------ */

/* A shell's way of telling how a child ended. */
static void test_status(void **state)
{
	(void)state;
	assert_int_equal(jobrun_status(3 << 8), 3);
	assert_int_equal(jobrun_status(0), 0);
	assert_int_equal(jobrun_status(SIGTERM), 128 + SIGTERM);
	assert_int_equal(jobrun_status(SIGKILL | 0x80), 128 + SIGKILL);
}

/* A real child: its code, a signal sent to the wrapper passed on to it,
 * a program that is not there. */
static void test_command(void **state)
{
	char *exit3[] = { "sh", "-c", "exit 3", NULL };
	/* the wrapper is this test: the child signals it, the wrapper must
	 * pass SIGTERM on, and the child dies of it */
	char *term[] = { "sh", "-c", "kill -TERM $PPID; exec sleep 5", NULL };
	char *missing[] = { "/nonexistent/jt-no-such-program", NULL };
	struct jobrun_end end;
	struct sigaction sa;

	(void)state;
	assert_int_equal(jobrun_command(exit3, "test", &end), 3);
	/* Slurm's ExitCode 3:0, not cancelled */
	assert_int_equal(end.code, 3);
	assert_int_equal(end.signal, 0);
	assert_false(end.cancelled);
	assert_int_equal(jobrun_command(term, "test", &end), 128 + SIGTERM);
	/* 0:15, and the wrapper was asked to stop: the job was cancelled */
	assert_int_equal(end.code, 0);
	assert_int_equal(end.signal, SIGTERM);
	assert_true(end.cancelled);
	/* and the wrapper's own SIGTERM is as it was */
	sigaction(SIGTERM, NULL, &sa);
	assert_true(sa.sa_handler == SIG_DFL);
	assert_int_equal(jobrun_command(missing, "test", NULL), 127);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_read_proc),
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descends_loop, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_root, setup, teardown),
		cmocka_unit_test(test_permit),
		cmocka_unit_test(test_job_key),
		cmocka_unit_test(test_hookargs_job),
		cmocka_unit_test(test_hookargs_run),
		cmocka_unit_test(test_hookargs_long),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_command),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
