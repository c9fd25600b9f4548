// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cgroup_parse.c - unit tests for agent/cgroup_parse.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cgroup_parse.h"

/* container ids (64 hex), ECS task ids and pod uids as real nodes show them */
#define H1 "fefacee79f4b6082f1a1193c2ee3a1aa63a1938f5b460cf578894aab7e382405"
#define H2 "2e5a9c7dbcbdf9b9a897f837cf5133edafcbb677456722ac8dd4d2eafb6e0f81"
#define H3 "1cc313858df2c49b285aa0bfdeb1f5991494827c9b052609d058457eb4a44b45"
#define H63 "fefacee79f4b6082f1a1193c2ee3a1aa63a1938f5b460cf578894aab7e38240"
#define H65 H1 "a"
#define HUP "FEFACEE79F4B6082F1A1193C2EE3A1AA63A1938F5B460CF578894AAB7E382405"
#define TASK32 "822569a6b61861acc4645171f41dfe0c"
#define TASKUUID "89478d45-26f7-4c31-93eb-256dee2cfb35"
#define POD "podf71c4c1d-8288-4312-8718-2f121fc28140"
#define POD_ "podf71c4c1d_8288_4312_8718_2f121fc28140"
#define D40 "1234567890123456789012345678901234567890"
#define D15 "123456789012345"
#define D16 D15 "6"
#define D31 "1234567890123456789012345678901"
#define D32 D31 "2"

struct cg_case {
	const char *path;
	/* expected container: runtime NULL means none */
	const char *rt, *id, *ecs_task;
	/* expected Slurm job: job NULL means none */
	const char *job, *step, *uid, *task;
};

#define CTR(p, r, i, t) { .path = (p), .rt = (r), .id = (i), .ecs_task = (t) }
#define SLURM(p, j, s, u, t) \
	{ .path = (p), .job = (j), .step = (s), .uid = (u), .task = (t) }
#define BOTH(p, r, i, e, j, s, u, t) \
	{ .path = (p), .rt = (r), .id = (i), .ecs_task = (e), \
	    .job = (j), .step = (s), .uid = (u), .task = (t) }
#define NONE(p) { .path = (p) }

static const struct cg_case cases[] = {
	/* ---- docker ---- */
	CTR("/docker/" H1, "docker", H1, ""),
	CTR("/system.slice/docker-" H1 ".scope", "docker", H1, ""),
	CTR("/system.slice/docker-" H1 ".scope/init.scope", "docker", H1, ""),
	CTR("/docker/" H1 "/docker/" H2, "docker", H2, ""),
	CTR("/user.slice/user-1000.slice/user@1000.service/user.slice/docker-"
	    H1 ".scope", "docker", H1, ""),
	CTR("/actions_job/" H3, "", H3, ""),
	/* ---- kubernetes: containerd / docker / cri-o ---- */
	CTR("/kubepods/burstable/" POD "/" H1, "containerd", H1, ""),
	CTR("/kubepods/besteffort/" POD "/" H2, "containerd", H2, ""),
	CTR("/kubepods/" POD "/" H3, "containerd", H3, ""),
	CTR("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-" POD_
	    ".slice/cri-containerd-" H1 ".scope", "containerd", H1, ""),
	CTR("/kubepods.slice/kubepods-" POD_ ".slice/cri-containerd-" H2
	    ".scope", "containerd", H2, ""),
	CTR("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort"
	    ".slice/kubelet-kubepods-besteffort-" POD_ ".slice/cri-containerd-"
	    H3 ".scope", "containerd", H3, ""),
	CTR("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-"
	    POD_ ".slice/docker-" H1 ".scope", "docker", H1, ""),
	CTR("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-" POD_
	    ".slice/crio-" H2 ".scope", "cri-o", H2, ""),
	CTR("/kubepods/burstable/" POD "/crio-" H2, "cri-o", H2, ""),
	/* conmon watches the container from outside: not a container */
	NONE("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-" POD_
	    ".slice/crio-conmon-" H2 ".scope"),
	NONE("/kubepods/burstable/" POD "/crio-conmon-" H2),
	/* the pod level alone names no container */
	NONE("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-" POD_
	    ".slice"),
	NONE("/kubepods/burstable/" POD),
	/* ---- podman ---- */
	CTR("/machine.slice/libpod-" H1 ".scope", "podman", H1, ""),
	CTR("/machine.slice/libpod-" H1 ".scope/container", "podman", H1, ""),
	CTR("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-"
	    H2 ".scope", "podman", H2, ""),
	CTR("/libpod_parent/libpod-" H3, "podman", H3, ""),
	NONE("/machine.slice/libpod-conmon-" H1 ".scope"),
	NONE("/user.slice/user-1000.slice/user@1000.service/user.slice/"
	    "libpod-conmon-" H2 ".scope"),
	/* ---- ECS ---- */
	CTR("/ecs/" TASK32 "/" H1, "ecs", H1, TASK32),
	CTR("/ecs/" TASKUUID "/" H2, "ecs", H2, TASKUUID),
	CTR("/ecs/" TASK32 "/" TASK32 "-3873862546", "ecs",
	    TASK32 "-3873862546", TASK32),
	CTR("/ecs/" TASK32 "/" TASK32 "-1", "ecs", TASK32 "-1", TASK32),
	NONE("/ecs/" TASK32),
	NONE("/ecs/" TASK32 "/" TASKUUID "-3873862546"),
	NONE("/ecs/" TASK32 "/" TASK32 "-"),
	NONE("/ecs/" TASK32 "/" TASK32 "-12x"),
	/* ---- Slurm, cgroup v1 ---- */
	SLURM("/slurm/uid_1000/job_123/step_batch",
	        "123", "batch", "1000", ""),
	SLURM("/slurm/uid_1000/job_123/step_batch/task_0",
	        "123", "batch", "1000", "0"),
	SLURM("/slurm_node01/uid_0/job_42/step_0/task_0",
	        "42", "0", "0", "0"),
	SLURM("/slurm/uid_1000/job_123/step_extern/task_0",
	        "123", "extern", "1000", "0"),
	SLURM("/slurm/uid_1000/job_123/step_interactive",
	        "123", "interactive", "1000", ""),
	SLURM("/slurm/uid_1000/job_123/step_17/task_3",
	        "123", "17", "1000", "3"),
	SLURM("/slurm/uid_1000/job_123/step_1",
	        "123", "1", "1000", ""),
	SLURM("/slurm/uid_1000/job_123",
	        "123", "", "1000", ""),
	SLURM("/slurm/uid_1000/job_4294967294",
	        "4294967294", "", "1000", ""),
	/* raw special step ids: >= 20.11 values, then <= 20.02 values */
	SLURM("/slurm/uid_5/job_9/step_4294967290",
	        "9", "interactive", "5", ""),
	SLURM("/slurm/uid_5/job_9/step_4294967291",
	        "9", "batch", "5", ""),
	SLURM("/slurm/uid_5/job_9/step_4294967292",
	        "9", "extern", "5", ""),
	SLURM("/slurm/uid_5/job_9/step_4294967293",
	        "9", "4294967293", "5", ""),
	SLURM("/slurm/uid_5/job_9/step_4294967294/task_0",
	        "9", "batch", "5", "0"),
	SLURM("/slurm/uid_5/job_9/step_4294967295",
	        "9", "extern", "5", ""),
	/* slurmd running inside a docker container: both are true */
	BOTH("/docker/" H1 "/slurm/uid_0/job_9/step_0", "docker", H1, "",
	    "9", "0", "0", ""),
	/* ---- Slurm, cgroup v2 ---- */
	SLURM("/system.slice/slurmstepd.scope/job_123/step_0/user/task_0",
	        "123", "0", "", "0"),
	SLURM("/system.slice/node1_slurmstepd.scope/job_7/step_batch/user/"
	        "task_special", "7", "batch", "", "special"),
	SLURM("/system.slice/slurmstepd.scope/job_123/step_extern/user",
	        "123", "extern", "", ""),
	SLURM("/system.slice/slurmstepd.scope/job_123/step_extern/slurm",
	        "123", "extern", "", ""),
	SLURM("/system.slice/slurmstepd.scope/job_123/step_interactive/user/"
	        "task_0", "123", "interactive", "", "0"),
	SLURM("/system.slice/slurmstepd.scope/job_123/step_1+2/user/task_0",
	        "123", "1+2", "", "0"),
	SLURM("/system.slice/slurmstepd.scope/job_123",
	        "123", "", "", ""),
	SLURM("/system.slice/slurmstepd.scope/job_8/step_4294967292/user",
	        "8", "extern", "", ""),
	/* ---- negatives ---- */
	NONE("/"),
	NONE(""),
	NONE("//"),
	NONE("/init.scope"),
	NONE("/user.slice/user-1000.slice/session-3.scope"),
	NONE("/system.slice/sshd.service"),
	NONE("/system.slice/docker.service"),
	NONE("/system.slice/containerd.service"),
	NONE("/system.slice/slurmd.service"),
	NONE("/system.slice/slurmstepd.scope/system"),
	NONE("/system.slice/slurmstepd.scope"),
	NONE("/user.slice/job_abc"),
	NONE("/user.slice/user-1000.slice/job_123/step_0"),
	NONE("/slurm/uid_1000/job_abc"),
	NONE("/slurm/job_123/step_0"),
	NONE("/slurm/uid_x/job_1"),
	NONE("/slurmx/uid_1/job_1"),
	NONE("/slurm_/uid_1/job_1"),
	NONE("/system.slice/myslurmstepd.scope/job_1"),
	NONE("/system.slice/_slurmstepd.scope/job_1"),
	NONE("/system.slice/slurmstepd.scope/job_/step_0"),
	NONE("/system.slice/slurmstepd.scope/job_1/step_Batch"),
	NONE("/system.slice/slurmstepd.scope/job_1/step_"),
	NONE("/system.slice/slurmstepd.scope/job_1/step_0+"),
	NONE("/system.slice/slurmstepd.scope/job_1/step_0/user/task_x"),
	NONE("/docker/" H63),
	NONE("/docker/" H65),
	NONE("/docker/" HUP),
	NONE("/system.slice/docker-" H63 ".scope"),
	NONE("/system.slice/docker-" H1 ".service"),
	NONE("/system.slice/docker-" H1 "x.scope"),
	/* fields filled to the last byte, then one byte too long */
	SLURM("/slurm/uid_" D15 "/job_" D31 "/step_" D31 "/task_" D15,
	      D31, D31, D15, D15),
	NONE("/slurm/uid_" D16 "/job_1"),
	NONE("/slurm/uid_1/job_" D32),
	NONE("/slurm/uid_1/job_1/step_" D32),
	NONE("/slurm/uid_1/job_1/step_1/task_" D16),
	/* overlong components never overflow: the parse fails */
	NONE("/system.slice/slurmstepd.scope/job_" D40 "/step_0"),
	NONE("/slurm/uid_" D40 "/job_1"),
	NONE("/system.slice/slurmstepd.scope/job_1/step_" D40),
	NONE("/system.slice/slurmstepd.scope/job_1/step_0/user/task_" D40),
};

/* Compare one field; on mismatch name the input before failing. */
#define CHECK_STR(input, got, want)                                        \
	do {                                                               \
		if (strcmp((got), (want)) != 0) {                          \
			print_error("input '%s': %s is '%s', want '%s'\n", \
				    (input), #got, (got), (want));          \
			fail();                                            \
		}                                                          \
	} while (0)

/* Compare a return code; on mismatch name the input before failing. */
#define CHECK_RC(input, got, want)                                         \
	do {                                                               \
		if ((got) != (want)) {                                     \
			print_error("input '%s': returned %d, want %d\n",  \
				    (input), (got), (want));                \
			fail();                                            \
		}                                                          \
	} while (0)

/* Every string field is NUL-terminated inside its array. */
static void assert_bounded_container(const struct cg_container *c)
{
	assert_non_null(memchr(c->runtime, 0, sizeof(c->runtime)));
	assert_non_null(memchr(c->id, 0, sizeof(c->id)));
	assert_non_null(memchr(c->ecs_task, 0, sizeof(c->ecs_task)));
}

/* Every string field is NUL-terminated inside its array. */
static void assert_bounded_slurm(const struct cg_slurm *s)
{
	assert_non_null(memchr(s->job, 0, sizeof(s->job)));
	assert_non_null(memchr(s->step, 0, sizeof(s->step)));
	assert_non_null(memchr(s->uid, 0, sizeof(s->uid)));
	assert_non_null(memchr(s->task, 0, sizeof(s->task)));
}

/* Run the whole table through both parsers. */
static void test_table(void **state)
{
	size_t i, nr = sizeof(cases) / sizeof(cases[0]);

	(void)state;
	assert_true(nr >= 30);
	for (i = 0; i < nr; i++) {
		const struct cg_case *t = &cases[i];
		struct cg_container c;
		struct cg_slurm s;
		int rc;

		memset(&c, 0xaa, sizeof(c));
		rc = cg_parse_container(t->path, &c);
		assert_bounded_container(&c);
		if (t->rt) {
			CHECK_RC(t->path, rc, 1);
			CHECK_STR(t->path, c.runtime, t->rt);
			CHECK_STR(t->path, c.id, t->id);
			CHECK_STR(t->path, c.ecs_task, t->ecs_task);
		} else {
			CHECK_RC(t->path, rc, 0);
			CHECK_STR(t->path, c.runtime, "");
			CHECK_STR(t->path, c.id, "");
			CHECK_STR(t->path, c.ecs_task, "");
		}

		memset(&s, 0xaa, sizeof(s));
		rc = cg_parse_slurm(t->path, &s);
		assert_bounded_slurm(&s);
		if (t->job) {
			CHECK_RC(t->path, rc, 1);
			CHECK_STR(t->path, s.job, t->job);
			CHECK_STR(t->path, s.step, t->step);
			CHECK_STR(t->path, s.uid, t->uid);
			CHECK_STR(t->path, s.task, t->task);
		} else {
			CHECK_RC(t->path, rc, 0);
			CHECK_STR(t->path, s.job, "");
			CHECK_STR(t->path, s.step, "");
			CHECK_STR(t->path, s.uid, "");
			CHECK_STR(t->path, s.task, "");
		}
	}
}

/* NULL path and NULL output are handled without crashing. */
static void test_null(void **state)
{
	struct cg_container c;
	struct cg_slurm s;

	(void)state;
	memset(&c, 0xaa, sizeof(c));
	memset(&s, 0xaa, sizeof(s));
	assert_int_equal(cg_parse_container(NULL, &c), 0);
	assert_string_equal(c.id, "");
	assert_int_equal(cg_parse_slurm(NULL, &s), 0);
	assert_string_equal(s.job, "");
	memset(&s, 0xaa, sizeof(s));
	assert_int_equal(cg_parse_slurmstepd_title(NULL, &s), 0);
	assert_string_equal(s.job, "");
	assert_int_equal(cg_parse_container("/docker/" H1, NULL), 0);
	assert_int_equal(cg_parse_slurm("/slurm/uid_0/job_1", NULL), 0);
	assert_int_equal(cg_parse_slurmstepd_title("slurmstepd: [1.0]", NULL),
			 0);
}

/* A very deep path still finds the innermost container. */
static void test_deep_path(void **state)
{
	char path[8192];
	struct cg_container c;
	size_t off = 0;
	int i;

	(void)state;
	for (i = 0; i < 200; i++)
		off += (size_t)snprintf(path + off, sizeof(path) - off,
					"/lvl%d", i);
	snprintf(path + off, sizeof(path) - off, "/docker-%s.scope", H1);
	assert_int_equal(cg_parse_container(path, &c), 1);
	assert_string_equal(c.runtime, "docker");
	assert_string_equal(c.id, H1);
}

struct title_case {
	const char *title;
	const char *job, *step;	/* job NULL: no match */
};

static const struct title_case titles[] = {
	{ "slurmstepd: [1234.batch]", "1234", "batch" },
	{ "slurmstepd: [1234.0]", "1234", "0" },
	{ "slurmstepd: [1234.0]                                ", "1234", "0" },
	{ "slurmstepd: [1234.extern]", "1234", "extern" },
	{ "slurmstepd: [1234.interactive]", "1234", "interactive" },
	{ "slurmstepd: [1234.17]", "1234", "17" },
	{ "slurmstepd: [1234.0+1]", "1234", "0+1" },
	{ "slurmstepd: [1234.4294967294]", "1234", "batch" },
	{ "slurmstepd: [1234.4294967295]", "1234", "extern" },
	{ "slurmstepd: [1234.4294967291]", "1234", "batch" },
	{ "slurmstepd: [1234.4294967292]", "1234", "extern" },
	{ "slurmstepd: [1234.4294967290]", "1234", "interactive" },
	{ "slurmstepd: [4294967294.batch]", "4294967294", "batch" },
	{ .title = "slurmstepd" },
	{ .title = "slurmstepd: " },
	{ .title = "slurmstepd: [" },
	{ .title = "slurmstepd: [1234]" },
	{ .title = "slurmstepd: [1234.]" },
	{ .title = "slurmstepd: [.0]" },
	{ .title = "slurmstepd: [abc.0]" },
	{ .title = "slurmstepd: [1234.0" },
	{ .title = "slurmstepd: [1234.0] extra" },
	{ .title = "slurmstepd: [1234.Batch]" },
	{ .title = "slurmstepd: [1234.0.1]" },
	{ .title = "slurmstepd:[1234.0]" },
	{ .title = "/usr/sbin/slurmstepd" },
	{ .title = "bash" },
	{ .title = "" },
	{ "slurmstepd: [" D31 "." D31 "]", D31, D31 },
	{ .title = "slurmstepd: [" D32 ".0]" },
	{ .title = "slurmstepd: [1." D32 "]" },
	{ .title = "slurmstepd: [" D40 ".0]" },
	{ .title = "slurmstepd: [1." D40 "]" },
};

/* slurmstepd process titles, including padding and hostile input. */
static void test_titles(void **state)
{
	size_t i, nr = sizeof(titles) / sizeof(titles[0]);

	(void)state;
	for (i = 0; i < nr; i++) {
		const struct title_case *t = &titles[i];
		struct cg_slurm s;
		int rc;

		memset(&s, 0xaa, sizeof(s));
		rc = cg_parse_slurmstepd_title(t->title, &s);
		assert_bounded_slurm(&s);
		CHECK_STR(t->title, s.uid, "");
		CHECK_STR(t->title, s.task, "");
		if (t->job) {
			CHECK_RC(t->title, rc, 1);
			CHECK_STR(t->title, s.job, t->job);
			CHECK_STR(t->title, s.step, t->step);
		} else {
			CHECK_RC(t->title, rc, 0);
			CHECK_STR(t->title, s.job, "");
			CHECK_STR(t->title, s.step, "");
		}
	}
}

/* Run every test in this file. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_deep_path),
		cmocka_unit_test(test_titles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
