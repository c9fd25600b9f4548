// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * filecand - load issue 27's candidate file hooks (bench/filecand.bpf.c)
 * for bench/filecand.sh:
 *   filecand [-a] PROG...  attach the named programs, print "ready", wait
 *                          for stdin's end, print per program
 *                          "PROG run_cnt run_time_ns" (kernel.bpf_stats_
 *                          enabled must be 1); -a: every process counts as
 *                          tracked (see filecand.bpf.c)
 *   filecand iter TGID     print TGID's open regular files (iter/task_file;
 *                          0: every process's), then on stderr
 *                          "c_files run_cnt run_time_ns"
 * Exit status: 0 ok, 1 runtime failure, 2 bad usage.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "filecand.skel.h"

/* Print the usage and exit 2. */
static void usage(void)
{
	fprintf(stderr, "usage: filecand [-a] PROG... | filecand iter TGID\n");
	exit(2);
}

/* Count one record of an exit walk. */
static int on_file(void *ctx, void *data, size_t len)
{
	(*(unsigned long *)ctx)++;
	return 0;
}

/* Print TGID's open regular files through the iterator; 0 or -errno. */
static int run_iter(struct filecand *skel)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct bpf_link *link;
	char buf[4096];
	ssize_t n;
	int fd;

	link = bpf_program__attach_iter(skel->progs.c_files, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		bpf_link__destroy(link);
		return -errno;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	close(fd);
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.c_files),
				    &info, &len))
		fprintf(stderr, "c_files %llu %llu\n",
			(unsigned long long)info.run_cnt,
			(unsigned long long)info.run_time_ns);
	bpf_link__destroy(link);
	return n < 0 ? -errno : 0;
}

/* Attach the programs named, wait for stdin's end, print their stats. */
static int run_attached(struct filecand *skel, char **names, int n)
{
	struct ring_buffer *rb;
	unsigned long recs = 0;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char c;

	for (int i = 0; i < n; i++) {
		struct bpf_program *p =
			bpf_object__find_program_by_name(skel->obj, names[i]);

		if (!bpf_program__attach(p)) {
			fprintf(stderr, "filecand: cannot attach %s: %s\n",
				names[i], strerror(errno));
			return -errno;
		}
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.files), on_file, &recs,
			      NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if (rb)
			ring_buffer__consume(rb);
		if (poll(&pfd, 1, 100) > 0 && read(0, &c, 1) <= 0)
			break;
	}
	if (rb)
		ring_buffer__consume(rb);
	for (int i = 0; i < n; i++) {
		struct bpf_program *p =
			bpf_object__find_program_by_name(skel->obj, names[i]);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len);
		printf("%s %llu %llu\n", names[i],
		       (unsigned long long)info.run_cnt,
		       (unsigned long long)info.run_time_ns);
	}
	printf("exit_files %llu exit_lost %llu records %lu\n",
	       (unsigned long long)skel->bss->exit_files,
	       (unsigned long long)skel->bss->exit_lost, recs);
	ring_buffer__free(rb);
	return 0;
}

int main(int argc, char **argv)
{
	struct filecand *skel;
	struct bpf_program *p;
	int all = 0, first = 1, rc, iter;

	if (argc > 1 && !strcmp(argv[1], "-a")) {
		all = 1;
		first = 2;
	}
	if (argc <= first)
		usage();
	iter = !strcmp(argv[first], "iter");
	if (iter && argc != first + 2)
		usage();
	skel = filecand__open();
	if (!skel) {
		fprintf(stderr, "filecand: cannot open the object: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->exit_all = all;
	if (iter)
		skel->rodata->target_tgid = atoi(argv[first + 1]);
	bpf_object__for_each_program(p, skel->obj) {
		int want = iter && p == skel->progs.c_files;

		for (int i = first; !iter && i < argc; i++)
			want |= !strcmp(bpf_program__name(p), argv[i]);
		bpf_program__set_autoload(p, want);
	}
	if (filecand__load(skel)) {
		fprintf(stderr, "filecand: cannot load: %s\n", strerror(errno));
		filecand__destroy(skel);
		return 1;
	}
	rc = iter ? run_iter(skel) : run_attached(skel, argv + first,
						    argc - first);
	filecand__destroy(skel);
	return rc ? 1 : 0;
}
