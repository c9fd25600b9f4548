// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spot_import.c - spot prices from `aws ec2 describe-spot-price-history`
 * into the price table (see spot_import.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json_read.h"
#include "spot_import.h"
#include "util.h"

/* A spot file larger than this is not one a person downloaded. */
#define SPOT_FILE_MAX ((size_t)256 << 20)
/* Members of one history entry kept, as copied out. */
enum { M_ZONE, M_TYPE, M_PRODUCT, M_PRICE, M_TIME, NMEMB };

static const char *const memb[NMEMB] = {
	"AvailabilityZone", "InstanceType", "ProductDescription", "SpotPrice",
	"Timestamp",
};

/* One history entry, its strings copied. */
struct entry {
	char v[NMEMB][64];
	bool have[NMEMB];
};

/* Read an ISO 8601 time as AWS prints it into *t (epoch seconds). */
static int iso_time(const char *s, int64_t *t)
{
	struct tm tm = { 0 };
	int n = 0, off = 0, oh, om;
	char sign;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19)
		return -EINVAL;
	s += n;
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			;
	if (!strcmp(s, "Z")) {
		off = 0;
	} else if (sscanf(s, "%c%2d:%2d%n", &sign, &oh, &om, &n) == 3 &&
		   !s[n] && (sign == '+' || sign == '-') && oh < 24 && om < 60) {
		off = (oh * 60 + om) * 60 * (sign == '+' ? 1 : -1);
	} else {
		return -EINVAL;
	}
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*t = (int64_t)timegm(&tm) - off;
	return 0;
}

/* Whether s is a name of AWS's form: a-z, 0-9 and those in extra. */
static bool name_ok(const char *s, const char *extra)
{
	if (!*s || strlen(s) > 31)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return false;
	return true;
}

/* Read one entry of SpotPriceHistory (its index i) into e. */
static int read_entry(struct jr *r, size_t i, struct entry *e,
		      const char *name, char *err, size_t errlen)
{
	struct jr_str key, v;
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = jr_obj_open(r))) {
		util_seterr(err, errlen, "%s: $.SpotPriceHistory[%zu]: %s", name,
			    i, rc == -EDOM ? "want an object" : r->err);
		return -EINVAL;
	}
	while ((rc = jr_next_member(r, &key)) > 0) {
		size_t k;

		for (k = 0; k < NMEMB; k++)
			if (jr_str_eq(&key, memb[k], strlen(memb[k])))
				break;
		if (k == NMEMB) {
			if ((rc = jr_skip(r)))
				break;
			continue;
		}
		rc = jr_str(r, &v);
		if (rc == -EDOM || (!rc && (v.esc || v.len >= 64))) {
			util_seterr(err, errlen, "%s: $.SpotPriceHistory[%zu].%s: want"
				    " a string of at most 63 plain bytes", name,
				    i, memb[k]);
			return -EINVAL;
		}
		if (rc)
			break;
		memcpy(e->v[k], v.s, v.len);
		e->v[k][v.len] = '\0';
		e->have[k] = true;
	}
	if (rc < 0) {
		util_seterr(err, errlen, "%s: byte %zu: not valid JSON: %s (in"
			    " $.SpotPriceHistory[%zu])", name, r->err_off,
			    r->err ? r->err : "?", i);
		return -EINVAL;
	}
	for (size_t k = 0; k < NMEMB; k++)
		if (!e->have[k]) {
			util_seterr(err, errlen, "%s: $.SpotPriceHistory[%zu]: no"
				    " \"%s\"", name, i, memb[k]);
			return -EINVAL;
		}
	return 0;
}

/* Keep entry i if it is the latest Linux price of its zone and type. */
static int take_entry(struct spot_set *s, const struct entry *e, size_t i,
		      const char *name, char *err, size_t errlen)
{
	struct spot_price *p = NULL;
	const char *bad = NULL;
	int64_t when;
	double price;

	if (!name_ok(e->v[M_ZONE], "-"))
		bad = "AvailabilityZone: not a zone of AWS's form (us-east-1a)";
	else if (!prices_is_zone(e->v[M_ZONE]))
		bad = "AvailabilityZone: a zone's name ends in a letter (us-east-1a)";
	else if (!name_ok(e->v[M_TYPE], ".-"))
		bad = "InstanceType: not a type of AWS's form (m5.large)";
	else if (!prices_decimal_ok(e->v[M_PRICE]))
		bad = "SpotPrice: not a price (digits, at most one '.')";
	else if (iso_time(e->v[M_TIME], &when))
		bad = "Timestamp: not a time (2026-11-20T08:15:32+00:00)";
	if (bad) {
		util_seterr(err, errlen, "%s: $.SpotPriceHistory[%zu].%s", name,
			    i, bad);
		return -EINVAL;
	}
	price = strtod(e->v[M_PRICE], NULL);
	if (strncmp(e->v[M_PRODUCT], "Linux/UNIX", 10)) {
		s->other_os++;
		return 0;
	}
	for (size_t j = 0; j < s->n && !p; j++)
		if (!strcmp(s->p[j].zone, e->v[M_ZONE]) &&
		    !strcmp(s->p[j].type, e->v[M_TYPE]))
			p = &s->p[j];
	if (p && p->when == when && p->price != price) {
		util_seterr(err, errlen, "%s: $.SpotPriceHistory[%zu]: %s in %s"
			    " has two prices at %s: %g and %g ([%zu])", name,
			    i, e->v[M_TYPE], e->v[M_ZONE], e->v[M_TIME],
			    p->price, price, p->elem);
		return -EINVAL;
	}
	if (p && p->when >= when)
		return 0;
	if (!p) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			struct spot_price *q = realloc(s->p, cap * sizeof(*q));

			if (!q) {
				util_seterr(err, errlen, "%s: out of memory", name);
				return -ENOMEM;
			}
			s->p = q;
			s->cap = cap;
		}
		p = &s->p[s->n++];
		util_strlcpy(p->zone, e->v[M_ZONE], sizeof(p->zone));
		util_strlcpy(p->type, e->v[M_TYPE], sizeof(p->type));
	}
	p->price = price;
	p->when = when;
	p->elem = i;
	return 0;
}

/* Walk the text: {"SpotPriceHistory": [entries], ...}. */
static int walk(struct spot_set *s, const char *name, const char *buf,
		size_t len, char *err, size_t errlen)
{
	bool found = false;
	struct jr_str key;
	struct entry e;
	struct jr r;
	int rc;

	jr_init(&r, buf, len);
	if ((rc = jr_obj_open(&r)))
		goto bad;
	while ((rc = jr_next_member(&r, &key)) > 0) {
		if (!jr_str_eq(&key, "SpotPriceHistory", 16) || found) {
			if ((rc = jr_skip(&r)))
				goto bad;
			continue;
		}
		found = true;
		if ((rc = jr_arr_open(&r))) {
			util_seterr(err, errlen, "%s: $.SpotPriceHistory: %s", name,
				    rc == -EDOM ? "want an array" : r.err);
			return -EINVAL;
		}
		while ((rc = jr_next_elem(&r)) > 0) {
			if ((rc = read_entry(&r, s->read, &e, name, err, errlen)) ||
			    (rc = take_entry(s, &e, s->read, name, err, errlen)))
				return rc;
			s->read++;
		}
		if (rc < 0)
			goto bad;
	}
	if (rc < 0 || (rc = jr_end(&r)))
		goto bad;
	if (!found) {
		util_seterr(err, errlen, "%s: $: no \"SpotPriceHistory\" member:"
			    " not what `aws ec2 describe-spot-price-history`"
			    " prints", name);
		return -EINVAL;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].when > s->latest)
			s->latest = s->p[i].when;
	return 0;
bad:
	util_seterr(err, errlen, "%s: byte %zu: not valid JSON: %s", name,
		    r.err_off, r.err ? r.err : "want an object");
	return -EINVAL;
}

/* Read the spot file text buf[0..len) into s. */
int spot_import_buf(struct spot_set *s, const char *name, const char *buf,
		    size_t len, char *err, size_t errlen)
{
	int rc;

	spot_import_free(s);
	util_seterr(err, errlen, "%s", "");
	rc = walk(s, name, buf, len, err, errlen);
	if (rc) {
		spot_import_free(s);
		if (err && errlen)
			util_printable(err);
	}
	return rc;
}

/* Read the regular file at path (at most SPOT_FILE_MAX bytes) into *buf
 * (malloc'd, NUL-terminated), its size in *len (spot_import.h). */
int spot_import_read(const char *path, char **buf, size_t *len, char *err,
		     size_t errlen)
{
	struct stat st;
	ssize_t got;
	int fd, rc = 0;

	*buf = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		util_seterr(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > SPOT_FILE_MAX) {
		util_seterr(err, errlen, "%s: %s", path, S_ISREG(st.st_mode) ?
			    "larger than 256 MiB" : "not a regular file");
		rc = -EINVAL;
		goto out;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		util_seterr(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	got = read(fd, *buf, (size_t)st.st_size);
	if (got != st.st_size) {
		rc = got < 0 ? -errno : -EIO;
		util_seterr(err, errlen, "%s: %s", path, strerror(-rc));
		goto out;
	}
	(*buf)[got] = '\0';
	*len = (size_t)got;
out:
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Read the spot file at path into s. */
int spot_import_file(struct spot_set *s, const char *path, char *err,
		     size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = spot_import_read(path, &buf, &len, err, errlen);

	if (!rc)
		rc = spot_import_buf(s, path, buf, len, err, errlen);
	free(buf);
	return rc;
}

/* The region of zone in set (the longest whose name it starts with). */
static const char *zone_region(const struct prices_set *set, const char *zone)
{
	const char *best = NULL;
	size_t bl = 0;

	for (size_t i = 0; i < set->n; i++) {
		const char *r = set->e[i].region;
		size_t n = strlen(r);

		if (n > bl && n < strlen(zone) && !strncmp(zone, r, n) &&
		    !prices_is_zone(r) && (zone[n] == '-' ||
					   isalpha((unsigned char)zone[n]))) {
			best = r;
			bl = n;
		}
	}
	return best;
}

/* Add a line of zone and type (no price yet) to set. */
static struct prices_entry *zone_line(struct prices_set *set,
				      const struct spot_price *p)
{
	struct prices_entry *e = prices_add(set);

	if (!e)
		return NULL;
	util_strlcpy(e->region, p->zone, sizeof(e->region));
	util_strlcpy(e->type, p->type, sizeof(e->type));
	util_strlcpy(e->currency, "USD", sizeof(e->currency));
	e->on_demand = -1;
	e->vcpus = e->gpus = -1;
	e->memory_gib = -1;
	return e;
}

/* Put s's prices into the table set (see spot_import.h). */
int spot_import_merge(struct spot_set *s, struct prices_set *set)
{
	s->merged = s->not_in_table = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct spot_price *p = &s->p[i];
		const char *region = zone_region(set, p->zone);
		struct prices_entry *e;

		if (!region || !prices_find(set, region, p->type)) {
			s->not_in_table++;
			continue;
		}
		e = prices_find(set, p->zone, p->type);
		if (!e && !(e = zone_line(set, p)))
			return -ENOMEM;
		e->spot = p->price;
		s->merged++;
	}
	/* each region line: the lowest of its zones' */
	for (size_t i = 0; i < set->n; i++) {
		struct prices_entry *r = &set->e[i];
		const char *zr;
		double low = -1;

		if (prices_is_zone(r->region))
			continue;
		for (size_t j = 0; j < set->n; j++) {
			const struct prices_entry *z = &set->e[j];

			if (!prices_is_zone(z->region) || z->spot < 0 ||
			    strcmp(z->type, r->type))
				continue;
			zr = zone_region(set, z->region);
			if (!zr || strcmp(zr, r->region))
				continue;
			if (low < 0 || z->spot < low)
				low = z->spot;
		}
		if (low >= 0)
			r->spot = low;
	}
	return 0;
}

/* Whether a comment of the table is one spot_import_write() rewrites. */
static bool rewritten(const char *line)
{
	static const char *const own[] = { "# jobtrace prices v", "# region\t",
		"# spot", "#\tvcpus" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strncmp(line, own[i], strlen(own[i])))
			return true;
	return false;
}

/* Write the merged table (see spot_import.h). */
int spot_import_write(const void *arg, FILE *out)
{
	const struct spot_out *o = arg;
	char *line = NULL, when[32] = "-";
	time_t latest = o->spot ? (time_t)o->spot->latest : 0;
	size_t cap = 0;
	struct tm tm;
	FILE *f;

	fputs(PRICES_HEADER "\n", out);
	f = fopen(o->table, "re");
	while (f && getline(&line, &cap, f) >= 0)
		if (line[0] == '#' && !rewritten(line))
			fputs(line, out);
	if (f)
		fclose(f);
	free(line);
	if (latest && gmtime_r(&latest, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (o->note)
		fprintf(out, "# %s\n", o->note);
	else
		fprintf(out, "# spot prices from %s (latest %s): Linux/UNIX,"
			" the latest of each zone; a region's is the lowest of"
			" its zones'\n", o->spot_file, when);
	fputs("# region\tinstance_type\ton_demand_per_hour\tspot_per_hour"
	      "\tcurrency\tvcpus\tmemory_gib\tgpus\tgpu_model\tfamily\tarch\n",
	      out);
	for (size_t i = 0; i < o->set->n; i++)
		prices_write_entry(&o->set->e[i], out);
	return ferror(out) ? -EIO : 0;
}

/* Release s's prices and empty it. */
void spot_import_free(struct spot_set *s)
{
	free(s->p);
	memset(s, 0, sizeof(*s));
}
