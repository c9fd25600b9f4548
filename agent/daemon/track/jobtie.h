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
 * table's and /proc's real and effective uid), and only to a job of their
 * own namespace: the id they give becomes "user:UID:ID" (jobtie_job_key),
 * which no scheduler's id and no other user's can be, so a user can
 * neither create a job under a scheduler's id (before the real job starts,
 * or after an agent restart) nor join one.  The job's uid and user are
 * theirs whatever the request says, and they may not name a cgroup, nor
 * the schedulers whose jobs the agent finds itself (slurm, aws-batch).
 * Such a job is theirs to update and end.  A privileged peer may not start
 * a job in a user's namespace (an id beginning "user:"), so a hook never
 * joins a user's job.
 */
#ifndef JOBTRACE_JOBTIE_H
#define JOBTRACE_JOBTIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "jobs.h"
#include "proc_table.h"

#define JOBTIE_USER_JOBS 64		/* jobs one user may hold, ended too */
#define JOBTIE_DEPTH_MAX 4096		/* parent links followed up */
#define JOBTIE_USER_NS "user:"		/* the ids of users' own jobs */

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
/*
 * The registry key of the job that request r (job-start, job-end,
 * job-update) names, for a peer of uid (privileged: root or the control
 * group): its scheduler (when none is named: dflt for a privileged peer,
 * "slurm" when NULL, and "local" for a user) and id.  A user's id is "user:UID:ID" (ID as given
 * when it already begins "user:UID:"); a user may not name slurm or
 * aws-batch, and a privileged peer may not start a job whose id begins
 * "user:".  Returns 0, -EPERM (refused) or -EINVAL (too long), with err
 * saying why.
 */
int jobtie_job_key(const struct control_req *r, bool privileged, uint32_t uid,
		   const char *dflt,
		   char *sched, size_t slen, char *id, size_t idlen, char *err,
		   size_t errlen);

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
