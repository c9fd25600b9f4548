/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * imds.h - the cloud's instance metadata service (EC2 IMDSv2): which
 * instance this node is, and a spot instance's interruption notice.
 *
 * One thread does all the talking (http.c, libcurl), so no request ever
 * waits on the event loop.  It reads the identity at start within a
 * budget (IMDS_START_BUDGET_MS), then polls spot/instance-action every
 * spot_poll_interval.  It tells the loop through an eventfd that the
 * identity is read (the agent's start record waits for it, the agent
 * does not) and that a new notice waits.
 *
 * Threading contract: imds_start(), imds_identity(), imds_take_notice(),
 * imds_status() and imds_stop() are the event loop's; the thread touches
 * only its own state and, under the lock, the published results.
 *
 * What is kept of the answers is the documented fields and nothing else
 * (no account id, image, address): an answer that is not what AWS
 * documents leaves its field null and `jobtrace status` names the reason.
 */
#ifndef JOBTRACE_IMDS_H
#define JOBTRACE_IMDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "config.h"
#include "record.h"

#define IMDS_DEFAULT_URL CONFIG_IMDS_URL
/* where this machine's own facts are (cloud.dmi_dir; the hypervisor's) */
#define IMDS_DEFAULT_DMI_DIR CONFIG_DMI_DIR
#define IMDS_HYPERVISOR_UUID "/sys/hypervisor/uuid"
/* the identity read at start: all of it, and each request */
#define IMDS_START_BUDGET_MS 1000
#define IMDS_START_REQUEST_MS 300
/* a request of the poll (off the event loop) */
#define IMDS_POLL_REQUEST_MS 2000
/* no IMDS at start: try again this often (one connect attempt) */
#define IMDS_RETRY_MS 60000
/* the token's life, asked for in X-aws-ec2-metadata-token-ttl-seconds */
#define IMDS_TOKEN_TTL_S 21600

struct imds;

struct imds_opts {
	const char *url;		/* http://ADDRESS[:PORT] */
	bool gcp;			/* Compute Engine's metadata server,
					 * not EC2's IMDS */
	unsigned poll_ms;		/* spot/instance-action every so often */
};

/* A spot interruption notice, as spot/instance-action gives it. */
struct imds_notice {
	char action[16];		/* terminate, stop or hibernate */
	uint64_t time_ns;		/* when EC2 acts (CLOCK_REALTIME) */
	uint64_t seen_ns;		/* when it was read (CLOCK_REALTIME) */
};

/*
 * Start the thread for o (copied).  0, or -errno (the agent runs on
 * without cloud facts then).
 */
int imds_start(const struct imds_opts *o, struct imds **out);
/* Stop the thread (within one request's time) and free; accepts NULL. */
void imds_stop(struct imds *m);
/* Readable when the identity is read or a notice waits for
 * imds_take_notice(); -1 for NULL. */
int imds_fd(const struct imds *m);
/* The cloud facts known now: all empty for NULL (cloud.imds = off), no
 * IMDS, or before the read at start is over. */
void imds_identity(struct imds *m, struct jt_cloud *out);
/* Is the read at start over (the eventfd was written then)?  True for NULL. */
bool imds_identity_done(struct imds *m);
/* The next new notice into *n (the eventfd is drained); false if none. */
bool imds_take_notice(struct imds *m, struct imds_notice *n);
/* Is the service there but answering what AWS does not document?  The
 * reason into why (len bytes); false for NULL. */
bool imds_failing(struct imds *m, char *why, size_t len);
/* Status lines "cloud.*: ..." (m NULL: cloud.imds = off). */
void imds_status(struct imds *m, FILE *out);

/*
 * Is this machine an EC2 instance by its own facts, as cloud-init's
 * ds-identify decides before it asks the metadata service: DMI's
 * sys_vendor "Amazon EC2" (Nitro), a board asset tag that is an instance
 * id ("i-" and hex), or a product UUID or Xen hypervisor UUID (the file
 * hyp_uuid) that begins with "ec2" in either byte order.  Reads
 * dmi_dir/sys_vendor, board_asset_tag, product_uuid and hyp_uuid only.
 * true with the evidence in why; false with what was seen (or that there
 * are no such facts) in why.
 */
bool imds_local_ec2(const char *dmi_dir, const char *hyp_uuid, char *why,
		    size_t whylen);

/*
 * Is this machine a Compute Engine VM by its own facts, as cloud-init's
 * ds-identify decides: DMI's product_name "Google Compute Engine" or
 * sys_vendor "Google".  Reads dmi_dir/product_name and sys_vendor only;
 * the evidence, or what was seen, in why.
 */
bool imds_local_gcp(const char *dmi_dir, char *why, size_t whylen);

/* ---- the parsers (unit-tested; no I/O) ------------------------------------ */

/* The attributes read from Compute Engine's metadata server, under
 * /computeMetadata/v1/, each asked with "Metadata-Flavor: Google". */
enum imds_gcp_attr {
	IMDS_GCP_PROJECT,	/* project/project-id */
	IMDS_GCP_ZONE,		/* instance/zone */
	IMDS_GCP_MACHINE_TYPE,	/* instance/machine-type */
	IMDS_GCP_ID,		/* instance/id */
	IMDS_GCP_PREEMPTIBLE,	/* instance/scheduling/preemptible */
	IMDS_GCP_MODEL,		/* instance/scheduling/provisioning-model */
	IMDS_GCP__N
};

/* What of a GCE answer has no place in struct jt_cloud. */
struct imds_gcp {
	char project[64];	/* shown by status, not in records */
	bool preemptible;
	char model[16];		/* STANDARD, SPOT; "" not said */
};

/*
 * Read attribute a's answer s[0..len) (a trailing newline allowed) into c
 * or g: the zone "projects/NUM/zones/us-central1-a" gives zone and region
 * (the zone less its "-a"), the machine type
 * "projects/NUM/machineTypes/e2-standard-4" the instance type, the id a
 * decimal number, preemptible TRUE or FALSE, the provisioning model an
 * upper-case word.  0, or -EINVAL with the reason in why (the field is
 * left as it was).
 */
int imds_parse_gcp(enum imds_gcp_attr a, const char *s, size_t len,
		   struct jt_cloud *c, struct imds_gcp *g, char *why,
		   size_t whylen);
/* c's lifecycle: "spot" when the model is SPOT or preemptible is TRUE,
 * else "on-demand". */
void imds_gcp_lifecycle(const struct imds_gcp *g, struct jt_cloud *c);


/*
 * Read the instance identity document doc[0..len) into c: instanceId,
 * instanceType, region and availabilityZone, each only when it is a string
 * of the form AWS gives (else left empty); every other member is skipped.
 * 0 when all four were found good; -EINVAL with the first reason in why
 * (the good ones are kept all the same).
 */
int imds_parse_identity(const char *doc, size_t len, struct jt_cloud *c,
			char *why, size_t whylen);
/* Read meta-data/instance-life-cycle ("spot", "on-demand", ...) into c. */
int imds_parse_lifecycle(const char *s, size_t len, struct jt_cloud *c,
			 char *why, size_t whylen);
/*
 * Read spot/instance-action ({"action": ..., "time": RFC 3339}) into n
 * (seen_ns untouched).  0, or -EINVAL with the reason in why.
 */
int imds_parse_action(const char *doc, size_t len, struct imds_notice *n,
		      char *why, size_t whylen);

#endif
