-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 10-deny.lua - system noise that is not part of any job.
--
-- A match sets d.include = false and d.stop = true (nothing later needs to
-- look at an excluded process).  What happens to the subtree:
--   TREE  (d.children = false): the daemon and everything it starts is
--         noise (journald, telegraf's exec plugins running nvidia-smi, ...)
--   KEEP  (d.children = true):  the daemon is noise but what it starts is
--         judged on its own (init, sshd -> the user's shell, slurmd ->
--         slurmstepd -> the job, cron -> a user's crontab pipeline)
-- Names are matched against the exe's base name (p.comm when the exe is
-- unknown; comm is cut to 15 bytes, so the cut names are registered too).
-- A site adds its own with lib.deny("name", "tree"|"keep") in a file sorted
-- before 20-catalogue.lua, e.g. 15-site-deny.lua.
--
-- A name is only a claim: anyone can copy bash to ~/telegraf.  A process
-- is excluded by its name only when nothing says it is someone's work:
--   * it is in no job: a job's processes are always recorded;
--   * p.exe_system: the file it runs is root's, in folders only root can
--     change, so root chose the name (a user's copy or link is not);
--   * for "tree" names, whose whole subtree goes: it runs as a system
--     account (lib.system_uid), so does its parent (a service manager,
--     cron, init: not a user's shell), and its cgroup is not a login
--     session's (systemd's user.slice).  A "keep" name hides only the
--     program itself, which is root's; what it starts is judged alone.

local sub, find, match = string.sub, string.find, string.match
local info_of = lib.info

-- Accounts below UID_MIN are the system's (login.defs's UID_MIN; a site
-- whose users start lower sets lib.UID_MIN in its own file).
lib.UID_MIN = 1000

-- Is uid a system account's: below lib.UID_MIN, or nobody's?
function lib.system_uid(uid)
	return uid < lib.UID_MIN or uid == 65534 or uid == 4294967294
end
local system_uid = lib.system_uid

local TREE, KEEP = false, true
local deny = {}		-- name -> children value
local deny_nojob = {}	-- name -> children value; only when p.job.id == ""
local deny_optdir = {}	-- /opt/<dir>/... -> children value
lib.deny_names = deny

-- Register names; how is "tree" or "keep".
function lib.deny(how, ...)
	local v = how == "keep"
	local names = { ... }
	for i = 1, #names do
		deny[names[i]] = v
		deny[sub(names[i], 1, 15)] = v	-- as comm shows it
	end
end

-- Names that are noise only outside a job (profile and login helpers).
function lib.deny_outside_job(how, ...)
	local v = how == "keep"
	local names = { ... }
	for i = 1, #names do
		deny_nojob[names[i]] = v
		deny_nojob[sub(names[i], 1, 15)] = v
	end
end

-- init and service managers: their children are everything, keep them.
-- A batch system's node daemon starts the jobs (PBS's pbs_mom the job's
-- shell, Grid Engine's sge_execd its shepherd, LSF's sbatchd its res), and
-- `jobtrace run` starts the command it runs as a job.
lib.deny("keep", "init", "systemd", "(sd-pam)", "sshd", "sshd-session",
	"cron", "crond", "atd", "slurmd", "pbs_mom", "sge_execd", "sbatchd",
	"jobtrace", "containerd", "dockerd",
	"containerd-shim", "containerd-shim-runc-v2", "runc", "conmon",
	"amazon-ssm-agent", "ssm-session-worker", "tini", "dumb-init",
	"xinetd", "login", "gdm", "lightdm")

-- daemons whose whole subtree is noise
lib.deny("tree",
	-- systemd helpers (systemd-run, -nspawn and -cat are not daemons and
	-- stay; any other systemd-* is caught by the prefix test below)
	"systemd-journald", "systemd-logind", "systemd-udevd", "systemd-resolved",
	"systemd-networkd", "systemd-timesyncd", "systemd-userdbd", "systemd-userwork",
	"systemd-hostnamed", "systemd-tmpfiles", "systemd-oomd", "udevd", "udevadm",
	"journalctl", "dbus-daemon", "dbus-broker", "dbus-broker-launch",
	"rsyslogd", "syslog-ng", "chronyd", "ntpd", "ntpdate", "polkitd",
	"agetty", "getty", "irqbalance", "auditd", "anacron", "run-parts",
	"logrotate", "snapd", "packagekitd", "unattended-upgr", "unattended-upgrade",
	"fwupd", "thermald", "multipathd", "lvmetad", "rpcbind", "rpc.statd",
	"gssproxy", "sssd", "sssd_be", "sssd_nss", "sssd_pam", "nscd", "nslcd",
	"automount", "acpid", "smartd", "mcelog", "rasdaemon", "haveged", "rngd",
	"tuned", "lldpd", "networkd-dispatcher", "accounts-daemon",
	"ModemManager", "NetworkManager", "wpa_supplicant", "cloud-init",
	"google_guest_agent", "google_osconfig_agent", "waagent", "walinuxagent",
	-- monitoring and log shipping agents (they run nvidia-smi, df, ...)
	"node_exporter", "telegraf", "collectd", "datadog-agent", "process-agent",
	"trace-agent", "system-probe", "security-agent", "amazon-cloudwatch-agent",
	"ssm-agent-worker", "ssm-agent", "amazon-ecs-agent", "ecs-init", "prometheus",
	"pushgateway", "nvidia-persistenced", "nv-hostengine", "dcgm-exporter",
	"nvidia-dcgm", "dcgmproftester", "fluent-bit", "fluentd", "td-agent-bit",
	"filebeat", "metricbeat", "otelcol", "otelcol-contrib", "grafana-agent",
	"zabbix_agentd", "zabbix_agent2", "nrpe", "gmond", "gmetad", "pmcd",
	"pmlogger", "sadc", "sa1", "sa2", "debian-sa1", "osqueryd", "falcon-sensor",
	"puppet", "chef-client", "salt-minion", "mmfsd", "cvmfs2",
	-- scheduler daemons (not slurmstepd: the job's steps live under it)
	"munged", "slurmctld", "slurmdbd", "slurmrestd", "pbs_server",
	"sge_qmaster", "mbatchd",
	-- ourselves (the CLI is kept above: `jobtrace run`)
	"jobtraced")

-- login and profile helpers: noise only when they carry no job
lib.deny_outside_job("tree", "lesspipe", "lessfile", "dircolors", "locale",
	"tput", "mesg", "lsb_release", "command-not-found", "landscape-sysinfo",
	"update-motd", "motd-news", "byobu-status", "resize")

-- agents installed as /opt/<dir>/... with generic binary names ("agent")
deny_optdir["datadog-agent"] = TREE
deny_optdir["nessus_agent"] = TREE
deny_optdir["CrowdStrike"] = TREE
lib.deny_optdir = deny_optdir

local keep_systemd = lib.set { "systemd-run", "systemd-nspawn", "systemd-cat",
	"systemd-inhibit", "systemd-escape", "systemd-path" }

-- The verdict for an executable: 0 keep, 1 exclude with the tree,
-- 2 exclude but judge the children, 3/4 like 1/2 but only outside a job.
local function verdict(info)
	local name = info.name
	local v = deny[name]
	if v ~= nil then return v and 2 or 1 end
	if sub(name, 1, 8) == "systemd-" and not keep_systemd[name] then return 1 end
	v = deny_nojob[name]
	if v ~= nil then return v and 4 or 3 end
	local exe = info.path
	if exe and sub(exe, 1, 5) == "/opt/" and not find(exe, "/.", 1, true) then
		local dir = match(exe, "^/opt/([^/]+)/")
		v = dir and deny_optdir[dir]
		if v ~= nil then return v and 2 or 1 end
	end
	return 0
end

local MAX_TOOL = lib.MAX_TOOL
local basename = lib.basename

-- A container runtime's own bootstrap: runc runs itself again as
-- `runc init` (from /proc/self/exe, or from a sealed copy of itself, an exe
-- such as /dev/fd/6 or memfd:runc_cloned) and moves that process into the
-- container's cgroup before the container's command runs.  It is the
-- runtime, not the job: excluded, its child (which execs the container's
-- command) judged on its own.  Matched on argv: the exe names no runc.
local runtime_init = lib.set { "runc", "docker-runc" }

-- Whether p is a runtime's `init` bootstrap.
local function runtime_bootstrap(p)
	local argv = p.argv
	local a1 = argv[1]
	return argv[2] == "init" and a1 ~= nil and
		runtime_init[basename(a1)] == true
end

-- May p, whose name says system noise, be excluded (tree: with its
-- subtree)?  See the head of this file; the cheap tests first.
local function system_process(p, tree)
	if p.job.id ~= "" or not p.exe_system then return false end
	if not tree then return true end
	if not system_uid(p.uid) then return false end
	local parent = p.parent
	if parent and not system_uid(parent.uid) then return false end
	local cg = p.cgroup
	return not (find(cg, "/user.slice/", 1, true) or find(cg, "/user%-%d+%.slice"))
end

jobtrace.rule("deny-system-noise", function(p, d)
	-- the engine's default tool (the exe's base name) may be longer than
	-- d.tool may be; cut it here, the first rule, before it is checked
	local t = d.tool
	if #t > MAX_TOOL then d.tool = sub(t, 1, MAX_TOOL) end
	local info = info_of(p)
	local v = info.deny
	if v == nil then
		v = verdict(info)
		info.deny = v
	end
	if v == 0 then
		-- not cached: the exe is any re-executed program's
		if not runtime_bootstrap(p) then return end
		v = 2
	else
		if v >= 3 then v = v - 2 end
		if not system_process(p, v == 1) then return end
	end
	d.include = false
	d.children = v == 2
	d.stop = true
end)

jobtrace.selftest { argv = { "/usr/sbin/sshd", "-D" },
	expect = { include = false } }
jobtrace.selftest { argv = { "/usr/bin/telegraf", "--config", "/etc/telegraf.conf" },
	expect = { include = false } }
jobtrace.selftest { argv = { "runc", "init" }, exe = "/dev/fd/6",
	expect = { include = false } }
jobtrace.selftest { argv = { "sleep", "2" }, exe = "/proc/self/exe",
	expect = { include = true } }
jobtrace.selftest { argv = { "dircolors", "-b" },
	expect = { include = false } }
jobtrace.selftest { argv = { "sort", "-k1,1", "x.bed" },
	expect = { include = true, tool = "sort", category = "sort-utility" } }
jobtrace.selftest { argv = { "/lib/systemd/systemd-journald" },
	expect = { include = false } }
-- the same names on what is someone's work
jobtrace.selftest { argv = { "/home/u/telegraf", "-c", "burn" }, system = false,
	expect = { include = true } }
jobtrace.selftest { argv = { "/usr/sbin/sshd", "-D" }, job = "42",
	expect = { include = true } }
jobtrace.selftest { argv = { "/usr/bin/telegraf" }, uid = 1000,
	expect = { include = true } }
jobtrace.selftest { argv = { "/usr/bin/telegraf" }, uid = 999,
	parent = { exe = "/bin/bash", uid = 1000 }, expect = { include = true } }
jobtrace.selftest { argv = { "/usr/bin/telegraf" },
	cgroup = "/user.slice/user-1000.slice/session-3.scope",
	expect = { include = true } }
jobtrace.selftest { argv = { "/usr/sbin/sshd", "-D" }, uid = 1000,
	expect = { include = false } }
