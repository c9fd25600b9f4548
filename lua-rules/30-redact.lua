-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 30-redact.lua - replace secrets in d.argv with "[REDACTED]".
--
-- The engine of the redaction; its tables are filled here and by
-- 31-secret-formats.lua (token formats) and 32-secret-tools.lua (tools that
-- take a secret at a position or after an option, and interpreters' code
-- options).  A site adds its own with lib.secret_format, lib.secret_tool,
-- lib.code_tool, lib.redact_option and lib.redact_word from a later file.
-- What is redacted (README.md, "Redaction", says it with examples):
--   * values of secret options (--password, --token, --api-key, ... and any
--     option whose name ends like one), in "--opt value" and "--opt=value",
--     any case, "_" and "-" alike; not tokenizer options (--pad-token)
--   * what a tool's manual says is a secret (32-secret-tools.lua): short
--     options in clusters (curl -su user:PASS), user:PASS, user%PASS,
--     user,PASS, user/PASS@db, positional secrets (htpasswd -b f u PASS,
--     vault login TOKEN), NAME=VALUE options, "config set KEY VALUE"
--   * NAME=value whose NAME looks secret, alone or in lists, conninfo
--     strings and URL query strings (?token=, sig=, X-Amz-Signature=)
--   * URL userinfo: scheme://user:PASS@host, and a bare token
--     scheme://TOKEN@host (a long or mixed letters-and-digits userinfo)
--   * headers (Authorization keeps its scheme word, X-Api-Key, Cookie, any
--     header named like a secret), "Bearer xyz"
--   * token formats anywhere (31-secret-formats.lua): GitHub, GitLab, AWS,
--     Slack, Stripe, Google, OpenAI/Anthropic sk-, npm, PyPI, Hugging
--     Face, JWTs, PEM private key blocks, basic-auth blobs, ...
--   * code given to interpreters (python -c, perl -e, Rscript -e, SQL of
--     psql -c/sqlite3, awk programs, ...): string literals that a
--     secret-named identifier or key binds (token = '...', {"api_key": ...},
--     PASSWORD 'x', IDENTIFIED BY 'x'), token formats in the whole code,
--     and what the checks above find inside its string literals (a URL, a
--     header, a command: os.system('curl -u u:PASS ...'))
--   * shell strings (sh -c, su -c, ssh's remote command, any argument that
--     reads like a command), word by word with each command's own tool,
--     strings inside strings; commands after wrappers (sudo, env, srun,
--     docker run IMAGE, singularity exec IMAGE, strace -f, $(...), eval,
--     quoted names like c"url") get their own tool's checks
--   * the cut last argument (p.argv_truncated): what may be the start of a
--     secret whose end the kernel cut off
-- Only the secret's bytes change: the rest of a string stays byte for byte.
--
-- Cost: most command lines hold no word of a secret (the gate: one pass of
-- a C word set over the arguments) and stop there.

local byte, sub, find, match, lower, upper, gsub, rep = string.byte,
	string.sub, string.find, string.match, string.lower, string.upper,
	string.gsub, string.rep
local concat, unpack, sort = table.concat, table.unpack, table.sort
local set, basename = lib.set, lib.basename
local words, code_named, code_literals = jobtrace.words, jobtrace.code_named,
	jobtrace.code_literals
local R = lib.REDACTED
local MAX_DEPTH = 4	-- strings and commands inside each other

---------------------------------------------------------------------------
-- Names that hold secrets: options, NAME=value keys, identifiers in code.

-- option names (lower case, no leading dashes, "_" -> "-")
local secret_opt = set { "password", "passwd", "pass", "passphrase",
	"token", "secret", "api-key", "apikey", "access-key", "secret-key",
	"client-secret", "access-token", "auth-token", "api-token", "hub-token",
	"hf-token", "github-token", "gh-token", "gitlab-token", "refresh-token",
	"session-token", "private-token", "bearer-token", "oauth-token",
	"id-token", "slack-token", "wandb-key", "aws-secret-access-key",
	"aws-session-token", "secret-access-key", "storepass", "keypass",
	"srcstorepass", "deststorepass", "srckeypass", "destkeypass",
	"sas-token", "connection-string", "private-key", "oauth2-bearer",
	"account-key", "storage-key", "master-key", "encryption-key",
	"signing-key", "license-key", "app-key", "consumer-secret",
	"auth-key", "pwd", "auth", "secret-string", "secret-binary", "creds",
	"sse-c-key", "copy-source-sse-c-key", "sse-customer-key", "credentials", "src-creds", "dest-creds" }
lib.secret_options = secret_opt

-- the word before "-token" in tokenizer and generation options
local not_secret_token = set { "pad", "eos", "bos", "unk", "sep", "cls", "mask",
	"max", "min", "num", "start", "end", "special", "stop", "with", "image",
	"audio", "video", "new", "first", "last", "default", "split", "add", "skip",
	"use", "n", "max-new", "max-input", "max-total", "decoder-start",
	"pad-to", "chat", "total", "output", "input", "prompt", "per", "context" }

local function secret_option(norm)
	if secret_opt[norm] then return true end
	if find(norm, "passw", 1, true) then
		return find(norm, "passwo?r?d$") ~= nil
	end
	if find(norm, "passphrase$") or find(norm, "secret$") or find(norm, "api%-?key$")
		or find(norm, "access%-key$") or find(norm, "secret%-key$")
		or find(norm, "%-pass$") or find(norm, "%-pwd$") or find(norm, "%-bearer$")
		or find(norm, "%-creds$") then
		return true
	end
	local pre = match(norm, "^(.-)%-token$")
	if pre and not not_secret_token[pre] then
		local last = match(pre, "([^%-]+)$")
		return not not_secret_token[last]
	end
	return false
end
secret_option = lib.memo(secret_option)
lib.secret_option = secret_option

-- NAME of a NAME=value that holds a secret
local function secret_key(key)
	local ku = upper(key)
	if find(ku, "PASSW", 1, true) or find(ku, "SECRET", 1, true)
		or find(ku, "PASSPHRASE", 1, true) or ku == "PASS" then
		return true
	end
	-- PASS as a word: ANSIBLE_BECOME_PASS, PASS_PHRASE (not BYPASS)
	if find(ku, "PASS", 1, true) and (find(ku, "[_%-%.]PASS$") or find(ku, "^PASS[_%-%.]")
		or find(ku, "[_%-%.]PASS[_%-%.]")) then
		return true
	end
	if find(ku, "TOKEN", 1, true) then
		if find(ku, "TOKEN$") or find(ku, "TOKEN[_%-%.]") then return true end
	end
	if find(ku, "KEY", 1, true) then
		if find(ku, "KEY$") or find(ku, "KEY[_%-]") then return true end
	end
	if ku == "SIG" or find(ku, "SIGNATURE$") or find(ku, "CREDENTIAL", 1, true) then
		return true
	end
	-- session ids: JSESSIONID=, PHPSESSID=, sessionid=, session_token=
	if find(ku, "SESSIONID", 1, true) or find(ku, "SESSID", 1, true) then
		return true
	end
	-- whole words: AUTH, PWD (ODBC's Pwd=), PSK, JWT
	if find(ku, "%f[%w]AUTH%f[^%w]") or find(ku, "%f[%w]PWD%f[^%w]")
		or find(ku, "%f[%w]PSK%f[^%w]") or find(ku, "%f[%w]JWT%f[^%w]") then
		return true
	end
	return false
end
secret_key = lib.memo(secret_key)
lib.secret_key = secret_key

-- words of an identifier in code that name a secret, and the word before
-- "key" or "pat" that makes a secret of them (api_key, GITHUB_PAT)
local ident_secret = set { "password", "passwd", "pwd", "pass", "passphrase",
	"passcode", "secret", "secrets", "token", "apikey", "auth",
	"authorization", "credential", "credentials", "cred", "creds",
	"privatekey", "secretkey", "accesskey", "identified", "jwt", "cookie",
	"authenticate" }
local ident_key = set { "api", "private", "secret", "access", "auth",
	"signing", "encryption", "master", "account", "storage", "session",
	"client", "app", "consumer", "license", "ssh", "sas" }
local ident_pat = set { "github", "gh", "gitlab", "personal", "access", "ado" }
-- a last word that makes the name about a secret, not the secret itself
local ident_not_value = set { "file", "path", "dir", "directory", "name",
	"type", "id", "env", "var", "length", "len", "min", "max", "policy",
	"prompt", "field", "required", "enabled", "method", "mode", "flag",
	"count", "pattern", "regex", "help", "label", "url", "uri", "endpoint",
	"fd", "cmd", "command", "format", "size", "timeout", "expiry", "expires",
	"ttl", "version", "filter", "rate", "hint", "description", "desc",
	"title", "prefix", "suffix", "template", "source", "provider", "store",
	"helper", "manager", "scope", "scopes", "kind" }

-- Does an identifier or key in code name a secret?  Split into words
-- (snake_case, kebab-case, camelCase, dotted, sigils dropped).
local function secret_ident(name)
	if #name > 64 then return false end
	local s = gsub(gsub(name, "(%l)(%u)", "%1_%2"), "(%u)(%u%l)", "%1_%2")
	local w = {}
	for x in string.gmatch(lower(s), "%a+") do w[#w + 1] = x end
	local m = #w
	if m == 0 or (m > 1 and ident_not_value[w[m]]) then return false end
	for i = 1, m do
		local x = w[i]
		if ident_secret[x] then
			if not (x == "token" and i > 1 and not_secret_token[w[i - 1]]) then
				return true
			end
		elseif (x == "key" and i > 1 and ident_key[w[i - 1]])
			or (x == "pat" and i > 1 and ident_pat[w[i - 1]]) then
			return true
		end
	end
	return false
end
secret_ident = lib.memo(secret_ident)
lib.secret_ident = secret_ident

-- headers whose value is a secret (lower case names); any header named
-- like a secret (secret_key: X-Figma-Token, Ocp-Apim-Subscription-Key) too
local secret_header = set { "authorization", "proxy-authorization", "x-api-key",
	"api-key", "apikey", "x-auth-token", "x-access-token", "private-token",
	"x-vault-token", "cookie", "x-goog-api-key", "x-amz-security-token",
	"x-github-token", "x-token", "set-cookie" }
local auth_header = set { "authorization", "proxy-authorization" }
local function is_secret_header(ln)
	return secret_header[ln] or secret_key(ln)
end

-- Apply replacements { {first, last, text}, ... } to s, in the order of
-- their first bytes; one that overlaps an earlier one is left out.
local function splice(s, reps)
	if #reps == 0 then return s end
	sort(reps, function(x, y) return x[1] < y[1] end)
	local parts, from = {}, 1
	for i = 1, #reps do
		local r = reps[i]
		if r[1] >= from then
			parts[#parts + 1] = sub(s, from, r[1] - 1)
			parts[#parts + 1] = r[3]
			from = r[2] + 1
		end
	end
	parts[#parts + 1] = sub(s, from)
	return concat(parts)
end

---------------------------------------------------------------------------
-- Token formats (31-secret-formats.lua fills the table).

local formats = {}	-- list of { name, start, pattern, icase, left, check, doc }
lib.secret_formats = formats
local fmt_set		-- the word set, built on first use after a change

-- A token format: lib.secret_format{ name = "github-pat", start = "ghp_",
-- pattern = "^ghp_" .. ("%w"):rep(36), doc = "..." }.  The pattern is
-- anchored where start stands (by default at a word boundary: no letter or
-- digit before it); two position captures "()" name the bytes to replace
-- (the rest stays); check(token) may refuse a match.
function lib.secret_format(f)
	if type(f) ~= "table" then error("secret_format: a table", 2) end
	if type(f.name) ~= "string" or f.name == "" then
		error("secret_format: name must be a non-empty string", 2)
	end
	if type(f.start) ~= "string" or #f.start < 2 or #f.start > 255 then
		error("secret_format " .. f.name .. ": start must be 2 to 255 bytes", 2)
	end
	if type(f.pattern) ~= "string" then
		error("secret_format " .. f.name .. ": pattern must be a string", 2)
	end
	if f.check ~= nil and type(f.check) ~= "function" then
		error("secret_format " .. f.name .. ": check must be a function", 2)
	end
	-- a pattern that does not compile fails here, where the file names it
	local ok, err = pcall(find, f.start, f.pattern)
	if not ok then error("secret_format " .. f.name .. ": " .. err, 2) end
	formats[#formats + 1] = { name = f.name, start = f.start,
		pattern = f.pattern, icase = f.icase == true, left = f.left ~= false,
		check = f.check, doc = f.doc }
	fmt_set = nil
	lib.gate_changed()
end

local function format_set()
	if fmt_set == nil then
		local list = {}
		for i = 1, #formats do
			local f = formats[i]
			list[i] = { f.start, icase = f.icase, left = f.left,
				pattern = f.pattern }
		end
		fmt_set = words(list)
	end
	return fmt_set
end

-- s with every token format in it replaced (nil when nothing matched).
local function formats_in(s)
	if #s < 8 or #formats == 0 then return nil end
	local hits = format_set():scan(s)
	if hits == nil then return nil end
	local reps = {}
	for i = 1, #hits, 3 do
		local f = formats[hits[i]]
		local a, b = hits[i + 1], hits[i + 2]
		if f.check == nil or f.check(sub(s, a, b)) then reps[#reps + 1] = { a, b, R } end
	end
	if #reps == 0 then return nil end
	return splice(s, reps)
end
lib.redact_formats = function(s) return formats_in(s) or s end

---------------------------------------------------------------------------
-- Tools: what their manuals say holds a secret (32-secret-tools.lua).

local tools = {}	-- tool name -> list of specs
local merged, merged_n = {}, 0	-- specs merged for a command line (below)
local code_tools = {}	-- tool name -> spec of its code options
lib.secret_tools = tools
lib.code_tools = code_tools

local HOWS = set { "any", "attached", "userpass", "smb", "comma", "slashat",
	"kv", "flag" }

-- A string of letters or a list of names as a set.
local function letters(x)
	if x == nil then return {} end
	if type(x) == "string" then
		local t = {}
		for i = 1, #x do t[sub(x, i, i)] = true end
		return t
	end
	return set(x)
end

-- Check a spec's "{ letter/name = how }" map; long names are folded as
-- option names are (lower case, "_" as "-").
local function hows(t, what, level, fold)
	local out = {}
	for k, v in pairs(t or {}) do
		if not HOWS[v] then
			error(what .. ": '" .. tostring(k) .. "' = '" .. tostring(v)
				.. "': not one of any, attached, userpass, smb, comma, slashat, kv, flag",
				level)
		end
		out[fold and (gsub(lower(k), "_", "-")) or k] = v
	end
	return out
end

-- A tool whose manual puts a secret somewhere: lib.secret_tool(names, spec),
-- names a string or a list.  spec (every field optional; README.md):
--   short = { p = "any" }      letters: "any" (-p X, -pX), "attached"
--                               (-pX only), "userpass" (user:X), "smb"
--                               (user%X), "comma" (user,X), "slashat"
--                               (user/X@db), "kv" (NAME=X), "flag" (takes
--                               no value: pulumi config set --secret)
--   long  = { user = "userpass" }  long options (no dashes), same hows
--   takes = "Cr"               short options that take a value (to read
--                               clusters and find operands)
--   single = true              options are whole words (-storepass, -k):
--                               no clusters
--   sub = "login"              applies only when this word is an argument
--   operand = 1 | "last", how = "any", when = "b", skip_kv = true
--                               the secret operand (counted after sub),
--                               only when letter `when` was given
--   config = true              "KEY VALUE" operands: VALUE is a secret when
--                               KEY (or its last .:/ part) looks secret
--   kv_operands = true         every NAME=VALUE operand's VALUE (secrets set)
--   pair = { "arg" }           --arg NAME VALUE: VALUE when NAME looks secret
--   prefix = { ["/p:"] = "any" }  arguments that start so
--   after = { "using" }        the argument after this word
--   script = "c"               the option's value is a command string in
--                               the tool's own language (lftp -c)
--   fn = function(argv, ops)   anything else: ops lists operand indexes
--   doc = "..."                the manual's words (keep it cited)
function lib.secret_tool(names, spec)
	if type(names) == "string" then names = { names } end
	if type(names) ~= "table" or type(spec) ~= "table" then
		error("secret_tool: (names, spec)", 2)
	end
	local s = {
		short = hows(spec.short, "secret_tool short", 3),
		long = hows(spec.long, "secret_tool long", 3, true),
		takes = letters(spec.takes), single = spec.single == true,
		sub = spec.sub, operand = spec.operand, how = spec.how or "any",
		when = spec.when, skip_kv = spec.skip_kv, config = spec.config,
		kv_operands = spec.kv_operands,
		pair = letters(spec.pair), prefix = spec.prefix,
		after = letters(spec.after), script = letters(spec.script),
		fn = spec.fn, doc = spec.doc,
	}
	if s.how and not HOWS[s.how] then error("secret_tool: how '" .. s.how .. "'", 2) end
	for _, v in pairs(spec.long_takes or {}) do s.takes[v] = true end
	for _, n in ipairs(names) do
		local l = tools[n] or {}
		l[#l + 1] = s
		tools[n] = l
	end
	merged, merged_n = {}, 0
	lib.gate_changed()
end

-- Compatibility: a tool whose short option holds a password.
function lib.redact_tool(tool, letter, how)
	lib.secret_tool(tool, { short = { [letter] = how or "any" } })
end

-- An interpreter's code options: lib.code_tool(names, spec), spec:
--   short = "c"        letters whose value is code (-c CODE, -cCODE, -Bc CODE)
--   long = { "eval" }  --eval CODE, --eval=CODE
--   words = { "-cmd" } whole-word options whose next argument is code
--   takes = "Fv"       short options that take a value (not code)
--   program = true     the first operand is the program unless -f/--file
--                      (awk); operands = N: operands from the Nth on are code
--                      (sqlite3 DB SQL...)
--   sub = "eval"       with operand: the operand after this word (deno eval)
function lib.code_tool(names, spec)
	if type(names) == "string" then names = { names } end
	if type(names) ~= "table" or type(spec) ~= "table" then
		error("code_tool: (names, spec)", 2)
	end
	local s = { short = letters(spec.short), long = letters(spec.long),
		words = letters(spec.words), takes = letters(spec.takes),
		program = spec.program, operands = spec.operands, sub = spec.sub,
		doc = spec.doc }
	for _, n in ipairs(names) do code_tools[n] = s end
end

local prog	-- defined below

-- The name argv[k] is known by in the tables: its program name, or the
-- catalogue's canonical name of it.
local function table_name(a)
	local b = prog(a)
	if tools[b] or code_tools[b] then return b end
	local e = lib.lookup(b)
	if e and (tools[e.name] or code_tools[e.name]) then return e.name end
	return b
end
table_name = lib.memo(table_name)

---------------------------------------------------------------------------
-- The gate: one word set for "might this text hold a secret?".

local base_words = { "pass", "secret", "token", "key", "auth", "bearer",
	"cookie", "cred", "pwd", "sig=", "signature", "identified", "_pat",
	"private", "jwt", "psk", ":thin:", "sessid", "sessionid" }
local extra_words = {}	-- lib.redact_option / lib.redact_word
local gate_set, gate_weak
local safe, safe_n = {}, 0	-- arguments known to hold no gate word

function lib.gate_changed()
	gate_set = nil
end

local function gate_words()
	if gate_set == nil then
		local list, weak, seen = {}, {}, {}
		local function add(e, w)
			local key = type(e) == "table" and (lower(e[1]) .. (e.left and "<" or "")
				.. (e.right and ">" or "")) or lower(e)
			if seen[key] then return end
			seen[key] = true
			list[#list + 1] = e
			if w then weak[#list] = true end
		end
		for _, w in ipairs(base_words) do add(w) end
		-- every secret option's name (connection-string holds no word above)
		for o in pairs(secret_opt) do
			if #o >= 2 then
				add(o)
				if find(o, "-", 1, true) then add((gsub(o, "%-", "_"))) end
			end
		end
		add("://", true)	-- a URL: only with an "@" after it
		for _, w in ipairs(extra_words) do if #w >= 2 then add(w) end end
		for _, f in ipairs(formats) do add({ f.start, left = f.left }) end
		for t in pairs(tools) do
			if #t >= 2 then add({ t, left = true, right = true }) end
		end
		-- programs that read a secret from a pipe (echo X | sudo -S ...)
		for _, t in ipairs { "sudo", "kinit", "cryptsetup" } do
			add({ t, left = true, right = true })
		end
		gate_set, gate_weak = words(list), weak
		-- what the old set called harmless may not be any more
		for a in pairs(safe) do safe[a] = nil end
		safe_n = 0
	end
	return gate_set
end

-- Does s hold a word of the gate?  Read as a shell reads it: quotes and
-- backslashes taken out (c"url" and cu\rl are curl to a shell).
local function gate(s)
	local G = gate_words()
	local a, _, w = G:find(s, 1, true)
	while a do
		if not gate_weak[w] or find(s, "@", a, true) then return true end
		a, _, w = G:find(s, a + 1, true)
	end
	return false
end
lib.redact_gate = gate

-- The first argument of argv[i..] that holds a gate word, or nil.
local function gate_argv(argv, i)
	local G = gate_words()
	while true do
		local k, w = G:first(argv, i, true)
		if k == nil then return nil end
		if not gate_weak[w] or gate(argv[k]) then return k end
		i = k + 1
	end
end

---------------------------------------------------------------------------
-- Text checks: one argument, an option's value, a word of a string.

-- Redact credentials in a value, by how: user:X, user%X, user,X, user/X@db.
local function userpass(v, how)
	if v == R then return v end
	if how == "userpass" then
		local u = match(v, "^([^:]*):.")
		if u then return u .. ":" .. R end
		-- KEY: (an API key as the user, no password: curl -u KEY:)
		if #v > 1 and byte(v, -1) == 58 then return R .. ":" end
		return v
	elseif how == "smb" then
		local u = match(v, "^([^%%]*)%%.")
		if u then return u .. "%" .. R end
		return v
	elseif how == "comma" then
		local u = match(v, "^([^,]*),.")
		if u then return u .. "," .. R end
		return v
	elseif how == "slashat" then
		-- user/PASS@db, user/PASS; "/" alone (sqlplus / as sysdba) stays
		local u, rest = match(v, "^([^/@]+)/([^@]*)")
		if u and rest ~= "" then
			local at = find(v, "@", #u + 2, true)
			return u .. "/" .. R .. (at and sub(v, at) or "")
		end
		return v
	elseif how == "kv" then
		local k = match(v, "^([^=]*)=.")
		if k then return k .. "=" .. R end
		return R
	end
	return R
end

-- A bare URL userinfo that reads like a token, not a user name: long, or
-- letters and digits mixed.
local function token_like(u)
	if #u >= 20 then return not find(u, "%%40") end
	return #u >= 12 and find(u, "%d") ~= nil and find(u, "%a") ~= nil
		and not find(u, ".", 1, true)
end

local function header_in_text(name, sp, rest)
	local ln = lower(name)
	if is_secret_header(ln) and rest ~= R then
		local scheme = auth_header[ln] and match(rest, "^(%a+%s+)%S")
		return name .. sp .. (scheme or "") .. R
	end
end

-- Headers inside a text (a command string, a literal), up to the closing
-- quote.  A long text is searched only where the gate finds a word (a
-- secret header's name holds one).
local HEADER = "%f[%w](%a[%w%-]*)(:[ \t]*)([^\"'\n]+)"
local function headers_in(s)
	if #s <= 1024 then return (gsub(s, HEADER, header_in_text)) end
	local G = gate_words()
	local reps, from = {}, 1
	local a = G:find(s)
	while a do
		-- the name around the word, its colon, the value to the quote
		local ns = a
		while ns > 1 and find(sub(s, ns - 1, ns - 1), "[%w%-]") do ns = ns - 1 end
		local name, sp, rest = match(s, "^(%a[%w%-]*)(:[ \t]*)([^\"'\n]+)", ns)
		local nv = name and ns >= from and header_in_text(name, sp, rest)
		if nv then
			from = ns + #name + #sp + #rest
			reps[#reps + 1] = { ns, from - 1, nv }
			a = G:find(s, from)
		else
			a = G:find(s, a + 1)
		end
	end
	return splice(s, reps)
end

-- scheme://user:SECRET@host -> scheme://user:[REDACTED]@host and
-- scheme://TOKEN@host -> scheme://[REDACTED]@host, for every "://" in a;
-- plain searches only (a pattern here would be quadratic).
local function url_creds(a)
	local out, pos, from = nil, 1, 1
	local n = #a
	while true do
		local i = find(a, "://", pos, true)
		if i == nil then break end
		local as = i + 3
		local ae = find(a, "[/%s\"'?#]", as) or n + 1	-- end of the authority
		local at = find(a, "@", as, true)
		if at and at < ae then
			-- the last "@" of the authority ends the userinfo
			local nat = find(a, "@", at + 1, true)
			while nat and nat < ae do at, nat = nat, find(a, "@", nat + 1, true) end
			local colon = find(a, ":", as, true)
			if colon and colon < at then
				if colon < at - 1 and sub(a, colon + 1, at - 1) ~= R then
					out = (out or "") .. sub(a, from, colon) .. R
					from = at
				end
			elseif at > as and token_like(sub(a, as, at - 1))
				and sub(a, as, at - 1) ~= R then
				out = (out or "") .. sub(a, from, as - 1) .. R
				from = at
			end
		end
		pos = ae
	end
	if out == nil then return a end
	return out .. sub(a, from)
end
lib.url_creds = url_creds

-- Content checks for one argument (or an option's value, or a word or
-- string literal): URL credentials, NAME=value, headers, Bearer, token
-- formats.  Every Lua pattern here is either anchored or behind a plain
-- search that must hit first: an unanchored pattern over a long argument
-- costs as much as the whole rest of the chain.
local function redact_text(a)
	-- every check below looks for something that holds a gate word
	if not gate(a) then return a end
	local out = a
	local la = lower(a)
	if find(a, "://", 1, true) and find(a, "@", 1, true) then
		out = url_creds(out)
	end
	if sub(la, 1, 5) == "pass:" and #a > 5 then
		return "pass:" .. R
	end
	if find(out, "=", 1, true) then
		if find(out, "[ &?;,\n]") then
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
			if k and v ~= R and secret_key(k) then
				out = k .. "=" .. R
			elseif not k then
				-- //registry.npmjs.org/:_authToken=x: the key's last part
				k, v = match(out, "^([^=%s\"']+)=(.+)$")
				if k and v ~= R and find(k, "[:/]")
					and secret_key(match(k, "([^:/%.]*)$")) then
					out = k .. "=" .. R
				end
			end
		end
	end
	if find(la, "bearer", 1, true) then
		out = gsub(out, "([Bb][Ee][Aa][Rr][Ee][Rr]%s+)([^%s,;\"'`]+)", "%1" .. R)
	end
	if find(out, ":", 1, true) then
		local name, sp, rest = match(out, "^(%a[%w%-]*)(:%s*)(.+)$")
		if name then
			-- the argument is a header: "Authorization: Bearer xyz"
			local ln = lower(name)
			if is_secret_header(ln) and rest ~= R then
				local scheme = auth_header[ln] and match(rest, "^(%a+%s+)%S")
				out = name .. sp .. (scheme or "") .. R
			end
		elseif find(out, " ", 1, true) and (find(la, "auth", 1, true)
			or find(la, "cookie", 1, true) or find(la, "key", 1, true)
			or find(la, "token", 1, true) or find(la, "secret", 1, true)) then
			-- a header inside a command string, up to the closing quote
			out = headers_in(out)
		end
		-- JDBC's Oracle thin driver: jdbc:oracle:thin:user/PASS@host
		local t = find(la, "thin:", 1, true)
		if t then
			local u, p = match(out, "^([^/@:]+)/([^@]+)", t + 5)
			if u and p ~= R then
				out = sub(out, 1, t + 4) .. u .. "/" .. R .. sub(out, t + 5 + #u + 1 + #p)
			end
		end
	end
	-- .netrc lines, ftp scripts: machine h login u password X
	if find(la, "password", 1, true) and (find(la, "login", 1, true)
		or find(la, "machine", 1, true)) then
		out = gsub(out, "(%f[%w][Pp][Aa][Ss][Ss][Ww][Oo][Rr][Dd]%s+)([^%s\"']+)", function(k, v)
			if v ~= R then return k .. R end
		end)
	end
	local f = formats_in(out)
	if f then out = f end
	-- "mysql ... -psecret" inside a command string (sh -c '...')
	if (find(la, "mysql", 1, true) or find(la, "mariadb", 1, true)) and find(out, " ", 1, true) then
		out = gsub(out, "(%s%-p)([^%s'\"]+)", "%1" .. R)
	end
	return out
end
lib.redact_text = redact_text

---------------------------------------------------------------------------
-- Shells and commands.

local shell_words, shell_span = jobtrace.shell_words, jobtrace.shell_span

-- shells whose -c string is split (csh's and fish's quoting is read as
-- POSIX's: close enough to find the words of a command)
local shells = set { "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh",
	"ash", "lksh", "pdksh", "posh", "yash", "rbash", "csh", "tcsh", "fish" }
-- words before a command name in a shell string
local keyword = set { "!", "{", "}", "if", "then", "else", "elif", "fi",
	"do", "done", "while", "until" }
-- redirections: the word after one is a file, not an argument
local redir = set { "<", ">", ">>", "<<", "<<<", "<<-", "<&", ">&", "<>",
	">|", "&>", "&>>" }
-- ssh options that take a value (the host is the first operand)
local ssh_opts = { sa = set { "B", "b", "c", "D", "E", "e", "F", "I", "i",
	"J", "L", "l", "m", "O", "o", "P", "p", "Q", "R", "S", "W", "w" } }

-- The program name of a command word ("-bash" of a login shell: "bash").
prog = function(a)
	local b = basename(a)
	if byte(b, 1) == 45 then b = sub(b, 2) end
	return b
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
local function shell_slots(argv)
	local n = #argv
	local slots
	local name = prog(argv[1])
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
	local last = n < 32 and n or 32
	for k = 2, last - 1 do
		local c = byte(argv[k], -1)
		if c == 104 or c == 120 then	-- "...sh", "busybox"
			local at = shell_cmd(argv, k)
			if at then
				slots = slots or {}
				slots[at] = 0
			end
		end
	end
	return slots
end

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

-- The tail of a cut argument that may be the start of a secret whose end,
-- and with it what the usual checks look for, was cut off:
--   * the last URL's "user:..." when neither "@" nor "/" follows the
--     "://" ("https://user:[REDACTED]"; "https://host:84" too: a cut port
--     cannot be told from a cut password), or its whole authority when
--     that reads like a token (https://[REDACTED], no dot in it);
--   * a token that starts like one of the token formats and runs to the
--     end ("--pat ghp_12" -> "--pat [REDACTED]").
-- Everything else of a cut argument stays: /scratch/run/sample_00,
-- --input=/data/x, https://host/path.
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
		if colon and colon < #a then
			out = sub(a, 1, colon) .. R
		elseif not colon and not find(a, ".", i + 3, true)
			and token_like(sub(a, i + 3)) then
			out = sub(a, 1, i + 2) .. R
		end
	end
	if #formats > 0 then
		local F = format_set()
		local j = F:find(out)
		while j do
			if not find(out, "[^%w_%-%.~]", j) then
				return sub(out, 1, j - 1) .. R
			end
			j = F:find(out, j + 1)
		end
	end
	return out
end
lib.redact_cut = cut_tail

local redact, redact_shell, redact_code	-- each calls the others

---------------------------------------------------------------------------
-- Code given to interpreters.

local names_set	-- words of secret names in code, for code_named
local function code_names()
	if names_set == nil then
		names_set = words { "pass", "pwd", "secret", "token", "key", "auth",
			"cred", "identified", "_pat", "jwt", "cookie" }
	end
	return names_set
end

-- What a literal bound to name becomes ("Bearer x" of an Authorization
-- keeps its scheme word), or nil to keep it.
local function bound_value(name, v)
	if v == "" or v == R or not secret_ident(name) then return nil end
	local ln = lower(match(name, "^[%-]*(.*)$"))
	if auth_header[ln] then
		local scheme = match(v, "^(%a+%s+)%S")
		return (scheme or "") .. R
	end
	return R
end

-- code with the secrets in it replaced; only their bytes change.
redact_code = function(code, depth)
	if not gate(code) then return code end
	local out = formats_in(code) or code
	if find(out, "://", 1, true) and find(out, "@", 1, true) then
		out = url_creds(out)
	end
	-- 1. string literals that a secret name binds
	local hits = code_named(out, code_names())
	if hits then
		local reps = {}
		for i = 1, #hits, 3 do
			local a, b = hits[i + 1], hits[i + 2]
			local nv = bound_value(hits[i], sub(out, a, b))
			if nv then reps[#reps + 1] = { a, b, nv } end
		end
		out = splice(out, reps)
	end
	-- 2. what is inside the other literals: URLs, headers, NAME=value,
	-- commands (os.system('curl -u u:X h'), ["sshpass", "-p", "X", ...])
	local lits = code_literals(out, 256, gate_words())
	if lits == nil then return out end
	local reps = {}
	local run, runv = {}, {}	-- a list of literals: an argv?
	local function flush_run()
		if #run >= 2 and depth < MAX_DEPTH then
			local name = table_name(runv[1])
			if tools[name] or code_tools[name] or shells[name] then
				local argv = { unpack(runv) }
				redact(argv, name, depth + 1)
				for k = 2, #argv do
					if argv[k] ~= runv[k] then
						reps[#reps + 1] = { run[k][1], run[k][2], argv[k] }
						run[k].done = true
					end
				end
			end
		end
		run, runv = {}, {}
	end
	for i = 1, #lits, 3 do
		local a, b, joined = lits[i], lits[i + 1], lits[i + 2]
		local v = sub(out, a, b)
		if not joined then flush_run() end
		run[#run + 1] = { a, b }
		runv[#runv + 1] = v
		if v ~= "" and v ~= R and gate(v) then
			local nv = redact_text(v)
			if depth < MAX_DEPTH and find(v, "[%s;|&`]") then
				nv = redact_shell(nv, depth + 1)
			end
			if nv ~= v then reps[#reps + 1] = { a, b, nv } end
		end
	end
	flush_run()
	-- a literal changed twice (as an argv element and as text) keeps the
	-- argv's change; drop overlaps
	sort(reps, function(x, y) return x[1] < y[1] or (x[1] == y[1] and #x[3] < #y[3]) end)
	local clean, last = {}, 0
	for i = 1, #reps do
		if reps[i][1] > last then
			clean[#clean + 1] = reps[i]
			last = reps[i][2]
		end
	end
	return splice(out, clean)
end
lib.redact_code = function(code) return redact_code(code, 1) end

-- The code arguments of argv for the interpreter spec cs: { [index] =
-- bytes before the code in that argument }, or nil.
local function code_slots(argv, cs)
	local n = #argv
	local slots
	local function add(k, off)
		if k <= n then
			slots = slots or {}
			slots[k] = off
		end
	end
	local k, ops, file = 2, {}, false
	while k <= n do
		local a = argv[k]
		if a == "--" then
			for j = k + 1, n do ops[#ops + 1] = j end
			break
		end
		if cs.words[a] then
			add(k + 1, 0)
			k = k + 2
		elseif byte(a, 1) == 45 and byte(a, 2) == 45 then
			local eq = find(a, "=", 3, true)
			local name = sub(a, 3, (eq or 0) - 1)
			if cs.long[name] then
				if eq then add(k, eq) else add(k + 1, 0); k = k + 1 end
			elseif name == "file" then
				file = true
			elseif not eq and cs.takes[name] then
				k = k + 1
			end
			k = k + 1
		elseif byte(a, 1) == 45 and #a > 1 then
			for j = 2, #a do
				local ch = sub(a, j, j)
				if cs.short[ch] then
					if j == #a then add(k + 1, 0); k = k + 1 else add(k, j) end
					break
				end
				if ch == "f" and cs.program then file = true end
				if cs.takes[ch] then
					if j == #a then k = k + 1 end
					break
				end
			end
			k = k + 1
		else
			ops[#ops + 1] = k
			k = k + 1
		end
	end
	if cs.program and not file and ops[1] then add(ops[1], 0) end
	if cs.operands then
		for i = cs.operands, #ops do add(ops[i], 0) end
	end
	if cs.sub then
		for i = 1, #ops - 1 do
			if argv[ops[i]] == cs.sub then add(ops[i + 1], 0) break end
		end
	end
	return slots
end

---------------------------------------------------------------------------
-- One argv (a command line, or a command of a shell string): options,
-- the tool's own secrets, content checks, strings and code in it, and the
-- command a wrapper in it starts.

-- The specs of tool and of argv[1]'s own name that apply to argv, merged
-- into one view (the first entry that names a letter wins): short, long,
-- takes, script, pair (maps), single, prefix (list of { text, how }),
-- after (set), post (the specs with operand rules).  Cached by the tools
-- and the sub words present; nil when neither tool has an entry.
local function merge(list)
	local M = { short = {}, long = {}, takes = {}, script = {}, pair = {},
		after = {}, prefix = {}, post = {}, single = false }
	for _, sp in ipairs(list) do
		for _, f in ipairs { "short", "long", "takes", "script", "pair", "after" } do
			for key, v in pairs(sp[f]) do
				if M[f][key] == nil then M[f][key] = v end
			end
		end
		M.single = M.single or sp.single
		for p0, how in pairs(sp.prefix or {}) do
			M.prefix[#M.prefix + 1] = { lower(p0), how }
		end
		if sp.operand or sp.config or sp.fn or sp.kv_operands then
			M.post[#M.post + 1] = sp
		end
	end
	-- operands the option pass must look at without a gate word in them
	M.operands = #M.prefix > 0 or next(M.after) ~= nil
	return M
end

local none = {}
local function specs_of(argv, tool)
	local l = tools[tool]
	local own = table_name(argv[1])
	local l2 = own ~= tool and tools[own] or nil
	if l == nil and l2 == nil then return nil end
	local key = l2 and (tool .. "|" .. own) or tool
	local top = #argv < 6 and #argv or 6
	for i = 1, 2 do
		local list = i == 1 and l or l2 or none
		for j = 1, #list do
			local sb = list[j].sub
			if sb then
				for k = 2, top do
					if argv[k] == sb then
						key = key .. "|" .. sb
						break
					end
				end
			end
		end
	end
	local M = merged[key]
	if M == nil then
		local active = {}
		for _, list in ipairs { l or {}, l2 or {} } do
			for _, sp in ipairs(list) do
				if sp.sub == nil or find(key .. "|", "|" .. sp.sub .. "|", 1, true) then
					active[#active + 1] = sp
				end
			end
		end
		M = merge(active)
		if merged_n >= lib.CACHE_MAX then merged, merged_n = {}, 0 end
		merged[key] = M
		merged_n = merged_n + 1
	end
	return M
end

-- A wrapper's command: may argv[k] start a command of its own?  Not the
-- value of a long option (--format zip), not an option or assignment.
local function command_at(argv, k)
	local a = argv[k]
	local c = byte(a, 1)
	if c == 45 or c == nil or find(a, "=", 1, true) or find(a, ":", 1, true) then
		return nil
	end
	local prev = argv[k - 1]
	if byte(prev, 1) == 45 and byte(prev, 2) == 45 and not find(prev, "=", 1, true)
		and #prev > 2 then
		return nil
	end
	local name = table_name(a)
	if tools[name] or code_tools[name] then return name end
	return nil
end

-- Redact argv in place for tool; depth: strings inside strings.
redact = function(argv, tool, depth)
	local n = #argv
	local specs = specs_of(argv, tool)
	local orig = { unpack(argv) }
	local pending = nil	-- how to redact the next argument
	local is_op = {}	-- operand indexes
	local ops = {}
	local seen_letters = {}
	local script = {}	-- indexes of tool-language command strings
	-- a tool with no entry of its own: only the arguments with a gate word
	-- and the two after each (the value of an option, "Authorization:"
	-- "Bearer" x) can hold what the checks below look for
	-- shell strings and code: checked as such below, not word by word
	local slots = depth < MAX_DEPTH and shell_slots(orig) or {}
	local cs = code_tools[table_name(argv[1])] or code_tools[tool]
	local cslots = cs and depth < MAX_DEPTH and code_slots(orig, cs) or {}
	-- the arguments with a gate word (in order, and as a set): only these
	-- can hold what the content checks look for
	local hits, hitset, want = {}, {}, nil
	do
		local G = gate_words()
		local k = G:first(argv, 2, true)
		while k do
			hits[#hits + 1] = k
			hitset[k] = true
			k = G:first(argv, k + 1, true)
		end
	end
	if specs == nil and n > 8 then
		want = {}
		for i = 1, #hits do
			local k = hits[i]
			want[k], want[k + 1], want[k + 2] = true, true, true
		end
	end
	for k = 2, n do
		local a = argv[k]
		if want and not want[k] then goto next end
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
			elseif pending == "skip" then
				-- a value that is no secret; its content is checked below
				local na = redact_text(a)
				if na ~= a then argv[k] = na end
			elseif pending == "script" then
				script[k] = true
			elseif pending == "pair" then
				pending = secret_key(a) and "any" or "skip"
				goto next
			else
				argv[k] = userpass(a, pending)
			end
			pending = nil
			goto next
		end
		local hit = hitset[k]
		if byte(a, 1) == 45 and #a >= 2 then
			if not hit and not specs then goto next end
			local eq = find(a, "=", 2, true)
			local name = eq and sub(a, 1, eq - 1) or a
			local dashes = byte(a, 2) == 45 and 2 or 1
			local norm = sub(name, dashes + 1)
			-- camelCase as kebab-case: --accessToken is --access-token
			if find(norm, "%l%u") then norm = gsub(norm, "(%l)(%u)", "%1-%2") end
			norm = lower(norm)
			if find(norm, "_", 1, true) then norm = gsub(norm, "_", "-") end
			if specs then
				-- the tool's own options first
				local how = (dashes == 2 or specs.single) and specs.long[norm]
				if not how and dashes == 1 and specs.single then
					how = specs.short[sub(name, 2)]
				end
				if how == "flag" then goto next end
				if how then
					if eq then argv[k] = sub(a, 1, eq) .. userpass(sub(a, eq + 1), how)
					elseif how ~= "attached" then pending = how end
					goto next
				end
				if dashes == 2 and specs.pair[norm] then
					pending = "pair"
					goto next
				end
				if specs.script[dashes == 2 and norm or sub(name, 2)] then
					if eq then script[k] = eq else pending = "script" end
					goto next
				end
				if dashes == 1 and not eq and not specs.single then
					-- a getopt cluster: -su user:PASS, -Lu u:P, -uuser:P
					for j = 2, #a do
						local ch = sub(a, j, j)
						seen_letters[ch] = true
						local h = specs.short[ch]
						if h then
							if j < #a then
								argv[k] = sub(a, 1, j) .. userpass(sub(a, j + 1), h)
							elseif h ~= "attached" then
								pending = h
							end
							goto next
						end
						if specs.script[ch] then
							if j < #a then script[k] = j else pending = "script" end
							goto next
						end
						if specs.takes[ch] then
							if j == #a then pending = "skip" end
							break
						end
					end
				end
				if not eq and specs.takes[norm] and (dashes == 2 or specs.single) then
					pending = "skip"
					goto next
				end
			end
			-- the rest looks for names that hold a gate word
			if not hit then goto next end
			if #norm >= 3 and secret_option(norm) and not (specs and
				specs.long[norm] == "attached") then
				if eq then
					if eq < #a then argv[k] = sub(a, 1, eq) .. R end
				elseif not (specs and specs.long[norm]) then
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
				-- -Dprop.secret=x (java, maven, gradle -P)
				local c2 = byte(a, 2)
				if dashes == 1 and (c2 == 68 or c2 == 80) and secret_key(sub(name, 3)) then
					argv[k] = sub(a, 1, eq) .. R
					goto next
				end
				-- --//registry.npmjs.org/:_authToken=x
				if find(name, "[:/]") and secret_key(match(name, "([^:/%.]*)$")) then
					argv[k] = sub(a, 1, eq) .. R
					goto next
				end
				if cslots[k] or slots[k] then goto next end
				local nv = redact_text(v)
				if nv ~= v then argv[k] = sub(a, 1, eq) .. nv end
				goto next
			end
		else
			is_op[k] = true
			ops[#ops + 1] = k
			if not hit and not (specs and specs.operands) then goto next end
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
			if specs then
				local pre = specs.prefix
				for i = 1, #pre do
					local p0 = pre[i][1]
					if sub(l, 1, #p0) == p0 and #a > #p0 then
						argv[k] = sub(a, 1, #p0) .. userpass(sub(a, #p0 + 1), pre[i][2])
						goto next
					end
				end
				if specs.after[l] then pending = "any" goto next end
			end
		end
		if hit and not (slots[k] or cslots[k]) then
			local na = redact_text(a)
			if na ~= a then argv[k] = na end
		end
		::next::
	end
	if specs then
		-- operands the manual names: htpasswd -b F U PASS, vault login T
		for i = 1, #specs.post do
			local s = specs.post[i]
			local list = ops
			if s.sub then
				list = {}
				local after = false
				for _, k in ipairs(ops) do
					if after then list[#list + 1] = k
					elseif argv[k] == s.sub then after = true end
				end
			end
			if s.skip_kv then
				local l2 = {}
				for _, k in ipairs(list) do
					if not find(orig[k], "=", 1, true) then l2[#l2 + 1] = k end
				end
				list = l2
			end
			if s.operand and (s.when == nil or seen_letters[s.when]) then
				local k = s.operand == "last" and list[#list] or list[s.operand]
				if k and argv[k] ~= R then argv[k] = userpass(orig[k], s.how) end
			end
			if s.kv_operands then
				for _, k in ipairs(list) do
					if find(orig[k], "=", 2, true) then argv[k] = userpass(orig[k], "kv") end
				end
			end
			if s.config then
				for j = 1, #list - 1 do
					local key = orig[list[j]]
					if secret_key(key) or secret_key(match(key, "([^:/%.]*)$")) then
						argv[list[j + 1]] = R
					end
				end
			end
			if s.fn then s.fn(argv, list, orig) end
		end
	end
	if depth >= MAX_DEPTH then return end
	-- strings in argv: shell strings, the tool's own scripts, code, and
	-- any other argument that reads like a command or holds quotes
	-- only the arguments with a gate word can hold what these look for,
	-- and a shell, script or code argument's check looks by itself
	local visit = hits
	if next(slots) or next(cslots) or next(script) then
		visit = {}
		for k = 2, n do
			if slots[k] or cslots[k] or script[k] then visit[#visit + 1] = k end
		end
		local seen = {}
		for _, k in ipairs(visit) do seen[k] = true end
		for _, k in ipairs(hits) do if not seen[k] then visit[#visit + 1] = k end end
	end
	-- (each from the original argument: the checks of one argument above
	-- do not know its quoting; their result stays when these find nothing)
	for i = 1, #visit do
		local k = visit[i]
		local o = orig[k]
		if argv[k] ~= R and o ~= "" then
			local off = slots[k] or cslots[k] or script[k]
			if off == true then off = 0 end
			if off == nil then
				-- an option's or a setting's value: --wrap='curl -u u:X h',
				-- -o 'ProxyCommand=sshpass -p X ssh ...', -d '{...}'
				local eq = find(o, "=", 2, true)
				if eq and match(o, "^%-*[%w_%.%-]+=") and find(o, "[%s;|&`\"']", eq) then
					off = eq
				end
			end
			local s = off and sub(o, off + 1) or o
			local r = s
			if cslots[k] then
				r = redact_code(s, depth)
			elseif script[k] then
				r = redact_shell(s, depth + 1, false, tool)
			elseif slots[k] then
				r = redact_shell(s, depth + 1)
			elseif find(s, "[%s;|&`\"']") and gate(s)
				and argv[k] ~= (match(o, "^(%-[^=]*=)") or "") .. R then
				-- (not when an option's whole value is hidden already)
				-- (JSON is code, not a command)
				if find(s, "[%s;|&`]") and not find(s, "^%s*[{%[]") then
					r = redact_shell(r, depth + 1)
				end
				if find(s, "[\"'`]") then r = redact_code(r, depth) end
			end
			if r ~= s then argv[k] = sub(o, 1, off or 0) .. r end
		end
	end
	-- the command a wrapper starts: sudo -u x mysql -pX, docker run IMAGE
	-- curl -u u:X, strace -f curl ..., ssh host mysql -pX (a tool's name
	-- is a gate word)
	for i = 1, #hits do
		local k = hits[i]
		if is_op[k] then
			local name = command_at(orig, k)
			if name and k < n then
				local sub_argv = { unpack(argv, k) }
				redact(sub_argv, name, depth + 1)
				for j = 1, #sub_argv do argv[k + j - 1] = sub_argv[j] end
				break
			end
		end
	end
end
lib.redact = function(argv, tool) redact(argv, tool, 1) end

---------------------------------------------------------------------------
-- Shell command strings: `sh -c '...'`, `su -c '...'`, `ssh host '...'`,
-- and strings in a tool's own command language (lftp -c).  The string is
-- split into POSIX shell words (jobtrace.shell_words, in C), each simple
-- command of it gets the per-argv redaction above with its own tool, and
-- only the bytes of a secret are replaced in the string: the rest of it
-- stays byte for byte.

-- Commands that read a secret from their standard input: what a pipe or a
-- here-string hands them is one (echo PASS | sudo -S cmd, chpasswd <<< u:P).
local stdin_flag = { sudo = { "-S", "--stdin" }, passwd = { "--stdin" },
	gpg = { "--passphrase-fd" }, htpasswd = { "-i" }, smbpasswd = { "-s" },
	gh = { "--with-token" } }
local stdin_always = set { "chpasswd", "chgpasswd", "kinit", "cryptsetup",
	"passwd" }
local function stdin_reader(cmd)
	local b = prog(cmd[1] or "")
	if stdin_always[b] then return true end
	local fl = stdin_flag[b]
	for k = 2, #cmd do
		local a = cmd[k]
		if a == "--password-stdin" then return true end	-- docker/podman/helm login
		if fl then
			for _, f in ipairs(fl) do
				if a == f or sub(a, 1, #f + 1) == f .. "=" then return true end
			end
			-- a cluster: sudo -kS
			if b == "sudo" and byte(a, 1) == 45 and byte(a, 2) ~= 45 and find(a, "S", 2, true) then
				return true
			end
		end
		if b == "vault" and a == "-" then return true end
	end
	return false
end

-- The words of echo/printf that hold what goes down the pipe.
local function piped_secret(cmd, idx, out)
	local b = prog(cmd[1] or "")
	if b ~= "echo" and b ~= "printf" then return end
	local first = true
	for k = 2, #cmd do
		local a = cmd[k]
		if b == "echo" and first and match(a, "^%-[neE]+$") then
			-- an option of echo
		elseif b == "printf" and first and find(a, "%", 1, true) then
			first = false	-- the format
		else
			first = false
			out[idx[k]] = R
		end
	end
end

-- Is a shell string free of any gate word?  (Then it needs no split;
-- memoized: xargs and parallel run one string many times.)
local harmless_sh = lib.memo(function(s) return not gate(s) end)

-- One simple command of a shell string: its words cmd (token numbers idx);
-- new texts of changed words go to out[token].  cutk: the token number of
-- the cut last word of the string, if any; own: the tool whose language
-- the string is in (lftp -c), else each command's own.
local function redact_command(cmd, idx, depth, cutk, out, own)
	local nc = #cmd
	if nc == 1 and cutk ~= idx[1] then return end	-- a name holds no secret
	local b = 1
	while b < nc and (keyword[cmd[b]] or find(cmd[b], "^[%a_][%w_]*=")) do
		b = b + 1
	end
	-- assignments and keywords before the command: one word at a time
	for k = 1, b - 1 do
		local na = redact_text(cmd[k])
		if na ~= cmd[k] then out[idx[k]] = na end
	end
	local argv = {}
	if own then argv[1] = own end
	for k = b, nc do argv[#argv + 1] = cmd[k] end
	local shift = own and b - 2 or b - 1
	local n = #argv
	local tool = own or table_name(argv[1])
	local cut = cutk ~= nil and idx[nc] == cutk
	if tools[tool] or code_tools[tool] or gate_argv(argv, 2) then
		redact(argv, tool, depth)
	end
	if cut then argv[n] = cut_tail(argv[n]) end
	for k = own and 2 or 1, n do
		if argv[k] ~= cmd[shift + k] then out[idx[shift + k]] = argv[k] end
	end
end

-- s with the secrets of its simple commands replaced, byte for byte
-- elsewhere; cut: s is the cut last argument (its last word is cut).
redact_shell = function(s, depth, cut, own)
	if not cut and not own and harmless_sh(s) then return s end
	local w, ws, we = shell_words(s)
	local nw = #w
	local cutk = cut and nw > 0 and w[nw] ~= false and nw or nil
	local out = {}
	local cmd, idx = {}, {}
	local target = nil	-- the token after a redirection
	local herestr = nil	-- the token after <<<
	local prev, prev_idx, piped = nil, nil, false
	-- the words with a gate word: a command with none holds no secret
	-- (unless the string is in a tool's own language: its options count)
	local wh, hit = {}, false
	do
		local G = gate_words()
		local k = G:first(w, 1, true)
		while k do
			wh[k] = true
			k = G:first(w, k + 1, true)
		end
	end
	local nc = 0	-- words in cmd
	for i = 1, nw + 1 do
		local x = w[i]
		local c = x == false and byte(s, ws[i])
		if i == target then
			-- a file, not an argument (the command goes on)
			if wh[i] or cutk == i then
				local nt = redact_text(x)
				if cutk == i then nt = cut_tail(nt) end
				if nt ~= x then out[i] = nt end
			end
		elseif x then
			nc = nc + 1
			cmd[nc], idx[nc] = x, i
			hit = hit or wh[i] or cutk == i
		elseif (c == 60 or c == 62 or (c == 38 and byte(s, ws[i] + 1) == 62))
			and redir[sub(s, ws[i], we[i])] then	-- < > &>
			if w[i + 1] then
				target = i + 1
				if we[i] - ws[i] == 2 and c == 60 and byte(s, ws[i] + 2) == 60 then
					herestr = i + 1	-- <<<
				end
			end
		elseif nc > 0 then
			for k = nc + 1, #cmd do cmd[k], idx[k] = nil, nil end
			if hit or own then redact_command(cmd, idx, depth, cutk, out, own) end
			if (piped or herestr) and (hit or own) and stdin_reader(cmd) then
				if herestr then out[herestr] = R end
				if piped then piped_secret(prev, prev_idx, out) end
			end
			hit = false
			piped = c == 124 and we[i] == ws[i]	-- "|"
			herestr = nil
			if piped then
				-- keep this command for the next one (echo X | sudo -S)
				prev, prev_idx = cmd, idx
				cmd, idx = {}, {}
			end
			nc = 0
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
lib.redact_shell = function(s, cut) return redact_shell(s, 1, cut) end

---------------------------------------------------------------------------
-- The rule.

local SAFE_LEN = 128

jobtrace.rule("redact-secrets", function(p, d)
	local argv = d.argv
	local n = #argv
	if n < 2 then return end
	local tool = d.tool
	local cut = p.argv_truncated
	local own = table_name(argv[1])
	-- look: argv needs the per-argv pass
	local look = tools[tool] ~= nil or tools[own] ~= nil
	if not look then
		local k = 2
		while k <= n and safe[argv[k]] do k = k + 1 end
		look = k <= n and gate_argv(argv, k) ~= nil
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
						safe[a] = true
						safe_n = safe_n + 1
					end
				end
			end
		end
	end
	if not look then
		if cut then argv[n] = cut_tail(argv[n]) end
		return
	end
	local last = argv[n]
	redact(argv, tools[tool] and tool or own, 1)
	if cut and argv[n] ~= R then
		-- the cut string's last word, or the cut argument
		if find(last, "[%s;|&`]") and gate(last) then
			local r = redact_shell(argv[n], 2, true)
			argv[n] = r
		end
		argv[n] = cut_tail(argv[n])
	end
end)

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
	lib.gate_changed()
end

-- A word that makes the redaction rule look closer at a command line
-- (for a site rule that edits d.argv after this one, see README.md).
function lib.redact_word(word)
	extra_words[#extra_words + 1] = lower(word)
	lib.gate_changed()
end

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
jobtrace.selftest { argv = { "python3", "-c", "import x; x.login(password='pw1', user='u')" },
	expect = { argv = { "python3", "-c", "import x; x.login(password='[REDACTED]', user='u')" } } }
