#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""gen-run.py - the records of a synthetic Snakemake-like run, as NDJSON.

For tests of `jobtrace report --format html` at scale (test_report_html.sh
stores them with store-put): one job on one host, a snakemake process
without a task spanning the run, and instances of the tasks fastqc, trim,
align, markdup, call and multiqc, each a job script (bash) -> snakemake ->
the rule's tools, scheduled on the job's CPUs; polling helpers (sh, squeue)
without a task under snakemake.  About 1 in 200 instances fails (exit 1),
OOM_KILLS align tools are OOM-killed (each with an oom_kill signal), and
the run has a spot_interruption and a stall signal.  Running tools have a
sample every SAMPLE seconds.  Deterministic for a seed.

With --now T the run is seen at T (`jobtrace top`): nothing after T is
written, and a process still running then has its samples up to T and no
process record (live=N on the line of truth counts those with a sample).

  gen-run.py --procs N [--job ID] [--run R] [--host H] [--seed S]
             [--t0 T] [--now T] [--cpus N] [--user U (alice)]
  gen-run.py --procs N --hostile [--job ID]   (every limit of the page
      filled with names and command lines made of '<' and '&')

Prints the records on stdout and, on stderr, one line of truth:
  processes=N instances=I tasks=T failed=F oom=O signals=S samples=M live=L
"""
import argparse
import json
import random
import sys
import time

SAMPLE = 30.0		# seconds between sample passes
OOM_KILLS = 3
CPUS = 16		# the job's CPUs: instances run side by side (--cpus)
MEM = 64 << 30

# task: (weight, seconds low, high, tools: (name, cpu share, rss MiB))
TASKS = {
    "fastqc": (1.0, 20, 60, [("fastqc", 0.9, 300)]),
    "trim": (1.0, 30, 90, [("cutadapt", 0.95, 120)]),
    "align": (1.0, 120, 400, [("bwa", 3.6, 6000), ("samtools", 0.8, 800)]),
    "markdup": (1.0, 60, 120, [("picard", 1.2, 4000)]),
    "call": (1.0, 100, 300, [("gatk", 1.5, 5000)]),
}


def ts(t):
    """RFC 3339 UTC with microseconds."""
    whole = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + \
        ".%06dZ" % int(round((t - whole) * 1e6) % 1000000)


class Gen:
    def __init__(self, a):
        self.a = a
        self.rnd = random.Random(a.seed)
        self.pid = 2000
        self.n = 0
        self.out = sys.stdout
        self.counts = dict(processes=0, instances=0, tasks=0, failed=0,
                           oom=0, signals=0, samples=0, live=0)
        self.now = a.now if a.now is not None else float("inf")
        self.cpus = a.cpus
        self.job = {"scheduler": "slurm", "id": a.job, "step": "batch",
                    "run": a.run, "pipeline": "rnaseq", "task": None,
                    "user": a.user, "account": "bio",
                    "cost_center": "lab-a"}

    def emit(self, rec):
        self.out.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def jobobj(self, task):
        j = dict(self.job)
        j["task"] = task
        return j

    def proc(self, parent, task, tool, argv, start, end, cpu, rss,
             code=0, sig=None, oom=False, category=None):
        """Write a process record (and its samples); returns its id, pid."""
        self.pid += 1
        self.n += 1
        pid = self.pid
        # unique across runs on one host (the store keeps one record an id)
        rid = "p-%s-%s-%d-%d" % (self.a.host, self.a.job, pid, self.n)
        ppid, pparent = parent if parent else (1, None)
        common = {
            "host": self.a.host, "pid": pid, "ppid": ppid,
            "parent_id": pparent, "start_time": ts(start),
            "exe": "/usr/bin/" + tool, "comm": tool[:15], "argv": argv,
            "uid": 1000, "job": self.jobobj(task),
            "tool": {"name": tool, "category": category},
        }
        dur = end - start
        t = start + SAMPLE - (start % SAMPLE)
        sampled = False
        while t < min(end, self.now):
            f = (t - start) / dur
            self.emit(dict({"type": "sample", "schema": 1,
                            "id": "s-%s-%s-%d-%d" % (self.a.host, self.a.job,
                                                    pid, int(t)),
                            "time": ts(t)}, **common,
                           cpu={"user_s": round(cpu * f * 0.9, 6),
                                "sys_s": round(cpu * f * 0.1, 6)},
                           mem={"peak_rss_bytes": int(rss * min(1, 2 * f)),
                                "rss_bytes": int(rss * min(1, 2 * f))},
                           io={"read_bytes": int(rss * 3 * f),
                               "write_bytes": int(rss * f)},
                           net={"rx_bytes": 0, "tx_bytes": 0}))
            self.counts["samples"] += 1
            sampled = True
            t += SAMPLE
        if end > self.now:
            self.counts["live"] += sampled
            return (pid, rid)
        rec = dict({"type": "process", "schema": 1, "id": rid}, **common)
        rec.update({
            "end_time": ts(end),
            "exit": {"code": None if sig else code, "signal": sig,
                     "oom_killed": oom},
            "cpu": {"user_s": round(cpu * 0.9, 6),
                    "sys_s": round(cpu * 0.1, 6)},
            "mem": {"peak_rss_bytes": rss},
            "io": {"read_bytes": int(rss * 3), "write_bytes": int(rss),
                   "cancelled_write_bytes": 0, "rchar": int(rss * 3),
                   "wchar": int(rss), "blkio_delay_s": 0},
            "net": {"rx_bytes": 0, "tx_bytes": 0},
        })
        self.emit(rec)
        self.counts["processes"] += 1
        return (pid, rid)

    def signal(self, kind, t, pid=None, comm=None, task=None, ev=None):
        if t > self.now:
            return
        self.emit({"type": "signal", "schema": 1, "host": self.a.host,
                   "id": "g-%s-%s-%d" % (self.a.host, kind, int(t * 1000)),
                   "kind": kind, "time": ts(t), "job": self.jobobj(task),
                   "jobs": None, "pid": pid, "comm": comm,
                   "tool": {"name": comm, "category": None,
                            "version": None},
                   "evidence": ev or {}})
        self.counts["signals"] += 1

    def instance(self, root, task, start, dur, fail, oom):
        """A job script, its snakemake, the rule's tools; the end time."""
        tools = TASKS[task][3] if task in TASKS else [(task, 0.5, 200)]
        end = start + dur
        if start > self.now:
            return end
        bash = self.proc(root, task, "bash",
                         ["/bin/bash", ".snakemake/tmp/snakejob.%s.%d.sh"
                          % (task, self.counts["instances"])],
                         start, end, 0.02, 4 << 20)
        smk = self.proc(bash, task, "snakemake",
                        ["python3", "-m", "snakemake", "--target-jobs",
                         task], start + 0.5, end - 0.1, 1.5, 90 << 20,
                        category="workflow-engine")
        t = start + 1.5
        per = (dur - 2) / len(tools)
        for i, (name, share, mib) in enumerate(tools):
            last = i == len(tools) - 1
            code, sig, killed = 0, None, False
            if last and fail:
                code = 1
            if i == 0 and oom:
                sig, killed = 9, True
            tend = t + per if not killed else t + per * 0.6
            self.proc(smk, task, name,
                      [name, "--threads", "4", "sample_%d.fq.gz"
                       % self.counts["instances"]],
                      t, tend, per * share * (0.8 + 0.4 * self.rnd.random()),
                      int(mib * (0.7 + 0.3 * self.rnd.random())) << 20,
                      code=code, sig=sig, oom=killed)
            if killed and tend <= self.now:
                self.counts["oom"] += 1
                self.signal("oom_kill", tend, self.pid, name, task,
                            {"rss_bytes": mib << 20,
                             "total_vm_bytes": (mib * 2) << 20})
                break
            t = tend
        self.counts["instances"] += 1
        self.counts["failed"] += (fail or oom) and end <= self.now
        return end

    def run(self):
        a = self.a
        t0 = a.t0
        # the instances: about procs / 3.6 of them, scheduled on --cpus slots
        plan = []
        n_inst = max(len(TASKS) + 1, int(a.procs / 3.75))
        names = list(TASKS)
        for i in range(n_inst - 1):
            plan.append(names[i * len(names) // (n_inst - 1)])
        plan.append("multiqc")
        slots = [t0 + 5.0] * self.cpus
        jobs = []
        oom_at = set(self.rnd.sample(
            [i for i, x in enumerate(plan) if x == "align"],
            min(OOM_KILLS, plan.count("align"))))
        for i, task in enumerate(plan):
            k = min(range(self.cpus), key=lambda s: slots[s])
            lo, hi = (TASKS[task][1], TASKS[task][2]) if task in TASKS \
                else (30, 40)
            dur = self.rnd.uniform(lo, hi)
            jobs.append((slots[k], dur, task, i in oom_at,
                         self.rnd.random() < 0.005))
            slots[k] += dur + 0.2
        t_end = max(s for s in slots) + 5
        self.emit({"type": "job", "schema": 1, "host": a.host,
                   "id": "j-%s-start" % a.job, "phase": "start",
                   "job": self.jobobj(None), "name": "rnaseq-big",
                   "partition": "batch", "node": a.host, "uid": 1000,
                   "start_time": ts(t0), "end_time": None,
                   "allocation": {"cpus": self.cpus, "mem_bytes": MEM,
                                  "gpus": None}, "exit_code": None})
        root = self.proc(None, None, "snakemake",
                         ["python3", "-m", "snakemake", "-j", str(self.cpus)],
                         t0 + 1, t_end - 1, 0, 200 << 20,
                         category="workflow-engine")
        total = 0
        for start, dur, task, oom, fail in jobs:
            self.instance(root, task, start, dur, fail and not oom, oom)
            total += 1
        # polling helpers without a task, until the process budget is met
        t = t0 + 10
        while self.counts["processes"] < a.procs and t < self.now:
            name = "squeue" if self.counts["processes"] % 2 else "sh"
            self.proc(root, None, name, [name, "-u", "alice"], t, t + 0.05,
                      0.01, 3 << 20)
            t += (t_end - t0 - 20) / max(1, a.procs / 10)
            if t > t_end - 10:
                t = t0 + 10 + self.rnd.random()
        self.counts["tasks"] = len(set(plan))
        self.signal("stall", t0 + (t_end - t0) * 0.4, None, None, None,
                    {"seconds": 180})
        self.signal("spot_interruption", t_end - 60, None, None, None,
                    {"action": "terminate", "action_time": ts(t_end + 60)})
        elapsed = t_end - t0
        if t_end > self.now:
            print(" ".join("%s=%d" % kv for kv in self.counts.items()),
                  file=sys.stderr)
            return
        self.emit({"type": "job", "schema": 1, "host": a.host,
                   "id": "j-%s-end" % a.job, "phase": "end",
                   "job": self.jobobj(None), "name": "rnaseq-big",
                   "partition": "batch", "node": a.host, "uid": 1000,
                   "start_time": ts(t0), "end_time": ts(t_end),
                   "allocation": {"cpus": self.cpus, "mem_bytes": MEM,
                                  "gpus": None}, "exit_code": 0,
                   "cost": {"amount": round(elapsed / 3600 * 0.68, 6),
                            "currency": "USD", "source": "config:node_hour",
                            "formula": "allocation_share",
                            "price_per_hour": 0.68, "share": 1.0,
                            "elapsed_s": elapsed, "note": None},
                   "usage": {"cpu_s": None, "processes": None,
                             "mem_peak_bytes": None, "mem_peak_source": None,
                             "steps": []}})
        print(" ".join("%s=%d" % kv for kv in self.counts.items()),
              file=sys.stderr)


def hostile(a):
    """Every limit of the page filled with text JSON and HTML must escape:
    a tool per process, 300 tasks, 3 hosts, 1,500 signals, all named by
    '<' runs, command lines of '<' and '&'."""
    job = {"scheduler": "slurm", "id": a.job, "step": "batch", "run": a.run,
           "pipeline": "<" * 100, "task": None, "user": "u", "account": None,
           "cost_center": None}
    out = sys.stdout
    for i in range(a.procs):
        j = dict(job)
        j["task"] = "<" * 60 + "t%d" % (i % 300) if i % 2 else None
        s = a.t0 + i * 0.5
        out.write(json.dumps({
            "type": "process", "schema": 1, "host": "<" * 60 + "h%d" % (i % 3),
            "id": "p%d" % i, "pid": 1000 + i, "ppid": 1, "parent_id": None,
            "start_time": ts(s), "end_time": ts(s + i % 97), "exe": "/bin/x",
            "comm": "x", "argv": ["<" * 300, "&" * 100], "uid": 0, "job": j,
            "tool": {"name": "<" * 58 + "x%05d" % i, "category": None},
            "exit": {"code": i % 3, "signal": None, "oom_killed": i % 50 == 0},
            "cpu": {"user_s": 1.5, "sys_s": 0.1},
            "mem": {"peak_rss_bytes": 1 << 30}}) + "\n")
    for k in range(1500):
        out.write(json.dumps({
            "type": "signal", "schema": 1, "host": "<" * 60 + "h0",
            "id": "s%d" % k, "kind": "<" * 60 + "k%d" % (k % 9),
            "time": ts(a.t0 + k * 5), "job": job, "pid": 1000 + k,
            "comm": "<" * 15, "tool": {"name": None, "category": None},
            "evidence": {"x": "<" * 400}}) + "\n")
    out.write(json.dumps({
        "type": "job", "schema": 1, "host": "h", "id": "je", "phase": "end",
        "job": job, "name": "<" * 255, "partition": None, "node": "h",
        "uid": 0, "start_time": ts(a.t0), "end_time": ts(a.t0 + 10000),
        "allocation": {"cpus": 4, "mem_bytes": 1 << 34, "gpus": None},
        "exit_code": 1, "cost": {"amount": 3.2, "currency": "USD",
                                 "elapsed_s": 10000, "note": None}}) + "\n")
    print("processes=%d signals=1500" % a.procs, file=sys.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--procs", type=int, required=True)
    p.add_argument("--hostile", action="store_true",
                   help="fill the page's every limit with escaped text")
    p.add_argument("--job", default="20000")
    p.add_argument("--run", default="big-run")
    p.add_argument("--host", default="node07")
    p.add_argument("--user", default="alice")
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--t0", type=float, default=1767258000.0)
    p.add_argument("--cpus", type=int, default=CPUS)
    p.add_argument("--now", type=float, default=None,
                   help="write the run as seen at this time")
    a = p.parse_args()
    if a.hostile:
        hostile(a)
    else:
        Gen(a).run()


if __name__ == "__main__":
    main()
