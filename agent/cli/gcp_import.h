/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gcp_import.h - `jobtrace prices import-gcp`: Compute Engine machine
 * types and their prices into the price table (agent/core/prices.h), from
 * a CSV file of this documented form (jobtrace(1)):
 *
 *	machine_type,region,vcpus,memory_gib,gpus,gpu_model,on_demand_per_hour,spot_per_hour,currency
 *	e2-standard-4,us-central1,4,16,0,-,0.134012,0.040204,USD
 *
 * The first line is that header, exactly; '#' comments and blank lines
 * are skipped.  machine_type and region are lower-case words of letters,
 * digits and '-' (a region ends in a digit: us-central1); vcpus and gpus
 * whole numbers, memory_gib and the prices decimal numbers ('-': not
 * known, for spot_per_hour and gpu_model); currency 1 to 7 letters.  A
 * (region, type) given twice is an error naming both lines.  The family
 * and architecture come from the machine series (the type's first word):
 * c2, c2d, c3, c3d, c4, c4a, h3: compute-optimized; m1, m2, m3, x4:
 * memory-optimized; a2, a3, g2: accelerator-optimized; others
 * general-purpose; c4a, t2a and n4a are arm64 (Google Axion, Ampere),
 * others x86_64.
 */
#ifndef JOBTRACE_GCP_IMPORT_H
#define JOBTRACE_GCP_IMPORT_H

#include <stddef.h>

#include "prices.h"

#define GCP_IMPORT_HEADER "machine_type,region,vcpus,memory_gib,gpus," \
	"gpu_model,on_demand_per_hour,spot_per_hour,currency"

/*
 * Add or replace in set a line per row of the CSV text buf[0..len) (name
 * for messages); *rows gets the rows read.  0, -EINVAL with err naming
 * "NAME:LINE: column: what is wrong", -ENOMEM.
 */
int gcp_import_buf(struct prices_set *set, const char *name, const char *buf,
		   size_t len, size_t *rows, char *err, size_t errlen);
/* The same from the file at path: also -errno. */
int gcp_import_file(struct prices_set *set, const char *path, size_t *rows,
		    char *err, size_t errlen);

#endif
