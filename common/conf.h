/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conf: typed reads of a cJSON config with errors that name the field.
 *
 * `where` is the path of the object read ("" for the top level, "ipam",
 * "ipam.ranges[0][1]"); messages read "ipam.rangeStart: not an IP address
 * (got \"10.0.0.x\")". Every error is code 7 (invalid config). Getters
 * return 0 when the key is absent (leaving *out and setting *present false
 * where given), 0 when read, or -EINVAL with *err filled.
 */
#ifndef CONF_H
#define CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "cni_error.h"

/*
 * The member `key` of obj, spelled exactly so (the spec's names, matched
 * as written); NULL when absent or null. Every getter below reads through it.
 */
const cJSON *conf_member(const cJSON *obj, const char *key);
/*
 * The same, else a member spelled in another case (*as_written names it):
 * only for DEL and GC, which must release what an ADD reserved whatever
 * was edited since. ADD refuses such a key (conf_check_keys).
 */
const cJSON *conf_member_any_case(const cJSON *obj, const char *key, const char **as_written);

int conf_string(const cJSON *obj, const char *where, const char *key, const char **out,
		bool required, struct cni_error *err);
int conf_int(const cJSON *obj, const char *where, const char *key, long long min, long long max,
	     long long *out, bool *present, struct cni_error *err);
int conf_bool(const cJSON *obj, const char *where, const char *key, bool *out, bool *present,
	      struct cni_error *err);
/* "on"/"off" (and JSON true/false): *out 1 or 0, -1 stays when absent. */
int conf_onoff(const cJSON *obj, const char *where, const char *key, int *out,
	       struct cni_error *err);
/* One of choices[] (NULL-terminated, case-insensitive): *idx or -1 when absent. */
int conf_enum(const cJSON *obj, const char *where, const char *key, const char *const choices[],
	      int *idx, struct cni_error *err);
/* An object or array member, or NULL; a wrong JSON type is an error. */
int conf_object(const cJSON *obj, const char *where, const char *key, const cJSON **out,
		struct cni_error *err);
int conf_array(const cJSON *obj, const char *where, const char *key, const cJSON **out,
	       struct cni_error *err);

/*
 * A key that spells one of known[] (NULL-terminated) in another case is
 * refused: "IPAM: keys are case-sensitive; write \"ipam\"". A key not in
 * known[] but within edit distance 2 of one of them (1 for known keys
 * shorter than 5 bytes), ignoring case, is a typo: "ipam.rangeStrat:
 * unknown key; did you mean \"rangeStart\"?". Other unknown keys pass:
 * configs are shared by the plugins of a chain and Multus injects its own.
 */
int conf_check_keys(const cJSON *obj, const char *where, const char *const known[],
		    struct cni_error *err);

/*
 * Only the first check of conf_check_keys: for objects that carry other
 * plugins' keys too (runtimeConfig), where a near name is no typo.
 */
int conf_check_case(const cJSON *obj, const char *where, const char *const known[],
		    struct cni_error *err);

/* A code-7 error for checks the getters cannot make; returns -EINVAL. */
int conf_invalid(struct cni_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Levenshtein distance, case-insensitive, capped at cap+1. */
int conf_edit_distance(const char *a, const char *b, int cap);

#endif
