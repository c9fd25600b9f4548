-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 40-steps.lua - workflow step, run and pipeline from the process tree.
--
-- Conventions read (never environment variables, which the agent does not
-- see):
--   Snakemake  a job script .../snakejob.RULE.N.sh          step=RULE
--              snakemake ... --target-jobs 'RULE:wc=..'      step=RULE task=wc=..
--              snakemake ... --allowed-rules RULE            step=RULE
--              local mode: the `bash -c COMMAND` child of snakemake,
--              whose job the agent finds in Snakemake's own job log
--              (p.engine_job, agent/daemon/track/smklog.h)              step=RULE task=wc=..
--              run=its log's name unless the job has a run
--              pipeline = "snakemake"
--   Nextflow   a task wrapper .command.sh/.command.run (bash -ue .command.sh,
--              /bin/bash .../work/ab/123456.../.command.run)
--              pipeline = "nextflow", task = "ab/123456..." (the task hash)
--              a job name nf-PROCESS_(tag) given as -J/--job-name/-N value,
--              as a whole argument, or as the job's task/step field
--              step = PROCESS, task = tag
--   Cromwell   .../cromwell-executions/WORKFLOW/UUID/call-TASK[/shard-N]/...
--              pipeline = WORKFLOW, run = UUID, step = TASK or TASK/shard-N
--              (the innermost call of sub-workflows)
--   miniwdl    .../YYYYMMDD_HHMMSS_WORKFLOW/call-TASK/...
--              pipeline = WORKFLOW, run = YYYYMMDD_HHMMSS_WORKFLOW, step = TASK
-- Where, nearest first (the first that shows a convention wins):
--   0. what the workflow engine says of the process's job (p.engine_job)
--   1. the process's own argv, for the processes that carry one: the job
--      scripts (the catalogue names `bash .../snakejob.align.7.sh`
--      "snakejob.align.7.sh", `bash -ue .command.sh` ".command.sh", a
--      Cromwell `.../execution/script` "script"), snakemake, scheduler
--      helpers (sbatch -J nf-...) and container runtimes
--   2. the parent: its tool name, and its argv (the engine passes argv for
--      the parent only) for Cromwell/miniwdl scripts and Nextflow's hash
--   3. the other ancestors' tool names
--   4. an nf- name in the job's task or step field
-- Deeper descendants keep what their ancestors were given: children
-- inherit the job at fork, and the engine only overwrites a job field
-- when a rule sets it non-empty.  Answers are remembered per command line
-- and per tool name (bounded), so the common case costs a few lookups.

local find, match, sub, byte = string.find, string.match, string.sub, string.byte
local concat = table.concat
local set_job = lib.set_job

-- "snakemake" and "nextflow" name the engine, not the workflow: they only
-- fill a pipeline the job does not have yet (`jobtrace run --pipeline`,
-- a hook's --pipeline or SPANK's --trace-pipeline name it and stay).
-- Cromwell's and miniwdl's workflow names replace it.
local engine_names = lib.set { "snakemake", "nextflow" }
local job_has_pipeline = false	-- the current process's p.job.pipeline ~= ""

local function set_pipeline(d, v)
	if not (engine_names[v] and job_has_pipeline) then set_job(d, "pipeline", v) end
end

-- A result r = { step=, run=, pipeline=, task= } (absent fields stay).
local function set_r(d, r)
	set_job(d, "step", r.step)
	set_job(d, "run", r.run)
	set_pipeline(d, r.pipeline)
	set_job(d, "task", r.task)
end

-- Read a Nextflow job name "nf-PROCESS_(tag)" (without "nf-").  Plain
-- searches: the name comes from the command line and may be hostile.
local function nf_result(v)
	local q = find(v, "_(", 1, true)
	if q and q > 1 and byte(v, #v) == 41 then	-- ends in ")"
		return { step = sub(v, 1, q - 1), task = sub(v, q + 2, #v - 1),
			pipeline = "nextflow" }
	end
	return { step = v, pipeline = "nextflow" }
end

local function nf_name(v, d)
	set_r(d, nf_result(v))
end

-- An nf- job name in a source string (arguments separated by "\n"): the
-- value of -J/-N/--job-name, or a whole argument of the form
-- nf-NAME_(tag).  Nextflow's job names are at most 256 bytes.
local function find_nf(s)
	local pos = 1
	while true do
		local i = find(s, "nf-", pos, true)
		if i == nil then return nil end
		local e = find(s, "\n", i, true) or #s + 1
		local v = sub(s, i + 3, e - 1)
		if #v > 0 and #v <= 256 then
			local before = i == 1 and "\n" or sub(s, i - 1, i - 1)
			if before == "\n" then
				-- a whole argument: after -J/-N/--job-name, or nf-NAME_(tag)
				local pb = i > 3 and sub(s, i - 4, i - 2) or ""
				local pl = i > 12 and sub(s, i - 11, i - 2) or ""
				if pb == "\n-J" or pb == "\n-N" or (i == 4 and (sub(s, 1, 2) == "-J"
					or sub(s, 1, 2) == "-N")) or pl == "--job-name"
					or (find(v, "_(", 1, true) and byte(v, #v) == 41) then
					return v
				end
			elseif before == "=" then
				if i > 11 and sub(s, i - 11, i - 2) == "--job-name" then return v end
			elseif before == "J" then
				if i > 2 and sub(s, i - 2, i - 1) == "-J"
					and (i == 3 or sub(s, i - 3, i - 3) == "\n") then
					return v
				end
			end
		end
		pos = i + 3
	end
end

-- The task hash of a Nextflow work dir: ".../work/ab/123456.../.command.sh"
local function nf_hash(s)
	local h1, h2 = match(s, "/(%x%x)/(%x%x%x%x%x%x+)/%.command%.")
	if h1 then return h1 .. "/" .. h2 end
end

-- Every convention on one source string (arguments joined by "\n"):
-- a result or false.
local function detect_in(s, is_snakemake)
	if find(s, "snakejob.", 1, true) then
		local rule = match(s, "snakejob%.([%w_]+)%.%d+%.sh")
		if rule then return { step = rule, pipeline = "snakemake" } end
	end
	if find(s, "/call-", 1, true) then
		if find(s, "cromwell-executions/", 1, true) then
			local wf, uuid, rest = match(s,
				"cromwell%-executions/([^/\n]+)/(%x%x%x%x%x%x%x%x%-[%x%-]+)/(call%-[^\n]*)")
			if wf then
				local task, after = match(rest, "^.*call%-([^/\n]+)(.*)$")
				local shard = match(after, "^/shard%-(%d+)")
				if shard then task = task .. "/shard-" .. shard end
				return { pipeline = wf, run = uuid, step = task }
			end
		end
		local run, wf, task = match(s,
			"/(%d%d%d%d%d%d%d%d_%d%d%d%d%d%d_([%w_]+))/call%-([^/\n]+)")
		if run then return { pipeline = wf, run = run, step = task } end
	end
	if find(s, "nf-", 1, true) then
		local v = find_nf(s)
		if v then
			local r = nf_result(v)
			if r.task == nil and find(s, ".command.", 1, true) then r.task = nf_hash(s) end
			return r
		end
	end
	if find(s, ".command.", 1, true) then
		local h = nf_hash(s)
		if h or match(s, "%f[^\n\0/]%.command%.%a+%f[\n\0]") then
			return { pipeline = "nextflow", task = h }
		end
	end
	if is_snakemake then
		local rule, wc = match(s, "%-%-target%-jobs\n([%w_]+):?([^\n]*)")
		if not rule then
			rule = match(s, "%-%-allowed%-rules\n([%w_]+)%f[\n\0]")
			if rule and match(s, "%-%-allowed%-rules\n[%w_]+\n[^%-\n]") then
				rule = nil	-- several rules: not one job
			end
		end
		if rule then return { step = rule, task = wc, pipeline = "snakemake" } end
	end
	return false
end

-- The same command lines come back (every child of a task script shows
-- its parent's argv): remember the answers.
local detect_plain, detect_plain_t = lib.memo(function(s) return detect_in(s, false) end)
local detect_smk = lib.memo(function(s) return detect_in(s, true) end)

local function detect(s, d, is_snakemake)
	local r
	if is_snakemake then
		r = detect_smk(s)
	else
		r = detect_plain_t[s]
		if r == nil then r = detect_plain(s) end
	end
	if r then set_r(d, r) return true end
	return false
end
lib.detect_step = detect

-- A convention shown by a tool name the catalogue gave an ancestor:
-- `bash .../snakejob.align.7.sh` is named "snakejob.align.7.sh",
-- `bash -ue .command.sh` ".command.sh".
local tool_step, tool_step_t = lib.memo(function(t)
	if sub(t, 1, 9) == "snakejob." then
		local rule = match(t, "^snakejob%.([%w_]+)%.%d+%.sh$")
		if rule then return { step = rule, pipeline = "snakemake" } end
	elseif t == ".command.sh" or t == ".command.run" then
		return { pipeline = "nextflow" }
	end
	return false
end)
lib.tool_step = tool_step

-- Parents whose argv holds a Cromwell or miniwdl path: the catalogue names
-- `/bin/bash .../call-x/execution/script` "script", miniwdl's "command".
local argv_tools = lib.set { "script", "command" }

-- "nf-NAME" job names recorded in the job's task or step field
local nf_job, nf_job_t = lib.memo(function(s)
	if #s > 3 and #s <= 259 and sub(s, 1, 3) == "nf-" then return sub(s, 4) end
	return false
end)

local function apply_st(st, d)
	set_job(d, "step", st.step)
	set_pipeline(d, st.pipeline)
end

local argv_lower = lib.argv_lower

-- Which processes show a convention in their own argv: the job scripts
-- themselves (named by the catalogue after the script), snakemake, and
-- what hands a script or job name on (sbatch -J nf-..., docker/singularity
-- running .command.sh or a Cromwell script).  Any other process is
-- judged by its parent and ancestors only, which keeps the common case
-- free of string searches.
local own_categories = lib.set { "scheduler-helper", "container-runtime" }

jobtrace.rule("steps", function(p, d)
	if d.step ~= "" then return end	-- an earlier (site) rule named it
	job_has_pipeline = p.job.pipeline ~= ""
	-- 0. Snakemake's local mode: its job log names the rule of the
	-- command it started
	local ej = p.engine_job
	if ej and ej.rule ~= "" then
		-- the run: the job's own (jobtrace run --run, SPANK), else
		-- Snakemake's (its log's name: one per invocation)
		return set_r(d, { step = ej.rule, pipeline = "snakemake",
			task = ej.wildcards ~= "" and ej.wildcards or nil,
			run = p.job.run == "" and ej.run ~= "" and ej.run or nil })
	end
	-- 1. the process's own command line
	local tool = d.tool
	local is_snakemake = tool == "snakemake"
	local st = tool_step_t[tool]
	if st == nil then st = tool_step(tool) end
	if st or is_snakemake or argv_tools[tool] or own_categories[d.category] then
		local argv = p.argv
		local s = argv_lower(p, argv)
		if is_snakemake or find(s, "snakejob.", 1, true) or find(s, "/call-", 1, true)
			or find(s, ".command.", 1, true) or find(s, "nf-", 1, true) then
			if detect(concat(argv, "\n"), d, is_snakemake) then return end
		end
	end
	-- 2. the parent: its tool name, or its argv for Cromwell/miniwdl scripts
	-- and Nextflow's task hash
	local par = p.parent
	if par then
		local t = par.tool
		st = tool_step_t[t]
		if st == nil then st = tool_step(t) end
		local pa = par.argv
		if st then
			if st.step or not pa or not detect(concat(pa, "\n"), d, false) then
				apply_st(st, d)
			end
			return
		end
		if argv_tools[t] and pa and detect(concat(pa, "\n"), d, false) then return end
		-- 3. the other ancestors' tool names
		local anc = p.ancestors
		for k = 2, #anc do
			local at = anc[k].tool
			st = tool_step_t[at]
			if st == nil then st = tool_step(at) end
			if st then return apply_st(st, d) end
		end
	end
	-- 4. a scheduler job name recorded as the job's task or step
	local job = p.job
	local jt, js = job.task, job.step
	if jt ~= "" then
		local v = nf_job_t[jt]
		if v == nil then v = nf_job(jt) end
		if v then return nf_name(v, d) end
	end
	if js ~= "" then
		local v = nf_job_t[js]
		if v == nil then v = nf_job(js) end
		if v then return nf_name(v, d) end
	end
end)

jobtrace.selftest { argv = { "bwa", "mem", "ref.fa", "r1.fq" },
	parent = { argv = { "/bin/bash", "/data/.snakemake/tmp.x1/snakejob.align.7.sh" },
		tool = "snakejob.align.7.sh" },
	expect = { tool = "bwa", step = "align", pipeline = "snakemake" } }
jobtrace.selftest { argv = { "/usr/bin/bash", "-c",
	"set -euo pipefail;  touchmem 300 > out/b.txt" },
	parent = { argv = { "/usr/bin/python3", "/usr/bin/snakemake", "--cores", "2" },
		tool = "snakemake" },
	engine_job = { rule = "make_data", jobid = "2", wildcards = "s=b",
		run = "2026-11-27T141925.065602" },
	expect = { tool = "bash", step = "make_data", pipeline = "snakemake",
		run = "2026-11-27T141925.065602" } }
jobtrace.selftest { argv = { "/bin/bash", "-ue",
	"/scratch/work/3f/a1b2c3d4e5f60718293a4b5c6d7e8f/.command.sh" },
	expect = { tool = ".command.sh", pipeline = "nextflow",
		task = "3f/a1b2c3d4e5f60718293a4b5c6d7e8f" } }
jobtrace.selftest { argv = { "/bin/bash",
	"/data/cromwell-executions/Germline/0b7f1c2e-5d3a-4c4e-9a51-7d2e9e3f1a20/call-HaplotypeCaller/shard-3/execution/script" },
	expect = { pipeline = "Germline", run = "0b7f1c2e-5d3a-4c4e-9a51-7d2e9e3f1a20",
		step = "HaplotypeCaller/shard-3" } }
jobtrace.selftest { argv = { "sbatch", "-J", "nf-NFCORE_RNASEQ_FASTQC_(sample1)",
	".command.run" },
	expect = { tool = "sbatch", category = "scheduler-helper", pipeline = "nextflow",
		step = "NFCORE_RNASEQ_FASTQC", task = "sample1" } }
