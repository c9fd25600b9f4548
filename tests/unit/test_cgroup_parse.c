// SPDX-License-Identifier: GPL-2.0-or-later
/* test_cgroup_parse.c - unit tests for agent/core/cgroup_parse.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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
	/* ECS on cgroup v2 (systemd driver): docker's scope in the task's slice */
	CTR("/ecstasks.slice/ecstasks-" TASK32 ".slice/docker-" H1 ".scope",
	    "ecs", H1, TASK32),
	CTR("/ecstasks.slice/ecstasks-" TASK32 ".slice/docker-" H1
	    ".scope/init.scope", "ecs", H1, TASK32),
	/* a slice that names no task id: an ordinary docker scope */
	CTR("/ecstasks.slice/ecstasks-x" TASK32 ".slice/docker-" H1 ".scope",
	    "docker", H1, ""),
	CTR("/ecstasks.slice/ecstasks-" TASK32 ".scope/docker-" H1 ".scope",
	    "docker", H1, ""),
	CTR("/ecstasks.slice/ecstasks-" TASK32 ".slice/cri-containerd-" H1
	    ".scope", "containerd", H1, ""),
	NONE("/ecstasks.slice/ecstasks-" TASK32 ".slice"),
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

struct ct_level_case {
	const char *path;
	int level, task_level;
	const char *own, *task;	/* cg_ancestor() by those levels */
};

static const struct ct_level_case ct_level_cases[] = {
	{ "/docker/" H1, 0, -1, "/docker/" H1, NULL },
	{ "/system.slice/docker-" H1 ".scope/init.scope", 1, -1,
	  "/system.slice/docker-" H1 ".scope", NULL },
	{ "/ecs/" TASK32 "/" H1, 0, 1, "/ecs/" TASK32 "/" H1, "/ecs/" TASK32 },
	{ "/ecs/" TASK32 "/" H1 "/sub/deeper", 2, 3, "/ecs/" TASK32 "/" H1,
	  "/ecs/" TASK32 },
	{ "/ecstasks.slice/ecstasks-" TASK32 ".slice/docker-" H1 ".scope", 0,
	  1, "/ecstasks.slice/ecstasks-" TASK32 ".slice/docker-" H1 ".scope",
	  "/ecstasks.slice/ecstasks-" TASK32 ".slice" },
	{ "/kubepods/burstable/" POD "/" H2, 0, -1, "/kubepods/burstable/" POD
	  "/" H2, NULL },
	{ "/user.slice", -1, -1, NULL, NULL },
};

/* How deep in its container (and ECS task) a path is, and the cgroups
 * those levels name. */
static void test_container_levels(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ct_level_cases) / sizeof(ct_level_cases[0]);
	     i++) {
		const struct ct_level_case *t = &ct_level_cases[i];
		struct cg_container c;
		char buf[512];

		memset(&c, 0xaa, sizeof(c));
		cg_parse_container(t->path, &c);
		CHECK_RC(t->path, c.level, t->level);
		CHECK_RC(t->path, c.task_level, t->task_level);
		if (t->own) {
			CHECK_RC(t->path, cg_ancestor(t->path, c.level, buf,
						      sizeof(buf)), 0);
			CHECK_STR(t->path, buf, t->own);
		}
		if (t->task) {
			CHECK_RC(t->path, cg_ancestor(t->path, c.task_level,
						      buf, sizeof(buf)), 0);
			CHECK_STR(t->path, buf, t->task);
		}
	}
}

/* cg_ancestor: the root, too many levels, a buffer too small, slashes. */
static void test_ancestor(void **state)
{
	char buf[16], deep[8192], big[8192];
	size_t off = 0;

	(void)state;
	assert_int_equal(cg_ancestor("/a/b/c", 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/a/b/c");
	assert_int_equal(cg_ancestor("/a/b/c", 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/a");
	assert_int_equal(cg_ancestor("/a/b/c", 3, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/");
	assert_int_equal(cg_ancestor("//a//b/", 1, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "//a");
	assert_int_equal(cg_ancestor("/a/b/c", 4, buf, sizeof(buf)), -1);
	assert_int_equal(cg_ancestor("/a/b/c", -1, buf, sizeof(buf)), -1);
	assert_int_equal(cg_ancestor(NULL, 0, buf, sizeof(buf)), -1);
	assert_int_equal(cg_ancestor("/0123456789/abcdef", 0, buf,
				     sizeof(buf)), -1);
	assert_int_equal(cg_ancestor("/0123456789/abcdef", 1, buf,
				     sizeof(buf)), 0);
	assert_string_equal(buf, "/0123456789");
	/* deeper than the parser keeps: the kept levels still count */
	for (int i = 0; i < 100; i++)
		off += (size_t)snprintf(deep + off, sizeof(deep) - off, "/l%d", i);
	assert_int_equal(cg_ancestor(deep, 62, big, sizeof(big)), 0);
	assert_int_equal(strlen(big), (size_t)(strstr(deep, "/l38") - deep));
	assert_int_equal(strncmp(big, deep, strlen(big)), 0);
	assert_int_equal(cg_ancestor(deep, 64, big, sizeof(big)), -1);
	assert_int_equal(cg_ancestor(deep, 100, big, sizeof(big)), -1);
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

struct level_case {
	const char *path;
	int job_level, step_level;
};

/* How far below job_N and step_S a Slurm path is (-1: not there). */
static const struct level_case levels[] = {
	{ "/slurm/uid_1000/job_123/step_batch/task_0", 2, 1 },
	{ "/slurm/uid_1000/job_123/step_batch", 1, 0 },
	{ "/slurm/uid_1000/job_123", 0, -1 },
	{ "/slurm_node01/uid_0/job_42/step_0/task_0", 2, 1 },
	{ "/slurm/uid_1/job_2/step_0/", 1, 0 },
	{ "//slurm//uid_1//job_2//step_batch//task_3//", 2, 1 },
	{ "/docker/" H1 "/slurm/uid_0/job_9/step_0", 1, 0 },
	{ "/system.slice/slurmstepd.scope/job_123/step_0/user/task_0", 3, 2 },
	{ "/system.slice/slurmstepd.scope/job_5/step_batch/user/task_0", 3, 2 },
	{ "/system.slice/slurmstepd.scope/job_123/step_extern/slurm", 2, 1 },
	{ "/system.slice/slurmstepd.scope/job_123/step_extern/user", 2, 1 },
	{ "/system.slice/slurmstepd.scope/job_123/step_1+2", 1, 0 },
	{ "/system.slice/slurmstepd.scope/job_123/system", 1, -1 },
	{ "/system.slice/slurmstepd.scope/job_123", 0, -1 },
};

/* job_level and step_level of Slurm paths; -1 for everything else. */
static void test_slurm_levels(void **state)
{
	size_t i, nr = sizeof(levels) / sizeof(levels[0]);
	struct cg_slurm s;
	char path[8192];
	size_t off = 0;

	(void)state;
	for (i = 0; i < nr; i++) {
		memset(&s, 0xaa, sizeof(s));
		CHECK_RC(levels[i].path, cg_parse_slurm(levels[i].path, &s), 1);
		CHECK_RC(levels[i].path, s.job_level, levels[i].job_level);
		CHECK_RC(levels[i].path, s.step_level, levels[i].step_level);
	}
	/* no Slurm job: no levels */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].job)
			continue;
		memset(&s, 0xaa, sizeof(s));
		CHECK_RC(cases[i].path, cg_parse_slurm(cases[i].path, &s), 0);
		CHECK_RC(cases[i].path, s.job_level, -1);
		CHECK_RC(cases[i].path, s.step_level, -1);
	}
	/* a title names a job but no cgroup */
	memset(&s, 0xaa, sizeof(s));
	assert_int_equal(cg_parse_slurmstepd_title("slurmstepd: [7.batch]",
						   &s), 1);
	assert_int_equal(s.job_level, -1);
	assert_int_equal(s.step_level, -1);
	/* deeper than the parser keeps: levels still count from the leaf */
	for (i = 0; i < 100; i++)
		off += (size_t)snprintf(path + off, sizeof(path) - off,
					"/lvl%zu", i);
	snprintf(path + off, sizeof(path) - off,
		 "/slurm/uid_0/job_5/step_0/task_0");
	memset(&s, 0xaa, sizeof(s));
	assert_int_equal(cg_parse_slurm(path, &s), 1);
	assert_string_equal(s.job, "5");
	assert_int_equal(s.job_level, 2);
	assert_int_equal(s.step_level, 1);
}

/* Levels of a cgroup below another, by whole components. */
static void test_level_below(void **state)
{
	char deep[8192];
	size_t off = 0;

	(void)state;
	assert_int_equal(cg_level_below("/myjob/a/b", "/myjob"), 2);
	assert_int_equal(cg_level_below("/myjob/sub", "/myjob"), 1);
	assert_int_equal(cg_level_below("/myjob", "/myjob"), 0);
	assert_int_equal(cg_level_below("/myjob/", "/myjob"), 0);
	assert_int_equal(cg_level_below("/myjob", "/myjob/"), 0);
	assert_int_equal(cg_level_below("/myjob//a/", "/myjob"), 1);
	assert_int_equal(cg_level_below("/a/b", "/"), 2);
	assert_int_equal(cg_level_below("/", "/"), 0);
	assert_int_equal(cg_level_below("/slurm/uid_0/job_5/step_0/task_0",
					"/slurm/uid_0/job_5"), 2);
	/* not below: a sibling with the same prefix, a parent, elsewhere */
	assert_int_equal(cg_level_below("/myjobs/a", "/myjob"), -1);
	assert_int_equal(cg_level_below("/myjo", "/myjob"), -1);
	assert_int_equal(cg_level_below("/myjob", "/myjob/a"), -1);
	assert_int_equal(cg_level_below("/", "/myjob"), -1);
	assert_int_equal(cg_level_below("/other/myjob", "/myjob"), -1);
	assert_int_equal(cg_level_below("/slurm/uid_0/job_50/step_0",
					"/slurm/uid_0/job_5"), -1);
	/* nothing to compare */
	assert_int_equal(cg_level_below(NULL, "/myjob"), -1);
	assert_int_equal(cg_level_below("/myjob", NULL), -1);
	assert_int_equal(cg_level_below("/myjob", ""), -1);
	assert_int_equal(cg_level_below("", "/myjob"), -1);
	/* deeper than the parser keeps: no answer rather than a wrong one */
	for (int i = 0; i < 100; i++)
		off += (size_t)snprintf(deep + off, sizeof(deep) - off,
					"/l%d", i);
	assert_int_equal(cg_level_below(deep, "/l0"), -1);
	assert_int_equal(cg_level_below("/l0/l1", deep), -1);
	/* the innermost levels alone would match: still no answer */
	off = 0;
	for (int i = 0; i < 100; i++)
		off += (size_t)snprintf(deep + off, sizeof(deep) - off, "/x");
	assert_int_equal(cg_level_below(deep, "/x"), -1);
	assert_int_equal(cg_level_below(deep + 100, "/x"), 49);
}

/* A hybrid node running Slurm with the cgroup v1 plugin (Ubuntu 20.04). */
static const char proc_cg_hybrid[] =
	"12:memory:/slurm/uid_1000/job_5/step_0/task_0\n"
	"11:cpuset:/slurm/uid_1000/job_5/step_0\n"
	"10:devices:/slurm/uid_1000/job_5/step_0/task_0\n"
	"9:freezer:/slurm/uid_1000/job_5/step_0\n"
	"8:cpu,cpuacct:/system.slice/slurmd.service\n"
	"7:blkio:/system.slice/slurmd.service\n"
	"6:pids:/system.slice/slurmd.service\n"
	"5:net_cls,net_prio:/\n"
	"4:perf_event:/\n"
	"3:hugetlb:/\n"
	"2:rdma:/\n"
	"1:name=systemd:/system.slice/slurmd.service\n"
	"0::/system.slice/slurmd.service\n";

/* A hybrid node whose Slurm job has a v1 memory cgroup only; a v1 host
 * whose service put a process in a memory cgroup of its own. */
static const char proc_cg_hybrid2[] =
	"12:memory:/slurm/uid_0/job_5/step_0\n"
	"11:cpuset:/\n"
	"1:name=systemd:/user.slice/user-0.slice/session-1.scope\n"
	"0::/";
static const char proc_cg_v1_box[] =
	"9:name=systemd:/\n8:pids:/\n7:blkio:/\n6:freezer:/\n5:devices:/\n"
	"4:memory:/process_api/f17fdf92a6e12d6947a7dabd0f488fe9\n"
	"3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n";

/* A pure cgroup v2 node: one line. */
static const char proc_cg_v2[] =
	"0::/system.slice/slurmstepd.scope/job_5/step_batch/user/task_0\n";

/* Parse a /proc/PID/cgroup text; check rc and both paths. */
static void check_proc_cg(const char *text, bool mem_on_v2, int rc,
			  const char *v2, const char *mem)
{
	char b2[512], bm[512];

	memset(b2, 0xaa, sizeof(b2));
	memset(bm, 0xaa, sizeof(bm));
	CHECK_RC(text ? text : "(null)",
		 cg_parse_proc_cgroup(text, mem_on_v2, b2, sizeof(b2), bm,
				      sizeof(bm)), rc);
	CHECK_STR(text ? text : "(null)", b2, v2);
	CHECK_STR(text ? text : "(null)", bm, mem);
}

/* /proc/PID/cgroup texts from real nodes, and hostile ones. */
static void test_proc_cgroup(void **state)
{
	static const char v2path[] =
		"/system.slice/slurmstepd.scope/job_5/step_batch/user/task_0";
	char big[6000], b2[64], bm[64];

	(void)state;
	check_proc_cg(proc_cg_hybrid, false, 0, "/system.slice/slurmd.service",
		      "/slurm/uid_1000/job_5/step_0/task_0");
	/* memory on v2: the v1 lines say nothing about it */
	check_proc_cg(proc_cg_hybrid, true, 0, "/system.slice/slurmd.service",
		      "/system.slice/slurmd.service");
	check_proc_cg(proc_cg_hybrid2, false, 0, "/",
		      "/slurm/uid_0/job_5/step_0");
	check_proc_cg(proc_cg_v1_box, false, 0, "/",
		      "/process_api/f17fdf92a6e12d6947a7dabd0f488fe9");
	check_proc_cg(proc_cg_v2, true, 0, v2path, v2path);
	check_proc_cg(proc_cg_v2, false, 0, v2path, "");
	check_proc_cg("0::/user.slice/user-1000.slice/session-3.scope", true,
		      0, "/user.slice/user-1000.slice/session-3.scope",
		      "/user.slice/user-1000.slice/session-3.scope");
	/* memory co-mounted; names that only look like it */
	check_proc_cg("5:cpuacct,memory:/jobs/7\n0::/\n", false, 0, "/",
		      "/jobs/7");
	check_proc_cg("5:memory,cpuacct:/jobs/8\n", false, 0, "", "/jobs/8");
	check_proc_cg("3:name=memory:/x\n4:memoryx:/y\n2:memor:/z\n0::/\n",
		      false, 0, "/", "");
	/* the path is all after the second colon */
	check_proc_cg("0::/machine.slice/a:b:c\n", true, 0,
		      "/machine.slice/a:b:c", "/machine.slice/a:b:c");
	check_proc_cg("4:memory:/a:b\n", false, 0, "", "/a:b");
	check_proc_cg("0::/v2\n4:memory:/v1\n", true, 0, "/v2", "/v2");
	check_proc_cg("0::\n", true, 0, "", "");
	check_proc_cg("10::/not-v2\n", true, 0, "", "");
	/* hostile: nothing in the hierarchy:controllers:path form */
	check_proc_cg("", false, -1, "", "");
	check_proc_cg(NULL, false, -1, "", "");
	check_proc_cg("no colons here\n", false, -1, "", "");
	check_proc_cg("12:memory\n0:\n\n\n", false, -1, "", "");
	check_proc_cg("::\n", false, 0, "", "");
	/* a path longer than the buffers is cut, never overflows */
	memset(big, 'x', sizeof(big));
	memcpy(big, "4:memory:/", 10);
	memcpy(big + 3000, "\n0::/", 5);
	big[sizeof(big) - 1] = '\0';
	memset(b2, 0xaa, sizeof(b2));
	memset(bm, 0xaa, sizeof(bm));
	assert_int_equal(cg_parse_proc_cgroup(big, false, b2, sizeof(b2), bm,
					      sizeof(bm)), 0);
	assert_int_equal(strlen(bm), sizeof(bm) - 1);
	assert_int_equal(strlen(b2), sizeof(b2) - 1);
	assert_int_equal(strncmp(bm, big + 9, sizeof(bm) - 1), 0);
	assert_int_equal(strncmp(b2, big + 3004, sizeof(b2) - 1), 0);
	/* no room at all is no room */
	assert_int_equal(cg_parse_proc_cgroup(proc_cg_hybrid, false, NULL, 0,
					      NULL, 0), 0);
}

/* /proc/cgroups of a hybrid node (memory on v1 hierarchy 4). */
static const char cgroups_hybrid[] =
	"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	"cpuset\t3\t1\t1\n"
	"cpu\t1\t1\t1\n"
	"cpuacct\t2\t1\t1\n"
	"blkio\t7\t1\t1\n"
	"memory\t4\t47\t1\n"
	"devices\t5\t1\t1\n"
	"freezer\t6\t1\t1\n"
	"net_cls\t0\t1\t1\n"
	"perf_event\t0\t1\t1\n"
	"net_prio\t0\t1\t1\n"
	"hugetlb\t0\t1\t1\n"
	"pids\t8\t1\t1\n";

/* /proc/cgroups of a pure v2 node: every controller on hierarchy 0. */
static const char cgroups_v2[] =
	"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	"cpuset\t0\t98\t1\n"
	"cpu\t0\t98\t1\n"
	"cpuacct\t0\t98\t1\n"
	"blkio\t0\t98\t1\n"
	"memory\t0\t98\t1\n"
	"devices\t0\t98\t1\n"
	"freezer\t0\t98\t1\n"
	"net_cls\t0\t98\t1\n"
	"perf_event\t0\t98\t1\n"
	"net_prio\t0\t98\t1\n"
	"hugetlb\t0\t98\t1\n"
	"pids\t0\t98\t1\n"
	"rdma\t0\t98\t1\n"
	"misc\t0\t98\t1\n";

/* Booted with cgroup_disable=memory. */
static const char cgroups_nomem[] =
	"#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	"cpuset\t0\t98\t1\n"
	"memory\t0\t1\t0\n"
	"pids\t0\t98\t1\n";

/* Where /proc/cgroups puts the memory controller. */
static void test_memory_on_v2(void **state)
{
	(void)state;
	assert_int_equal(cg_memory_on_v2(cgroups_hybrid), 0);
	assert_int_equal(cg_memory_on_v2(cgroups_v2), 1);
	assert_int_equal(cg_memory_on_v2(cgroups_nomem), -1);
	assert_int_equal(cg_memory_on_v2("memory 0 1 1"), 1);
	assert_int_equal(cg_memory_on_v2("memory 9 1 1"), 0);
	/* absent, cut short, or only look-alikes */
	assert_int_equal(cg_memory_on_v2(""), -1);
	assert_int_equal(cg_memory_on_v2(NULL), -1);
	assert_int_equal(cg_memory_on_v2("#subsys_name\thierarchy\n"
					 "cpu\t0\t1\t1\n"), -1);
	assert_int_equal(cg_memory_on_v2("memory\t0\t98\n"), -1);
	assert_int_equal(cg_memory_on_v2("memory"), -1);
	assert_int_equal(cg_memory_on_v2("memoryx\t0\t1\t1\n"
					 "xmemory\t0\t1\t1\n"), -1);
	assert_int_equal(cg_memory_on_v2("\n\n\nmemory\t4\t1\t1"), 0);
	assert_int_equal(cg_memory_on_v2(
		"a_controller_name_far_longer_than_thirty_one_bytes\t0\t1\t1\n"
		"memory\t0\t1\t1\n"), 1);
}

/* Run every test in this file. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_deep_path),
		cmocka_unit_test(test_container_levels),
		cmocka_unit_test(test_ancestor),
		cmocka_unit_test(test_titles),
		cmocka_unit_test(test_slurm_levels),
		cmocka_unit_test(test_level_below),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_memory_on_v2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
