// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * query_server.c - the agent's side of a user's report, export, rightsize
 * or cost (queryproto.h): who sees what, and a bounded set of answering
 * children, each the jobtrace command beside the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "config.h"
#include "fsperm.h"
#include "log.h"
#include "query_server.h"
#include "util.h"

extern char **environ;

struct query_server {
	char *store_path;
	gid_t control_gid, reader_gid;
	bool control_set, reader_set;
	struct children kids;
	struct children views;	/* top's follow=SECONDS children */
};

/* A server with no groups and no children. */
int query_server_new(struct query_server **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* Free; children still running finish on their own. */
void query_server_free(struct query_server *qs)
{
	if (!qs)
		return;
	free(qs->store_path);
	free(qs);
}

/* The gid of a configured group name; false (and a warning) if none. */
static bool group_of(const char *key, const char *name, gid_t *out)
{
	struct group *g;

	if (!name || !*name)
		return false;
	g = getgrnam(name);
	if (!g) {
		log_warn("agent.%s \"%s\" is not a group here: it grants nothing",
			 key, name);
		return false;
	}
	*out = g->gr_gid;
	return true;
}

/* Take the store path and the groups that see everything from cfg. */
int query_server_configure(struct query_server *qs,
			   const struct jt_config *cfg)
{
	char *path = strdup(cfg->sqlite_path);

	if (!path)
		return -ENOMEM;
	free(qs->store_path);
	qs->store_path = path;
	qs->control_set = group_of("control_group", cfg->control_group,
				   &qs->control_gid);
	qs->reader_set = group_of("reader_group", cfg->reader_group,
				  &qs->reader_gid);
	return 0;
}

/* Root and the control group may change jobs and reload. */
bool query_server_may_control(const struct query_server *qs,
			      const struct control_peer *p)
{
	return p->uid == 0 ||
	       (qs->control_set && control_peer_in(p, qs->control_gid));
}

/* Root, the control group and the reader group see every record. */
bool query_server_sees_all(const struct query_server *qs,
			   const struct control_peer *p)
{
	return query_server_may_control(qs, p) ||
	       (qs->reader_set && control_peer_in(p, qs->reader_gid));
}

/* Is cmd a request a child answers? */
bool query_server_takes(const char *cmd)
{
	static const char *const cmds[] = QUERY_COMMANDS;

	for (size_t i = 0; cmds[i]; i++)
		if (!strcmp(cmds[i], cmd))
			return true;
	return false;
}

/* May root run path: a regular executable file, root's (or the agent's
 * user's), not writable by group or others, in folders only root can
 * change?  0, or -EPERM/-errno with why. */
static int trusted(const char *path, char *why, size_t wlen)
{
	char dir[PATH_MAX], err[512];
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) {
		snprintf(why, wlen, "%s is not an executable file", path);
		return -EPERM;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, wlen, "%s is not root's alone (owner %u, mode"
			 " %04o): not run as root", path, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	util_strlcpy(dir, path, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	if (fsperm_check_dir("the jobtrace command's folder", *dir ? dir : "/",
			     err, sizeof(err))) {
		snprintf(why, wlen, "%s", err);
		return -EPERM;
	}
	return 0;
}

/* The jobtrace command that answers for the agent at self. */
int query_server_find_cli(const char *self, const char *bindir, char *out,
			  size_t len, char *why, size_t wlen)
{
	char cand[3][PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(self, '/');
	int n = slash ? (int)(slash - self) : 0, err;

	snprintf(cand[0], sizeof(cand[0]), "%.*s/%s", n, self, QUERY_CLI_NAME);
	snprintf(cand[1], sizeof(cand[1]), "%.*s/../bin/%s", n, self,
		 QUERY_CLI_NAME);
	snprintf(cand[2], sizeof(cand[2]), "%s/%s", bindir, QUERY_CLI_NAME);
	for (int i = 0; i < 3; i++) {
		err = trusted(cand[i], why, wlen);
		if (err == -ENOENT || err == -ENOTDIR)
			continue;
		if (!err && !realpath(cand[i], real)) {
			err = -errno;
			snprintf(why, wlen, "%s: %s", cand[i], strerror(errno));
		}
		if (!err && util_strlcpy(out, real, len) >= len) {
			err = -ENAMETOOLONG;
			snprintf(why, wlen, "%s: name too long", real);
		}
		return err;
	}
	snprintf(why, wlen, "no %s beside %s (%s, %s) nor in %s: install it"
		 " with the agent", QUERY_CLI_NAME, self, cand[0], cand[1],
		 bindir);
	return -ENOENT;
}

/* Answer a report, export, rightsize or cost request on fd from a child:
 * the jobtrace command, which checks the request by its table. */
int query_server_serve(struct query_server *qs, int fd,
		       const struct control_peer *p,
		       const struct control_req *req, FILE *out)
{
	char *argv[CONTROL_MAX_FIELDS + 7], agent[24], who[32], what[64];
	char fields[CONTROL_MAX_FIELDS][CONTROL_MAX_VALUE + 40];
	char self[PATH_MAX], cli[PATH_MAX], why[1024];
	posix_spawn_file_actions_t fa;
	struct children *kids;
	ssize_t sl;
	size_t n = 0;
	pid_t pid;
	size_t max, max_uid;
	bool view;
	int err;

	if (!query_server_takes(req->cmd)) {
		fprintf(out, "error %s: not a report, export, rightsize, cost, top or sweep"
			" request\n", req->cmd);
		return -EINVAL;
	}
	/* an open top view (follow=) counts against the views' bounds, not
	 * against the reports' */
	view = control_get(req, "follow") != NULL;
	kids = view ? &qs->views : &qs->kids;
	max = view ? QUERY_MAX_FOLLOWS : QUERY_MAX_CHILDREN;
	max_uid = view ? QUERY_MAX_FOLLOWS_PER_UID : QUERY_MAX_PER_UID;
	/* children that answered and ended since the last tick do not count */
	children_reap(kids, util_now_ns(CLOCK_MONOTONIC));
	if (children_count(kids, true, 0) >= max ||
	    children_count(kids, false, p->uid) >= max_uid) {
		fprintf(out, "error busy: %zu %s (at most %zu, %zu per user): try"
			" again in a moment\n", children_count(kids, true, 0),
			view ? "top views open" : "reports being answered",
			max, max_uid);
		return -EBUSY;
	}
	if (query_server_sees_all(qs, p))
		snprintf(who, sizeof(who), "all");
	else
		snprintf(who, sizeof(who), "%u", (unsigned)p->uid);
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = '\0';
	err = query_server_find_cli(self, JT_BINDIR, cli, sizeof(cli), why,
				    sizeof(why));
	if (err) {
		log_error("control: cannot answer %s for uid %u: %s", req->cmd,
			  (unsigned)p->uid, why);
		fprintf(out, "error cannot start a child: %s\n", why);
		return err;
	}
	argv[n++] = QUERY_CLI_NAME;
	argv[n++] = QUERY_CHILD_ARG;
	/* the child's parent, passed: a view's child ends when its parent
	 * is no longer this agent (reparented), and getppid() at its start
	 * would already be init's if the agent died before then */
	snprintf(agent, sizeof(agent), "%d", (int)getpid());
	argv[n++] = agent;
	argv[n++] = qs->store_path;
	argv[n++] = who;
	argv[n++] = (char *)req->cmd;
	for (size_t i = 0; i < req->n; i++) {
		snprintf(fields[i], sizeof(fields[i]), "%s=%s", req->f[i].key,
			 req->f[i].val);
		argv[n++] = fields[i];
	}
	argv[n] = NULL;

	/* the connection becomes the child's stdin; exec closes the rest */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	err = posix_spawn(&pid, cli, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		log_error("control: cannot start %s for %s: %s", cli,
			  req->cmd, strerror(err));
		fprintf(out, "error cannot start a child: %s\n", strerror(err));
		return -err;
	}
	snprintf(what, sizeof(what), "%s child for uid %u", req->cmd,
		 (unsigned)p->uid);
	children_add(kids, pid, p->uid, util_now_ns(CLOCK_MONOTONIC) +
		     QUERY_TIMEOUT_S * 1000000000ull, what);
	log_debug("control: %s for uid %u (pid %d, sees %s): child %d",
		  req->cmd, (unsigned)p->uid, (int)p->pid, who, (int)pid);
	return 0;
}

/* Reap the children that ended, kill those past their time. */
void query_server_reap(struct query_server *qs, uint64_t now_ns)
{
	children_reap(&qs->kids, now_ns);
	children_reap(&qs->views, now_ns);
}

