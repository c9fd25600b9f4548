// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_fileset.c - the files of a process (agent/core/files.h): per file
 * while it runs, merged by what the rules keep, the busiest listed up to
 * the cap and the rest counted; the rules' file hook; SHA-256.  No root.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "files.h"
#include "rules.h"
#include "sha256.h"
#include "test_files.h"

static char dir[] = "/tmp/jt_fileset_XXXXXX";
static char err[512];

/* The known answers of FIPS 180-4 and Python's hashlib, across the
 * padding's block boundary (55, 56, 64 and 119 bytes). */
static void test_sha256(void **state)
{
	static const struct {
		size_t n;
		char c;
		const char *hex;
	} v[] = {
		{ 0, 'a', "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ 55, 'a', "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318" },
		{ 56, 'a', "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a" },
		{ 64, 'a', "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb" },
		{ 119, 'a', "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb" },
	};
	char buf[128], hex[SHA256_HEX_LEN + 1];

	(void)state;
	assert_int_equal(sha256_hex("abc", 3, hex), 0);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		memset(buf, v[i].c, v[i].n);
		assert_int_equal(sha256_hex(buf, v[i].n, hex), 0);
		assert_string_equal(hex, v[i].hex);
	}
}

/* How an open's flags read. */
static void test_oflags(void **state)
{
	(void)state;
	assert_int_equal(files_oflags(O_RDONLY, false), JT_FF_READ);
	assert_int_equal(files_oflags(O_WRONLY | O_CREAT | O_TRUNC, false),
			 JT_FF_WRITE | JT_FF_CREATE | JT_FF_TRUNCATE);
	assert_int_equal(files_oflags(O_RDWR | O_APPEND | O_DIRECT, false),
			 JT_FF_READ | JT_FF_WRITE | JT_FF_APPEND | JT_FF_DIRECT);
	assert_int_equal(files_oflags(O_RDONLY | O_DIRECTORY, false),
			 JT_FF_READ | JT_FF_DIRECTORY);
	assert_int_equal(files_oflags(O_RDONLY, true),
			 JT_FF_READ | JT_FF_DIRECTORY);
}

/* What a path is kept as. */
static void test_kept_path(void **state)
{
	char out[JT_PATH_MAX], want[80];
	char hex[SHA256_HEX_LEN + 1];

	(void)state;
	assert_true(files_kept_path("/d/sample.fq.gz", RULES_FILE_KEEP, out,
				    sizeof(out)));
	assert_string_equal(out, "/d/sample.fq.gz");
	assert_true(files_kept_path("/d/sample.fq.gz", RULES_FILE_EXT, out,
				    sizeof(out)));
	assert_string_equal(out, "*.fq.gz");
	assert_true(files_kept_path("/home/u/.bashrc", RULES_FILE_EXT, out,
				    sizeof(out)));
	assert_string_equal(out, "*");
	assert_true(files_kept_path("/d/README", RULES_FILE_EXT, out,
				    sizeof(out)));
	assert_string_equal(out, "*");
	/* a "extension" longer than 32 bytes is a name's part, not kept */
	assert_true(files_kept_path("/d/a.0123456789012345678901234567890123",
				    RULES_FILE_EXT, out, sizeof(out)));
	assert_string_equal(out, "*");
	assert_int_equal(sha256_hex("/data/ref.fa", 12, hex), 0);
	assert_string_equal(hex, "1ec0b27351ea889bf081cb78b737bd893374adc3e70f717aa7e184982e4fbc2f");
	snprintf(want, sizeof(want), "sha256:%s", hex);
	assert_true(files_kept_path("/data/ref.fa", RULES_FILE_HASH, out,
				    sizeof(out)));
	assert_string_equal(out, want);
	assert_false(files_kept_path("/data/ref.fa", RULES_FILE_DROP, out,
				     sizeof(out)));
	/* too long for out: not kept (never cut) */
	assert_false(files_kept_path("/data/ref.fa", RULES_FILE_KEEP, out, 5));
}

/* The entry of fs kept as path, or NULL. */
static const struct jt_file *entry(const struct jt_files *fs, const char *path)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->v[i].path, path))
			return &fs->v[i];
	return NULL;
}

/* Opens and closes per file: two fds of one file, a file opened twice,
 * a reused fd, a close whose open was never told. */
static void test_raw(void **state)
{
	struct files_raw fr = { 0 };
	struct files_close c = { 100, 0, 5000, true, false, false, false };
	const char *paths[8];
	uint32_t idx[8];

	(void)state;
	assert_int_equal(files_raw_open(&fr, 3, 1, 10, "/d/in.fq", JT_FF_READ,
					O_RDONLY, 1), 0);
	assert_int_equal(files_raw_open(&fr, 4, 1, 10, "/d/./in.fq",
					JT_FF_READ | JT_FF_WRITE, O_RDWR, 1), 0);
	assert_int_equal(files_raw_open(&fr, 5, 1, 11, "/d/out", JT_FF_WRITE,
					O_WRONLY, 1), 0);
	assert_int_equal(fr.n, 2);
	assert_int_equal(fr.nfds, 3);
	assert_int_equal(fr.v[0].f.opens, 2);
	/* the first path known stays */
	assert_string_equal(fr.v[0].f.path, "/d/in.fq");
	assert_int_equal(fr.v[0].f.flags, JT_FF_READ | JT_FF_WRITE);
	files_raw_close(&fr, 3, 1, 10, &c);
	c.read_bytes = 20;
	c.write_bytes = 7;
	c.size_bytes = 5007;
	c.at_end = true;
	files_raw_close(&fr, 4, 1, 10, &c);
	/* open at the end or not: its last close's (the kernel's deleted) */
	assert_true(fr.v[0].open_at_end);
	assert_false(fr.v[1].open_at_end);
	/* a later close before the end: open_at_end is its, not kept */
	assert_int_equal(files_raw_open(&fr, 6, 1, 10, "/d/in.fq", JT_FF_READ,
					O_RDONLY, 1), 0);
	c.at_end = false;
	c.read_bytes = c.write_bytes = 0;
	files_raw_close(&fr, 6, 1, 10, &c);
	assert_false(fr.v[0].open_at_end);
	assert_int_equal(fr.v[0].f.read_bytes, 120);
	assert_int_equal(fr.v[0].f.write_bytes, 7);
	assert_int_equal(fr.v[0].f.size_bytes, 5007);
	assert_int_equal(fr.nfds, 1);
	/* fd 5 reused before its close was told: one open fd there */
	assert_int_equal(files_raw_open(&fr, 5, 1, 12, NULL, JT_FF_READ,
					O_RDONLY, 1), 0);
	assert_int_equal(fr.nfds, 1);
	assert_int_equal(fr.fds[0].ent, 2);
	/* an fd it had (inherited): its file, no open counted */
	assert_int_equal(files_raw_open(&fr, 1, 1, 11, "/d/out", JT_FF_WRITE,
					O_WRONLY, 0), 0);
	assert_int_equal(fr.v[1].f.opens, 1);
	assert_int_equal(fr.nfds, 2);
	/* a close of a file never opened here */
	c = (struct files_close){ 9, 8, 0, false, false, false, false };
	files_raw_close(&fr, 9, 2, 99, &c);
	assert_int_equal(fr.lost.count, 1);
	assert_int_equal(fr.lost.read_bytes, 9);
	assert_int_equal(fr.lost.write_bytes, 8);
	/* distinct paths: two (the third file has none) */
	assert_int_equal(files_raw_paths(&fr, paths, idx), 2);
	assert_string_equal(paths[idx[0]], "/d/in.fq");
	assert_string_equal(paths[idx[1]], "/d/out");
	assert_int_equal(idx[2], UINT32_MAX);
	/* a child's exec names its std fds by its parent's (dev, ino):
	 * closed here or not, a file known by path gives it */
	assert_string_equal(files_raw_path(&fr, 1, 10), "/d/in.fq");
	assert_string_equal(files_raw_path(&fr, 1, 11), "/d/out");
	assert_null(files_raw_path(&fr, 1, 12));	/* no path known */
	assert_null(files_raw_path(&fr, 2, 10));	/* another device */
	assert_null(files_raw_path(NULL, 1, 10));	/* no files */
	files_raw_free(&fr);
	files_raw_free(&fr);
}

/* Add a file with bytes rd + wr read and written to fr. */
static void one(struct files_raw *fr, uint64_t ino, const char *path,
		uint64_t rd, uint64_t wr, uint64_t size, bool deleted)
{
	struct files_close c = { rd, wr, size, true, deleted, false, false };

	assert_int_equal(files_raw_open(fr, 3, 1, ino, path,
					wr ? JT_FF_WRITE : JT_FF_READ,
					wr ? O_WRONLY : O_RDONLY, 1), 0);
	files_raw_close(fr, 3, 1, ino, &c);
}

/* The rules' verdicts merge and drop; the cap keeps the busiest; the
 * rest adds up what is not listed, the kernel's counts too. */
static void test_build(void **state)
{
	static const struct {
		const char *path;
		enum rules_file_verdict v;
	} verdict_of[] = {
		{ "/d/a.fq.gz", RULES_FILE_EXT }, { "/d/b.fq.gz", RULES_FILE_EXT },
		{ "/usr/lib/libz.so.1", RULES_FILE_DROP },
		{ "/secret/x", RULES_FILE_HASH }, { "/d/big", RULES_FILE_KEEP },
		{ "/d/small", RULES_FILE_KEEP }, { "/d/tiny", RULES_FILE_KEEP },
	};
	struct jt_files_count nonreg = { 2, 1, 300, 400 }, lost = { 1, 3, 5, 6 };
	struct files_raw fr = { 0 };
	struct jt_files fs;
	const char *paths[16];
	uint32_t idx[16];
	enum rules_file_verdict v[16];
	const struct jt_file *f;
	char hashed[80], hex[SHA256_HEX_LEN + 1];
	size_t n;

	(void)state;
	one(&fr, 1, "/d/a.fq.gz", 1000, 0, 1000, false);
	one(&fr, 2, "/d/b.fq.gz", 500, 0, 600, false);
	one(&fr, 3, "/usr/lib/libz.so.1", 4096, 0, 90000, false);
	one(&fr, 4, "/secret/x", 10, 0, 10, true);
	one(&fr, 5, "/d/big", 0, 1 << 20, 1 << 20, false);
	one(&fr, 6, "/d/small", 0, 100, 100, true);
	one(&fr, 7, "/d/tiny", 1, 0, 1, false);
	n = files_raw_paths(&fr, paths, idx);
	assert_int_equal(n, 7);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 7; j++)
			if (!strcmp(paths[i], verdict_of[j].path))
				v[i] = verdict_of[j].v;
	assert_int_equal(files_build(&fr, idx, v, 3, &nonreg, &lost, &fs), 0);
	/* *.fq.gz (a + b), /d/big, the hash, /d/small, /d/tiny: 5 kept, 3
	 * listed, busiest first */
	assert_int_equal(fs.n, 3);
	assert_string_equal(fs.v[0].path, "/d/big");
	assert_string_equal(fs.v[1].path, "*.fq.gz");
	assert_string_equal(fs.v[2].path, "/d/small");
	f = entry(&fs, "*.fq.gz");
	assert_int_equal(f->opens, 2);
	assert_int_equal(f->read_bytes, 1500);
	assert_int_equal(f->size_bytes, 1600);
	assert_false(f->deleted);
	assert_true(entry(&fs, "/d/small")->deleted);
	assert_int_equal(entry(&fs, "/d/big")->flags, JT_FF_WRITE);
	/* rest: the kernel's lost one, libz (dropped), the hash and tiny
	 * (past the cap) */
	assert_int_equal(fs.rest.count, 1 + 1 + 2);
	assert_int_equal(fs.rest.opens, 3 + 1 + 2);
	assert_int_equal(fs.rest.read_bytes, 5 + 4096 + 10 + 1);
	assert_int_equal(fs.rest.write_bytes, 6);
	assert_memory_equal(&fs.nonreg, &nonreg, sizeof(nonreg));
	files_free(&fs);

	/* a cap that lists them all: the hash is there, not the path */
	assert_int_equal(files_build(&fr, idx, v, 64, NULL, NULL, &fs), 0);
	assert_int_equal(fs.n, 5);
	assert_int_equal(sha256_hex("/secret/x", 9, hex), 0);
	snprintf(hashed, sizeof(hashed), "sha256:%s", hex);
	assert_non_null(entry(&fs, hashed));
	assert_null(entry(&fs, "/secret/x"));
	assert_int_equal(fs.rest.count, 1);
	/* equal bytes: more opens first, then the path */
	assert_string_equal(fs.v[4].path, "/d/tiny");
	files_free(&fs);
	files_raw_free(&fr);
}

static const char file_rules[] =
	"jobtrace.rule('all', function(p, d) end)\n"
	"jobtrace.file_rule('site', function(path, p)\n"
	"  if path:sub(1, 8) == '/secret/' then return 'hash' end\n"
	"  if path == '/boom' then error('boom') end\n"
	"  if path == '/odd' then return 42 end\n"
	"  if path == '/loop' then while true do end end\n"
	"end)\n"
	"jobtrace.file_rule('defaults', function(path, p)\n"
	"  if path:find('^/usr/lib/') then return 'drop' end\n"
	"  if path == p.exe then return 'drop' end\n"
	"  if path:find('%.fq$') then return 'ext' end\n"
	"end)\n"
	"jobtrace.selftest{ argv = { 'bwa' }, file = '/usr/lib/x.so',"
	" expect = { file = 'drop' } }\n"
	"jobtrace.selftest{ argv = { 'bwa' }, file = '/secret/a',"
	" expect = { file = 'hash' } }\n";

/* A process running bwa, and an engine without rules. */
static struct rules *bwa(struct jt_proc *p, const char *exe)
{
	struct rules_limits lim = { 16u << 20, 200000, 0 };
	struct rules *r;

	memset(p, 0, sizeof(*p));
	p->exe = (char *)exe;
	p->argv = "bwa";
	p->argv_len = 4;
	assert_int_equal(rules_new(&lim, &r), 0);
	return r;
}

/* The file hook: the first verdict decides, none keeps, p is the process,
 * a failing or odd rule drops (fail closed), self-tests check it, no
 * rules drop all. */
static void test_rules_hook(void **state)
{
	const char *paths[] = { "/secret/k", "/usr/lib/libz.so", "/opt/bwa/bwa",
				"/d/r1.fq", "/d/out.bam", "/boom", "/odd",
				"/loop" };
	enum rules_file_verdict want[] = {
		RULES_FILE_HASH, RULES_FILE_DROP, RULES_FILE_DROP,
		RULES_FILE_EXT, RULES_FILE_KEEP, RULES_FILE_DROP,
		RULES_FILE_DROP, RULES_FILE_DROP,
	};
	enum rules_file_verdict got[8];
	struct jt_proc p = { 0 };
	struct rules_input in = { .p = &p };
	struct rules_stats st;
	struct rules *r = bwa(&p, "/opt/bwa/bwa");

	(void)state;
	/* no rules yet: nothing is kept */
	assert_int_equal(rules_files(r, &in, paths, 1, got), 0);
	assert_int_equal(got[0], RULES_FILE_DROP);
	test_write_file(dir, "50-files.lua", file_rules);
	if (rules_load_dir(r, dir, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(rules_files(r, &in, paths, 8, got), 3);
	for (size_t i = 0; i < 8; i++)
		if (got[i] != want[i])
			fail_msg("%s: verdict %d, want %d", paths[i], got[i],
				 want[i]);
	rules_get_stats(r, &st);
	assert_int_equal(st.file_rules, 2);
	assert_non_null(strstr(st.last_error, "loop"));

	/* a self-test that fails keeps the rules in force */
	test_write_file(dir, "60-bad.lua",
			"jobtrace.selftest{ argv = { 'bwa' }, file = '/d/x.bam',"
			" expect = { file = 'drop' } }\n");
	assert_int_not_equal(rules_load_dir(r, dir, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "file is 'keep', expected 'drop'"));
	assert_int_equal(rules_files(r, &in, paths, 1, got), 0);
	assert_int_equal(got[0], RULES_FILE_HASH);
	unlink(test_write_file(dir, "60-bad.lua", ""));
	rules_free(r);
}

static const char cache_rules[] =
	"jobtrace.rule('all', function(p, d) end)\n"
	"local calls = 0\n"
	"jobtrace.file_rule('c', function(path, p)\n"
	"  if path == '/count' then calls = calls + 1\n"
	"    return calls == 1 and 'keep' or 'drop' end\n"
	"  if path == '/byexe' then\n"
	"    return p.exe == '/a' and 'keep' or 'drop' end\n"
	"  if path == '/pairs' then for k in pairs(p) do end return 'hash' end\n"
	"end)\n";

/* A folder name under the test's folder into sub (64), made. */
static void mksub(char *sub, const char *name)
{
	snprintf(sub, 64, "%s/%s", dir, name);
	assert_int_equal(mkdir(sub, 0700), 0);
}

/* A verdict given without reading p is kept for the path, for every
 * process; one that read p (a field, or pairs) is asked again. */
static void test_rules_cache(void **state)
{
	const char *paths[] = { "/count", "/byexe", "/pairs" };
	enum rules_file_verdict got[3];
	struct jt_proc p;
	struct rules_input in = { .p = &p };
	struct rules *r = bwa(&p, "/a");
	char sub[64];

	(void)state;
	mksub(sub, "cache");
	test_write_file(sub, "10-cache.lua", cache_rules);
	if (rules_load_dir(r, sub, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(rules_files(r, &in, paths, 3, got), 0);
	assert_int_equal(got[0], RULES_FILE_KEEP);
	assert_int_equal(got[1], RULES_FILE_KEEP);
	assert_int_equal(got[2], RULES_FILE_HASH);
	p.exe = "/b";
	assert_int_equal(rules_files(r, &in, paths, 3, got), 0);
	assert_int_equal(got[0], RULES_FILE_KEEP);	/* cached: not asked */
	assert_int_equal(got[1], RULES_FILE_DROP);	/* read p: asked */
	assert_int_equal(got[2], RULES_FILE_HASH);
	/* a reload forgets: the new state's rule is asked (its count is 1) */
	if (rules_load_dir(r, sub, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(rules_files(r, &in, paths, 1, got), 0);
	assert_int_equal(got[0], RULES_FILE_KEEP);
	rules_free(r);
	unlink(test_write_file(sub, "10-cache.lua", ""));
	assert_int_equal(rmdir(sub), 0);
}

static const char byexe_rules[] =
	"jobtrace.rule('all', function(p, d) end)\n"
	"local calls = 0\n"
	"jobtrace.file_rule('e', function(path, p)\n"
	"  calls = calls + 1\n"
	"  if path == '/log' then\n"
	"    if p.exe ~= '/a' then return 'hash' end\n"
	"    return calls == 1 and 'keep' or 'drop' end\n"
	"  if path == '/uid' then\n"
	"    return p.uid == 7 and 'ext' or 'keep' end\n"
	"  if path == '/argv' then\n"
	"    return p.argv[1] == 'bwa' and 'keep' or 'drop' end\n"
	"  if path == '/calls' then return calls % 2 == 0 and 'keep' or 'drop' end\n"
	"end)\n";

/* One process asking the file rules of a folder of its own. */
struct asker {
	struct jt_proc p;
	struct rules_input in;
	struct rules *r;
	char sub[64];
	enum rules_file_verdict got[3];
};

/* The verdicts of a's rules (after loading rules as 10-e.lua in its
 * folder, when not NULL) on three paths, into a->got. */
static void ask(struct asker *a, const char *rules)
{
	const char *paths[] = { "/log", "/uid", "/argv" };

	if (rules) {
		test_write_file(a->sub, "10-e.lua", rules);
		if (rules_load_dir(a->r, a->sub, err, sizeof(err)))
			fail_msg("%s", err);
	}
	assert_int_equal(rules_files(a->r, &a->in, paths, 3, a->got), 0);
}

/*
 * A verdict given after reading only scalar fields of p (exe, uid) is kept
 * under the path and those fields' values: the same values are not asked
 * again, others are; one that read another field (argv) is asked each
 * time; a reload (a rule changed live) forgets them all.
 */
static void test_rules_cache_fields(void **state)
{
	static struct asker a;
	const char *calls[] = { "/calls" };

	(void)state;
	a.r = bwa(&a.p, "/a");
	a.in.p = &a.p;
	a.p.uid = 7;
	mksub(a.sub, "cachef");
	ask(&a, byexe_rules);				/* calls 1..3 */
	assert_int_equal(a.got[0], RULES_FILE_KEEP);
	assert_int_equal(a.got[1], RULES_FILE_EXT);
	assert_int_equal(a.got[2], RULES_FILE_KEEP);
	a.p.exe = "/b";
	a.p.uid = 8;
	ask(&a, NULL);					/* calls 4..6 */
	assert_int_equal(a.got[0], RULES_FILE_HASH);	/* another exe: asked */
	assert_int_equal(a.got[1], RULES_FILE_KEEP);	/* another uid: asked */
	assert_int_equal(a.got[2], RULES_FILE_KEEP);
	a.p.exe = "/a";
	a.p.uid = 7;
	ask(&a, NULL);					/* call 7 (argv) */
	assert_int_equal(a.got[0], RULES_FILE_KEEP);	/* cached: 7 drops */
	assert_int_equal(a.got[1], RULES_FILE_EXT);
	/* the rule ran 7 times: argv's path was asked each time */
	assert_int_equal(rules_files(a.r, &a.in, calls, 1, a.got), 0);
	assert_int_equal(a.got[0], RULES_FILE_KEEP);	/* call 8 */
	ask(&a, "jobtrace.rule('all', function(p, d) end)\n"
		"jobtrace.file_rule('e', function(path, p)\n"
		"  if p.exe == '/a' then return 'drop' end end)\n");
	assert_int_equal(a.got[0], RULES_FILE_DROP);
	assert_int_equal(a.got[1], RULES_FILE_DROP);
	rules_free(a.r);
	unlink(test_write_file(a.sub, "10-e.lua", ""));
	assert_int_equal(rmdir(a.sub), 0);
}

/* The built-in rules standing in keep only an extension. */
static void test_rules_builtin(void **state)
{
	const char *paths[] = { "/d/r1.fq.gz", "/usr/lib/x86_64-linux-gnu/libc.so.6" };
	enum rules_file_verdict got[2];
	struct jt_proc p = { 0 };
	struct rules_input in = { .p = &p };
	struct rules *r = bwa(&p, "/usr/bin/bwa");

	(void)state;
	if (rules_load_builtin(r, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(rules_files(r, &in, paths, 2, got), 0);
	assert_int_equal(got[0], RULES_FILE_EXT);
	assert_int_equal(got[1], RULES_FILE_DROP);
	rules_free(r);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	unlink(test_write_file(dir, "50-files.lua", ""));
	return rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_oflags),
		cmocka_unit_test(test_kept_path),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_rules_hook),
		cmocka_unit_test(test_rules_cache),
		cmocka_unit_test(test_rules_cache_fields),
		cmocka_unit_test(test_rules_builtin),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
