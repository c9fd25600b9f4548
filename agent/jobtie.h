/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobtie.h - tie a process tree to a job where no cgroup marks it:
 * `jobtrace job-start --pid PID` and `jobtrace run` (the "pid" field of a
 * job-start request).
 *
 * The process PID and its descendants running at the call take the job at
 * once (found in the agent's process table by their parent links); every
 * process forked below them later inherits it at its fork like any job
 * field.  A process whose cgroup names a Slurm job takes that job back at
 * its next exec: the Slurm cgroup wins.
 *
 * Who may: root and agent.control_group tie any process.  A user without
 * control rights may tie only processes of their own uid (the process
 * table's and /proc's real and effective uid) to a job that is new, or
 * that they registered themselves; the job's uid and user are then theirs
 * whatever the request says, and they may not name a cgroup.  Such a job
 * is theirs to update and end; a job a hook or another user registered
 * cannot be joined.  When a privileged hook later registers the same job
 * id, the hook's registration wins and the user's processes are untied.
 */
#ifndef JOBTRACE_JOBTIE_H
#define JOBTRACE_JOBTIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "jobs.h"
#include "proc_table.h"

#define JOBTIE_PID_MAX 4194304		/* the kernel's PID_MAX_LIMIT */
#define JOBTIE_USER_JOBS 64		/* jobs one user may hold, ended too */
#define JOBTIE_DEPTH_MAX 4096		/* parent links followed up */

/* What /proc says of a process (for its identity and owner). */
struct jobtie_procinfo {
	uint64_t start_ticks;		/* field 22 of stat: since boot */
	uint32_t ruid, euid;		/* status: Uid real, effective */
};

/*
 * Parse /proc/PID/stat text: the start time in clock ticks since boot.
 * Returns 0 or -EINVAL.
 */
int jobtie_parse_stat(const char *text, uint64_t *start_ticks);
/* Parse /proc/PID/status text: real and effective uid.  0 or -EINVAL. */
int jobtie_parse_status(const char *text, uint32_t *ruid, uint32_t *euid);
/* Read both for pid: 0, -ESRCH when there is no such process, -errno. */
int jobtie_read_proc(uint32_t pid, struct jobtie_procinfo *out);

/*
 * The live entry of pid in the table whose start (CLOCK_BOOTTIME ns)
 * agrees with start_ticks (clock ticks at hz) within a tick: NULL if none
 * (the agent does not follow it, or follows an earlier process of that
 * pid whose exit it missed).
 */
struct jt_proc *jobtie_find(struct proc_table *t, uint32_t pid,
			    uint64_t start_ticks, long hz);
/*
 * The process pid as the table has it, for a job-start by a peer of uid
 * (privileged: root or the control group): checked against /proc (the same
 * start time; for an unprivileged peer, real and effective uid its own, and
 * the uid the agent saw).  NULL with err saying why, naming --pid, when it
 * does not exist, the agent does not follow it (the rules exclude it with
 * its descendants) or it is not the peer's.  The ring buffer is drained
 * before the call, so that the pid's fork and exec are in the table.
 */
struct jt_proc *jobtie_root(struct proc_table *t, uint32_t pid,
			    bool privileged, uint32_t uid, char *err,
			    size_t errlen);
/* Is p root or below it by the table's parent links? */
bool jobtie_descends(const struct proc_table *t, const struct jt_proc *p,
		     const struct jt_proc *root);
/*
 * Tie root and its live descendants in the table (with only_uid, those
 * of uid) to the job ji: its scheduler and id, the rest filled from the
 * registry as at an exec.  Returns how many processes were tied.
 */
size_t jobtie_tree(struct proc_table *t, struct jobs *jobs,
		   struct jt_proc *root, const struct jt_jobinfo *ji,
		   bool only_uid, uint32_t uid);
/* Untie the processes of uid from the job ji; returns how many. */
size_t jobtie_untie(struct proc_table *t, const struct jt_jobinfo *ji,
		    uint32_t uid);

/*
 * May a peer without control rights (uid) send request r (job-start,
 * job-end, job-update)?  ji is the job it names as registered (NULL: not
 * known).  Returns 0, or -EPERM with *why saying what is missing.
 */
int jobtie_permit(const struct control_req *r, uint32_t uid,
		  const struct jt_jobinfo *ji, size_t user_jobs,
		  const char **why);
/* The name of uid (its decimal number when it has none) into buf. */
void jobtie_user_name(uint32_t uid, char *buf, size_t len);

#endif
