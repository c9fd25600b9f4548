-- SPDX-License-Identifier: GPL-2.0-or-later
-- 35-env-values.lua: jobtrace never records environment variables, and a
-- command line can carry their values too.  Replace the VALUE of every
-- NAME=VALUE that a program is told to put into an environment:
--   sbatch/srun/salloc --export=ALL,NAME=VALUE,...   (--export NAME=VALUE too)
--   env [-i] NAME=VALUE ... cmd
--   docker/podman run -e NAME=VALUE / --env NAME=VALUE / --env=NAME=VALUE
--   apptainer/singularity exec --env NAME=VALUE
-- Names stay (they say what was set, not what it was).

local find, sub, gsub = string.find, string.sub, string.gsub
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

-- Slurm's list "ALL,A=1,B=2": names and keywords stay, values go.
local function hide_list(v)
	return (gsub(v, "([^,=]+)=([^,]*)", function(name, val)
		if val == "" then return name .. "=" end
		return name .. "=" .. R
	end))
end

jobtrace.rule("env-values", function(p, d)
	local argv = d.argv
	local prog = jobtrace.basename(argv[1] or "")
	local n = #argv
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
	elseif prog == "env" then
		for k = 2, n do
			local a = argv[k]
			if sub(a, 1, 1) ~= "-" then
				if not find(a, "=", 2, true) then break end	-- the command
				argv[k] = hide(a)
			end
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
