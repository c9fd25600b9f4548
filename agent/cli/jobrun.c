// SPDX-License-Identifier: GPL-2.0-or-later
/* jobrun.c - run a command as the wrapper's child, signals passed on. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobrun.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1,
				 SIGUSR2 };
#define NFWD (sizeof(forwarded) / sizeof(forwarded[0]))

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t stopped;	/* a stop signal came */

/* Send a signal the wrapper got on to the child. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig != SIGUSR1 && sig != SIGUSR2)
		stopped = 1;
	/* the terminal signals its whole foreground group: the child too */
	if (si && si->si_code == SI_KERNEL)
		return;
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* A wait status as a shell reports it. */
int jobrun_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

/* Put back the dispositions the wrapper started with. */
static void restore(const struct sigaction *old, const bool *set)
{
	for (size_t i = 0; i < NFWD; i++)
		if (set[i])
			sigaction(forwarded[i], &old[i], NULL);
}

/* Run argv as a child, pass signals on, wait; its shell-like status. */
int jobrun_command(char *const *argv, const char *who,
		   struct jobrun_end *end)
{
	struct sigaction old[NFWD], sa;
	bool set[NFWD] = { false };
	sigset_t all, prev;
	int st, err;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* nothing may arrive between the handlers and child_pid */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &prev);
	for (size_t i = 0; i < NFWD; i++) {
		if (sigaction(forwarded[i], NULL, &old[i]) ||
		    old[i].sa_handler == SIG_IGN)
			continue;
		set[i] = sigaction(forwarded[i], &sa, NULL) == 0;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		restore(old, set);
		sigprocmask(SIG_SETMASK, &prev, NULL);
		execvp(argv[0], argv);
		err = errno;
		fprintf(stderr, "%s: %s: %s\n", who, argv[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	if (pid < 0) {
		err = -errno;
		restore(old, set);
		sigprocmask(SIG_SETMASK, &prev, NULL);
		return err;
	}
	child_pid = pid;
	stopped = 0;
	sigprocmask(SIG_SETMASK, &prev, NULL);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			err = -errno;
			child_pid = 0;
			restore(old, set);
			return err;
		}
	}
	child_pid = 0;
	restore(old, set);
	if (end) {
		end->code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
		end->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
		end->cancelled = stopped;
	}
	return jobrun_status(st);
}
