// SPDX-License-Identifier: GPL-2.0-or-later
/* rulebundle.c - make, check and extract rules bundles (rulebundle.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "rulebundle.h"
#include "sha256.h"
#include "rules.h"
#include "util.h"

#define BLOCK 512
#define MANIFEST_NAME "MANIFEST"
#define SIG_NAME "MANIFEST.sig"

/* The fields of a ustar header that a bundle uses. */
struct ustar {
	char name[100];
	char mode[8];
	char uid[8];
	char gid[8];
	char size[12];
	char mtime[12];
	char chksum[8];
	char typeflag;
	char linkname[100];
	char magic[6];
	char version[2];
	char uname[32];
	char gname[32];
	char devmajor[8];
	char devminor[8];
	char prefix[155];
	char pad[12];
};
_Static_assert(sizeof(struct ustar) == BLOCK, "ustar header is one block");

/* True when name is a rule file name a bundle may hold. */
bool rulebundle_name_ok(const char *name)
{
	size_t n = strlen(name), i;

	if (n < 5 || n >= RULEBUNDLE_NAME_MAX || strcmp(name + n - 4, ".lua"))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return false;
	}
	return true;
}

/* Release what a bundle holds. */
void rulebundle_free(struct rulebundle *b)
{
	unsigned i;

	if (!b)
		return;
	for (i = 0; i < b->nfiles; i++)
		free(b->files[i].data);
	free(b->files);
	free(b->manifest);
	memset(b, 0, sizeof(*b));
}

/* ---- tar writing ---------------------------------------------------------- */

/* Append one member (header, data, padding) to out. */
static int tar_put(struct jbuf *out, const char *name, const void *data,
		   size_t len)
{
	static const char zeros[BLOCK];
	struct ustar h;
	const unsigned char *p = (const unsigned char *)&h;
	unsigned sum = 0;
	size_t i;

	memset(&h, 0, sizeof(h));
	util_strlcpy(h.name, name, sizeof(h.name));
	snprintf(h.mode, sizeof(h.mode), "%07o", 0644);
	snprintf(h.uid, sizeof(h.uid), "%07o", 0);
	snprintf(h.gid, sizeof(h.gid), "%07o", 0);
	snprintf(h.size, sizeof(h.size), "%011zo", len);
	snprintf(h.mtime, sizeof(h.mtime), "%011o", 0);
	h.typeflag = '0';
	memcpy(h.magic, "ustar", 6);
	memcpy(h.version, "00", 2);
	memset(h.chksum, ' ', sizeof(h.chksum));
	for (i = 0; i < BLOCK; i++)
		sum += p[i];
	snprintf(h.chksum, sizeof(h.chksum), "%06o", sum);
	if (jbuf_put(out, &h, BLOCK) || jbuf_put(out, data, len) ||
	    jbuf_put(out, zeros, (BLOCK - len % BLOCK) % BLOCK))
		return -ENOMEM;
	return 0;
}

/* Read dir/name (a regular file, at most max bytes) into *data. */
static int read_member(const char *dir, const char *name, size_t max,
		       unsigned char **data, size_t *len, char *err,
		       size_t errlen)
{
	char path[4096];
	struct stat st;
	unsigned char *buf = NULL;
	ssize_t got;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		util_seterr(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		util_seterr(err, errlen, "%s: not a regular file", path);
		goto cleanup;
	}
	if ((size_t)st.st_size > max) {
		ret = -EFBIG;
		util_seterr(err, errlen, "%s: %lld bytes, a bundle holds at most %u",
			    path, (long long)st.st_size, RULEBUNDLE_MAX_BYTES);
		goto cleanup;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto cleanup;
	}
	got = read(fd, buf, st.st_size + 1);
	if (got != st.st_size) {
		ret = got < 0 ? -errno : -EAGAIN;
		util_seterr(err, errlen, "%s: %s", path,
			    got < 0 ? strerror(errno) : "changed while read");
		goto cleanup;
	}
	*data = buf;
	*len = st.st_size;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return ret;
}

/*
 * Sign msg into sig (sign) or verify sig over msg with the Ed25519 key in
 * the PEM file keyfile: 0, -ENOKEY when the file holds no such key, -EPERM
 * when the signature does not verify, -errno when the file cannot be read.
 */
static int ed25519(const char *keyfile, bool sign, const void *msg,
		   size_t len, unsigned char *sig, size_t siglen)
{
	EVP_MD_CTX *ctx = NULL;
	EVP_PKEY *key = NULL;
	size_t n = siglen;
	FILE *f;
	int ret = -ENOKEY;

	f = fopen(keyfile, "re");
	if (!f)
		return -errno;
	key = sign ? PEM_read_PrivateKey(f, NULL, NULL, NULL) :
		     PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (!key || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519)
		goto cleanup;
	ret = -EPERM;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		goto cleanup;
	if (sign && (EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) != 1 ||
		     EVP_DigestSign(ctx, sig, &n, msg, len) != 1 ||
		     n != RULEBUNDLE_SIG_LEN))
		goto cleanup;
	if (!sign && (siglen != RULEBUNDLE_SIG_LEN ||
		      EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) != 1 ||
		      EVP_DigestVerify(ctx, sig, siglen, msg, len) != 1))
		goto cleanup;
	ret = 0;
cleanup:
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	return ret;
}

/* Sign msg with the Ed25519 key in the PEM file keyfile into sig. */
static int sign_manifest(const char *keyfile, const void *msg, size_t len,
			 unsigned char sig[RULEBUNDLE_SIG_LEN], char *err,
			 size_t errlen)
{
	int ret = ed25519(keyfile, true, msg, len, sig, RULEBUNDLE_SIG_LEN);

	if (ret == -ENOKEY) {
		util_seterr(err, errlen, "%s: not an Ed25519 private key in PEM "
			    "(make one with: openssl genpkey -algorithm ed25519)",
			    keyfile);
		return -EINVAL;
	}
	if (ret == -EPERM)
		util_seterr(err, errlen, "%s: signing the MANIFEST failed", keyfile);
	else if (ret)
		util_seterr(err, errlen, "%s: %s", keyfile, strerror(-ret));
	return ret;
}

/* The MANIFEST of the n files of dir into man; their contents into data. */
static int make_manifest(const char *dir, struct dirent **names, int n,
			 const char *version, struct jbuf *man,
			 unsigned char **data, size_t *lens, char *err,
			 size_t errlen)
{
	size_t total = 0;
	char hex[65], line[256];
	int i, ret;

	snprintf(line, sizeof(line), "%s\nversion %s\n", RULEBUNDLE_MAGIC,
		 version);
	if (jbuf_put(man, line, strlen(line)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (!rulebundle_name_ok(name)) {
			util_seterr(err, errlen, "%s/%s: a bundle's file names are "
				    "[A-Za-z0-9][A-Za-z0-9_.-]*.lua (under %d bytes)",
				    dir, name, RULEBUNDLE_NAME_MAX);
			return -EINVAL;
		}
		ret = read_member(dir, name, RULEBUNDLE_MAX_BYTES - total,
				  &data[i], &lens[i], err, errlen);
		if (ret)
			return ret;
		total += lens[i] + 2 * BLOCK;
		if (sha256_hex(data[i], lens[i], hex))
			return -EIO;
		snprintf(line, sizeof(line), "file %s %zu %s\n", hex, lens[i],
			 name);
		if (jbuf_put(man, line, strlen(line)))
			return -ENOMEM;
	}
	return 0;
}

/* True when v is a version a MANIFEST may carry. */
static bool version_ok(const char *v, size_t n)
{
	size_t i;

	if (n == 0 || n > RULEBUNDLE_VERSION_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] > '~')
			return false;
	return true;
}

/* Make a bundle of every *.lua of dir. */
int rulebundle_make(const char *dir, const char *version,
		    const char *seckey_pem, struct jbuf *tar_out, char *err,
		    size_t errlen)
{
	struct dirent **names = NULL;
	unsigned char **data = NULL, sig[RULEBUNDLE_SIG_LEN];
	size_t *lens = NULL;
	struct jbuf man;
	int n, i, ret;

	jbuf_init(&man);
	if (!version_ok(version, strlen(version))) {
		util_seterr(err, errlen, "version \"%s\": printable, no spaces, "
			    "1 to %d characters", version, RULEBUNDLE_VERSION_MAX);
		return -EINVAL;
	}
	n = rules_dir_files(dir, &names);
	if (n < 0) {
		util_seterr(err, errlen, "%s: %s", dir, strerror(-n));
		return n;
	}
	if (n == 0 || n > RULEBUNDLE_MAX_FILES) {
		util_seterr(err, errlen, "%s: %d *.lua files, a bundle holds 1 to %d",
			    dir, n, RULEBUNDLE_MAX_FILES);
		ret = -EINVAL;
		goto cleanup;
	}
	data = calloc(n, sizeof(*data));
	lens = calloc(n, sizeof(*lens));
	if (!data || !lens) {
		ret = -ENOMEM;
		goto cleanup;
	}
	ret = make_manifest(dir, names, n, version, &man, data, lens, err,
			    errlen);
	if (ret)
		goto cleanup;
	if (seckey_pem) {
		ret = sign_manifest(seckey_pem, man.buf, man.len, sig, err, errlen);
		if (ret)
			goto cleanup;
	}
	ret = tar_put(tar_out, MANIFEST_NAME, man.buf, man.len);
	for (i = 0; !ret && i < n; i++)
		ret = tar_put(tar_out, names[i]->d_name, data[i], lens[i]);
	if (!ret && seckey_pem)
		ret = tar_put(tar_out, SIG_NAME, sig, sizeof(sig));
	if (!ret) {
		static const char end[2 * BLOCK];

		ret = jbuf_put(tar_out, end, sizeof(end)) ? -ENOMEM : 0;
	}
	if (!ret && tar_out->len > RULEBUNDLE_MAX_BYTES) {
		util_seterr(err, errlen, "%s: the bundle would be %zu bytes, at most %u",
			    dir, tar_out->len, RULEBUNDLE_MAX_BYTES);
		ret = -EFBIG;
	}
cleanup:
	if (ret == -ENOMEM && err && !err[0])
		util_seterr(err, errlen, "%s: out of memory", dir);
	for (i = 0; i < n; i++) {
		if (data)
			free(data[i]);
		free(names[i]);
	}
	free(names);
	free(data);
	free(lens);
	jbuf_free(&man);
	return ret;
}

/* ---- tar reading ---------------------------------------------------------- */

/* A member as found in the tar. */
struct member {
	char name[RULEBUNDLE_NAME_MAX];
	const unsigned char *data;
	size_t size;
	unsigned index;			/* 1-based position in the tar */
	bool claimed;			/* named by a MANIFEST line */
};

/* Parse the octal field f of n bytes; -1 if it is not one. */
static long long octal(const char *f, size_t n)
{
	long long v = 0;
	size_t i = 0;

	while (i < n && f[i] == ' ')
		i++;
	if (i == n || f[i] < '0' || f[i] > '7')
		return -1;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		v = v * 8 + (f[i] - '0');
		if (v > (long long)RULEBUNDLE_MAX_BYTES * 8)
			return -1;
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	return v;
}

/* True when the header block h's checksum is right. */
static bool chksum_ok(const struct ustar *h)
{
	const unsigned char *p = (const unsigned char *)h;
	long long want = octal(h->chksum, sizeof(h->chksum));
	long long sum = 0;
	size_t i;

	for (i = 0; i < BLOCK; i++)
		sum += (i >= offsetof(struct ustar, chksum) &&
			i < offsetof(struct ustar, chksum) + sizeof(h->chksum)) ?
			       ' ' : p[i];
	return want == sum;
}

/* What is wrong with a header's kind, NULL when it is a regular file. */
static const char *kind_refused(char t)
{
	switch (t) {
	case '0':
	case '\0':
		return NULL;
	case '1':
		return "a hard link";
	case '2':
		return "a symbolic link";
	case '3':
	case '4':
		return "a device";
	case '5':
		return "a folder";
	case '6':
		return "a FIFO";
	case 'x':
	case 'g':
		return "a pax extended header";
	case 'L':
	case 'K':
		return "a GNU long name";
	default:
		return "not a regular file";
	}
}

/* Check header h (member number idx) and take its name into m. */
static int check_header(const struct ustar *h, unsigned idx,
			struct member *m, char *err, size_t errlen)
{
	const char *why;
	size_t nlen = strnlen(h->name, sizeof(h->name));

	if (memcmp(h->magic, "ustar", 5) || !chksum_ok(h)) {
		util_seterr(err, errlen, "bundle member %u: not a ustar header "
			    "(magic or checksum wrong)", idx);
		return -EINVAL;
	}
	memcpy(m->name, h->name, nlen);
	m->name[nlen] = '\0';
	util_printable(m->name);
	why = kind_refused(h->typeflag);
	if (why) {
		util_seterr(err, errlen, "bundle member %u \"%s\": %s, a bundle "
			    "holds regular files only", idx, m->name, why);
		return -EINVAL;
	}
	if (h->prefix[0] || nlen == sizeof(h->name) ||
	    memchr(h->name, '/', nlen) || strcmp(m->name, h->name) ||
	    (strcmp(m->name, MANIFEST_NAME) && strcmp(m->name, SIG_NAME) &&
	     !rulebundle_name_ok(m->name))) {
		util_seterr(err, errlen, "bundle member %u \"%s%s%s\": not a "
			    "top-level [A-Za-z0-9][A-Za-z0-9_.-]*.lua name",
			    idx, h->prefix[0] ? "(prefix)/" : "", m->name,
			    nlen == sizeof(h->name) ? "..." : "");
		return -EINVAL;
	}
	return 0;
}

/* Split the tar into at most RULEBUNDLE_MAX_FILES + 2 members. */
static int tar_members(const unsigned char *tar, size_t len,
		       struct member *ms, unsigned *nms, char *err,
		       size_t errlen)
{
	size_t off = 0;
	unsigned n = 0, i, rules;
	long long size;
	int ret;

	while (off + BLOCK <= len) {
		const struct ustar *h = (const void *)(tar + off);

		if (h->name[0] == '\0')
			break;		/* the end: zero blocks */
		if (n == RULEBUNDLE_MAX_FILES + 2) {
			util_seterr(err, errlen, "bundle: more than %d rule files",
				    RULEBUNDLE_MAX_FILES);
			return -EFBIG;
		}
		ret = check_header(h, n + 1, &ms[n], err, errlen);
		if (ret)
			return ret;
		size = octal(h->size, sizeof(h->size));
		off += BLOCK;
		if (size < 0 || (size_t)size > len - off) {
			util_seterr(err, errlen, "bundle member %u \"%s\": size "
				    "field wrong or past the end of the bundle",
				    n + 1, ms[n].name);
			return -EINVAL;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(ms[i].name, ms[n].name)) {
				util_seterr(err, errlen, "bundle member %u \"%s\": "
					    "twice in the bundle", n + 1, ms[n].name);
				return -EINVAL;
			}
		ms[n].data = tar + off;
		ms[n].size = size;
		ms[n].index = n + 1;
		off += (size + BLOCK - 1) / BLOCK * BLOCK;
		n++;
	}
	if (off + BLOCK > len && off != len) {
		util_seterr(err, errlen, "bundle: cut short after member %u", n);
		return -EINVAL;
	}
	for (i = 0, rules = 0; i < n; i++)
		rules += strcmp(ms[i].name, MANIFEST_NAME) &&
			 strcmp(ms[i].name, SIG_NAME);
	if (rules > RULEBUNDLE_MAX_FILES) {
		util_seterr(err, errlen, "bundle: more than %d rule files",
			    RULEBUNDLE_MAX_FILES);
		return -EFBIG;
	}
	*nms = n;
	return 0;
}

/* Verify sig over the MANIFEST with the public key in the PEM file keyfile. */
static int verify_sig(const char *keyfile, const struct member *sig,
		      const char *msg, size_t len, char *err, size_t errlen)
{
	int ret;

	if (!sig) {
		util_seterr(err, errlen, "bundle is not signed (no %s) and a "
			    "public key is set (%s): refused", SIG_NAME, keyfile);
		return -EPERM;
	}
	ret = ed25519(keyfile, false, msg, len, (unsigned char *)sig->data,
		      sig->size);
	if (ret == -ENOKEY) {
		util_seterr(err, errlen, "public key %s: not an Ed25519 public "
			    "key in PEM", keyfile);
		return -EINVAL;
	}
	if (ret == -EPERM)
		util_seterr(err, errlen, "bundle member %u %s: the signature does "
			    "not verify with public key %s: refused", sig->index,
			    SIG_NAME, keyfile);
	else if (ret)
		util_seterr(err, errlen, "public key %s: %s", keyfile,
			    strerror(-ret));
	return ret;
}

/* Check one "file HEX SIZE NAME" line (number ln) against the members. */
static int manifest_file(struct rulebundle *b, char *line, unsigned ln,
			 const char *prev, struct member *ms, unsigned nms,
			 char *err, size_t errlen)
{
	char hex[65], name[RULEBUNDLE_NAME_MAX], *end;
	const char *h = line + 5, *sz, *nm;
	struct rulebundle_file *f;
	unsigned long long size;
	unsigned i;

	sz = strchr(h, ' ');
	nm = sz ? strchr(sz + 1, ' ') : NULL;
	if (strncmp(line, "file ", 5) || !sz || sz - h != 64 ||
	    strspn(h, "0123456789abcdef") != 64 || !nm) {
		util_seterr(err, errlen, "MANIFEST line %u: not \"file <sha256-hex> "
			    "<size> <NAME.lua>\"", ln);
		return -EINVAL;
	}
	errno = 0;
	size = strtoull(sz + 1, &end, 10);
	if (end != nm || end == sz + 1 || errno || !rulebundle_name_ok(nm + 1)) {
		util_seterr(err, errlen, "MANIFEST line %u: bad size or file name", ln);
		return -EINVAL;
	}
	memcpy(hex, h, 64);
	hex[64] = '\0';
	util_strlcpy(name, nm + 1, sizeof(name));
	if (prev && strcmp(prev, name) >= 0) {
		util_seterr(err, errlen, "MANIFEST line %u: %s is not after %s "
			    "(one line per file, sorted by name)", ln, name, prev);
		return -EINVAL;
	}
	for (i = 0; i < nms && strcmp(ms[i].name, name); i++)
		;
	if (i == nms) {
		util_seterr(err, errlen, "MANIFEST line %u: %s is not in the bundle",
			    ln, name);
		return -ENOENT;
	}
	ms[i].claimed = true;
	if (ms[i].size != size) {
		util_seterr(err, errlen, "MANIFEST line %u: size of %s does not "
			    "match (%llu in MANIFEST, %zu in the bundle)", ln, name,
			    size, ms[i].size);
		return -EINVAL;
	}
	f = &b->files[b->nfiles];
	if (sha256_hex(ms[i].data, ms[i].size, f->sha256))
		return -EIO;
	if (strcmp(f->sha256, hex)) {
		util_seterr(err, errlen, "MANIFEST line %u: sha256 of %s does not match",
			    ln, name);
		return -EINVAL;
	}
	f->data = malloc(size ? size : 1);
	if (!f->data)
		return -ENOMEM;
	memcpy(f->data, ms[i].data, size);
	f->size = size;
	memcpy(f->name, name, sizeof(f->name));
	b->nfiles++;
	return 0;
}

/* Check the MANIFEST (b->manifest) line by line against the members. */
static int check_manifest(struct rulebundle *b, struct member *ms,
			  unsigned nms, char *err, size_t errlen)
{
	char *p = b->manifest, *nl;
	unsigned ln = 0;
	int ret;

	if (strlen(b->manifest) != b->manifest_len) {
		util_seterr(err, errlen, "MANIFEST: holds a NUL byte");
		return -EINVAL;
	}
	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		ln++;
		if (!nl) {
			util_seterr(err, errlen, "MANIFEST line %u: no newline at its end", ln);
			return -EINVAL;
		}
		*nl = '\0';
		if (ln == 1 && strcmp(p, RULEBUNDLE_MAGIC)) {
			util_seterr(err, errlen, "MANIFEST line 1: not \"%s\"",
				    RULEBUNDLE_MAGIC);
			ret = -EINVAL;
		} else if (ln == 2 && (strncmp(p, "version ", 8) ||
				       !version_ok(p + 8, strlen(p + 8)))) {
			util_seterr(err, errlen, "MANIFEST line 2: not \"version V\" "
				    "(V printable, no spaces, 1 to %d characters)",
				    RULEBUNDLE_VERSION_MAX);
			ret = -EINVAL;
		} else if (ln == 2) {
			util_strlcpy(b->version, p + 8, sizeof(b->version));
			ret = 0;
		} else if (ln > 2) {
			ret = manifest_file(b, p, ln,
					    b->nfiles ? b->files[b->nfiles - 1].name
						      : NULL,
					    ms, nms, err, errlen);
		} else {
			ret = 0;
		}
		*nl = '\n';
		if (ret)
			return ret;
	}
	if (ln < 3) {
		util_seterr(err, errlen, "MANIFEST line %u: ends before a \"file\" line",
			    ln + 1);
		return -EINVAL;
	}
	return 0;
}

/* Parse and check a bundle. */
int rulebundle_open(const void *tar, size_t len, const char *pubkey_pem,
		    struct rulebundle *out, char *err, size_t errlen)
{
	struct member *ms = NULL, *sig = NULL;
	unsigned nms = 0, i;
	int ret;

	memset(out, 0, sizeof(*out));
	if (len > RULEBUNDLE_MAX_BYTES) {
		util_seterr(err, errlen, "bundle: %zu bytes, at most %u", len,
			    RULEBUNDLE_MAX_BYTES);
		return -EFBIG;
	}
	ms = calloc(RULEBUNDLE_MAX_FILES + 2, sizeof(*ms));
	out->files = calloc(RULEBUNDLE_MAX_FILES, sizeof(*out->files));
	if (!ms || !out->files) {
		ret = -ENOMEM;
		util_seterr(err, errlen, "bundle: out of memory");
		goto cleanup;
	}
	ret = tar_members(tar, len, ms, &nms, err, errlen);
	if (ret)
		goto cleanup;
	if (nms == 0 || strcmp(ms[0].name, MANIFEST_NAME)) {
		util_seterr(err, errlen, "bundle member 1: not %s (a bundle starts "
			    "with its MANIFEST)", MANIFEST_NAME);
		ret = -EINVAL;
		goto cleanup;
	}
	for (i = 1; i < nms; i++)
		if (!strcmp(ms[i].name, SIG_NAME))
			sig = &ms[i];
	out->manifest = malloc(ms[0].size + 1);
	if (!out->manifest) {
		ret = -ENOMEM;
		goto cleanup;
	}
	memcpy(out->manifest, ms[0].data, ms[0].size);
	out->manifest[ms[0].size] = '\0';
	out->manifest_len = ms[0].size;
	out->is_signed = sig != NULL;
	if (pubkey_pem) {
		ret = verify_sig(pubkey_pem, sig, out->manifest,
				 out->manifest_len, err, errlen);
		if (ret)
			goto cleanup;
	}
	ms[0].claimed = true;
	if (sig)
		sig->claimed = true;
	ret = check_manifest(out, ms, nms, err, errlen);
	if (ret)
		goto cleanup;
	for (i = 0; i < nms; i++)
		if (!ms[i].claimed) {
			util_seterr(err, errlen, "bundle member %u \"%s\": not in "
				    "MANIFEST", ms[i].index, ms[i].name);
			ret = -EINVAL;
			goto cleanup;
		}
	if (sha256_hex(out->manifest, out->manifest_len, out->sha256))
		ret = -EIO;
cleanup:
	free(ms);
	return ret;
}

/* Write one file of the bundle into the folder open as dfd. */
static int write_member(int dfd, const struct rulebundle_file *f)
{
	size_t off = 0;
	ssize_t w;
	int fd, ret = 0;

	fd = openat(dfd, f->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (off < f->size) {
		w = write(fd, f->data + off, f->size - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		off += w;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

/* Write the bundle's files into the new folder dest_dir. */
int rulebundle_extract(const struct rulebundle *b, const char *dest_dir,
		       char *err, size_t errlen)
{
	unsigned i, done = 0;
	int dfd, ret = 0;

	if (mkdir(dest_dir, 0700)) {
		ret = -errno;
		util_seterr(err, errlen, "%s: %s", dest_dir, strerror(errno));
		return ret;
	}
	dfd = open(dest_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		util_seterr(err, errlen, "%s: %s", dest_dir, strerror(errno));
		rmdir(dest_dir);
		return ret;
	}
	for (i = 0; i < b->nfiles && !ret; i++, done++) {
		ret = write_member(dfd, &b->files[i]);
		if (ret)
			util_seterr(err, errlen, "%s/%s: %s", dest_dir,
				    b->files[i].name, strerror(-ret));
	}
	if (!ret && fsync(dfd))
		ret = -errno;
	if (ret) {
		for (i = 0; i < done; i++)
			unlinkat(dfd, b->files[i].name, 0);
		rmdir(dest_dir);
	}
	close(dfd);
	return ret;
}
