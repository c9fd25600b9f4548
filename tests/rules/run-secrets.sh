#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The default rules against secrets in shapes no list names, without the
# agent (tests/integration/test_secret_corpus.sh runs the same corpus for
# real under it):
#   * secret-corpus.py makes secret-bearing command lines at test time from
#     each token format's documented shape and each tool entry's synopsis,
#     in every context (direct, sh -c, bash -lc, env, sudo, srun, docker
#     exec) and cut by the kernel inside the secret: no canary may be in
#     any decision of `jobtrace rules test --lines`, and no rule may fail;
#   * every format of 31-secret-formats.lua and every entry of
#     32-secret-tools.lua has a line in the corpus;
#   * benign.txt, real-shaped bioinformatics command lines: at most 1 %
#     change, each change listed;
#   * command lines built to be slow: within rules.deadline_ms at the
#     agent's 2 KiB; at 128 KiB their cost reported, no secret stored.
# SEED=N repeats a run (the seed is printed).  Ends with "N passed, M failed".
set -u
top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
CLI=$top_builddir/jobtrace
RULES=$top_srcdir/lua-rules
HERE=$top_srcdir/tests/rules
passed=0
failed=0

[ -x "$CLI" ] || { echo "run-secrets: $CLI not built" >&2; exit 99; }
command -v python3 >/dev/null || { echo "# error: python3 is missing" >&2; exit 99; }
T=$(mktemp -d /tmp/jobtrace-secrets.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

# Count the ok/not ok lines a checker printed, show them.
tally() {
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok - "*) passed=$((passed + 1)) ;;
		"not ok - "*) failed=$((failed + 1)) ;;
		esac
	done
}

python3 "$HERE/secret-corpus.py" ${SEED:+--seed "$SEED"} --bin /opt/bin \
	--lines "$T/c" 2>&1 | sed 's/^# */# /'
"$CLI" rules test --rules "$RULES" --lines "$T/c.lines" >"$T/out" 2>&1
tally < <(python3 "$HERE/check-secrets.py" leaks "$T/out" "$T/c.canaries")
"$CLI" rules test --rules "$RULES" --argv-truncated --lines "$T/c.cut.lines" >"$T/out.cut" 2>&1
tally < <(python3 "$HERE/check-secrets.py" leaks "$T/out.cut" "$T/c.cut.canaries")
tally < <(python3 "$HERE/check-secrets.py" coverage "$RULES" "$HERE/secret-corpus.py")

"$CLI" rules test --rules "$RULES" --lines "$HERE/benign.txt" >"$T/benign" 2>&1
tally < <(python3 "$HERE/check-secrets.py" benign "$T/benign" "$HERE/benign.txt" 1)

# Long command lines.  The agent hands the rules at most 2,048 bytes of
# argv (JT_ARGV_LEN), `rules test` up to 1 MiB.  Built to be slow: words
# that start a format over and over, quotes and secret names for the code
# reader, shell strings of many commands, many arguments.  At 2 KiB each
# must finish within rules.deadline_ms (they take a fifth of it or less).
# At 128 KiB the cost is reported: a real-shaped line with a secret in
# much else (code, a file list, JSON, a shell script) and the hostile ones
# finish or fail closed (every argument hidden, what the engine does with
# any rule that runs late); either way no secret may be stored.
python3 - "$T" <<'PY'
import shlex, sys
T = sys.argv[1]
def fill(unit, n):
    return (unit * (n // len(unit) + 1))[:n]
t = "g" + "hp_"
def hostile(n):
    return [
        ["python3", "-c", fill("password = '" + "x' + ", n)],
        ["python3", "-c", fill("x = {'api_key': 'k', \"token\": \"" + t, n)],
        ["bash", "-c", fill("curl -u a:b h | mysql -pX db; ", n)],
        ["sh", "-c", fill("echo " + t + "; ", n)],
        ["mytool"] + [fill("-" + t + "-sk-", 60)] * (n // 61),
        ["mytool"] + ["--password", "x", "https://a:b@h/?token=1&sig=2"] * (n // 42),
        ["mytool", fill("eyJ" + "aaaaaaaaaaaa.eyJ", n)],
        ["mytool", fill("-----BEGIN " + "PRIVATE KEY-----", n)],
        ["mytool", fill("https://" + "tok3n@h/ ", n)],
        ["awk", fill("BEGIN { pass = \"x\"; } ", n)],
    ]
K = 128 * 1024
P = "Zq9x" + "Pw7Lm2"
code = "; ".join("df%d = pd.read_csv('data/s%d.tsv', sep=',')" % (i, i) for i in range(2600))
real = [
    ["python3", "-c", code[:60000] + "; password = '" + P + "'; " + code[60000:K - 200]],
    ["bash", "-c", fill("samtools sort -o a.bam b.bam && samtools index a.bam; ", K - 100)
     + "; curl -u alice:" + P + " https://h/"],
    ["mytool", "--password", P] + ["/data/sample_%05d.bam" % i for i in range(6000)],
    ["curl", "-d", "{\"items\": [" + fill("{\"id\": 1, \"name\": \"s\", \"path\": \"/d/x.bam\"}, ", K - 200)
     + "{\"api_key\": \"" + P + "\"}]}", "https://h/"],
    ["mytool"] + ["--input=/data/run_%d/sample.bam" % i for i in range(4000)] + ["https://u:" + P + "@h/"],
]
for name, lines in (("2k", hostile(2000)), ("big", hostile(K)), ("real", real)):
    with open(T + "/" + name, "w") as f:
        for l in lines:
            f.write(shlex.join(l) + "\n")
PY
# Decide for one line (argv as shell words) with --repeat; sets OUT.
one() {
	printf '%s\n' "$1" >"$T/one"
	OUT=$("$CLI" rules test --rules "$RULES" --repeat 20 --lines "$T/one" 2>&1)
}
for set in 2k real big; do
	i=0
	while IFS= read -r line; do
		i=$((i + 1))
		one "$line"
		cost=$(printf '%s\n' "$OUT" | sed -n 's/^cost: *//p')
		err=$(printf '%s\n' "$OUT" | sed -n 's/^errors: *//p')
		what="$set line $i (${#line} bytes, ${line:0:36}...)"
		if printf '%s\n' "$OUT" | grep -q "Zq9xPw7Lm2"; then
			failed=$((failed + 1))
			echo "not ok - $what: the secret is stored"
		elif [ "$set" = big ]; then
			echo "# $what: $err; $cost"
		elif [ "$set" = real ]; then
			passed=$((passed + 1))
			echo "ok - $what: no secret stored; $err; $cost"
		elif [ "$err" != "0 rule(s) failed" ]; then
			failed=$((failed + 1))
			echo "not ok - $what: $err; $(printf '%s\n' "$OUT" | sed -n 's/^error: *//p')"
		else
			passed=$((passed + 1))
			echo "ok - $what: within the deadline, $cost"
		fi
	done <"$T/$set"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
