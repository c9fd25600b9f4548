-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 50-files.lua - which of the files a process opened its record lists.
--
-- jobtrace.file_rule(name, fn) registers fn(path, p): the path (absolute)
-- of a regular file or folder the process opened, and the process as the
-- rules see it at exec.  It returns "keep" (the path), "drop" (counted in
-- files_rest, not listed), "hash" ("sha256:" and the path's SHA-256),
-- "ext" ("*" and the name's extension, as "*.fq.gz") or nil (no opinion:
-- the next file rule decides; none is "keep").  The agent asks once per
-- distinct path of a process, at its end; never a file's contents.
--
-- A site adds prefixes in a file of its own sorted after this one (for
-- example 55-site-files.lua): lib.file_prefix("/scratch/secret/", "hash").
-- The longest matching prefix a site gave decides before the defaults.
-- A rule of its own that must run first goes in a file sorted before
-- this one (45-site-files.lua), with jobtrace.file_rule.  A file rule that
-- decides without reading p decides by the path alone: the agent keeps
-- that verdict for the path, for every process, until the rules reload;
-- one that read only p.exe, p.comm, p.cgroup, p.container or p.uid is
-- kept under the path and those values (lua-rules/README.md).

local sub, find = string.sub, string.find

local verdicts = { keep = true, drop = true, hash = true, ext = true }
local site = {}		-- { prefix, verdict }, longest prefix first

-- A site's verdict for every path under prefix.
function lib.file_prefix(prefix, verdict)
	if type(prefix) ~= "string" or prefix == "" then
		error("lib.file_prefix: the prefix must be a string", 2)
	end
	if not verdicts[verdict] then
		error("lib.file_prefix: the verdict must be keep, drop, hash or ext", 2)
	end
	site[#site + 1] = { prefix, verdict }
	table.sort(site, function(a, b) return #a[1] > #b[1] end)
end

-- What every job opens and nobody asks about: the system's own trees,
-- libraries and locales.
local drop_prefixes = {
	"/proc/", "/sys/", "/dev/", "/run/",
	"/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/", "/usr/lib64/",
	"/usr/libexec/", "/usr/share/locale/", "/usr/share/i18n/",
	"/usr/share/zoneinfo/", "/etc/ld.so.cache", "/etc/ld.so.preload",
	"/etc/localtime", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
}

-- Libraries and packages wherever they are installed (conda, venv, a
-- user's R library): shared objects, Python and R package trees.
local drop_patterns = {
	"%.so$", "%.so%.[%d.]+$",
	"/site%-packages/", "/dist%-packages/", "/__pycache__/", "%.pyc$",
	"/lib/python%d[%d.]*/", "/R/library/", "/site%-library/", "/lib/R/",
	"/locale/",
}

local function starts(path, prefix)
	return sub(path, 1, #prefix) == prefix
end

-- The default rule.  It reads p last, only for a path nothing else
-- decided: the agent caches a verdict given without reading p for every
-- process (until the rules reload), so the libraries every process opens
-- cost one look-up; the p.exe test is cached under the path and p.exe.
jobtrace.file_rule("files-default", function(path, p)
	for i = 1, #site do
		if starts(path, site[i][1]) then
			return site[i][2]
		end
	end
	for i = 1, #drop_prefixes do
		if starts(path, drop_prefixes[i]) then
			return "drop"
		end
	end
	for i = 1, #drop_patterns do
		if find(path, drop_patterns[i]) then
			return "drop"
		end
	end
	if path == p.exe then
		return "drop"	-- the tool's own executable
	end
	return nil
end)

jobtrace.selftest{ argv = { "bwa", "mem" }, exe = "/opt/bwa/bwa",
	file = "/opt/bwa/bwa", expect = { file = "drop" } }
jobtrace.selftest{ argv = { "bwa" }, file = "/home/u/ref/hg38.fa",
	expect = { file = "keep" } }
jobtrace.selftest{ argv = { "python3" },
	file = "/opt/conda/envs/x/lib/python3.11/site-packages/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so",
	expect = { file = "drop" } }
jobtrace.selftest{ argv = { "Rscript" }, file = "/home/u/R/x86_64-pc-linux-gnu-library/4.3/dplyr/R/dplyr.rdb",
	expect = { file = "keep" } }
jobtrace.selftest{ argv = { "Rscript" }, file = "/usr/local/lib/R/site-library/dplyr/R/dplyr.rdb",
	expect = { file = "drop" } }
jobtrace.selftest{ argv = { "samtools" }, file = "/usr/lib/x86_64-linux-gnu/libhts.so.3",
	expect = { file = "drop" } }
jobtrace.selftest{ argv = { "sort" }, file = "/proc/self/status",
	expect = { file = "drop" } }
jobtrace.selftest{ argv = { "sort" }, file = "/data/sorted.txt.gz",
	expect = { file = "keep" } }
