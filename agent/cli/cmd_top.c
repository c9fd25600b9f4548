// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_top.c - `jobtrace top`: the runs now, as one frame (--once,
 * --format json) or refreshed on the terminal.  Every frame is the answer
 * of the query table's "top" (qcmd.h, topq.h), from the store or, for a
 * user who may not read it, from the agent's query child: the view never
 * runs in the agent's loop and sees what report would show its user.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"
#include "topq.h"
#include "util.h"

/* The options of top besides the query table's. */
struct top_opts {
	bool once;
	bool color;
	double delay;		/* seconds between frames */
};

static volatile sig_atomic_t top_stop;

/* SIGINT, SIGTERM, SIGHUP: leave the view at the next wake-up. */
static void on_stop(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* Usage of top after its synopsis. */
void cli_help_top(FILE *out)
{
	fprintf(out,
		"                [--once] [-d SECONDS] [--no-color]\n"
		"\nThe runs of the last 15 minutes and the running ones (or the run, job or\n"
		"pipeline given) as a tree: run (job.run, else the job) -> workflow task\n"
		"instance -> process.  Each line: its state (running, stalled, waiting,\n"
		"done, failed, oom-killed), its elapsed time and the expected one (the\n"
		"median of the same task in the pipeline's other runs: \"4m12s of ~6m\"),\n"
		"CPU cores and RSS now (from the two latest samples), the peak RSS (and\n"
		"the job's request when the task ran as its own job), read, write and\n"
		"network bytes a second now, and the signals raised.  Waiting: a task of\n"
		"an earlier run of the pipeline not started yet in a running run.\n"
		"\n--once          print one frame as plain text and exit (also when stdout\n"
		"                is not a terminal)\n"
		"--format json   the same tree as one JSON object, then exit\n"
		"-d SECONDS      between frames (default 1)\n"
		"--no-color      no colours\n"
		"Keys: q quits (the terminal is restored).\n"
		"\nA user who may not read the store sees their own runs, from the agent.\n");
}

/* Take top's own options out of argv (in place); *argc is what is left.
 * Returns 0 or EXIT_USAGE after a message. */
static int top_opts_take(int *argc, char **argv, struct top_opts *o)
{
	int n = 1;
	char *end;

	o->once = false;
	o->color = true;
	o->delay = 1;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--once")) {
			o->once = true;
		} else if (!strcmp(argv[i], "--no-color")) {
			o->color = false;
		} else if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--delay")) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "jobtrace top: %s needs SECONDS\n",
					argv[i]);
				return EXIT_USAGE;
			}
			errno = 0;
			o->delay = strtod(argv[++i], &end);
			if (errno || *end || !(o->delay >= 0.1 && o->delay <= 3600)) {
				fprintf(stderr, "jobtrace top: -d '%s': expected"
					" seconds from 0.1 to 3600\n", argv[i]);
				return EXIT_USAGE;
			}
		} else {
			argv[n++] = argv[i];
		}
	}
	*argc = n;
	return 0;
}

/* The colour of a frame line by its state word (SGR), or "". */
static const char *line_color(const char *line)
{
	static const struct { const char *word, *sgr; } c[] = {
		{ "running", "\033[32m" }, { "stalled", "\033[1;33m" },
		{ "waiting", "\033[36m" }, { "done", "\033[2m" },
		{ "failed", "\033[1;31m" }, { "oom-killed", "\033[1;35m" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (!strncmp(line, c[i].word, strlen(c[i].word)))
			return c[i].sgr;
	return "";
}

/* Draw one frame (text of the query's answer) in rows x cols. */
static void draw(const char *frame, int rows, int cols, bool color)
{
	const char *l = frame;
	int row = 0;

	fputs("\033[H\033[2J", stdout);
	while (l && *l && row < rows) {
		size_t n = strcspn(l, "\n");
		const char *sgr = !color ? "" : row == 1 ? "\033[7m" :
				  line_color(l);

		printf("%s%.*s%s\r\n", sgr, (int)(n < (size_t)cols ? n : (size_t)cols),
		       l, *sgr ? "\033[0m" : "");
		l += n + (l[n] == '\n');
		row++;
	}
	fflush(stdout);
}

/* The full-screen view until q; the exit status. */
static int top_view(struct cli *c, const struct qcmd *qc, const char *source,
		    const struct report_query *q, const struct top_opts *o)
{
	struct termios saved, raw;
	struct sigaction sa = { .sa_handler = on_stop };
	struct winsize ws;
	int rc = 0;

	if (tcgetattr(STDIN_FILENO, &saved)) {
		fprintf(stderr, "jobtrace top: stdin is not a terminal: use"
			" --once\n");
		return EXIT_USAGE;
	}
	raw = saved;
	raw.c_lflag &= ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	fputs("\033[?1049h\033[?25l", stdout);
	while (!top_stop) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		char *frame = NULL, key;
		size_t len = 0;
		FILE *m = open_memstream(&frame, &len);

		if (!m) {
			rc = 1;
			break;
		}
		rc = cli_query_answer(c, qc, source, q, "text", m);
		fclose(m);
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row)
			ws = (struct winsize){ .ws_row = 24, .ws_col = 80 };
		draw(frame, ws.ws_row, ws.ws_col, o->color);
		free(frame);
		if (poll(&p, 1, (int)(o->delay * 1000)) > 0 &&
		    read(STDIN_FILENO, &key, 1) == 1 && (key == 'q' || key == 'Q'))
			break;
	}
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	return rc;
}

/* top: one frame, or the view. */
int cli_run_top(struct cli *c, const struct cli_cmd *cmd, int argc,
		char **argv)
{
	const struct qcmd *qc = cli_cmd_query(cmd);
	struct top_opts o;
	struct qcmd_args a;
	const char *source;
	int rc = top_opts_take(&argc, argv, &o);

	if (!rc)
		rc = cli_query_args(cmd, argc, argv, &a, &source);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (o.once || strcmp(a.format, "text") || !isatty(STDOUT_FILENO))
		return cli_query_answer(c, qc, source, &a.q, a.format, stdout);
	return top_view(c, qc, source, &a.q, &o);
}
