// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_decode.c - the ring-buffer event decoder (agent/daemon/collect/decode.c) on raw
 * record bytes, then what the tracker does with a decoded event: the argv
 * copy, the exit status and CPU split, the cgroup paths and the
 * slurmstepd title.  The input is also read as task-iterator samples and
 * as raw argv bytes.
 */
#include <errno.h>
#include <stdbool.h>

#include "cgroup_parse.h"
#include "decode.h"
#include "fuzz.h"

/* Decode argv bytes; the count is the NULs plus a final unterminated one. */
static void check_argv(const char *argv, size_t len)
{
	size_t argc, want = 0;
	char *copy = decode_argv_dup(argv, len, &argc);

	if (!copy)
		return;
	for (size_t i = 0; i < len; i++)
		want += argv[i] == '\0';
	if (len && argv[len - 1] != '\0')
		want++;
	FUZZ_CHECK(argc == want);
	FUZZ_CHECK(copy[len] == '\0' && !memcmp(copy, argv, len));
	free(copy);
}

/* The cgroup path of an exec event, as the tracker parses it. */
static void check_cgroup(const char *path, size_t len)
{
	struct cg_container ct;
	struct cg_slurm sl;

	FUZZ_CHECK(len < JT_CGROUP_LEN && path[len] == '\0');
	cg_parse_container(path, &ct);
	cg_parse_slurm(path, &sl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union jt_event ev;
	const struct jt_sample *first;
	struct jt_exit_status st;
	struct cg_slurm sl;
	double user, sys;
	size_t partial, nr;
	void *aligned;
	int type;

	memset(&ev, 0x5a, sizeof(ev));
	type = decode_event(data, size, &ev);
	switch (type) {
	case JT_EV_FORK:
		FUZZ_CHECK(size == sizeof(ev.fork));
		FUZZ_CHECK(memchr(ev.fork.comm, '\0', JT_COMM_LEN));
		FUZZ_CHECK(memchr(ev.fork.parent_title, '\0', JT_TITLE_LEN));
		cg_parse_slurmstepd_title(ev.fork.parent_title, &sl);
		break;
	case JT_EV_EXEC:
		FUZZ_CHECK(size == JT_EXEC_FIXED_SIZE + ev.exec.argv_len);
		FUZZ_CHECK(ev.exec.argv_len <= JT_ARGV_LEN);
		FUZZ_CHECK(memchr(ev.exec.comm, '\0', JT_COMM_LEN));
		FUZZ_CHECK(memchr(ev.exec.filename, '\0', JT_FILENAME_LEN));
		check_cgroup(ev.exec.cg2, ev.exec.cg2_len);
		check_cgroup(ev.exec.cg1, ev.exec.cg1_len);
		check_argv(ev.exec.argv, ev.exec.argv_len);
		break;
	case JT_EV_EXIT:
		FUZZ_CHECK(size == sizeof(ev.exit));
		FUZZ_CHECK(ev.exit.memcg_levels <= JT_MEMCG_LEVELS);
		FUZZ_CHECK(memchr(ev.exit.comm, '\0', JT_COMM_LEN));
		decode_exit_status(ev.exit.exit_status, &st);
		FUZZ_CHECK(st.signal ? st.code == -1 : st.code >= 0);
		decode_cpu_split(ev.exit.runtime_ns, ev.exit.utime_ns,
				 ev.exit.stime_ns, &user, &sys);
		FUZZ_CHECK(user >= 0 && sys >= 0);
		/* the split adds up to the runtime (to double precision) */
		FUZZ_CHECK((user + sys) * 1e9 <= (double)ev.exit.runtime_ns *
			   (1 + 1e-12) + 1);
		break;
	case JT_EV_OOM:
		FUZZ_CHECK(size == sizeof(ev.oom));
		FUZZ_CHECK(memchr(ev.oom.comm, '\0', JT_COMM_LEN));
		break;
	case JT_EV_FOPEN:
		/* the path ends at its length, inside its array */
		FUZZ_CHECK(size == sizeof(ev.fopen));
		FUZZ_CHECK(ev.fopen.path_len < JT_PATH_LEN);
		FUZZ_CHECK(ev.fopen.path[ev.fopen.path_len] == '\0');
		FUZZ_CHECK(strlen(ev.fopen.path) == ev.fopen.path_len);
		break;
	case JT_EV_FCLOSE:
		FUZZ_CHECK(size == sizeof(ev.fclose));
		break;
	default:
		FUZZ_CHECK(type == -EINVAL || type == -EMSGSIZE);
		break;
	}

	/* the same bytes as read from the task iterator */
	aligned = malloc(size ? size : 1);
	if (aligned) {
		if (size)
			memcpy(aligned, data, size);
		nr = decode_samples(aligned, size, &first, &partial);
		FUZZ_CHECK(nr * sizeof(struct jt_sample) + partial == size);
		FUZZ_CHECK(nr ? first == aligned : first == NULL);
		free(aligned);
	}
	check_argv((const char *)data, size);
	return 0;
}
