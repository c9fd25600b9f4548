#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Generate secret-bearing command lines for the redaction tests.

Every secret is made here, at test time, from the documented format of its
token type (vendor docs; the formats gitleaks and trufflehog look for) or
from the manual's synopsis of a tool that takes a secret at a position or
after an option.  Nothing here looks like a live secret: prefixes are
built by concatenation and the random parts come from a seeded generator,
so the repository holds no string a secret scanner would flag.

Each entry: an id, what it tests, the argv, and its canaries: the random
parts of its secrets (the bytes that must never be stored).  Contexts wrap
a base line: direct, sh -c, bash -lc, env VAR=x, sudo, srun, docker exec,
and "cut": the line padded so that the kernel's argv limit cuts inside the
secret (the canary is then the part of it before the cut).

  secret-corpus.py [--seed N] [--bin DIR] [--limit BYTES] --json FILE
  secret-corpus.py [--seed N] [--bin DIR] --lines PREFIX
      writes PREFIX.lines (one command line per line in shell words, every
      context but "cut"), PREFIX.cut.lines (the cut ones as the kernel
      keeps them, for --argv-truncated) for `jobtrace rules test --lines`,
      and PREFIX.canaries, PREFIX.cut.canaries: per line its id, context
      and canaries, tab-separated.
"""
import argparse
import json
import random
import shlex
import shutil
import sys

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
UPDIG = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
LOWDIG = "abcdefghijklmnopqrstuvwxyz0123456789"
HEX = "0123456789abcdef"
ALPHA = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
B64URL = ALNUM + "-_"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

rng = random.Random()


def rnd(alphabet, n):
    """n random characters of alphabet, with letters and digits mixed
    when the alphabet has both (a token, not a word)."""
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        has_d = any(c.isdigit() for c in s)
        has_a = any(c.isalpha() for c in s)
        if n < 8 or not (any(c.isdigit() for c in alphabet) and
                         any(c.isalpha() for c in alphabet)) or (has_d and has_a):
            return s


def j(*parts):
    """Concatenate (prefixes are never written whole in this file)."""
    return "".join(parts)


# ---- token formats: name -> function returning (token, [random parts]) ------
def simple(prefix, alphabet, n, suffix=""):
    def make():
        r = rnd(alphabet, n)
        return prefix + r + suffix, [r]
    return make


def two(prefix, a, sep, b, secret=(0, 1)):
    """prefix + random(a) + sep + random(b); a, b: (alphabet, n)."""
    def make():
        x, y = rnd(*a), rnd(*b)
        return prefix + x + sep + y, [(x, y)[i] for i in secret]
    return make


def jwt():
    import base64
    h = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
    body = '{"sub":"%s","iat":%d}' % (rnd(ALNUM, 12), rng.randint(10**9, 2 * 10**9))
    p = base64.urlsafe_b64encode(body.encode()).rstrip(b"=").decode()
    s = rnd(B64URL, 43)
    return h + "." + p + "." + s, [p[8:], s]


def pem():
    body = "\n".join(rnd(ALNUM + "+/", 64) for _ in range(4))
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "])
    key = " ".join(["PRIVATE", "KEY"])
    return ("-----BEGIN " + kind + key + "-----\n" + body + "\n-----END " + kind +
            key + "-----"), [body[:40], body[-40:]]


def basic():
    import base64
    user, pw = "u" + rnd(LOWDIG, 5), rnd(ALNUM, 18)
    b = base64.b64encode((user + ":" + pw).encode()).decode()
    return "Basic " + b, [b[8:]]


def slack_webhook():
    a, b, c = rnd(UPDIG, 9), rnd(UPDIG, 11), rnd(ALNUM, 24)
    return j("https://hooks.", "slack.com/services/", a, "/", b, "/", c), [c]


def discord_webhook():
    t = rnd(B64URL, 68)
    return j("https://discord.com/api/", "webhooks/", str(rng.randint(10**17, 10**18)),
             "/", t), [t]


def sas():
    sig = rnd(ALNUM + "%", 44)
    return j("https://acct.blob.core.windows.net/c/f.bam?sv=2022-11-02&sr=b&s", "ig=", sig), [sig]


def putty():
    lines = " ".join(rnd(ALNUM + "+/", 64) for _ in range(3))
    return j("PuTTY-User-Key-File-3: ssh-ed25519 Private", "-Lines: 1 ", lines), [lines[:40]]


def telegram():
    t = rnd(B64URL, 33)
    return j("https://api.tele", "gram.org/bot", str(rng.randint(10**8, 10**9)), ":AA", t,
             "/getMe"), [t]


def tfc():
    a, b = rnd(LOWDIG, 14), rnd(B64URL, 67)
    return a + j(".atl", "asv1.") + b, [b]


def aws_key():
    pre = rng.choice([j("AK", "IA"), j("AS", "IA"), j("AB", "IA"), j("AC", "CA")])
    r = rnd(B32, 16)
    return pre + r, [r]


def pypi():
    r = rnd(B64URL, 120)
    return j("pypi-", "AgEIcHlwaS5vcmc") + r, [r]


def pscale():
    r = rnd(ALNUM, 43)
    return j("pscale_", rng.choice(["tkn_", "pw_", "oauth_"])) + r, [r]


FORMATS = {
    "aws-access-key-id": aws_key,
    "google-api-key": simple(j("AI", "za"), B64URL, 35),
    "google-oauth-client-secret": simple(j("GOC", "SPX-"), B64URL, 28),
    "google-oauth-access-token": simple(j("ya", "29."), B64URL, 60),
    "alibaba-access-key-id": simple(j("LT", "AI"), ALNUM, 20),
    "digitalocean-token": simple(j("do", "p_v1_"), HEX, 64),
    "databricks-token": simple(j("da", "pi"), HEX, 32),
    "openshift-token": simple(j("sha2", "56~"), B64URL, 43),
    "github-token": simple(j("gh", "p_"), ALNUM, 36),
    "github-oauth": simple(j("gh", "o_"), ALNUM, 36),
    "github-app-token": simple(j("gh", "s_"), ALNUM, 36),
    "github-fine-grained-pat": simple(j("github", "_pat_"), ALNUM, 82),
    "gitlab-token": simple(j("gl", "pat-"), B64URL, 20),
    "gitlab-deploy-token": simple(j("gl", "dt-"), B64URL, 20),
    "gitlab-runner-registration": simple(j("GR13", "48941"), B64URL, 20),
    "bitbucket-app-password": simple(j("AT", "BB"), ALNUM, 32),
    "atlassian-api-token": simple(j("ATA", "TT3"), B64URL, 186),
    "npm-token": simple(j("np", "m_"), ALNUM, 36),
    "pypi-token": pypi,
    "rubygems-token": simple(j("rubygems", "_"), HEX, 48),
    "nuget-key": simple(j("oy", "2"), LOWDIG, 43),
    "docker-hub-pat": simple(j("dckr", "_pat_"), B64URL, 27),
    "clojars-token": simple(j("CLOJARS", "_"), ALNUM, 60),
    "artifactory-key": simple(j("AK", "Cp"), ALNUM, 69),
    "artifactory-reference-token": simple(j("cmV", "md"), ALNUM, 59),
    "circleci-token": simple(j("CCIP", "AT_"), ALNUM, 40),
    "slack-token": simple(j("xo", "xb-"), "0123456789", 12, suffix=""),
    "slack-user-token": simple(j("xo", "xp-"), ALNUM + "-", 60),
    "slack-app-token": simple(j("xa", "pp-1-"), UPDIG + "-", 50),
    "slack-webhook": slack_webhook,
    "discord-webhook": discord_webhook,
    "stripe-key": simple(j("sk", "_live_"), ALNUM, 40),
    "stripe-restricted-key": simple(j("rk", "_test_"), ALNUM, 40),
    "stripe-webhook-secret": simple(j("wh", "sec_"), ALNUM, 32),
    "sendgrid-key": two(j("S", "G."), (B64URL, 22), ".", (B64URL, 43)),
    "twilio-api-key": simple(j("S", "K"), HEX, 32),
    "mailgun-key": simple(j("ke", "y-"), LOWDIG, 32),
    "sendinblue-key": two(j("xkey", "sib-"), (HEX, 64), "-", (ALNUM, 16)),
    "shopify-token": simple(j("shp", "at_"), HEX, 32),
    "square-token": simple(j("sq0", "atp-"), B64URL, 22),
    "anthropic-key": simple(j("sk", "-ant-api03-"), B64URL, 93, suffix="AA"),
    "openai-key": simple(j("sk", "-proj-"), B64URL, 80),
    "sk-key": simple(j("s", "k-"), ALNUM, 48),
    "huggingface-token": simple(j("h", "f_"), ALNUM, 34),
    "huggingface-org-token": simple(j("api", "_org_"), ALPHA, 34),
    "groq-key": simple(j("gs", "k_"), ALNUM, 52),
    "xai-key": simple(j("xa", "i-"), ALNUM, 80),
    "perplexity-key": simple(j("pp", "lx-"), ALNUM, 48),
    "replicate-token": simple(j("r", "8_"), ALNUM, 37),
    "notion-token": simple(j("nt", "n_"), ALNUM, 46),
    "notion-secret": simple(j("secret", "_"), ALNUM, 43),
    "linear-key": simple(j("lin", "_api_"), ALNUM, 40),
    "postman-key": two(j("PM", "AK-"), (HEX, 24), "-", (HEX, 34)),
    "grafana-token": simple(j("gl", "c_"), ALNUM, 48),
    "grafana-sa-token": two(j("gl", "sa_"), (ALNUM, 32), "_", (HEX, 8), secret=(0,)),
    "sentry-token": simple(j("sntr", "yu_"), HEX, 64),
    "newrelic-key": simple(j("NR", "AK-"), UPDIG, 27),
    "doppler-token": simple(j("dp.", "pt."), ALNUM, 43),
    "dynatrace-token": two(j("dt0", "c01."), (UPDIG, 24), ".", (UPDIG, 64)),
    "pulumi-token": simple(j("pu", "l-"), HEX, 40),
    "heroku-key": simple(j("HR", "KU-"), B64URL, 60),
    "planetscale-token": pscale,
    "tailscale-key": simple(j("ts", "key-auth-"), ALNUM, 40),
    "supabase-token": simple(j("sb", "p_"), HEX, 40),
    "figma-token": simple(j("fi", "gd_"), B64URL, 40),
    "fly-token": simple(j("fo", "1_"), B64URL, 43),
    "mapbox-secret-token": simple(j("sk.", "eyJ"), B64URL, 80),
    "age-secret-key": simple(j("AGE-SECRET", "-KEY-1"), B32, 58),
    "1password-token": simple(j("ops", "_eyJ"), ALNUM, 250),
    "vault-token": simple(j("hv", "s."), B64URL, 90),
    "vault-batch-token": simple(j("hv", "b."), B64URL, 138),
    "terraform-token": tfc,
    "azure-storage-sas": sas,
    "putty-private-key": putty,
    "telegram-bot-token": telegram,
    "jwt": jwt,
    "private-key": pem,
    "basic-auth": basic,
}


# where a format's token goes: single words; "text" tokens (with blanks)
# only as a whole argument or a header value
def word_places(t):
    return [
        ["mytool", "--input", t],
        ["mytool", t],
        ["mytool", "--opt=" + t],
        ["curl", "https://api.example.org/v1/items?id=7&k=" + t],
        ["git", "clone", "https://" + t + "@git.example.org/org/repo.git"],
        ["python3", "-c", "import client; client.connect('" + t + "')"],
        ["Rscript", "-e", 'x <- c("' + t + '")'],
        ["mytool", "--header", "X-Thing: " + t],
        ["mytool", "cfg=" + t + ",region=eu"],
        ["node", "-e", "run(`" + t + "`)"],
    ]


def text_places(t):
    return [["mytool", t], ["mytool", "--data", t],
            ["curl", "-H", "Authorization: " + t, "https://h/"]]


# ---- tools whose manual puts a secret somewhere: templates, {P} a password
TOOLS = [
    ("htpasswd", "htpasswd -b /etc/httpd/htpasswd alice {P}"),
    ("htpasswd", "htpasswd -nbB alice {P}"),
    ("htpasswd", "htpasswd -c -b -C 12 .htpasswd alice {P}"),
    ("sshpass", "sshpass -p {P} ssh node01 uptime"),
    ("sshpass", "sshpass -p{P} rsync -a d/ node01:/d/"),
    ("smbclient", "smbclient //fs01/share -U alice%{P} -c ls"),
    ("smbclient", "smbclient //fs01/share {P} -U alice -W LAB"),
    ("rpcclient", "rpcclient -U alice%{P} fs01"),
    ("net", "net ads join -U admin%{P}"),
    ("smbtar", "smbtar -s fs01 -x share -u alice -p {P} -t /dev/null"),
    ("mysql", "mysql -h db01 -u app -p{P} results"),
    ("mysql", "mysql -uapp -p{P} -e 'select 1'"),
    ("mysql", "mysql --password={P} results"),
    ("mysqldump", "mysqldump -uroot -p{P} --all-databases"),
    ("mysqladmin", "mysqladmin -uroot -p{P} status"),
    ("mariadb", "mariadb -u app -p{P} results"),
    ("mysqlsh", "mysqlsh --password={P} --uri app@db01"),
    ("psql", "psql postgresql://app:{P}@db01:5432/results"),
    ("psql", "psql 'host=db01 user=app password={P} dbname=r'"),
    ("pg_dump", "pg_dump postgres://app:{P}@db01/results -Fc -f r.dump"),
    ("sqlcmd", "sqlcmd -S db01 -U sa -P {P} -Q 'select 1'"),
    ("bcp", "bcp dbo.t out t.dat -S db01 -U sa -P {P} -c"),
    ("tsql", "tsql -S db01 -U sa -P {P}"),
    ("isql", "isql ProdDSN app {P} -v"),
    ("sqlplus", "sqlplus -S scott/{P}@db01 @report.sql"),
    ("sqlplus", "sqlplus scott/{P}"),
    ("expdp", "expdp system/{P}@db01 directory=dp dumpfile=x.dmp"),
    ("sqlldr", "sqlldr userid=scott/{P}@db01 control=load.ctl"),
    ("rman", "rman target sys/{P}@db01 nocatalog"),
    ("mongosh", "mongosh --host db01 -u admin -p {P}"),
    ("mongodump", "mongodump -u admin -p {P} --out /backup"),
    ("mongosh", "mongosh mongodb+srv://admin:{P}@cluster0.example.net/test"),
    ("redis-cli", "redis-cli -h cache01 -a {P} ping"),
    ("redis-cli", "redis-cli -u redis://default:{P}@cache01:6379 info"),
    ("cqlsh", "cqlsh -u cassandra -p {P} db01"),
    ("redis-cli", "redis-cli -h cache01 CONFIG SET requirepass {P}"),
    ("redis-cli", "redis-cli -h cache01 AUTH default {P}"),
    ("mysqladmin", "mysqladmin -u root password {P}"),
    ("rabbitmqctl", "rabbitmqctl add_user pipeline {P}"),
    ("rabbitmqctl", "rabbitmqctl change_password pipeline {P}"),
    ("samba-tool", "samba-tool user create bob {P}"),
    ("etcdctl", "etcdctl --user root:{P} get /config"),
    ("cypher-shell", "cypher-shell -u neo4j -p {P} 'MATCH (n) RETURN count(n)'"),
    ("vsql", "vsql -h db01 -U dbadmin -w {P}"),
    ("db2", "db2 connect to SAMPLE user db2inst1 using {P}"),
    ("curl", "curl -u alice:{P} https://dav.example.org/f"),
    ("curl", "curl -su alice:{P} https://dav.example.org/f"),
    ("curl", "curl -Lu alice:{P} https://dav.example.org/f"),
    ("curl", "curl -sSfu alice:{P} -o out https://dav.example.org/f"),
    ("curl", "curl -ualice:{P} https://dav.example.org/f"),
    ("curl", "curl --user alice:{P} https://dav.example.org/f"),
    ("curl", "curl -U proxyuser:{P} -x http://proxy:3128 https://h/"),
    ("curl", "curl --oauth2-bearer {P} https://api.example.org/me"),
    ("curl", "curl -E client.pem:{P} https://api.example.org/"),
    ("curl", "curl -H 'Authorization: Bearer {P}' https://api.example.org/"),
    ("curl", "curl -H 'X-Api-Key: {P}' https://api.example.org/"),
    ("curl", "curl -H 'PRIVATE-TOKEN: {P}' https://gitlab.example.org/api/v4/projects"),
    ("curl", "curl -H 'Cookie: session={P}' https://app.example.org/"),
    ("curl", "curl -d 'username=alice&password={P}' https://app.example.org/login"),
    ("curl", "curl --data '{{\"username\": \"alice\", \"password\": \"{P}\"}}' https://app.example.org/login"),
    ("curl", "curl 'https://app.example.org/api?access_token={P}&page=2'"),
    ("curl", "curl 'https://bkt.s3.amazonaws.com/k.bam?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={P}'"),
    ("curl", "curl 'https://acct.blob.core.windows.net/c/f.bam?sv=2022-11-02&sig={P}'"),
    ("curl", "curl 'https://app.example.org/report;jsessionid={P}'"),
    ("wget", "wget --user=alice --password={P} https://example.org/f.gz"),
    ("wget", "wget --http-password {P} https://example.org/f.gz"),
    ("wget", "wget --ftp-password={P} ftp://example.org/f.gz"),
    ("http", "http -a alice:{P} https://api.example.org/"),
    ("lftp", "lftp -u bob,{P} sftp://files.example.org"),
    ("lftp", "lftp -c 'open -u bob,{P} ftp://files.example.org; mirror data'"),
    ("ncftpget", "ncftpget -u bob -p {P} files.example.org . /pub/f.gz"),
    ("ncftp", "ncftp -u bob -p {P} files.example.org"),
    ("git", "git clone https://oauth2:{P}@gitlab.example.org/g/r.git"),
    ("git", "git config --global user.password {P}"),
    ("git", "git -c http.extraHeader='Authorization: Basic {P}' fetch"),
    ("ldapsearch", "ldapsearch -x -H ldap://ldap01 -D cn=admin,dc=x -w {P} -b dc=x"),
    ("ldapmodify", "ldapmodify -x -D cn=admin,dc=x -w {P} -f change.ldif"),
    ("ldappasswd", "ldappasswd -x -D cn=admin,dc=x -w {P} -s {P} uid=bob,dc=x"),
    ("openssl", "openssl enc -aes-256-cbc -pass pass:{P} -in f -out f.enc"),
    ("openssl", "openssl pkcs12 -in c.p12 -passin pass:{P} -nodes"),
    ("openssl", "openssl pkcs12 -export -out c.p12 -passout pass:{P}"),
    ("openssl", "openssl enc -d -aes-256-cbc -k {P} -in f.enc"),
    ("openssl", "openssl passwd -6 -salt xyz {P}"),
    ("keytool", "keytool -list -keystore ks.jks -storepass {P}"),
    ("keytool", "keytool -importkeystore -srckeystore a.p12 -srcstorepass {P} -deststorepass {P}"),
    ("jarsigner", "jarsigner -keystore ks.jks -storepass {P} app.jar mykey"),
    ("zip", "zip -P {P} -r out.zip results/"),
    ("zip", "zip --password {P} out.zip f.txt"),
    ("unzip", "unzip -P {P} in.zip"),
    ("7z", "7z a -p{P} -mhe=on out.7z results/"),
    ("7z", "7z x -p{P} in.7z"),
    ("unrar", "unrar x -p{P} in.rar"),
    ("gpg", "gpg --batch --passphrase {P} -d f.gpg"),
    ("gpg", "gpg --batch --passphrase={P} -c f"),
    ("ssh-keygen", "ssh-keygen -t ed25519 -N {P} -f id_ed25519"),
    ("ssh-keygen", "ssh-keygen -p -P {P} -N {P} -f id_rsa"),
    ("usermod", "usermod -p {P} bob"),
    ("useradd", "useradd -m -p {P} carol"),
    ("mkpasswd", "mkpasswd -m sha-512 {P}"),
    ("wpa_passphrase", "wpa_passphrase labnet {P}"),
    ("nmcli", "nmcli device wifi connect labnet password {P}"),
    ("nmcli", "nmcli connection modify labnet wifi-sec.psk {P}"),
    ("ipmitool", "ipmitool -I lanplus -H bmc01 -U admin -P {P} chassis status"),
    ("snmpwalk", "snmpwalk -v3 -l authPriv -u mon -a SHA -A {P} -x AES -X {P} sw01"),
    ("snmpget", "snmpget -v2c -c {P} sw01 sysUpTime.0"),
    ("xfreerdp", "xfreerdp /v:win01 /u:alice /p:{P}"),
    ("rdesktop", "rdesktop -u alice -p {P} win01"),
    ("docker", "docker login -u me -p {P} registry.example.org"),
    ("docker", "docker login --username me --password {P} registry.example.org"),
    ("podman", "podman login -u me -p {P} quay.io"),
    ("skopeo", "skopeo copy --src-creds me:{P} docker://a/x docker://b/x"),
    ("helm", "helm repo add lab https://charts.example.org --username me --password {P}"),
    ("singularity", "singularity remote login --username me --password {P} oras://reg"),
    ("az", "az login -u alice@example.org -p {P}"),
    ("az", "az login --service-principal -u appid -p {P} --tenant t1"),
    ("kubectl", "kubectl --token {P} get pods -A"),
    ("kubectl", "kubectl create secret generic db --from-literal=dbpass={P}"),
    ("kubectl", "kubectl create secret generic db --from-literal password={P}"),
    ("aws", "aws configure set aws_secret_access_key {P}"),
    ("aws", "aws configure set aws_session_token {P} --profile lab"),
    ("vault", "vault login {P}"),
    ("vault", "vault login -method=userpass username=bob password={P}"),
    ("gh", "gh secret set DEPLOY_KEY --body {P}"),
    ("gh", "gh secret set DEPLOY_KEY -b {P} -R org/repo"),
    ("doctl", "doctl auth init -t {P}"),
    ("twine", "twine upload -u __token__ -p {P} dist/*"),
    ("wandb", "wandb login {P}"),
    ("mc", "mc alias set lab https://s3.example.org AKEXAMPLE {P}"),
    ("npm", "npm config set //registry.npmjs.org/:_authToken {P}"),
    ("npm", "npm config set //registry.npmjs.org/:_authToken={P}"),
    ("dvc", "dvc remote modify store password {P}"),
    ("rclone", "rclone config create lab s3 access_key_id AKEX secret_access_key {P}"),
    ("rclone", "rclone obscure {P}"),
    ("poetry", "poetry config http-basic.lab alice {P}"),
    ("poetry", "poetry config pypi-token.lab {P}"),
    ("pip", "pip install --index-url https://alice:{P}@pypi.example.org/simple pkg"),
    ("jq", "jq --arg token {P} '.auth = $token' cfg.json"),
    ("pulumi", "pulumi config set --secret dbThing {P}"),
    ("fly", "fly secrets set SMTP_CRED={P} OTHER=x"),
    ("doppler", "doppler secrets set LICENSE={P}"),
    ("az", "az keyvault secret set --vault-name kv --name db --value {P}"),
    ("aws", "aws ssm put-parameter --name /lab/db --type SecureString --value {P}"),
    ("aws", "aws secretsmanager create-secret --name lab/db --secret-string {P}"),
    ("curl", "curl -b sessionid={P} https://app.example.org/"),
    ("ansible-playbook", "ansible-playbook site.yml --private-key={P}"),
    ("ansible-playbook", "ansible-playbook site.yml -e 'db_password={P} threads=4'"),
    ("mytool", "mytool --db-pass {P} --out x"),
    ("mytool", "mytool --accessToken {P} --threads 4"),
    ("mytool", "mytool --privateKey={P}"),
    ("ansible-playbook", "ansible-playbook site.yml -e ansible_become_pass={P}"),
    ("aws", "aws s3 cp a.bam s3://lab/a.bam --sse-c-key {P}"),
    ("curl", "curl -u {P}: https://api.example.org/v1/charges"),
    ("mytool", "mytool --client-secret={P}"),
    ("mytool", "mytool --api_key {P}"),
    ("java", "java -Djavax.net.ssl.keyStorePassword={P} -jar app.jar"),
    ("java", "java -Dsecret.key={P} -jar app.jar"),
    ("mount", "mount -t cifs //fs01/share /mnt -o username=alice,password={P},vers=3.0"),
    ("mytool", "mytool 'Server=db01;Database=r;Uid=sa;Pwd={P};'"),
    ("mytool", "mytool --dsn 'jdbc:oracle:thin:scott/{P}@db01:1521/orcl'"),
    ("mytool", "mytool --url 'jdbc:mysql://db01/r?user=app&password={P}'"),
    ("terraform", "terraform apply -var 'db_password={P}'"),
    ("helm", "helm install r chart --set auth.password={P}"),
    ("sbatch", "sbatch --export=ALL,DB_PASSWORD={P} job.sh"),
    ("docker", "docker run --rm -e API_TOKEN={P} img:1.0"),
    ("env", "env GITHUB_TOKEN={P} make release"),
    ("mytool", "mytool PGPASSWORD={P}"),
]

# code given to interpreters; {P} a secret
CODE = [
    ("python", ["python3", "-c", "import db; db.connect(host='db01', password='{P}')"]),
    ("python", ["python3", "-c", "token = \"{P}\"; print(len(token))"]),
    ("python", ["python3", "-c", "cfg = {{'api_key': '{P}', 'threads': 4}}; run(cfg)"]),
    ("python", ["python3", "-c", "import os; os.environ['GITHUB_TOKEN'] = '{P}'; main()"]),
    ("python", ["python3", "-c", "import requests; requests.get(u, auth=('alice', '{P}'))"]),
    ("python", ["python3", "-u", "-c", "import os; os.system('curl -u alice:{P} https://h/f')"]),
    ("python", ["python3", "-c", "import subprocess; subprocess.run(['sshpass', '-p', '{P}', 'ssh', 'node01'])"]),
    ("python", ["python", "-c", "# don't\nclient_secret = r'{P}'\ngo()"]),
    ("perl", ["perl", "-e", "my $password = \"{P}\"; login($password);"]),
    ("perl", ["perl", "-E", "my %h = (token => '{P}'); say keys %h"]),
    ("perl", ["perl", "-lne", "$ENV{{'API_TOKEN'}} = '{P}'; print"]),
    ("ruby", ["ruby", "-e", "ENV['API_KEY'] = '{P}'; run"]),
    ("node", ["node", "-e", "const secret = '{P}'; main(secret)"]),
    ("node", ["node", "-p", "JSON.stringify({{apiKey: \"{P}\"}})"]),
    ("Rscript", ["Rscript", "-e", "Sys.setenv(GITHUB_PAT = \"{P}\"); devtools::install()"]),
    ("R", ["R", "--vanilla", "-e", "token <- '{P}'; sync(token)"]),
    ("php", ["php", "-r", "$pwd = '{P}'; connect($pwd);"]),
    ("julia", ["julia", "-e", "ENV[\"TOKEN\"] = \"{P}\"; run()"]),
    ("awk", ["awk", "BEGIN {{ pass = \"{P}\"; print length(pass) }}"]),
    ("awk", ["gawk", "-F,", "-v", "x=1", "BEGIN {{ api_key = \"{P}\" }} {{ print $1 }}", "in.csv"]),
    ("sqlite3", ["sqlite3", "app.db", "UPDATE users SET password = '{P}' WHERE id = 1"]),
    ("psql", ["psql", "-h", "db01", "-c", "ALTER USER app WITH PASSWORD '{P}'"]),
    ("mysql", ["mysql", "-e", "CREATE USER bob IDENTIFIED BY '{P}'"]),
    ("duckdb", ["duckdb", "-c", "CREATE SECRET (TYPE S3, KEY_ID 'AKEX', SECRET '{P}')"]),
    ("lua", ["lua", "-e", "local password = \"{P}\"; go(password)"]),
    ("pwsh", ["pwsh", "-c", "$Password = '{P}'; Connect-Thing -Password $Password"]),
    ("deno", ["deno", "eval", "const token = '{P}'; await run(token)"]),
    ("clickhouse-client", ["clickhouse-client", "--query", "CREATE USER u IDENTIFIED BY '{P}'"]),
    ("osascript", ["osascript", "-e", "set password to \"{P}\""]),
    ("groovy", ["groovy", "-e", "def secret = '{P}'; println secret.size()"]),
    ("octave", ["octave", "--eval", "api_key = '{P}'; run(api_key)"]),
    ("matlab", ["matlab", "-batch", "token = '{P}'; sync(token)"]),
    ("sh-pipe", ["sh", "-c", "echo {P} | sudo -S apt-get -y update"]),
    ("sh-herestring", ["bash", "-c", "chpasswd <<< alice:{P}"]),
    ("sh-netrc", ["sh", "-c", "echo 'machine ftp.example.org login u password {P}' >> .netrc"]),
    ("sh-passwd", ["bash", "-c", "echo -e '{P}\\n{P}' | passwd pipeline"]),
]

# commands behind wrappers and shell constructs; {P} a secret
WRAPPED = [
    ("docker-run", ["docker", "run", "--rm", "-v", "/data:/data", "curlimages/curl:8.5.0",
                    "curl", "-u", "alice:{P}", "https://h/f"]),
    ("singularity", ["singularity", "exec", "tools.sif", "curl", "-su", "alice:{P}", "https://h/f"]),
    ("strace", ["strace", "-f", "-o", "trace.txt", "mysql", "-uroot", "-p{P}", "db"]),
    ("time", ["time", "sshpass", "-p", "{P}", "ssh", "node01"]),
    ("xargs", ["xargs", "-n1", "curl", "-u", "alice:{P}"]),
    ("sh-subst", ["sh", "-c", "x=$(curl -su alice:{P} https://h/f); echo \"$x\""]),
    ("sh-backtick", ["sh", "-c", "echo `curl -u alice:{P} https://h/f`"]),
    ("sh-eval", ["bash", "-c", "eval \"curl -u alice:{P} https://h/f\""]),
    ("sh-quoted-name", ["sh", "-c", "c\"url\" -u alice:{P} https://h/f"]),
    ("sh-quoted-name2", ["bash", "-c", "'sshpass' -p {P} ssh node01"]),
    ("sbatch-wrap", ["sbatch", "--wrap=curl -u alice:{P} https://h/f"]),
    ("watch", ["watch", "-n", "5", "mysql -uroot -p{P} -e 'show processlist'"]),
    ("ssh", ["ssh", "node01", "mysql", "-uroot", "-p{P}", "db"]),
]


# what the shells of the corpus run inside their strings (all made
# harmless copies of /bin/true by the integration test, so that nothing real
# runs: echo, eval and <<< are the shell's own)
INNER_COMMANDS = ["curl", "mysql", "sshpass", "ssh", "sudo", "apt-get",
                  "chpasswd", "passwd", "id", "lftp", "mytool", "make"]
SHELLS = {"sh", "bash"}


def commands_in(script):
    """The command names a shell string runs (first words of its simple
    commands, inside $(...), backticks and eval strings too)."""
    import re
    out = set()
    for seg in re.split(r"\$\(|[`;|&()\n]|<<<", script):
        try:
            words = shlex.split(seg)
        except ValueError:
            continue
        while words and ("=" in words[0] or words[0] in ("time", "!")):
            words = words[1:]
        if not words:
            continue
        if words[0] == "eval":
            for w in words[1:]:
                out |= commands_in(w)
        else:
            out.add(words[0])
    return out


def programs(base):
    """Every program the corpus starts by name, but the shells and env:
    the first word of each line, what env starts, what the shell strings
    run."""
    names = set(INNER_COMMANDS) | {"docker"}
    for e in base:
        argv = e["argv"]
        names.add(argv[0].rsplit("/", 1)[-1])
        if argv[0] == "env":
            rest = [a for a in argv[1:] if "=" not in a]
            names.add(rest[0])
        if argv[0] in SHELLS:
            names |= commands_in(argv[-1])
    return sorted(n for n in names - SHELLS - {"env", "echo", "printf"}
                  if "/" not in n)


def password():
    """A password: letters and digits, sometimes with -_.!"""
    r = rnd(ALNUM, 18)
    if rng.random() < 0.3:
        k = rng.randrange(4, 14)
        r = r[:k] + rng.choice("-_.!") + r[k + 1:]
    return r


def windows(parts):
    """What must never be stored: the random parts themselves."""
    return [p for p in parts if len(p) >= 8]


def base_entries():
    out = []
    for i, (name, make) in enumerate(sorted(FORMATS.items())):
        tok, parts = make()
        places = text_places(tok) if (" " in tok or "\n" in tok) else word_places(tok)
        argv = places[i % len(places)]
        out.append({"id": "format:" + name, "argv": argv, "canaries": windows(parts)})
    for i, (name, tmpl) in enumerate(TOOLS):
        p = password()
        cmd = tmpl.replace("{P}", p)
        out.append({"id": "tool:%s:%d" % (name, i), "argv": shlex.split(cmd),
                    "canaries": [p]})
    for i, (name, argv) in enumerate(CODE + WRAPPED):
        p = password()
        out.append({"id": "code:%s:%d" % (name, i),
                    "argv": [a.replace("{P}", p).replace("{{", "{").replace("}}", "}")
                             for a in argv],
                    "canaries": [p]})
    return out


def wrap(e, ctx, binpath):
    """The entry's argv in a context."""
    argv = e["argv"]
    if ctx == "direct":
        return argv
    if ctx == "sh":
        return ["sh", "-c", shlex.join(argv)]
    if ctx == "bash":
        return ["bash", "-lc", shlex.join(argv)]
    if ctx == "env":
        return ["env", "JT_CTX=1"] + argv
    if ctx == "sudo":
        return ["sudo", "-n", binpath(argv[0])] + argv[1:]
    if ctx == "srun":
        return ["srun", "-n1", "-t", "1", binpath(argv[0])] + argv[1:]
    if ctx == "docker":
        return ["docker", "exec", "ctr1"] + argv
    raise ValueError(ctx)


def cut_variant(e, limit, binpath):
    """e padded so that the argv limit (limit bytes kept) cuts inside its
    first canary; None when that canary is not in the last argument.
    Returns (full argv, the argv as the kernel keeps it, kept canary)."""
    if e["id"].startswith(NOCUT):
        return None
    name = e["argv"][0]
    # a shell or env stays the system's own (it runs the line); the rest
    # are the test's copies
    real = (name in SHELLS or name == "env") and shutil.which(name)
    argv = [real or binpath(name)] + e["argv"][1:]
    last = argv[-1]
    for c in e["canaries"]:
        at = last.find(c)
        if at < 0 or len(c) < 16:
            continue
        head = b"\0".join(a.encode() for a in argv[:-1]) + b"\0"
        keep = len(c) // 2
        # the program's path grows by slashes (/opt/bin////mytool: the
        # same program, no argument moves) until the cut falls at keep
        pad = limit - (len(head) + len(last[:at + keep].encode()))
        if pad < 8:
            continue
        d, _, b = argv[0].rpartition("/")
        full = [d + "/" * (pad + 1) + b] + argv[1:]
        kept_bytes = (b"\0".join(a.encode() for a in full))[:limit]
        kept = [a.decode(errors="replace") for a in kept_bytes.split(b"\0")]
        return full, kept, c[:keep]
    return None


CONTEXTS = ["direct", "sh", "bash", "env", "sudo", "srun", "docker"]
# lines whose secret is known as one only by what follows it (echo X |
# sudo -S): cut inside X, nothing says it is a secret
NOCUT = ("code:sh-pipe:", "code:sh-passwd:")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--bin", default="/usr/local/bin")
    ap.add_argument("--limit", type=int, default=2047)
    ap.add_argument("--json")
    ap.add_argument("--lines")
    ap.add_argument("--formats", action="store_true",
                    help="print the format names the corpus covers")
    ap.add_argument("--tools", action="store_true",
                    help="print the tool names the corpus covers")
    a = ap.parse_args()
    if a.formats:
        print("\n".join(sorted(FORMATS)))
        return
    if a.tools:
        names = {n for n, _ in TOOLS} | {t[1].split()[0] for t in TOOLS}
        for _, argv in CODE + WRAPPED:
            names.update(x for x in argv if x.isidentifier() or "-" in x)
        print("\n".join(sorted(names)))
        return
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 30)
    rng.seed(seed)
    print("# secret corpus seed %d" % seed, file=sys.stderr)

    def binpath(name):
        return name if "/" in name else a.bin + "/" + name

    base = base_entries()
    runs = []
    for e in base:
        for ctx in CONTEXTS:
            runs.append({"id": e["id"], "ctx": ctx, "argv": wrap(e, ctx, binpath),
                         "canaries": e["canaries"]})
        cv = cut_variant(e, a.limit, binpath)
        if cv:
            runs.append({"id": e["id"], "ctx": "cut", "argv": cv[0], "kept": cv[1],
                         "canaries": [cv[2]]})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seed": seed, "base": len(base), "runs": runs,
                       "programs": programs(base)}, f)
    if a.lines:
        for cut in (False, True):
            name = a.lines + (".cut" if cut else "")
            with open(name + ".lines", "w") as f, open(name + ".canaries", "w") as g:
                for r in runs:
                    if (r["ctx"] == "cut") != cut:
                        continue
                    argv = r.get("kept", r["argv"])
                    # a newline cannot stand in a line: code with one is
                    # written with the two bytes \n (the rules see that)
                    f.write(shlex.join(x.replace("\n", "\\n") for x in argv) + "\n")
                    g.write("%s\t%s\t%s\n" % (r["id"], r["ctx"], "\t".join(r["canaries"])))
    print("# %d base lines, %d runs" % (len(base), len(runs)), file=sys.stderr)


if __name__ == "__main__":
    main()
