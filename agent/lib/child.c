// SPDX-License-Identifier: GPL-2.0-or-later
/* child.c - the agent's background children: bounded, reaped, deadlines. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "child.h"
#include "log.h"
#include "util.h"

/* Track pid until it is reaped. */
int children_add(struct children *c, pid_t pid, uint32_t owner,
		 uint64_t deadline_ns, const char *what)
{
	for (size_t i = 0; i < CHILD_MAX; i++) {
		struct child *k = &c->v[i];

		if (k->pid)
			continue;
		memset(k, 0, sizeof(*k));
		k->pid = pid;
		k->owner = owner;
		k->deadline_ns = deadline_ns;
		util_strlcpy(k->what, what, sizeof(k->what));
		return 0;
	}
	return -EBUSY;
}

/* Children not reaped yet, of owner or of anyone. */
size_t children_count(const struct children *c, bool all, uint32_t owner)
{
	size_t n = 0;

	for (size_t i = 0; i < CHILD_MAX; i++)
		if (c->v[i].pid && (all || c->v[i].owner == owner))
			n++;
	return n;
}

/* Kill pid now; a later children_reap() collects it. */
void children_kill(struct children *c, pid_t pid)
{
	for (size_t i = 0; i < CHILD_MAX; i++) {
		if (c->v[i].pid == pid && !c->v[i].killed) {
			kill(pid, SIGKILL);
			c->v[i].killed = true;
		}
	}
}

/* Reap what ended (never blocking); kill what is past its deadline. */
void children_reap(struct children *c, uint64_t now_ns)
{
	for (size_t i = 0; i < CHILD_MAX; i++) {
		struct child *k = &c->v[i];
		int st;
		pid_t r;

		if (!k->pid)
			continue;
		do
			r = waitpid(k->pid, &st, WNOHANG);
		while (r < 0 && errno == EINTR);
		if (r == k->pid || (r < 0 && errno == ECHILD)) {
			if (r == k->pid && WIFSIGNALED(st) && !k->killed)
				log_warn("%s (pid %d) died of signal %d",
					 k->what, (int)k->pid, WTERMSIG(st));
			k->pid = 0;
			continue;
		}
		if (now_ns > k->deadline_ns && !k->killed) {
			log_warn("%s (pid %d) did not finish in time: killed",
				 k->what, (int)k->pid);
			kill(k->pid, SIGKILL);
			k->killed = true;
		}
	}
}
