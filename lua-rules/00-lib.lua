-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 00-lib.lua - helpers shared by the later rule files (global `lib`).
--
-- Everything here runs once at load time except the small functions the
-- rules call per exec; those avoid building tables, string.format and
-- repeated pattern compilation.  Keys of lib.tools are the names a program
-- is known by (exe base name, argv[0], script name, jar name); each value is
-- an entry { name = canonical tool name, cat = category, fn = handler or
-- nil, vkeys = { "/name-", "/name/" } for finding a version in a path,
-- vsplit = true when "name3.11"/"name-12" style names are common }.

lib = {}

local byte, sub, find, match, lower = string.byte, string.sub, string.find,
	string.match, string.lower

lib.REDACTED = "[REDACTED]"
lib.MAX_TOOL = 63	-- d.tool limit
lib.MAX_VERSION = 31	-- d.version limit (the engine's buffer)
lib.MAX_JOB = 127	-- d.step/run/pipeline/task limit

-- A set from a list: set{"a","b"} -> {a=true, b=true}.
function lib.set(list)
	local t = {}
	for i = 1, #list do t[list[i]] = true end
	return t
end

-- Last path component: what follows the last "/" (the engine's C helper;
-- a Lua pattern would cost ten times as much).
local basename = jobtrace.basename
lib.basename = basename

-- Cut a string to at most n bytes.
function lib.cut(s, n)
	if #s > n then return sub(s, 1, n) end
	return s
end

-- Facts that depend only on the executable, cached per exe path (bounded):
--   info.name  base name of p.exe (p.comm when the exe is unknown)
--   info.path  p.exe, or nil when unknown
-- and what rules store there for the next exec of the same program
-- (10-deny: info.deny, 20-catalogue: info.e / info.v).  The cache lives as
-- long as the rules: a reload starts empty.  One classification calls
-- lib.info(p) from several rules; the last answer is kept for the same p.
-- Entries kept by each of the rules' caches (0 turns caching off, e.g. to
-- measure what a never-seen command line costs).
lib.CACHE_MAX = 2048

local info_cache, info_n = {}, 0
local last_p, last_info
function lib.info(p)
	if p == last_p then return last_info end
	local exe = p.exe
	local key = exe
	if exe == "" then key = p.comm end
	local info = info_cache[key]
	if info == nil then
		if info_n >= lib.CACHE_MAX then info_cache, info_n = {}, 0 end
		if exe ~= "" then
			info = { name = basename(exe), path = exe }
		else
			info = { name = key }
		end
		if lib.CACHE_MAX > 0 then
			info_cache[key] = info
			info_n = info_n + 1
		end
	end
	last_p, last_info = p, info
	return info
end

-- The base name of p.exe (p.comm when the exe is unknown).
function lib.exe_name(p)
	return lib.info(p).name
end

-- A bounded memo for a function of one string (base names of argv[1],
-- step conventions of ancestors' tool names, ...).  Misses call fn(s);
-- its result (false for "nothing") is stored.
-- Returns the memo function and its table: hot paths read the table
-- directly (t[s], nil on a miss) and call the function only on a miss.
-- Strings longer than maxlen (default 1024) are never stored.
function lib.memo(fn, max, maxlen)
	local cache, n = {}, 0
	maxlen = maxlen or 1024
	local function get(s)
		local v = cache[s]
		if v == nil then
			v = fn(s)
			if v == nil then v = false end
			local m = max or lib.CACHE_MAX
			if m == 0 or #s > maxlen then return v end
			if n >= m then
				for k in pairs(cache) do cache[k] = nil end
				n = 0
			end
			cache[s] = v
			n = n + 1
		end
		return v
	end
	return get, cache
end

-- argv[2..] joined by "\n" and lower-cased, computed once per
-- classification (the redaction and step rules both look at it); argv is
-- the list to use on a miss (d.argv for the redaction rule, p.argv else).
local concat = table.concat
local lc_p, lc_s
function lib.argv_lower(p, argv)
	if p == lc_p then return lc_s end
	local n = #argv
	local s = ""
	if n >= 2 then s = lower(concat(argv, "\n", 2, n)) end
	lc_p, lc_s = p, s
	return s
end

-- "python3.11" -> "python", "3.11"; "gcc-12" -> "gcc", "12"; else nil.
-- The base must be letters (and - _), so "bowtie2" only splits when looked
-- up as a last resort.
function lib.split_version(name)
	return match(name, "^(%a[%a_%+%-]-[%a%+])[%-_]?v?(%d[%d%.]*)$")
end

-- "picard-2.27.5" -> "picard", "2.27.5"; "gatk-package-4.4.0.0-local" ->
-- "gatk-package", "4.4.0.0"; "VarScan.v2.4.4" -> "VarScan", "2.4.4".
function lib.split_jar_version(name)
	if #name > 128 then return nil end
	local b, v = match(name, "^(%a[%w_%-]-)[%-_%.]v?(%d+[%.%d]*)[%-%._%w]*$")
	if b and b ~= "" then return b, v end
	return nil
end

---------------------------------------------------------------------------
-- The tool registry (filled by 20-catalogue.lua and by site files).

local tools = {}
lib.tools = tools
lib.categories = {}	-- category -> number of tools, for the README/tests

local function new_entry(name, cat)
	local l = lower(name)
	return { name = name, cat = cat, vkeys = { "/" .. l .. "-", "/" .. l .. "/" } }
end

-- Register canonical tool names of one category:
--   lib.add("aligner", "bwa", "bowtie2", ...)
-- A name is looked up as given and in lower case.
function lib.add(cat, ...)
	local names = { ... }
	for i = 1, #names do
		local name = names[i]
		local e = tools[name]
		if e == nil or e.name ~= name then
			e = new_entry(name, cat)
			lib.categories[cat] = (lib.categories[cat] or 0) + 1
		else
			e.cat = cat
		end
		tools[name] = e
		tools[lower(name)] = tools[lower(name)] or e
	end
	return tools[names[1]]
end

-- Other names of a registered tool: lib.alias("bowtie2", "bowtie2-align-s").
function lib.alias(canon, ...)
	local e = tools[canon]
	if e == nil then error("lib.alias: unknown tool " .. tostring(canon), 2) end
	local names = { ... }
	for i = 1, #names do
		tools[names[i]] = e
		tools[lower(names[i])] = tools[lower(names[i])] or e
	end
	return e
end

-- Extra directory names under which a tool's versioned folder appears
-- (featureCounts lives in subread-2.0.6/), for lib.version_from_path.
function lib.pkg(canon, ...)
	local e = tools[canon]
	local names = { ... }
	for i = 1, #names do
		local l = lower(names[i])
		e.vkeys[#e.vkeys + 1] = "/" .. l .. "-"
		e.vkeys[#e.vkeys + 1] = "/" .. l .. "/"
	end
	return e
end

-- Find a name in the registry: exact, lower case, then (for entries that
-- allow it) without a version suffix.  Returns entry, version-from-name.
function lib.lookup(name)
	local e = tools[name]
	if e then return e end
	-- no tool has a longer name; the patterns below would be quadratic
	if name == nil or name == "" or #name > 64 then return nil end
	local l = lower(name)
	e = tools[l]
	if e then return e end
	local last = byte(l, #l)
	if last and last >= 48 and last <= 57 then	-- ends in a digit
		local b, v = match(l, "^(%a[%a_%+%-]-[%a%+])[%-_]?v?(%d[%d%.]*)$")
		if b then
			e = tools[b]
			if e and e.vsplit then return e, v end
		end
	end
	return nil
end

-- A version from a path that shows one: /opt/samtools-1.17/bin/samtools,
-- /opt/conda/pkgs/bwa-0.7.17-h5bf99c6_8/bin/bwa, .../SAMtools/1.17-GCC/...
function lib.version_from_path(path, e)
	if path == nil or path == "" then return nil end
	local lp = lower(path)
	local vk = e.vkeys
	for k = 1, #vk do
		local _, en = find(lp, vk[k], 1, true)
		if en then
			local v = match(lp, "^v?(%d+[%.%d]*%a?)", en + 1)
			if v and #v <= lib.MAX_VERSION then
				-- drop a trailing dot ("1.17." from "1.17.tar")
				if byte(v, #v) == 46 then v = sub(v, 1, #v - 1) end
				return v
			end
		end
	end
	return nil
end

---------------------------------------------------------------------------
-- Option scanning for interpreters and wrappers.
--
-- lib.scan(argv, i, spec) walks argv from index i over options and returns
--   pos, stop, value, mark
-- pos:   index of the first operand (script, module, command); #argv+1 if none
-- stop:  when an option ends option processing and names the payload
--        (python -m MOD, python -c CODE, perl -e CODE, java -jar JAR),
--        spec's tag for it ("m", "c", "jar", ...), value its argument, and
--        pos the index after that argument
-- mark:  the last spec.mark letter seen (bash -c: the operand is a command
--        string, not a script)
-- spec fields (all optional):
--   sa   = set of short letters taking a value (attached "-Xdev" or next arg)
--   ss   = { letter = tag } short options that stop, with a value
--   la   = set of "--long" options taking the next arg when given without "="
--   ls   = { ["--long"] = tag } long options that stop, with a value
--   mark = set of short letters to report
--   plus = true: "+o opt" / "+x" are options too (shells)
--   words = true: no short clusters; "-cp" is one option (java); use wa/ws
--   wa   = set of whole-word options taking the next arg (java -cp)
--   ws   = { word = tag } whole-word options that stop (java -jar)
function lib.scan(argv, i, spec)
	local n = #argv
	local sa, ss, la, ls, mark = spec.sa, spec.ss, spec.la, spec.ls, spec.mark
	local marked
	while i <= n do
		local a = argv[i]
		local c1 = byte(a, 1)
		if c1 ~= 45 and not (c1 == 43 and spec.plus) then
			if spec.at and c1 == 64 then	-- java @argfile
				i = i + 1
				goto continue
			end
			return i, nil, nil, marked
		end
		if #a == 1 then return i, nil, nil, marked end	-- "-": stdin
		if spec.words then
			local ws = spec.ws
			local st = ws and ws[a]
			if st then return i + 2, st, argv[i + 1], marked end
			local eq = find(a, "=", 2, true)
			if eq and ws then
				st = ws[sub(a, 1, eq - 1)]
				if st then return i + 1, st, sub(a, eq + 1), marked end
			end
			if a == "--" then return i + 1, nil, nil, marked end
			if not eq and spec.wa and spec.wa[a] then i = i + 1 end
			i = i + 1
		elseif byte(a, 2) == 45 then		-- "--long"
			if #a == 2 then return i + 1, nil, nil, marked end
			local eq = find(a, "=", 3, true)
			local name = eq and sub(a, 1, eq - 1) or a
			local st = ls and ls[name]
			if st then
				if eq then return i + 1, st, sub(a, eq + 1), marked end
				return i + 2, st, argv[i + 1], marked
			end
			if not eq and la and la[name] then i = i + 1 end
			i = i + 1
		else					-- "-abc" cluster
			local len = #a
			if len > 32 then len = 1 end	-- no real cluster is this long
			for j = 2, len do
				local ch = sub(a, j, j)
				local st = ss and ss[ch]
				if st then
					if j < len then return i + 1, st, sub(a, j + 1), marked end
					return i + 2, st, argv[i + 1], marked
				end
				if sa and sa[ch] then
					if j == len then i = i + 1 end	-- value is the next arg
					break
				end
				if mark and mark[ch] then marked = ch end
			end
			i = i + 1
		end
		::continue::
	end
	return n + 1, nil, nil, marked
end

-- The first operand (non-option argument) from index i with no knowledge
-- of the program's options: "-x" and "--x" are flags, "--" ends options.
function lib.first_operand(argv, i)
	local n = #argv
	while i <= n do
		local a = argv[i]
		if byte(a, 1) ~= 45 or a == "-" then return i, a end
		if a == "--" then return i + 1, argv[i + 1] end
		i = i + 1
	end
	return nil
end

-- Does argv contain the exact word w at index >= i?
function lib.has(argv, w, i)
	for k = i or 1, #argv do
		if argv[k] == w then return k end
	end
	return nil
end

-- Option specs of the common interpreters, for lib.scan.
local S = lib.set
lib.opts = {
	python = { sa = S { "X", "W", "Q" }, ss = { c = "c", m = "m" },
		la = S { "--check-hash-based-pycs" } },
	perl = { sa = S { "I", "M", "m", "F", "x", "d", "D", "C" },
		ss = { e = "e", E = "e" } },
	shell = { sa = S { "o", "O" }, mark = S { "c" }, plus = true,
		la = S { "--rcfile", "--init-file" } },
	rscript = { ss = { e = "e" } },
	r = { sa = S { "d", "g" }, ss = { f = "f", e = "e" },
		ls = { ["--file"] = "f" }, la = S { "--encoding", "--debugger" } },
	julia = { sa = S { "C", "J", "L", "H", "p", "t", "M" }, ss = { e = "e", E = "e" },
		la = S { "--threads", "--procs", "--machine-file", "--sysimage",
			"--load", "--cpu-target", "--home", "--gcthreads" },
		ls = { ["--eval"] = "e", ["--print"] = "e" } },
	node = { sa = S { "r", "C" }, ss = { e = "e", p = "e" },
		la = S { "--require", "--import", "--loader", "--experimental-loader",
			"--conditions", "--title", "--env-file" },
		ls = { ["--eval"] = "e", ["--print"] = "e" } },
	ruby = { sa = S { "I", "r", "C", "E", "F", "T", "K", "x" }, ss = { e = "e" },
		la = S { "--encoding" } },
	octave = { sa = S { "p" }, ls = { ["--eval"] = "e" },
		la = S { "--path", "--exec-path", "--image-path", "--info-file",
			"--info-program", "--doc-cache-file", "--texi-macros-file" } },
	java = { words = true, at = true,
		ws = { ["-jar"] = "jar", ["-m"] = "module", ["--module"] = "module" },
		wa = S { "-cp", "-classpath", "--class-path", "-p", "--module-path",
			"--upgrade-module-path", "--add-modules", "--limit-modules",
			"--add-reads", "--add-exports", "--add-opens", "--patch-module",
			"--source", "--release", "-d" } },
}

---------------------------------------------------------------------------
-- Job-field helpers for the step rules.

-- Set d[field] = v when v is a non-empty string, cut to the limit.
function lib.set_job(d, field, v)
	if v ~= nil and v ~= "" then
		if #v > lib.MAX_JOB then v = sub(v, 1, lib.MAX_JOB) end
		d[field] = v
	end
end

jobtrace.selftest {
	argv = { "/usr/bin/python3.11", "-c", "pass" },
	expect = { include = true, tool = "python", category = "interpreter",
		version = "3.11" },
}
