-- SPDX-License-Identifier: GPL-2.0-or-later
--
-- 32-secret-tools.lua - tools whose manual puts a secret at a position or
-- after an option, and interpreters whose options take code.
--
-- lib.secret_tool(names, spec) and lib.code_tool(names, spec) are
-- described in 30-redact.lua and README.md.  Every entry quotes (doc=) the
-- manual page or reference that says where the secret goes, so that an
-- entry can be checked against its source.  Options whose name alone says
-- "secret" (--password, --token, -storepass, --passphrase, ...) need no
-- entry: the redaction knows them for every tool.  An entry is for what
-- the name does not say: short letters (-p, -P, -w, -a, -N), positions,
-- user:PASS forms.  Tools with several names list them all; a command
-- found behind a wrapper (sudo, docker run IMAGE, srun ...) or in a shell
-- string gets its entry too.
--
-- No entry is needed (and none is made: an entry makes every command line
-- of the tool take the closer look) for tools whose secret options are
-- named like secrets: wget --password/--http-password/--ftp-password,
-- gpg --passphrase (not --passphrase-file or -fd), influx -password,
-- keytool/jarsigner -storepass/-keypass, helm --password, twine
-- --password, the sshfs/mount "-o password=x" lists (NAME=value), and
-- URLs with user:PASS@ (conda channels, pip --index-url, git remotes).

local tool, code = lib.secret_tool, lib.code_tool

-- Databases -------------------------------------------------------------
tool({ "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow",
	"mysqlcheck", "mysqlslap", "mysqlpump", "mysqlbinlog", "mysqlsh",
	"mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import",
	"mariadb-check", "mariadb-show", "mariadb-slap" }, {
	short = { p = "attached" }, long = { password = "attached", pass = "attached" },
	takes = "DehPSuO",
	doc = "mysql(1): --password[=password], -p[password] ... If you use the short option form (-p), you cannot have a space between the option and the password" })
tool({ "sqlcmd", "bcp" }, { short = { P = "any" }, takes = "SUdQqoiH",
	doc = "sqlcmd: -P password  Is a user-specified password; bcp: -P password" })
tool("tsql", { short = { P = "any" }, takes = "SHpUIo",
	doc = "tsql(1) (FreeTDS): -P password  database server password" })
tool({ "isql", "iusql" }, { operand = 3,
	doc = "isql(1) (unixODBC): isql DSN [UID [PWD]] [options]" })
tool({ "sqlplus", "dgmgrl" }, { operand = 1, how = "slashat", takes = "MRC",
	doc = "SQL*Plus User's Guide, Starting SQL*Plus: sqlplus [[option] [logon] [start]], logon: username[/password][@connect_identifier] | / | /NOLOG" })
tool({ "expdp", "impdp", "exp", "imp", "sqlldr" }, { operand = 1, how = "slashat",
	doc = "Oracle Utilities: expdp username/password@connect_identifier; sqlldr userid=username/password@connect_identifier" })
for _, t in ipairs { "expdp", "impdp", "exp", "imp", "sqlldr", "rman" } do
	tool(t, { fn = function(argv, ops, orig)
		-- USERID=user/PASS@db, TARGET user/PASS@db (rman)
		for k = 2, #argv do
			local a = orig[k]
			local key, v = string.match(a, "^(%a+)=(.+)$")
			if key and (key:lower() == "userid" or key:lower() == "target"
				or key:lower() == "catalog") then
				local u, rest = string.match(v, "^([^/@]+)/([^@]+)")
				if u then argv[k] = key .. "=" .. u .. "/[REDACTED]" ..
					(string.match(v, "(@.*)$") or "") end
			elseif (a:lower() == "target" or a:lower() == "catalog") and k < #argv then
				local u = string.match(orig[k + 1], "^([^/@]+)/[^@]+")
				if u then argv[k + 1] = u .. "/[REDACTED]" ..
					(string.match(orig[k + 1], "(@.*)$") or "") end
			end
		end
	end, doc = "Oracle RMAN: rman TARGET username/password@connect_identifier; Data Pump: USERID=username/password" })
end
tool({ "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
	"mongoimport", "mongostat", "mongotop", "mongofiles" }, {
	short = { p = "any" }, takes = "uhd", doc = "mongosh: --password <password>, -p <password>" })
tool("redis-cli", { short = { a = "any" }, takes = "hpsnuridcD",
	after = { "requirepass", "masterauth" },
	fn = function(argv, ops, orig)
		-- AUTH [username] password: the last word of the command
		for i = 1, #ops do
			if orig[ops[i]]:lower() == "auth" and ops[i + 1] then
				argv[ops[i + 2] or ops[i + 1]] = "[REDACTED]"
			end
		end
	end,
	doc = "redis-cli: -a <password>  Password to use when connecting to the server; the commands AUTH [username] password, CONFIG SET requirepass/masterauth password" })
tool({ "mysqladmin", "mariadb-admin" }, { sub = "password", operand = 1,
	doc = "mysqladmin(1): password new_password  Set a new password" })
tool("rabbitmqctl", { sub = "add_user", operand = 2,
	doc = "rabbitmqctl(8): add_user username password" })
tool("rabbitmqctl", { sub = "change_password", operand = 2,
	doc = "rabbitmqctl(8): change_password username newpassword" })
tool("samba-tool", { sub = "create", operand = 2,
	doc = "samba-tool(8): user create username [password]" })
tool("etcdctl", { long = { user = "userpass" },
	doc = "etcdctl: --user=username[:password]  username[:password] for authentication" })
tool("cqlsh", { short = { p = "any" }, takes = "uk", doc = "cqlsh: -p, --password  Password to authenticate" })
tool("cypher-shell", { short = { p = "any" }, takes = "uad", doc = "cypher-shell: -p PASSWORD, --password PASSWORD" })
tool("vsql", { short = { w = "any" }, takes = "hpUdcfFoRv", doc = "vsql (Vertica): -w password" })
tool("db2", { after = { "using" }, doc = "Db2 CONNECT: CONNECT TO database USER username USING password" })

-- Files, archives, keys ------------------------------------------------------
tool("htpasswd", { operand = "last", when = "b", takes = "Cr",
	doc = "htpasswd(1): htpasswd -b[cmBdpsDv] [-C cost] [-r rounds] passwdfile username password; -b Use batch mode; i.e., get the password from the command line" })
tool({ "zip", "zipcloak" }, { short = { P = "any" }, takes = "bntiIxdZ",
	doc = "zip(1): -P password --password password  use password to encrypt zipfile entries" })
tool({ "unzip", "funzip" }, { short = { P = "any" }, takes = "dx",
	doc = "unzip(1): -P password  use password to decrypt encrypted zipfile entries" })
tool({ "7z", "7za", "7zr", "7zz" }, { short = { p = "attached" },
	doc = "7z(1): -p{Password}  set Password" })
tool({ "rar", "unrar" }, { short = { p = "attached" },
	doc = "unrar(1): -p<pwd>  Set password" })
tool("openssl", { single = true, short = { k = "any" },
	doc = "openssl-enc(1): -k password  The password to derive the key from; -pass/-passin/-passout arg: pass:password (openssl-passphrase-options(1), handled by its pass: form)" })
tool("openssl", { sub = "passwd", operand = "last", single = true, takes = { "salt", "in" },
	doc = "openssl-passwd(1): openssl passwd [options] [password]" })
tool("mkpasswd", { operand = 1, takes = "mSR", doc = "mkpasswd(1): mkpasswd [OPTIONS]... [PASSWORD [SALT]]" })
tool({ "usermod", "useradd" }, { short = { p = "any" }, takes = "cdefgGlLsuUkKbRPZ",
	doc = "usermod(8): -p, --password PASSWORD  The encrypted password, as returned by crypt(3)" })
tool("ssh-keygen", { short = { N = "any", P = "any" }, takes = "abCEfFgIjJmMnOrsStVwYzZ",
	doc = "ssh-keygen(1): -N new_passphrase  Provides the new passphrase; -P passphrase  Provides the (old) passphrase" })
tool("sshpass", { short = { p = "any" }, takes = "fdP",
	doc = "sshpass(1): -p password  The password is given on the command line" })
tool({ "keytool", "jarsigner" }, { single = true, long = { new = "any" },
	doc = "keytool: -storepass arg, -keypass arg, -new arg (the new password of -storepasswd/-keypasswd); the *pass options are known by name" })
tool("wpa_passphrase", { operand = 2, doc = "wpa_passphrase(8): wpa_passphrase ssid [passphrase]" })

-- Network clients --------------------------------------------------------------
tool("curl", { short = { u = "userpass", U = "userpass", E = "userpass" },
	long = { user = "userpass", ["proxy-user"] = "userpass", cert = "userpass",
		["proxy-cert"] = "userpass" },
	takes = "AbcCdDeEFHKmoPQrtTuUwxXyYz",
	long_takes = { "header", "data", "output", "request", "url", "form", "proxy",
		"write-out", "user-agent", "referer", "cookie", "cookie-jar", "max-time",
		"connect-timeout", "retry", "config", "range", "upload-file", "resolve" },
	doc = "curl(1): -u, --user <user:password>; -U, --proxy-user <user:password>; -E, --cert <certificate[:password]>; --oauth2-bearer <token>" })
tool("curl", { short = { b = "any" }, long = { cookie = "any" },
	doc = "curl(1): -b, --cookie <data|filename>  Pass the data to the HTTP server in the Cookie header" })
tool({ "http", "https", "httpie" }, { short = { a = "userpass" }, long = { auth = "userpass" },
	takes = "vp",
	doc = "httpie: --auth, -a USER[:PASS]" })
tool("lftp", { short = { u = "comma" }, script = "ce", takes = "pf",
	doc = "lftp(1): lftp [-d] [-e cmd] [-p port] [-u user[,pass]] [site]; lftp -c commands; open -u user[,pass]" })
tool({ "ncftp", "ncftpget", "ncftpput", "ncftpls" }, { short = { p = "any" }, takes = "uPjt",
	doc = "ncftpget(1): -p XX  Use password XX with the username" })
tool("smbclient", { short = { U = "smb" }, long = { user = "smb" },
	takes = "bdDIlLMmnOpRsTtWAc", operand = 2,
	doc = "smbclient(1): smbclient {servicename} [password] ...; -U|--user=[DOMAIN\\]USERNAME[%PASSWORD]" })
tool({ "rpcclient", "net", "smbcacls", "smbget", "smbtree", "smbcquotas", "wbinfo",
	"mount.cifs" }, { short = { U = "smb" }, long = { user = "smb" },
	doc = "Samba tools: -U|--user=[DOMAIN\\]USERNAME[%PASSWORD]" })
tool("smbtar", { short = { p = "any" }, doc = "smbtar(1): -p password  The password to use to access a service" })
tool({ "ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami",
	"ldappasswd", "ldapcompare", "ldapmodrdn", "ldapexop", "ldapurl" }, {
	short = { w = "any", a = "any", s = "any" }, takes = "bDeEfhHlopPSTUXYRyz",
	doc = "ldapsearch(1): -w passwd  Use passwd as the password for simple authentication; ldappasswd(1): -a oldPasswd, -s newPasswd" })
tool("ipmitool", { short = { P = "any", k = "any", y = "any" }, takes = "HUIpLtbTBmoOfRNC",
	doc = "ipmitool(1): -P <password>  Remote server password is specified on the command line; -k/-y <key>  Kg key" })
for _, t in ipairs { "snmpwalk", "snmpget", "snmpset", "snmpbulkwalk",
	"snmpbulkget", "snmpgetnext", "snmptable", "snmptrap", "snmpinform",
	"snmpdelta", "snmpdf", "snmpstatus", "snmptest", "snmpusm" } do
	tool(t, { short = { A = "any", X = "any", c = "any" }, takes = "aelnrtuvxYzZCmMOIPLDd",
		doc = "snmpcmd(1): -A authPassword, -X privPassword, -c community (the community string is a password)" })
end
tool({ "xfreerdp", "wlfreerdp", "sdl-freerdp" }, { prefix = { ["/p:"] = "any", ["/password:"] = "any",
	["/gp:"] = "any", ["/gateway-password:"] = "any" },
	doc = "xfreerdp(1): /p:<password>  Password; /gp:<password>  Gateway password" })
tool("rdesktop", { short = { p = "any" }, takes = "udsckgaTn", doc = "rdesktop(1): -p <password>  The password to authenticate with" })

-- Containers, clusters, clouds, registries --------------------------------------
for _, t in ipairs { "docker", "podman", "nerdctl", "buildah", "skopeo", "oras",
	"helm", "crane", "regctl", "singularity", "apptainer", "finch" } do
	tool(t, { sub = "login", short = { p = "any" }, long = { password = "any" },
		takes = "u", long_takes = { "username", "authfile" },
		doc = "docker login: --password, -p  Password; podman-login(1), skopeo-login(1), helm registry login, oras login, crane auth login: -p/--password" })
	tool(t, { long = { creds = "userpass", ["src-creds"] = "userpass",
		["dest-creds"] = "userpass", ["registry-creds"] = "userpass" },
		doc = "skopeo(1)/buildah(1)/podman(1): --creds [username[:password]], --src-creds, --dest-creds" })
end
tool("az", { sub = "login", short = { p = "any" }, takes = "ut",
	doc = "az login: --password -p  Credentials like user password, or for a service principal, provide client secret" })
tool({ "kubectl", "oc" }, { sub = "secret", long = { ["from-literal"] = "kv" },
	doc = "kubectl create secret generic NAME [--from-literal=key1=value1]: the value of a secret" })
tool("vault", { sub = "login", operand = "last", skip_kv = true, single = true,
	takes = { "method", "path", "address", "namespace", "format", "field", "mfa" },
	doc = "vault login [options] [AUTH K=V...]: with the token method the token may be given as the argument (vault login TOKEN)" })
tool("gh", { sub = "secret", short = { b = "any" }, long = { body = "any" }, takes = "eRoa",
	doc = "gh secret set <secret-name> [flags]: -b, --body string  The value for the secret" })
tool("doctl", { short = { t = "any" }, doc = "doctl: -t, --access-token string  API V2 access token" })
tool("twine", { short = { p = "any" }, takes = "urc", doc = "twine upload: -p PASSWORD, --password PASSWORD" })
tool("wandb", { sub = "login", operand = "last", doc = "wandb login [OPTIONS] [KEY]..." })
tool({ "mc", "mcli" }, { sub = "alias", operand = 5,
	doc = "mc alias set ALIAS URL ACCESSKEY SECRETKEY (MinIO client)" })
tool("aws", { sub = "configure", config = true,
	doc = "aws configure set varname value [--profile profile-name] (aws_secret_access_key, aws_session_token)" })
tool({ "npm", "yarn", "pnpm" }, { sub = "config", config = true,
	doc = "npm config set <key>=<value> [<key>=<value> ...], also <key> <value>: //registry/:_authToken, _auth, _password" })
tool("git", { sub = "config", config = true,
	doc = "git config [<file-option>] <name> [<value>] (user.password, http.extraHeader ...)" })
tool("pip", { sub = "config", config = true, doc = "pip config set name value" })
tool("dvc", { sub = "remote", config = true,
	doc = "dvc remote modify [options] name option [value]: password, secret_access_key, ..." })
tool("rclone", { sub = "config", config = true,
	doc = "rclone config create name type [key value]*, rclone config update name [key value]+ (pass, secret_access_key, token ...)" })
tool("rclone", { sub = "obscure", operand = 1, doc = "rclone obscure password" })
tool("nmcli", { config = true,
	doc = "nmcli device wifi connect SSID password PASSWORD; nmcli connection modify ID wifi-sec.psk PASSWORD" })
tool("poetry", { sub = "config", config = true, fn = function(argv, ops, orig)
	-- poetry config http-basic.NAME USER PASSWORD
	for i = 1, #ops - 2 do
		if string.find(orig[ops[i]], "^http%-basic%.") then argv[ops[i + 2]] = "[REDACTED]" end
	end
end, doc = "poetry config http-basic.<name> <username> <password>; poetry config pypi-token.<name> <token>" })
tool("pulumi", { sub = "config", long = { secret = "flag" }, config = true,
	fn = function(argv, ops, orig)
		for k = 2, #orig do
			if orig[k] == "--secret" and #ops > 0 then argv[ops[#ops]] = "[REDACTED]" end
		end
	end, doc = "pulumi config set <key> [value] [--secret]: --secret encrypts the value (a flag, the value is a secret)" })
tool({ "fly", "flyctl" }, { sub = "secrets", kv_operands = true,
	doc = "fly secrets set [flags] NAME=VALUE NAME=VALUE ..." })
tool("doppler", { sub = "secrets", kv_operands = true, doc = "doppler secrets set [secrets] (NAME=VALUE)" })
tool("az", { sub = "keyvault", long = { value = "any" },
	doc = "az keyvault secret set --name --vault-name --value: the value of the secret" })
tool("aws", { sub = "put-parameter", long = { value = "any" },
	doc = "aws ssm put-parameter --name <value> --value <value> [--type SecureString]" })
tool("jq", { pair = { "arg", "argjson" }, doc = "jq(1): --arg name value  passes a value to the program as $name" })

-- Interpreters: options whose value is code --------------------------------------
code({ "python", "python2", "python3", "pypy", "pypy3", "ipython", "pythonw" },
	{ short = "c", takes = "WXQ", doc = "python(1): -c command  Specify the command to execute" })
code("perl", { short = "eE", doc = "perlrun(1): -e commandline, -E commandline" })
code({ "ruby", "jruby" }, { short = "e", doc = "ruby(1): -e command  Specifies script from command-line" })
code({ "node", "nodejs", "bun" }, { short = "ep", long = { "eval", "print" }, takes = "rC",
	doc = "node(1): -e, --eval script; -p, --print script" })
code("deno", { sub = "eval", doc = "deno eval [OPTIONS] <CODE>" })
code({ "Rscript", "R" }, { short = "e", takes = "dg", doc = "Rscript(1): -e expr; R: -e EXPR" })
code("julia", { short = "eE", long = { "eval", "print" }, takes = "CJLHptM",
	doc = "julia(1): -e, --eval <expr>; -E, --print <expr>" })
code({ "php", "php-cli" }, { short = "rRBE", takes = "cdzf", doc = "php(1): -r code, -B begin_code, -R code, -E end_code" })
code({ "lua", "luajit", "lua5.1", "lua5.3", "lua5.4" }, { short = "e", takes = "l", doc = "lua(1): -e stat" })
code({ "awk", "gawk", "mawk", "nawk", "busybox-awk" }, { program = true, short = "e",
	long = { "source" }, takes = "Fv",
	doc = "awk(1p): awk [-F sepstring] [-v assignment]... program [argument...]; gawk -e program-text, --source" })
code("sqlite3", { words = { "-cmd" }, operands = 2,
	doc = "sqlite3(1): sqlite3 [options] [databasefile] [SQL]; -cmd command" })
code("duckdb", { words = { "-c", "-cmd" }, operands = 2, doc = "duckdb: -c COMMAND, -cmd COMMAND; duckdb [FILENAME] [SQL]" })
code("psql", { short = "c", long = { "command" }, takes = "dhpUfLoPTFRv",
	doc = "psql(1): -c command, --command=command" })
code({ "mysql", "mariadb" }, { short = "e", long = { "execute" }, takes = "DhPSuO",
	doc = "mysql(1): --execute=statement, -e statement" })
code({ "clickhouse-client" }, { short = "q", long = { "query" }, takes = "hudp",
	doc = "clickhouse-client: --query, -q  The query to process" })
code({ "sqlcmd" }, { short = "Qq", takes = "SUPdoiH", doc = "sqlcmd: -Q \"cmdline query\" and exit, -q \"cmdline query\"" })
code({ "pwsh", "powershell" }, { words = { "-c", "-Command", "-command" },
	doc = "pwsh: -Command | -c  Executes the specified commands" })
code("osascript", { short = "e", doc = "osascript(1): -e statement" })
code("groovy", { short = "e", doc = "groovy: -e <script>" })
code("octave", { long = { "eval" }, doc = "octave: --eval CODE" })
code("matlab", { words = { "-r", "-batch" }, doc = "matlab: -batch statement, -r statement" })

local P = "pw" .. "9Zq"
jobtrace.selftest { argv = { "htpasswd", "-bc", "/etc/pw", "alice", P },
	expect = { argv = { "htpasswd", "-bc", "/etc/pw", "alice", "[REDACTED]" } } }
jobtrace.selftest { argv = { "curl", "-su", "alice:" .. P, "https://x/" },
	expect = { argv = { "curl", "-su", "alice:[REDACTED]", "https://x/" } } }
jobtrace.selftest { argv = { "sqlplus", "-S", "scott/" .. P .. "@db1", "@run.sql" },
	expect = { argv = { "sqlplus", "-S", "scott/[REDACTED]@db1", "@run.sql" } } }
jobtrace.selftest { argv = { "lftp", "-u", "bob," .. P, "sftp://h" },
	expect = { argv = { "lftp", "-u", "bob,[REDACTED]", "sftp://h" } } }
