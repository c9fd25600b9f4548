// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * idle.c - idle episodes of the node from its CPU counters and its jobs
 * (see idle.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "idle.h"
#include "jobs.h"
#include "json.h"
#include "proc_table.h"
#include "record.h"

/* Parse the numbers after "cpu" in line[0..n); 0 or -EINVAL. */
static int parse_cpu_line(const char *line, size_t n, struct idle_cpu *out)
{
	size_t i = 3, cols = 0;

	memset(out, 0, sizeof(*out));
	while (i < n) {
		uint64_t v = 0;
		size_t digits = 0;

		while (i < n && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == n || line[i] == '\r')
			break;
		for (; i < n && line[i] >= '0' && line[i] <= '9'; i++, digits++) {
			unsigned d = line[i] - '0';

			if (v > (UINT64_MAX - d) / 10)
				return -EINVAL;
			v = v * 10 + d;
		}
		/* a word that is not a number ends what can be trusted */
		if (!digits || (i < n && line[i] != ' ' && line[i] != '\t' &&
				line[i] != '\r'))
			break;
		if (cols < IDLE_NCOLS)
			out->col[cols] = v;
		cols++;
	}
	/* user nice system idle: every kernel since 2.4 has them */
	return cols > IDLE_IDLE ? 0 : -EINVAL;
}

/* Parse /proc/stat's aggregate "cpu" line. */
int idle_parse_stat(const char *buf, size_t len, struct idle_cpu *out)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;

		if (n >= 4 && !memcmp(buf + i, "cpu", 3) &&
		    (buf[i + 3] == ' ' || buf[i + 3] == '\t'))
			return parse_cpu_line(buf + i, n, out);
		i += n + 1;
	}
	return -EINVAL;
}

/* Read path (/proc/stat) and parse it. */
int idle_read_stat(const char *path, struct idle_cpu *out)
{
	/* the cpu line comes first: the rest (one line per CPU, interrupts)
	 * need not be read */
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return idle_parse_stat(buf, (size_t)n, out);
}

/* Busy and total ticks from a to b (a column that went back adds 0). */
void idle_cpu_delta(const struct idle_cpu *a, const struct idle_cpu *b,
		    uint64_t *busy, uint64_t *total)
{
	*busy = *total = 0;
	for (int i = 0; i < IDLE_NCOLS; i++) {
		uint64_t d = b->col[i] >= a->col[i] ? b->col[i] - a->col[i] : 0;

		*total += d;
		if (i != IDLE_IDLE && i != IDLE_IOWAIT)
			*busy += d;
	}
}

/* The episode is over (not idle now). */
static void end_episode(struct idle *s, enum idle_why why)
{
	s->in_episode = false;
	s->signalled = false;
	s->why = why;
}

/* One sample: follow the episode, and say when it reaches after. */
bool idle_sample(struct idle *s, const struct idle_params *p, uint64_t now_ns,
		 const struct idle_cpu *cpu, bool job, struct idle_signal *sig)
{
	uint64_t busy, total;

	if (!cpu) {
		end_episode(s, IDLE_WHY_NO_CPU);
		s->have_prev = false;
		s->last_cpu = -1;
		return false;
	}
	if (!s->have_prev) {
		end_episode(s, job ? IDLE_WHY_JOB : IDLE_WHY_START);
		s->last_cpu = -1;
		goto keep;
	}
	idle_cpu_delta(&s->prev, cpu, &busy, &total);
	/* under a tick since the last sample: let the interval grow */
	if (!total && !job)
		return false;
	s->last_cpu = total ? (double)busy / total : -1;
	if (job || s->prev_job) {
		end_episode(s, IDLE_WHY_JOB);
	} else if (s->last_cpu >= p->cpu_below) {
		end_episode(s, IDLE_WHY_CPU);
	} else {
		if (!s->in_episode) {
			s->in_episode = true;
			s->since_ns = s->prev_ns;
			s->ep_busy = s->ep_total = 0;
			s->episodes++;
		}
		s->ep_busy += busy;
		s->ep_total += total;
		s->why = IDLE_WHY_NONE;
	}
keep:
	s->have_prev = true;
	s->prev = *cpu;
	s->prev_ns = now_ns;
	s->prev_job = job;
	if (!s->in_episode || s->signalled || now_ns - s->since_ns < p->after_ns)
		return false;
	s->signalled = true;
	s->signals++;
	s->last_signal_ns = now_ns;
	s->last_since_ns = s->since_ns;
	sig->since_ns = s->since_ns;
	sig->now_ns = now_ns;
	sig->idle_s = (now_ns - s->since_ns) / 1e9;
	sig->cpu = (double)s->ep_busy / s->ep_total;
	return true;
}

/* Count the live processes of a job (proc_table_foreach's fn). */
static void count_job_proc(struct jt_proc *p, void *arg)
{
	size_t *n = arg;

	if (!(p->state & JT_PS_EXITED) && !p->end_ns &&
	    record_job_named(&p->job))
		(*n)++;
}

/* Whether a registered job or a job's process is running. */
bool idle_job_runs(struct proc_table *procs, const struct jobs *jobs)
{
	size_t n = 0;

	if (jobs_running(jobs, NULL, 0))
		return true;
	proc_table_foreach(procs, count_job_proc, &n);
	return n > 0;
}

/* The node_idle lines of the agent's status. */
void idle_status(const struct idle *s, const struct idle_params *p,
		 uint64_t now_ns, int64_t to_real_ns, FILE *out)
{
	char when[32];

	switch (s->why) {
	case IDLE_WHY_NONE:
		json_format_time(s->since_ns + to_real_ns, when, sizeof(when));
		fprintf(out, "node_idle: idle since %s (%.1f s, cpu %.2f%%)\n",
			when, (now_ns - s->since_ns) / 1e9,
			s->ep_total ? 100.0 * s->ep_busy / s->ep_total : 0.0);
		break;
	case IDLE_WHY_JOB:
		fprintf(out, "node_idle: no (a job runs)\n");
		break;
	case IDLE_WHY_CPU:
		fprintf(out, "node_idle: no (cpu %.1f%% over the last sample"
			" interval, idle.cpu_below is %.1f%%)\n",
			100.0 * s->last_cpu, 100.0 * p->cpu_below);
		break;
	case IDLE_WHY_NO_CPU:
		fprintf(out, "node_idle: unknown (/proc/stat not readable)\n");
		break;
	case IDLE_WHY_START:
		fprintf(out, "node_idle: unknown (fewer than two samples yet)\n");
		break;
	}
	fprintf(out, "node_idle_signals: %llu\n", (unsigned long long)s->signals);
	if (s->last_signal_ns) {
		char since[32];

		json_format_time(s->last_signal_ns + to_real_ns, when,
				 sizeof(when));
		json_format_time(s->last_since_ns + to_real_ns, since,
				 sizeof(since));
		fprintf(out, "node_idle_last_signal: %s (idle since %s)\n",
			when, since);
	} else {
		fprintf(out, "node_idle_last_signal: none\n");
	}
}
