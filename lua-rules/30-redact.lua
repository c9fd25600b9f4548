-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 30-redact.lua - replace secrets in d.argv with "[REDACTED]".
--
-- What is redacted (option names are matched case-insensitively, with or
-- without leading dashes, "_" and "-" alike, in both "--opt value" and
-- "--opt=value" forms):
--   * values of secret options: --password, --passwd, --pass, --passphrase,
--     --token, --secret, --api-key, --apikey, --access-key, --secret-key,
--     --client-secret, --access-token, --auth-token, --hub-token, ... and any
--     option whose name ends in password/passwd/passphrase/secret/api-key/
--     access-key/secret-key, or in -token (but not --pad-token, --eos-token
--     and other tokenizer options)
--   * short options only where the tool means a password: mysql/mariadb
--     family -pSECRET (attached only: `mysql -p db` prompts and db is a
--     database), sshpass -p, redis-cli -a, mongo/mongosh -p, sqlcmd -P,
--     ldapsearch & co -w, zip/unzip -P, 7z -pSECRET, openssl -k,
--     docker/podman login -p, curl -u user:SECRET, smbclient -U user%SECRET
--     (psql's -p is a port and is never touched)
--   * NAME=value arguments whose NAME looks secret (contains PASSW,
--     PASSPHRASE or SECRET; ends in TOKEN/KEY or has them as a word:
--     AWS_SECRET_ACCESS_KEY=..., GITHUB_TOKEN=..., password=... in a
--     libpq conninfo or a URL query, sig=/X-Amz-Signature= in signed URLs)
--   * credentials in URLs: scheme://user:SECRET@host (https, s3, postgres,
--     mongodb+srv, ...)
--   * Authorization/Proxy-Authorization headers (the scheme word stays:
--     "Authorization: Bearer [REDACTED]"), X-Api-Key, Private-Token,
--     X-Auth-Token, Cookie headers, and "Bearer xyz" anywhere
--   * tokens by shape: AWS access key ids (AKIA/ASIA + 16), GitHub
--     (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_), GitLab (glpat-), Slack
--     (xox[baprs]-), Hugging Face (hf_), Google API keys (AIza)
--   * the same inside shell command strings: `sh -c '...'` (and bash, dash,
--     zsh, ksh, mksh, ash, busybox sh, csh, fish; -c also as -lc, -ec, -xc,
--     --login -c), wherever the shell sits in argv (sudo sh -c, env ... sh
--     -c, srun bash -c, docker exec c sh -c), su/runuser -c, and the remote
--     command strings of ssh.  jobtrace.shell_words splits the string into
--     POSIX shell words; each simple command of it (split at ; | & && ||
--     ( ) ` and newlines; a redirection's file is not an argument) gets the
--     checks above with its own tool, so `mysql -pX` and `curl -u u:X` are
--     known inside strings too; strings inside strings up to 3 deep.  Only
--     the secret's bytes in the string become [REDACTED]; the rest of the
--     string stays byte for byte.  A wrapper's command gets its own tool's
--     checks as well: sudo -u x mysql -pX, timeout 60 mysql -pX
--   * the cut last argument: when the kernel cut argv (p.argv_truncated)
--     the last argument lost its end, and with it what some checks look
--     for.  On top of the checks above it loses the "user:..." of its last
--     URL when neither "@" nor "/" follows the "://" ("https://user:SECR"
--     -> "https://user:[REDACTED]", a cut "https://host:84" alike), and a
--     tail that starts like a token shape (ghp_, github_pat_, glpat-,
--     xoxb-, hf_, AIza, AKIA, ...) and runs to the end.  A cut shell string
--     gets this for its last word.  The value of a secret option stays
--     hidden when the option is the one before the cut.  Other cut
--     arguments stay readable: /scratch/run/sample_00, --input=/data/x,
--     https://host/path.
-- Ordinary arguments are left alone: a file named secret_santa.txt,
-- --tokenizer bert, --max-tokens 512, --keep-going.
--
-- Cost: one concatenation of argv and a few plain searches decide whether
-- any argument needs a closer look; most command lines stop there.  A shell
-- string is split only when the same searches (and the names of the tools
-- with password options) find something in it.

local byte, sub, find, match, lower, upper, gsub, rep = string.byte,
	string.sub, string.find, string.match, string.lower, string.upper,
	string.gsub, string.rep
local concat, unpack = table.concat, table.unpack
local set, basename = lib.set, lib.basename
local R = lib.REDACTED

-- option names (lower case, no leading dashes, "_" -> "-")
local secret_opt = set { "password", "passwd", "pass", "passphrase",
	"token", "secret", "api-key", "apikey", "access-key", "secret-key",
	"client-secret", "access-token", "auth-token", "api-token", "hub-token",
	"hf-token", "github-token", "gh-token", "gitlab-token", "refresh-token",
	"session-token", "private-token", "bearer-token", "oauth-token",
	"id-token", "slack-token", "wandb-key", "aws-secret-access-key",
	"aws-session-token", "secret-access-key", "storepass", "keypass",
	"srcstorepass", "deststorepass", "sas-token", "connection-string" }
lib.secret_options = secret_opt

-- the word before "-token" in tokenizer and generation options
local not_secret_token = set { "pad", "eos", "bos", "unk", "sep", "cls", "mask",
	"max", "min", "num", "start", "end", "special", "stop", "with", "image",
	"audio", "video", "new", "first", "last", "default", "split", "add", "skip",
	"use", "n", "max-new", "max-input", "max-total", "decoder-start",
	"pad-to", "chat" }

local function secret_option(norm)
	if secret_opt[norm] then return true end
	if find(norm, "passw", 1, true) then
		return find(norm, "passwo?r?d$") ~= nil
	end
	if find(norm, "passphrase$") or find(norm, "secret$") or find(norm, "api%-?key$")
		or find(norm, "access%-key$") or find(norm, "secret%-key$") then
		return true
	end
	local pre = match(norm, "^(.-)%-token$")
	if pre and not not_secret_token[pre] then
		local last = match(pre, "([^%-]+)$")
		return not not_secret_token[last]
	end
	return false
end
local secret_option_t
secret_option, secret_option_t = lib.memo(secret_option)
lib.secret_option = secret_option

-- NAME of a NAME=value that holds a secret
local function secret_key(key)
	local ku = upper(key)
	if find(ku, "PASSW", 1, true) or find(ku, "SECRET", 1, true)
		or find(ku, "PASSPHRASE", 1, true) or ku == "PASS" then
		return true
	end
	if find(ku, "TOKEN", 1, true) then
		if find(ku, "TOKEN$") or find(ku, "TOKEN[_%-]") then return true end
	end
	if find(ku, "KEY", 1, true) then
		if find(ku, "KEY$") or find(ku, "KEY[_%-]") then return true end
	end
	if ku == "SIG" or find(ku, "SIGNATURE$") or find(ku, "CREDENTIAL", 1, true) then
		return true
	end
	return false
end
secret_key = lib.memo(secret_key)
lib.secret_key = secret_key

-- headers whose value is a secret (lower case names)
local secret_header = set { "authorization", "proxy-authorization", "x-api-key",
	"api-key", "apikey", "x-auth-token", "x-access-token", "private-token",
	"x-vault-token", "cookie", "x-goog-api-key", "x-amz-security-token",
	"x-github-token", "x-token" }
local auth_header = set { "authorization", "proxy-authorization" }

-- tokens by shape: { plain word that must show first, pattern }; the
-- first two are searched in the argument as is, the others lower-cased
local token_patterns = {
	{ "AKIA", "%f[%w]A[KS]IA" .. rep("[%u%d]", 16) .. "%f[^%w]" },
	{ "ASIA", "%f[%w]A[KS]IA" .. rep("[%u%d]", 16) .. "%f[^%w]" },
	{ "gh", "%f[%w]gh[pousr]_" .. rep("%w", 20) .. "%w*" },
	{ "github_pat_", "%f[%w]github_pat_" .. rep("[%w_]", 20) .. "[%w_]*" },
	{ "glpat-", "%f[%w]glpat%-" .. rep("[%w_%-]", 20) .. "[%w_%-]*" },
	{ "xox", "%f[%w]xox[baprs]%-" .. rep("[%w%-]", 10) .. "[%w%-]*" },
	{ "hf_", "%f[%w]hf_" .. rep("%a", 30) .. "%a*" },
	{ "aiza", "%f[%w]AIza" .. rep("[%w_%-]", 35) },
}

-- tool -> { short letter = how }, how: "attached" (-pSECRET only),
-- "any" (-p SECRET or -pSECRET), "userpass" (user:SECRET), "smb" (user%SECRET)
local tool_short = {}
local no_consume = {}	-- tool -> set of option names that never take the next arg
local needs_word = {}	-- tool -> word that must be argv[2] (docker login)
for _, t in ipairs { "mysql", "mysqldump", "mysqladmin", "mysqlimport",
	"mysqlshow", "mysqlcheck", "mysqlslap", "mysqlpump", "mysqlbinlog",
	"mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import",
	"mariadb-check", "mariadb-show", "mariadb-slap" } do
	tool_short[t] = { p = "attached" }
	no_consume[t] = set { "password", "pass" }
end
tool_short.sshpass = { p = "any" }
tool_short["redis-cli"] = { a = "any" }
for _, t in ipairs { "mongo", "mongosh", "mongodump", "mongorestore",
	"mongoexport", "mongoimport", "mongostat", "mongotop" } do
	tool_short[t] = { p = "any" }
end
tool_short.sqlcmd = { P = "any" }
tool_short.bcp = { P = "any" }
for _, t in ipairs { "ldapsearch", "ldapadd", "ldapmodify", "ldapdelete",
	"ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn", "ldapexop" } do
	tool_short[t] = { w = "any" }
end
tool_short.zip = { P = "any" }
tool_short.unzip = { P = "any" }
tool_short["7z"] = { p = "attached" }
tool_short.openssl = { k = "any" }
tool_short.curl = { u = "userpass", U = "userpass", user = "userpass",
	["proxy-user"] = "userpass" }
tool_short.smbclient = { U = "smb", user = "smb" }
tool_short.docker = { p = "any" }
tool_short.podman = { p = "any" }
needs_word.docker = "login"
needs_word.podman = "login"
lib.redact_tool_short = tool_short
local short_names	-- lower-case names of tool_short's tools, built on use

-- Redact credentials in userpass-style values.
local function userpass(v, how)
	if how == "userpass" then
		local u = match(v, "^([^:]*):.")
		if u then return u .. ":" .. R end
		return v
	elseif how == "smb" then
		local u = match(v, "^([^%%]*)%%.")
		if u then return u .. "%" .. R end
		return v
	end
	return R
end

local function header_in_text(name, sp, rest)
	local ln = lower(name)
	if secret_header[ln] then
		local scheme = auth_header[ln] and match(rest, "^(%a+%s+)%S")
		return name .. sp .. (scheme or "") .. R
	end
end

-- scheme://user:SECRET@host -> scheme://user:[REDACTED]@host, for every
-- "://" in a; plain searches only (a pattern here would be quadratic).
local function url_creds(a)
	local out, pos, from = nil, 1, 1
	local n = #a
	while true do
		local i = find(a, "://", pos, true)
		if i == nil then break end
		local as = i + 3
		local ae = find(a, "[/%s]", as) or n + 1	-- end of the authority
		local at = find(a, "@", as, true)
		if at and at < ae then
			local colon = find(a, ":", as, true)
			if colon and colon < at - 1 then
				out = (out or "") .. sub(a, from, colon) .. R
				from = at
			end
		end
		pos = ae
	end
	if out == nil then return a end
	return out .. sub(a, from)
end
lib.url_creds = url_creds

-- Content checks for one argument (or an option's value): URL
-- credentials, NAME=value, headers, Bearer, token shapes.  Every Lua
-- pattern here is either anchored or behind a plain search that must hit
-- first: an unanchored pattern over a long argument costs as much as the
-- whole rest of the chain.
local function redact_text(a)
	local out = a
	local la = lower(a)
	if find(a, "@", 1, true) and find(a, "://", 1, true) then
		out = url_creds(out)
	end
	if sub(la, 1, 5) == "pass:" and #a > 5 then
		return "pass:" .. R
	end
	if find(out, "=", 1, true) then
		if find(out, " ", 1, true) or find(out, "&", 1, true) or find(out, "?", 1, true)
			or find(out, ";", 1, true) then
			-- keys start where a run of key characters starts (a frontier
			-- on the whole class keeps this linear); "--password=x" inside
			-- a command string has its dashes dropped for the check
			out = gsub(out, "%f[%w_%.%-]([%w_%.%-]+)=([^%s&;,=\"']+)",
				function(k, v)
					if v ~= R and secret_key(match(k, "^[%-%.]*(.*)$")) then
						return k .. "=" .. R
					end
				end)
		else
			local k, v = match(out, "^([%a_][%w_%.%-]*)=(.+)$")
			if k and v ~= R and secret_key(k) then out = k .. "=" .. R end
		end
	end
	if find(la, "bearer", 1, true) then
		out = gsub(out, "([Bb][Ee][Aa][Rr][Ee][Rr]%s+)([^%s,;\"']+)", "%1" .. R)
	end
	if find(out, ":", 1, true) then
		local name, sp, rest = match(out, "^(%a[%w%-]*)(:%s*)(.+)$")
		if name then
			-- the argument is a header: "Authorization: Bearer xyz"
			local ln = lower(name)
			if secret_header[ln] and rest ~= R then
				local scheme = auth_header[ln] and match(rest, "^(%a+%s+)%S")
				out = name .. sp .. (scheme or "") .. R
			end
		elseif find(out, " ", 1, true) and (find(la, "auth", 1, true)
			or find(la, "cookie", 1, true) or find(la, "key", 1, true)
			or find(la, "token", 1, true)) then
			-- a header inside a command string, up to the closing quote
			out = gsub(out, "%f[%w](%a[%w%-]*)(:[ \t]*)([^\"'\n]+)", header_in_text)
		end
	end
	if #a >= 20 then
		for k = 1, #token_patterns do
			local tp = token_patterns[k]
			if find(k <= 2 and a or la, tp[1], 1, true) then
				out = gsub(out, tp[2], R)
			end
		end
	end
	-- "mysql ... -psecret" inside a command string (sh -c '...')
	if (find(la, "mysql", 1, true) or find(la, "mariadb", 1, true)) and find(out, " ", 1, true) then
		out = gsub(out, "(%s%-p)([^%s'\"]+)", "%1" .. R)
	end
	return out
end
lib.redact_text = redact_text

-- Arguments known to hold no word of a secret (see the gate below).  The
-- gate looks for words inside single arguments (none spans the "\n"
-- between two), so a command line made only of known arguments cannot
-- match it: such lines skip the searches.  Bounded; short arguments only.
-- The value is SHELL for an argument that may name a shell (shell_slots
-- looks at those), else true: a line made only of arguments with true has
-- no shell string to look for.
local safe, safe_n = {}, 0
local SHELL = "sh"
local SAFE_LEN = 128

local function redact(argv, tool)
	local ts = tool_short[tool]
	if ts and needs_word[tool] and argv[2] ~= needs_word[tool] then ts = nil end
	local nc = no_consume[tool]
	local pending = nil	-- how to redact the next argument
	for k = 2, #argv do
		local a = argv[k]
		if pending then
			if pending == "any" or pending == "value" then
				argv[k] = R
			elseif pending == "auth-scheme" then
				-- "Authorization:" "Bearer" "xyz" split by the shell
				local l = lower(a)
				if l == "bearer" or l == "basic" or l == "token" or l == "digest" then
					pending = "value"
					goto next
				end
				argv[k] = R
			else
				argv[k] = userpass(a, pending)
			end
			pending = nil
			goto next
		end
		if safe[a] and not ts then goto next end	-- no word of a secret
		if byte(a, 1) == 45 and #a >= 2 then
			local eq = find(a, "=", 2, true)
			local name = eq and sub(a, 1, eq - 1) or a
			local dashes = byte(a, 2) == 45 and 2 or 1
			local norm = lower(sub(name, dashes + 1))
			if find(norm, "_", 1, true) then norm = gsub(norm, "_", "-") end
			-- tool-specific options first
			if ts then
				local how = ts[norm]
				if how and dashes == 2 then
					if eq then argv[k] = sub(a, 1, eq) .. userpass(sub(a, eq + 1), how)
					else pending = how end
					goto next
				end
				if dashes == 1 and not eq then
					local letter = sub(a, 2, 2)
					how = ts[letter]
					if how then
						if #a > 2 then
							argv[k] = "-" .. letter .. userpass(sub(a, 3), how)
						elseif how ~= "attached" then
							pending = how
						end
						goto next
					end
				end
			end
			if #norm >= 3 and secret_option(norm) then
				if eq then
					if eq < #a then argv[k] = sub(a, 1, eq) .. R end
				elseif not (nc and nc[norm]) then
					pending = "any"
				end
				goto next
			end
			if eq then
				local v = sub(a, eq + 1)
				local lv = lower(v)
				if lv == "authorization:" or lv == "proxy-authorization:" then
					pending = "auth-scheme"
					goto next
				end
				local nv = redact_text(v)
				if nv ~= v then argv[k] = sub(a, 1, eq) .. nv end
				goto next
			end
		else
			local l = lower(a)
			if l == "bearer" or l == "aws_secret_access_key" or l == "aws_session_token"
				or l == "aws_access_key_id" then
				pending = "any"
				goto next
			end
			if l == "authorization:" or l == "proxy-authorization:" then
				pending = "auth-scheme"
				goto next
			end
		end
		do
			local na = redact_text(a)
			if na ~= a then argv[k] = na end
		end
		::next::
	end
end
lib.redact = redact

local argv_lower = lib.argv_lower


-- Extra words for the gate (lower case), added by lib.redact_option
-- and lib.redact_word for a site's own secrets.
local extra_words = {}

-- Does the (lower-cased, "\n"-joined) text hold a word of a secret?
local function gate(s)
	for k = 1, #extra_words do
		if find(s, extra_words[k], 1, true) then return true end
	end
	return find(s, "pass", 1, true) or find(s, "secret", 1, true)
		or find(s, "token", 1, true) or find(s, "key", 1, true)
		or find(s, "auth", 1, true) or find(s, "bearer", 1, true)
		or (find(s, "@", 1, true) and find(s, "://", 1, true)) or find(s, "?", 1, true)
		or find(s, "akia", 1, true) or find(s, "asia", 1, true)
		or find(s, "github_pat", 1, true) or find(s, "xox", 1, true)
		or find(s, "hf_", 1, true) or find(s, "cookie", 1, true)
		or find(s, "mysql", 1, true) or find(s, "mariadb", 1, true)
		or (find(s, "gh", 1, true) and find(s, "gh[pousr]_"))
end
lib.redact_gate = gate

-- A site's secret option: lib.redact_option("--vault-blob") redacts the
-- value of --vault-blob / --vault_blob / -vault-blob=... (any case).
function lib.redact_option(name)
	local norm = lower(match(name, "^%-*(.*)$"))
	norm = gsub(norm, "_", "-")
	secret_opt[norm] = true
	extra_words[#extra_words + 1] = norm
	if find(norm, "-", 1, true) then
		extra_words[#extra_words + 1] = (gsub(norm, "%-", "_"))
	end
end

-- A word that makes the redaction rule look closer at a command line
-- (for a site rule that edits d.argv after this one, see README.md).
function lib.redact_word(word)
	extra_words[#extra_words + 1] = lower(word)
end

-- A tool whose short option holds a password: lib.redact_tool("acmectl",
-- "k", "any") ("any": -k SECRET or -kSECRET; "attached": -kSECRET only).
function lib.redact_tool(tool, letter, how)
	local t = tool_short[tool] or {}
	t[letter] = how or "any"
	tool_short[tool] = t
	short_names = nil
end

---------------------------------------------------------------------------
-- Shell command strings: `sh -c '...'`, `su -c '...'`, `ssh host '...'`.
-- The string is split into POSIX shell words (jobtrace.shell_words, in C),
-- each simple command of it gets the per-argv redaction above with its own
-- tool, and only the bytes of a secret are replaced in the string: the rest
-- of it stays byte for byte.

local shell_words, shell_span = jobtrace.shell_words, jobtrace.shell_span

-- shells whose -c string is split (csh's and fish's quoting is read as
-- POSIX's: close enough to find the words of a command)
local shells = set { "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh",
	"ash", "lksh", "pdksh", "posh", "yash", "rbash", "csh", "tcsh", "fish" }
-- programs that start the command after their options (sudo mysql -pX)
local wrappers = set { "sudo", "doas", "env", "nice", "nohup", "timeout",
	"time", "stdbuf", "setsid", "ionice", "chrt", "taskset", "numactl",
	"flock", "srun", "mpirun", "mpiexec", "xargs", "runuser", "exec",
	"command", "builtin" }
-- words before a command name in a shell string
local keyword = set { "!", "{", "}", "if", "then", "else", "elif", "fi",
	"do", "done", "while", "until" }
-- redirections: the word after one is a file, not an argument
local redir = set { "<", ">", ">>", "<<", "<<<", "<<-", "<&", ">&", "<>",
	">|", "&>", "&>>" }
-- ssh options that take a value (the host is the first operand)
local ssh_opts = { sa = set { "B", "b", "c", "D", "E", "e", "F", "I", "i",
	"J", "L", "l", "m", "O", "o", "P", "p", "Q", "R", "S", "W", "w" } }
local MAX_DEPTH = 3	-- sh -c "bash -c 'ssh h \"mysql -pX\"'"

-- The program name of a command word ("-bash" of a login shell: "bash").
local function prog(a)
	local b = basename(a)
	if byte(b, 1) == 45 then b = sub(b, 2) end
	return b
end

-- May argument a name a shell whose -c string shell_slots looks at
-- ("...sh", "busybox")?
local function shell_end(a)
	local c = byte(a, -1)
	return (c == 104 and byte(a, -2) == 115) or c == 120
end

-- Index of the command string when argv[k] starts a shell with -c
-- (-c, -lc, -ec, --login -c, busybox sh -c), else nil.
local function shell_cmd(argv, k)
	local b = prog(argv[k])
	if b == "busybox" and argv[k + 1] then
		k = k + 1
		b = prog(argv[k])
	end
	if not shells[b] then return nil end
	local pos, _, _, mark = lib.scan(argv, k + 1, lib.opts.shell)
	if mark == "c" and pos <= #argv then return pos end
	return nil
end

-- The shell command strings of argv: { [index] = bytes of an option name
-- before the string (su --command=...), else 0 }, or nil when none.
-- A shell with -c anywhere (sudo sh -c, env X=1 bash -c, srun bash -lc,
-- docker exec c sh -c), su/runuser -c, and ssh's remote command.
-- known: no argument after argv[1] may name a shell (see safe below).
local function shell_slots(argv, known)
	local n = #argv
	local slots
	-- every name that matters ends in "h", "x", "u" or "r" (sh, busybox,
	-- su, runuser): the base name only for those
	local c = byte(argv[1], -1)
	local name = (c == 104 or c == 120 or c == 117 or c == 114) and prog(argv[1])
	if shells[name] or name == "busybox" then
		local k = shell_cmd(argv, 1)
		if k then return { [k] = 0 } end
	elseif name == "su" or name == "runuser" then
		for k = 2, n do
			local a = argv[k]
			if a == "-c" or a == "--command" or a == "--session-command" then
				if k < n then return { [k + 1] = 0 } end
				return nil
			end
			if sub(a, 1, 10) == "--command=" then return { [k] = 10 } end
		end
		return nil
	elseif name == "ssh" then
		-- ssh joins the words after the host for the remote shell; the
		-- ones that hold more than a word are command strings
		for k = lib.scan(argv, 2, ssh_opts) + 1, n do
			if find(argv[k], "[%s;&|<>()`]") then
				slots = slots or {}
				slots[k] = 0
			end
		end
	end
	if known then return slots end
	local last = n < 32 and n or 32
	for k = 2, last - 1 do
		if shell_end(argv[k]) then
			local at = shell_cmd(argv, k)
			if at then
				slots = slots or {}
				slots[at] = 0
			end
		end
	end
	return slots
end

-- Index of the command a wrapper at argv[b] starts, when that command has
-- password options of its own or is a shell (sudo -u x mysql -pX), else b.
local function wrapped(argv, b)
	local last = #argv
	if last > b + 8 then last = b + 8 end
	for k = b + 1, last do
		local a = argv[k]
		if byte(a, 1) ~= 45 and not find(a, "=", 1, true) then
			local bn = prog(a)
			if tool_short[bn] or shells[bn] then return k end
		end
	end
	return b
end

-- The tool name a command word stands for, as the catalogue names it.
local function tool_of(a)
	local name = prog(a)
	if tool_short[name] then return name end
	local e = lib.lookup(name)
	return e and e.name or name
end

-- The tail of a cut argument that may be the start of a secret whose end,
-- and with it what the usual checks look for, was cut off:
--   * the last URL's "user:..." when neither "@" nor "/" follows the
--     "://" ("https://user:[REDACTED]"; "https://host:84" too: a cut port
--     cannot be told from a cut password);
--   * a token that starts like one of the token shapes and runs to the end
--     ("--pat ghp_12" -> "--pat [REDACTED]").
-- Everything else of a cut argument stays: /scratch/run/sample_00,
-- --input=/data/x, https://host/path.
local token_starts = { "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-", "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "hf_", "AIza",
	"AKIA", "ASIA" }
local function cut_tail(a)
	local out = a
	local i, from = nil, 1
	while true do
		local j = find(a, "://", from, true)
		if j == nil then break end
		i, from = j, j + 3
	end
	if i and not find(a, "[/@]", i + 3) then
		local colon = find(a, ":", i + 3, true)
		if colon and colon < #a then out = sub(a, 1, colon) .. R end
	end
	for k = 1, #token_starts do
		local j = find(out, token_starts[k], 1, true)
		while j do
			if (j == 1 or not find(sub(out, j - 1, j - 1), "[%w_]"))
				and not find(out, "[^%w_%-]", j) then
				return sub(out, 1, j - 1) .. R
			end
			j = find(out, token_starts[k], j + 1, true)
		end
	end
	return out
end
lib.redact_cut = cut_tail

-- Names of the tools with password options, for the gate of shell
-- strings (rebuilt after lib.redact_tool).
local function short_gate(ls)
	if short_names == nil then
		-- "mysql" finds mysqldump too: names holding another are left out
		local all = {}
		for t in pairs(tool_short) do all[lower(t)] = true end
		short_names = {}
		for t in pairs(all) do
			local covered = false
			for u in pairs(all) do
				if u ~= t and find(t, u, 1, true) then covered = true break end
			end
			if not covered then short_names[#short_names + 1] = t end
		end
		table.sort(short_names)
	end
	for k = 1, #short_names do
		if find(ls, short_names[k], 1, true) then return true end
	end
	return false
end

-- Is a shell string free of any word of a secret and of the names of the
-- tools with password options?  (Then it needs no split; memoized: xargs
-- and parallel run one string many times.)
local harmless_sh = lib.memo(function(s)
	local ls = lower(s)
	return not (gate(ls) or short_gate(ls))
end)

-- The bytes of old that new replaced: old and new share p bytes at the
-- start and q at the end.  A "[REDACTED]" that the shared ends cut into
-- is taken whole (a secret ending in "]" must not keep its last byte).
local function changed(old, new)
	local no, nn = #old, #new
	local m = no < nn and no or nn
	local p = 0
	while p < m and byte(old, p + 1) == byte(new, p + 1) do p = p + 1 end
	local q = 0
	while q < m - p and byte(old, no - q) == byte(new, nn - q) do q = q + 1 end
	local i = find(new, R, p > 9 and p - 8 or 1, true)
	if i and i <= p then p = i - 1 end
	local e = nn - q
	i = find(new, R, e > 9 and e - 8 or 1, true)
	while i and i <= e do
		if i + 9 > e then q = nn - (i + 9) end
		i = find(new, R, i + 1, true)
	end
	if q < 0 then q = 0 end
	return p, q
end

local redact_shell

-- Redact the shell string in argv[k] (after off bytes of an option name),
-- from its text before the per-argv pass (o); the pass's own result stays
-- when it hid the whole argument or when the words show nothing.
local function redact_slot(argv, k, off, o, depth, cut)
	local s = off > 0 and sub(o, off + 1) or o
	local r = redact_shell(s, depth, cut)
	if r ~= s and argv[k] ~= R then argv[k] = sub(o, 1, off) .. r end
end

-- One simple command of a shell string: its words cmd (token numbers idx);
-- new texts of changed words go to out[token].  cutk: the token number of
-- the cut last word of the string, if any.
local function redact_command(cmd, idx, depth, cutk, out)
	local nc = #cmd
	if nc == 1 and cutk ~= idx[1] then return end	-- a name holds no secret
	local b = 1
	while b < nc and (keyword[cmd[b]] or find(cmd[b], "^[%a_][%w_]*=")) do
		b = b + 1
	end
	if wrappers[prog(cmd[b])] then b = wrapped(cmd, b) end
	-- assignments and keywords before the command: one word at a time
	for k = 1, b - 1 do
		local na = redact_text(cmd[k])
		if na ~= cmd[k] then out[idx[k]] = na end
	end
	local argv = {}
	for k = b, nc do argv[k - b + 1] = cmd[k] end
	local n = #argv
	local tool = tool_of(argv[1])
	local slots = depth < MAX_DEPTH and shell_slots(argv) or nil
	local cut = cutk ~= nil and idx[nc] == cutk
	if slots or tool_short[tool] or gate(lower(concat(argv, "\n", 2, n))) then
		local orig = slots and { unpack(argv) }
		redact(argv, tool)
		if slots then
			for k, off in pairs(slots) do
				redact_slot(argv, k, off, orig[k], depth + 1, cut and k == n)
			end
		end
	end
	if cut and not (slots and slots[n]) then argv[n] = cut_tail(argv[n]) end
	for k = 1, n do
		if argv[k] ~= cmd[b + k - 1] then out[idx[b + k - 1]] = argv[k] end
	end
end

-- s with the secrets of its simple commands replaced, byte for byte
-- elsewhere; cut: s is the cut last argument (its last word is cut).
redact_shell = function(s, depth, cut)
	if not cut and harmless_sh(s) then return s end
	local w, ws, we = shell_words(s)
	local nw = #w
	local cutk = cut and nw > 0 and w[nw] ~= false and nw or nil
	local out = {}
	local cmd, idx = {}, {}
	local target = nil	-- the token after a redirection
	for i = 1, nw + 1 do
		local x = w[i]
		if i == target then
			-- a file, not an argument (the command goes on)
			local nt = redact_text(x)
			if cutk == i then nt = cut_tail(nt) end
			if nt ~= x then out[i] = nt end
		elseif x then
			cmd[#cmd + 1] = x
			idx[#idx + 1] = i
		elseif x == false and redir[sub(s, ws[i], we[i])] then
			if w[i + 1] then target = i + 1 end
		elseif #cmd > 0 then
			redact_command(cmd, idx, depth, cutk, out)
			cmd, idx = {}, {}
		end
	end
	local parts, from = nil, 1
	for t = 1, nw do
		local nt = out[t]
		if nt then
			local old = w[t]
			local p, q = changed(old, nt)
			if p < #old - q then
				local i, j = shell_span(s, ws[t], p + 1, #old - q)
				parts = parts or {}
				parts[#parts + 1] = sub(s, from, i - 1)
				parts[#parts + 1] = sub(nt, p + 1, #nt - q)
				from = j + 1
			end
		end
	end
	if parts == nil then return s end
	parts[#parts + 1] = sub(s, from)
	return concat(parts)
end
lib.redact_shell = redact_shell

jobtrace.rule("redact-secrets", function(p, d)
	local argv = d.argv
	local n = #argv
	if n < 2 then return end
	local tool = d.tool
	local cut = p.argv_truncated
	-- look: argv needs the per-argv pass
	local look = tool_short[tool] ~= nil or wrappers[tool] ~= nil
	local known = false	-- argv[2..] known harmless, none may name a shell
	if not look then
		local k, sh = 2, false
		while k <= n do
			local s = safe[argv[k]]
			if not s then break end
			if s == SHELL then sh = true end
			k = k + 1
		end
		known = k > n and not sh
		look = k <= n and gate(argv_lower(p, argv))
		if not look and k <= n then
			-- remember the arguments of this harmless line
			local max = lib.CACHE_MAX * 2
			if safe_n + n > max then
				for a in pairs(safe) do safe[a] = nil end
				safe_n = 0
			end
			if max > 0 then
				for q = k, n do
					local a = argv[q]
					if #a <= SAFE_LEN and not safe[a] then
						safe[a] = shell_end(a) and SHELL or true
						safe_n = safe_n + 1
					end
				end
			end
		end
	end
	local slots = shell_slots(argv, known)
	-- a shell string without a word of a secret needs no split either
	local shell = slots ~= nil and (look or cut)
	if slots and not shell then
		for k in pairs(slots) do
			if not harmless_sh(argv[k]) then shell = true end
		end
	end
	if not look and not shell then
		if cut then argv[n] = cut_tail(argv[n]) end
		return
	end
	local orig = shell and { unpack(argv) }
	if look then
		redact(argv, tool)
		if wrappers[tool] then
			-- sudo -u x mysql -pX: the wrapped command's own options
			local b = wrapped(argv, 1)
			if b > 1 then
				local sub_argv = { unpack(argv, b) }
				redact(sub_argv, tool_of(argv[b]))
				for k = 1, #sub_argv do argv[b + k - 1] = sub_argv[k] end
			end
		end
	end
	if shell then
		for k, off in pairs(slots) do
			redact_slot(argv, k, off, orig[k], 1, cut and k == n)
		end
	end
	if cut and not (shell and slots[n]) then argv[n] = cut_tail(argv[n]) end
end)

jobtrace.selftest { argv = { "mysql", "-uroot", "-ps3cret", "db" },
	expect = { argv = { "mysql", "-uroot", "-p[REDACTED]", "db" } } }
jobtrace.selftest { argv = { "curl", "-H", "Authorization: Bearer abc.def",
	"https://user:pw@example.org/x" },
	expect = { argv = { "curl", "-H", "Authorization: Bearer [REDACTED]",
		"https://user:[REDACTED]@example.org/x" } } }
jobtrace.selftest { argv = { "tool", "--API_KEY=xyz", "--token", "t0k",
	"secret_santa.txt", "--tokenizer", "bert" },
	expect = { argv = { "tool", "--API_KEY=[REDACTED]", "--token", "[REDACTED]",
		"secret_santa.txt", "--tokenizer", "bert" } } }
jobtrace.selftest { argv = { "psql", "-h", "db", "-p", "5432", "-U", "me" },
	expect = { argv = { "psql", "-h", "db", "-p", "5432", "-U", "me" } } }
jobtrace.selftest { argv = { "bash", "-lc", "mysql -ps3 db; x --token='t k' | y" },
	expect = { argv = { "bash", "-lc", "mysql -p[REDACTED] db; x --token='[REDACTED]' | y" } } }
jobtrace.selftest { argv = { "git", "clone", "https://user:s3cr" }, argv_truncated = true,
	expect = { argv = { "git", "clone", "https://user:[REDACTED]" } } }
