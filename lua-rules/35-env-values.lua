-- SPDX-License-Identifier: GPL-2.0-or-later
-- 35-env-values.lua: jobtrace never records environment variables, and a
-- command line can carry their values too.  Replace the VALUE of every
-- NAME=VALUE that a program is told to put into an environment:
--   sbatch/srun/salloc --export=ALL,NAME=VALUE,...   (--export NAME=VALUE too)
--   env [-i] NAME=VALUE ... cmd
--   docker/podman run -e NAME=VALUE / --env NAME=VALUE / --env=NAME=VALUE
--   apptainer/singularity exec --env NAME=VALUE
-- Names stay (they say what was set, not what it was).

local find, sub, byte, concat = string.find, string.sub, string.byte, table.concat
local R = "[REDACTED]"

local slurm = { sbatch = true, srun = true, salloc = true }
local containers = { docker = true, podman = true, apptainer = true,
	singularity = true, nerdctl = true }

-- "NAME=VALUE" -> "NAME=[REDACTED]"; anything else unchanged.
local function hide(a)
	local eq = find(a, "=", 1, true)
	if eq and eq > 1 and eq < #a then
		return sub(a, 1, eq) .. R
	end
	return a
end

-- Slurm's list "ALL,A=1,B=2": names and keywords stay, values go.  Plain
-- searches only: the list comes from the user, and a pattern that repeats a
-- class before "=" backtracks over every long item without one (70-130 ms
-- per exec for a 2 KB --export with gsub "([^,=]+)=([^,]*)", 0.1 ms now).
-- An item's name starts after any leading "=" and ends at the next "=", as
-- that pattern read it (checked equal on 30,000 random lists).
local function hide_list(v)
	if not find(v, "=", 1, true) then return v end
	local out, pos, n = {}, 1, #v
	while pos <= n + 1 do
		local comma = find(v, ",", pos, true) or n + 1
		local item = sub(v, pos, comma - 1)
		local k = 1
		while byte(item, k) == 61 do k = k + 1 end	-- "=": no name yet
		local eq = find(item, "=", k, true)
		if eq and eq < #item then item = sub(item, 1, eq) .. R end
		out[#out + 1] = item
		pos = comma + 1
	end
	return concat(out, ",")
end

jobtrace.rule("env-values", function(p, d)
	local argv = d.argv
	local prog = jobtrace.basename(argv[1] or "")
	local n = #argv
	-- env's own assignments, whatever it starts (env X=1 sbatch is named
	-- sbatch, and sbatch's --export is read below too)
	if prog == "env" then
		for k = 2, n do
			local a = argv[k]
			if sub(a, 1, 1) ~= "-" then
				if not find(a, "=", 2, true) then break end	-- the command
				argv[k] = hide(a)
			end
		end
	end
	if slurm[prog] or slurm[d.tool] then
		local k = 2
		while k <= n do
			local a = argv[k]
			if sub(a, 1, 9) == "--export=" then
				argv[k] = "--export=" .. hide_list(sub(a, 10))
			elseif a == "--export" and k < n then
				argv[k + 1] = hide_list(argv[k + 1])
				k = k + 1
			end
			k = k + 1
		end
	elseif containers[prog] or containers[d.tool] then
		local k = 2
		while k <= n do
			local a = argv[k]
			if (a == "-e" or a == "--env") and k < n then
				argv[k + 1] = hide(argv[k + 1])
				k = k + 1
			elseif sub(a, 1, 6) == "--env=" then
				argv[k] = "--env=" .. hide(sub(a, 7))
			elseif sub(a, 1, 2) == "-e" and #a > 2 and find(a, "=", 3, true) then
				argv[k] = "-e" .. hide(sub(a, 3))
			end
			k = k + 1
		end
	end
end)

jobtrace.selftest { argv = { "sbatch", "--export=ALL,TOKEN=s3cr3t,PATH=/x", "job.sh" },
	expect = { argv = { "sbatch", "--export=ALL,TOKEN=[REDACTED],PATH=[REDACTED]", "job.sh" } } }
jobtrace.selftest { argv = { "env", "-i", "API_KEY=abc", "HOME=/root", "python3", "x.py", "A=b" },
	expect = { argv = { "env", "-i", "API_KEY=[REDACTED]", "HOME=[REDACTED]", "python3", "x.py", "A=b" } } }
jobtrace.selftest { argv = { "docker", "run", "-e", "PASSWD=pw", "--env=X=1", "-eY=2", "img" },
	expect = { argv = { "docker", "run", "-e", "PASSWD=[REDACTED]", "--env=X=[REDACTED]", "-eY=[REDACTED]", "img" } } }
jobtrace.selftest { argv = { "sbatch", "--export", "ALL,=x,==A=1=2,B=,C,,D=4,", "job.sh" },
	expect = { argv = { "sbatch", "--export", "ALL,=x,==A=[REDACTED],B=,C,,D=[REDACTED],", "job.sh" } } }
