// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_rulebundle.c - cmocka tests of agent/core/rulebundle.c without root:
 * a bundle made from a folder opens, extracts and names its id; each way a
 * bundle can be wrong (the MANIFEST's lines, a file's size or hash, a file
 * missing or extra, a path, a link or device, the limits, the signature) is
 * refused with a message naming the member or the MANIFEST line.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "json.h"
#include "rulebundle.h"
#include "sha256.h"
#include "test_files.h"

static const char rule_a[] = "jobtrace.rule('a', function(p, d) end)\n";
static const char rule_b[] = "-- b\njobtrace.rule('b', function(p, d) end)\n";

struct fx {
	char dir[64];		/* the rules folder */
	char keys[64];		/* key files */
	char sec[128], pub[128], sec2[128], pub2[128];
};

/* Write an Ed25519 key pair as PEM files sec and pub. */
static void make_keys(const char *sec, const char *pub)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	FILE *f;

	assert_non_null(k);
	f = fopen(sec, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	f = fopen(pub, "w");
	assert_non_null(f);
	assert_int_equal(PEM_write_PUBKEY(f, k), 1);
	fclose(f);
	EVP_PKEY_free(k);
}

/* A rules folder with two rule files, a file that is not one, two keys. */
static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/jt-rb-XXXXXX");
	strcpy(fx->keys, "/tmp/jt-rbk-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	assert_non_null(mkdtemp(fx->keys));
	test_write_file(fx->dir, "b.lua", rule_b);
	test_write_file(fx->dir, "a.lua", rule_a);
	test_write_file(fx->dir, "notes.txt", "not a rule\n");
	test_write_file(fx->dir, ".a.lua.swp", "an editor's\n");
	snprintf(fx->sec, sizeof(fx->sec), "%s/sec.pem", fx->keys);
	snprintf(fx->pub, sizeof(fx->pub), "%s/pub.pem", fx->keys);
	snprintf(fx->sec2, sizeof(fx->sec2), "%s/sec2.pem", fx->keys);
	snprintf(fx->pub2, sizeof(fx->pub2), "%s/pub2.pem", fx->keys);
	make_keys(fx->sec, fx->pub);
	make_keys(fx->sec2, fx->pub2);
	*state = fx;
	return 0;
}

/* Remove the folders. */
static int teardown(void **state)
{
	struct fx *fx = *state;

	test_remove_tree(fx->dir);
	test_remove_tree(fx->keys);
	free(fx);
	return 0;
}

/* Append a ustar member of kind type with data to b, prefix optional. */
static void put_member(struct jbuf *b, const char *name, char type,
		       const char *prefix, const void *data, size_t len)
{
	unsigned char h[512] = { 0 }, zeros[512] = { 0 };
	unsigned sum = 0;
	size_t i;

	memcpy(h, name, strnlen(name, 100));
	memcpy(h + 100, "0000644", 7);
	snprintf((char *)h + 124, 12, "%011zo", len);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	if (prefix)
		memcpy(h + 345, prefix, strlen(prefix));
	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	jbuf_put(b, h, 512);
	jbuf_put(b, data, len);
	jbuf_put(b, zeros, (512 - len % 512) % 512);
}

/* The end of a tar: two zero blocks. */
static void put_end(struct jbuf *b)
{
	static const char zeros[1024];

	jbuf_put(b, zeros, sizeof(zeros));
}

/* The MANIFEST line of a file named name with text. */
static void put_line(struct jbuf *m, const char *name, const char *text)
{
	char hex[65], line[256];

	assert_int_equal(sha256_hex(text, strlen(text), hex), 0);
	snprintf(line, sizeof(line), "file %s %zu %s\n", hex, strlen(text), name);
	jbuf_put(m, line, strlen(line));
}

/* The good MANIFEST of a.lua and b.lua. */
static void good_manifest(struct jbuf *m)
{
	jbuf_init(m);
	jbuf_put(m, "jobtrace-rules-bundle 1\nversion v1\n", 35);
	put_line(m, "a.lua", rule_a);
	put_line(m, "b.lua", rule_b);
}

/* Open the len bytes at tar with key, expecting failure with a message
 * holding want. */
static void refused(const void *tar, size_t len, const char *key,
		    const char *want)
{
	struct rulebundle b;
	char err[512] = "";

	assert_int_not_equal(rulebundle_open(tar, len, key, &b, err, sizeof(err)), 0);
	rulebundle_free(&b);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
}

/* A bundle of hand-made members, opened without a key: refused with want. */
static void refused_tar(struct jbuf *t, const char *want)
{
	put_end(t);
	refused(t->buf, t->len, NULL, want);
	jbuf_free(t);
}

/* A folder's bundle opens with its files, version and id, and extracts. */
static void test_make_open_extract(void **state)
{
	struct fx *fx = *state;
	struct jbuf t, t2;
	struct rulebundle b;
	char err[512] = "", hex[65], dest[128], *text;
	struct stat st;

	jbuf_init(&t);
	jbuf_init(&t2);
	assert_int_equal(rulebundle_make(fx->dir, "2026-11-27.1", NULL, &t, err,
					 sizeof(err)), 0);
	assert_int_equal(t.len % 512, 0);
	/* the same files make the same bytes */
	assert_int_equal(rulebundle_make(fx->dir, "2026-11-27.1", NULL, &t2, err,
					 sizeof(err)), 0);
	assert_int_equal(t.len, t2.len);
	assert_memory_equal(t.buf, t2.buf, t.len);
	assert_int_equal(rulebundle_open(t.buf, t.len, NULL, &b, err, sizeof(err)), 0);
	assert_string_equal(b.version, "2026-11-27.1");
	assert_false(b.is_signed);
	assert_int_equal(b.nfiles, 2);	/* not notes.txt, not the swap file */
	assert_string_equal(b.files[0].name, "a.lua");
	assert_string_equal(b.files[1].name, "b.lua");
	assert_int_equal(b.files[1].size, strlen(rule_b));
	assert_memory_equal(b.files[1].data, rule_b, strlen(rule_b));
	/* the id is the MANIFEST's SHA-256, computed here from the text */
	{
		struct jbuf m2;

		jbuf_init(&m2);
		jbuf_put(&m2, "jobtrace-rules-bundle 1\nversion 2026-11-27.1\n", 45);
		put_line(&m2, "a.lua", rule_a);
		put_line(&m2, "b.lua", rule_b);
		assert_int_equal(b.manifest_len, m2.len);
		assert_memory_equal(b.manifest, m2.buf, m2.len);
		assert_int_equal(sha256_hex(m2.buf, m2.len, hex), 0);
		assert_string_equal(b.sha256, hex);
		jbuf_free(&m2);
	}
	snprintf(dest, sizeof(dest), "%s/out", fx->keys);
	assert_int_equal(rulebundle_extract(&b, dest, err, sizeof(err)), 0);
	{
		char p[256];

		snprintf(p, sizeof(p), "%s/b.lua", dest);
		text = test_read_file(p, NULL);
		assert_string_equal(text, rule_b);
		free(text);
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		assert_int_equal(stat(dest, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0700);
	}
	/* not into a folder that exists */
	assert_int_equal(rulebundle_extract(&b, dest, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, dest));
	rulebundle_free(&b);
	jbuf_free(&t);
	jbuf_free(&t2);
}

/* The MANIFEST's own lines: each wrong one is named by its number. */
static void test_manifest_lines(void **state)
{
	static const struct {
		const char *head;	/* lines 1 and 2 */
		const char *want;
	} cases[] = {
		{ "jobtrace-rules-bundle 2\nversion v1\n", "MANIFEST line 1:" },
		{ "jobtrace-rules-bundle 1\nversion has space\n", "MANIFEST line 2:" },
		{ "jobtrace-rules-bundle 1\nversion \n", "MANIFEST line 2:" },
		{ "jobtrace-rules-bundle 1\nrelease v1\n", "MANIFEST line 2:" },
		{ "jobtrace-rules-bundle 1\nversion v\x01x\n", "MANIFEST line 2:" },
	};
	struct jbuf t, m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jbuf_init(&m);
		jbuf_init(&t);
		jbuf_put(&m, cases[i].head, strlen(cases[i].head));
		put_line(&m, "a.lua", rule_a);
		put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
		put_member(&t, "a.lua", '0', NULL, rule_a, strlen(rule_a));
		refused_tar(&t, cases[i].want);
		jbuf_free(&m);
	}
	/* a file line that is not one, unsorted lines, no newline, no files */
	{
		static const char *bad[][2] = {
			{ "file abc 3 a.lua\n", "MANIFEST line 3: not \"file" },
			{ "file 0000000000000000000000000000000000000000000000000000000000000000 x a.lua\n",
			  "MANIFEST line 3: bad size" },
			{ "file 0000000000000000000000000000000000000000000000000000000000000000 3 ../a.lua\n",
			  "MANIFEST line 3: bad size or file name" },
		};

		for (i = 0; i < 3; i++) {
			jbuf_init(&m);
			jbuf_init(&t);
			jbuf_put(&m, "jobtrace-rules-bundle 1\nversion v1\n", 35);
			jbuf_put(&m, bad[i][0], strlen(bad[i][0]));
			put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
			put_member(&t, "a.lua", '0', NULL, rule_a, strlen(rule_a));
			refused_tar(&t, bad[i][1]);
			jbuf_free(&m);
		}
	}
	jbuf_init(&m);
	jbuf_init(&t);
	jbuf_put(&m, "jobtrace-rules-bundle 1\nversion v1\n", 35);
	put_line(&m, "b.lua", rule_b);
	put_line(&m, "a.lua", rule_a);
	put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
	put_member(&t, "a.lua", '0', NULL, rule_a, strlen(rule_a));
	put_member(&t, "b.lua", '0', NULL, rule_b, strlen(rule_b));
	refused_tar(&t, "MANIFEST line 4: a.lua is not after b.lua");
	jbuf_free(&m);

	jbuf_init(&t);
	put_member(&t, "MANIFEST", '0', NULL, "jobtrace-rules-bundle 1\nversion v1", 34);
	refused_tar(&t, "MANIFEST line 2: no newline");
	jbuf_init(&t);
	put_member(&t, "MANIFEST", '0', NULL, "jobtrace-rules-bundle 1\nversion v1\n", 35);
	refused_tar(&t, "MANIFEST line 3: ends before");
}

static const char evil[] = "jobtrace.rule('a', function(p, d) d.include = false end)\n";
static char a_flipped[sizeof(rule_a)];	/* rule_a, one bit changed */

/*
 * A file's size or content that is not the MANIFEST's; a file missing,
 * extra or twice; the MANIFEST not first; a rule file named like the
 * signature.  Members: name and text, "M" the good MANIFEST.
 */
static void test_files_match(void **state)
{
	static const struct {
		const char *members[5][2];
		const char *want;
	} cases[] = {
		{ { { "M" }, { "a.lua", a_flipped }, { "b.lua", rule_b } },
		  "MANIFEST line 3: sha256 of a.lua does not match" },
		{ { { "M" }, { "a.lua", rule_a }, { "b.lua", evil } },
		  "MANIFEST line 4: size of b.lua does not match" },
		{ { { "M" }, { "a.lua", rule_a } },
		  "MANIFEST line 4: b.lua is not in the bundle" },
		{ { { "M" }, { "a.lua", rule_a }, { "b.lua", rule_b }, { "c.lua", evil } },
		  "bundle member 4 \"c.lua\": not in MANIFEST" },
		{ { { "M" }, { "a.lua", rule_a }, { "b.lua", rule_b }, { "a.lua", evil } },
		  "bundle member 4 \"a.lua\": twice" },
		{ { { "a.lua", rule_a }, { "M" }, { "b.lua", rule_b } },
		  "bundle member 1: not MANIFEST" },
		{ { { "M" }, { "a.lua", rule_a }, { "b.lua", rule_b }, { "MANIFEST.lua", rule_b } },
		  "\"MANIFEST.lua\": not in MANIFEST" },
	};
	struct jbuf t, m;
	size_t i, j;

	(void)state;
	memcpy(a_flipped, rule_a, sizeof(rule_a));
	a_flipped[20] ^= 1;
	good_manifest(&m);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jbuf_init(&t);
		for (j = 0; j < 5 && cases[i].members[j][0]; j++) {
			const char *name = cases[i].members[j][0];
			const char *text = cases[i].members[j][1];

			if (!strcmp(name, "M"))
				put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
			else
				put_member(&t, name, '0', NULL, text, strlen(text));
		}
		refused_tar(&t, cases[i].want);
	}
	jbuf_free(&m);
}

/* Paths, links, devices, folders and extension headers are refused,
 * whatever their name. */
static void test_path_tricks(void **state)
{
	static const struct {
		const char *name;
		char type;
		const char *prefix;
		const char *want;
	} cases[] = {
		{ "../a.lua", '0', NULL, "\"../a.lua\": not a top-level" },
		{ "sub/a.lua", '0', NULL, "not a top-level" },
		{ "/etc/a.lua", '0', NULL, "not a top-level" },
		{ "..", '0', NULL, "not a top-level" },
		{ ".hidden.lua", '0', NULL, "not a top-level" },
		{ "a b.lua", '0', NULL, "not a top-level" },
		{ "a.lua\\", '0', NULL, "not a top-level" },
		{ "c.lua", '0', "etc", "\"(prefix)/c.lua\": not a top-level" },
		{ "c.lua", '2', NULL, "a symbolic link" },
		{ "c.lua", '1', NULL, "a hard link" },
		{ "c.lua", '3', NULL, "a device" },
		{ "c.lua", '4', NULL, "a device" },
		{ "c.lua", '5', NULL, "a folder" },
		{ "c.lua", '6', NULL, "a FIFO" },
		{ "c.lua", 'x', NULL, "a pax extended header" },
		{ "././@LongLink", 'L', NULL, "a GNU long name" },
		{ "c.lua", '7', NULL, "not a regular file" },
	};
	struct jbuf t, m;
	size_t i;

	(void)state;
	good_manifest(&m);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jbuf_init(&t);
		put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
		put_member(&t, "a.lua", '0', NULL, rule_a, strlen(rule_a));
		put_member(&t, cases[i].name, cases[i].type, cases[i].prefix,
			   "x", 1);
		put_member(&t, "b.lua", '0', NULL, rule_b, strlen(rule_b));
		refused_tar(&t, cases[i].want);
	}
	/* a 100-byte name without its NUL */
	jbuf_init(&t);
	put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
	put_member(&t, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.lua",
		   '0', NULL, "x", 1);
	refused_tar(&t, "bundle member 2");
	jbuf_free(&m);
}

/* A header that is not ustar, a size past the end, a tar cut short. */
static void test_broken_tar(void **state)
{
	struct jbuf t, m;

	(void)state;
	good_manifest(&m);
	jbuf_init(&t);
	put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
	put_member(&t, "a.lua", '0', NULL, rule_a, strlen(rule_a));
	t.buf[512 * 2 + 150] ^= 1;	/* a.lua's header: checksum wrong */
	refused_tar(&t, "bundle member 2: not a ustar header");
	jbuf_init(&t);
	put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
	put_member(&t, "a.lua", '0', NULL, rule_a, strlen(rule_a));
	refused(t.buf, t.len - 512 + 10, NULL, "bundle member 2 \"a.lua\": size");
	refused(t.buf, 100, NULL, "bundle: cut short after member 0");
	refused(t.buf, 0, NULL, "bundle member 1: not MANIFEST");
	jbuf_free(&t);
	jbuf_free(&m);
}

/* Over 4 MiB or 256 files: refused, at make and at open. */
static void test_limits(void **state)
{
	struct fx *fx = *state;
	struct jbuf t, m;
	char err[512] = "", name[32], dir[128];
	unsigned i;

	refused("", RULEBUNDLE_MAX_BYTES + 1, NULL, "at most 4194304");
	jbuf_init(&t);
	jbuf_init(&m);
	jbuf_put(&m, "jobtrace-rules-bundle 1\nversion v1\n", 35);
	for (i = 0; i < RULEBUNDLE_MAX_FILES + 1; i++) {
		snprintf(name, sizeof(name), "r%03u.lua", i);
		put_line(&m, name, rule_a);
	}
	put_member(&t, "MANIFEST", '0', NULL, m.buf, m.len);
	for (i = 0; i < RULEBUNDLE_MAX_FILES + 1; i++) {
		snprintf(name, sizeof(name), "r%03u.lua", i);
		put_member(&t, name, '0', NULL, rule_a, strlen(rule_a));
	}
	refused_tar(&t, "more than 256 rule files");
	jbuf_free(&m);
	/* make: too many files, a file too big, a name a bundle cannot hold */
	snprintf(dir, sizeof(dir), "%s/many", fx->keys);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (i = 0; i < RULEBUNDLE_MAX_FILES + 1; i++) {
		snprintf(name, sizeof(name), "r%03u.lua", i);
		test_write_file(dir, name, rule_a);
	}
	jbuf_init(&t);
	assert_int_equal(rulebundle_make(dir, "v1", NULL, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "257 *.lua files"));
	test_remove_tree(dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	{
		char *big = malloc(RULEBUNDLE_MAX_BYTES + 2);

		memset(big, '-', RULEBUNDLE_MAX_BYTES + 1);
		big[RULEBUNDLE_MAX_BYTES + 1] = '\0';
		test_write_file(dir, "big.lua", big);
		free(big);
	}
	assert_int_equal(rulebundle_make(dir, "v1", NULL, &t, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "big.lua"));
	test_remove_tree(dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	test_write_file(dir, "a b.lua", rule_a);
	assert_int_equal(rulebundle_make(dir, "v1", NULL, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a b.lua"));
	assert_int_equal(rulebundle_make(fx->dir, "two words", NULL, &t, err,
					 sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "version \"two words\""));
	test_remove_tree(dir);
	jbuf_free(&t);
}

/* A new bundle of the fixture's folder into t, signed with key (or not). */
static void made(struct fx *fx, struct jbuf *t, const char *key)
{
	char err[512] = "";

	jbuf_init(t);
	if (rulebundle_make(fx->dir, "v2", key, t, err, sizeof(err)))
		fail_msg("rulebundle_make: %s", err);
}

/* t opens with key (or none) into *b (free it). */
static void opens(const struct jbuf *t, const char *key, struct rulebundle *b)
{
	char err[512] = "";

	if (rulebundle_open(t->buf, t->len, key, b, err, sizeof(err)))
		fail_msg("rulebundle_open: %s", err);
}

/* Signed with the key: accepted; unsigned, signed with another key or
 * with the signature changed: refused when a key is set. */
static void test_signature(void **state)
{
	struct fx *fx = *state;
	struct jbuf t, t2;
	struct rulebundle b;
	char err[512] = "";

	made(fx, &t, fx->sec);
	opens(&t, fx->pub, &b);
	assert_true(b.is_signed);
	assert_int_equal(b.nfiles, 2);
	rulebundle_free(&b);
	/* no key: the signature is not needed */
	opens(&t, NULL, &b);
	rulebundle_free(&b);
	refused(t.buf, t.len, fx->pub2, "does not verify with public key");
	/* one bit of the signature changed (its data is in the last member) */
	t.buf[t.len - 1024 - 512 + 7] ^= 1;
	refused(t.buf, t.len, fx->pub, "bundle member 4 MANIFEST.sig: the signature does not verify");
	jbuf_free(&t);
	/* unsigned */
	made(fx, &t2, NULL);
	refused(t2.buf, t2.len, fx->pub, "not signed");
	/* a private key given as the public one, a missing key file */
	refused(t2.buf, t2.len, fx->sec, "not signed");
	jbuf_free(&t2);
	made(fx, &t, fx->sec);
	refused(t.buf, t.len, fx->sec, "not an Ed25519 public key");
	refused(t.buf, t.len, "/nonexistent/pub.pem", "public key /nonexistent/pub.pem");
	jbuf_free(&t);
	/* signing with a public key or no file */
	jbuf_init(&t);
	assert_int_equal(rulebundle_make(fx->dir, "v2", fx->pub, &t, err,
					 sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not an Ed25519 private key"));
	assert_int_not_equal(rulebundle_make(fx->dir, "v2", "/nonexistent/k.pem",
					     &t, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/nonexistent/k.pem"));
	jbuf_free(&t);
}

/* Signed, but MANIFEST changed after signing (a file swapped with its
 * line): refused by the signature. */
static void test_signed_tampered(void **state)
{
	struct fx *fx = *state;
	struct jbuf t, m, tt;
	struct rulebundle b;

	made(fx, &t, fx->sec);
	opens(&t, fx->pub, &b);
	rulebundle_free(&b);
	/* rebuild: a new MANIFEST naming evil, the old signature */
	jbuf_init(&m);
	jbuf_put(&m, "jobtrace-rules-bundle 1\nversion v2\n", 35);
	put_line(&m, "a.lua", evil);
	put_line(&m, "b.lua", rule_b);
	jbuf_init(&tt);
	put_member(&tt, "MANIFEST", '0', NULL, m.buf, m.len);
	put_member(&tt, "a.lua", '0', NULL, evil, strlen(evil));
	put_member(&tt, "b.lua", '0', NULL, rule_b, strlen(rule_b));
	put_member(&tt, "MANIFEST.sig", '0', NULL,
		   t.buf + t.len - 1024 - 512, RULEBUNDLE_SIG_LEN);
	put_end(&tt);
	refused(tt.buf, tt.len, fx->pub, "the signature does not verify");
	/* without a key the same bundle opens: the hashes alone match */
	opens(&tt, NULL, &b);
	rulebundle_free(&b);
	jbuf_free(&tt);
	jbuf_free(&m);
	jbuf_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make_open_extract),
		cmocka_unit_test(test_manifest_lines),
		cmocka_unit_test(test_files_match),
		cmocka_unit_test(test_path_tricks),
		cmocka_unit_test(test_broken_tar),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_signed_tampered),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
