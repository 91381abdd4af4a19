/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conf.h"

/* "where.key", or just "key" at the top level. */
#define FIELD_FMT "%s%s%s"
#define FIELD(where, key) (where) && *(where) ? (where) : "", (where) && *(where) ? "." : "", (key)

int conf_invalid(struct cni_error *err, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cni_errorf(err, CNI_ERR_INVALID_CONFIG, "%s", msg);
	return -EINVAL;
}

/*
 * The spec's names, exactly: Go's encoding/json would also take "IPAM" for
 * "ipam", but every reader of a config must find the same member, and DEL
 * and GC (ours and the IPAM's) look for the spec's spelling. A differently
 * cased known key is refused by conf_check_keys instead.
 */
const cJSON *conf_member(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return v && !cJSON_IsNull(v) ? v : NULL;
}

const cJSON *conf_member_any_case(const cJSON *obj, const char *key, const char **as_written)
{
	const cJSON *e;

	*as_written = key;
	if (!cJSON_IsObject(obj))
		return NULL;
	cJSON_ArrayForEach(e, obj) {
		if (e->string && !strcmp(e->string, key))
			return cJSON_IsNull(e) ? NULL : e;
	}
	cJSON_ArrayForEach(e, obj) {
		if (e->string && !strcasecmp(e->string, key) && !cJSON_IsNull(e)) {
			*as_written = e->string;
			return e;
		}
	}
	return NULL;
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "null";
}

int conf_string(const cJSON *obj, const char *where, const char *key, const char **out,
		bool required, struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);

	if (!v) {
		if (required)
			return conf_invalid(err, FIELD_FMT ": is required", FIELD(where, key));
		return 0;
	}
	if (!cJSON_IsString(v))
		return conf_invalid(err, FIELD_FMT ": must be a string (got %s)", FIELD(where, key),
				type_name(v));
	*out = v->valuestring;
	return 0;
}

int conf_int(const cJSON *obj, const char *where, const char *key, long long min, long long max,
	     long long *out, bool *present, struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);
	double d;

	if (present)
		*present = false;
	if (!v)
		return 0;
	if (cJSON_IsString(v))
		return conf_invalid(err, FIELD_FMT ": must be a number, not a string (got \"%s\")",
				FIELD(where, key), v->valuestring);
	if (!cJSON_IsNumber(v))
		return conf_invalid(err, FIELD_FMT ": must be an integer (got %s)", FIELD(where, key),
				type_name(v));
	d = v->valuedouble;
	/*
	 * Beyond 2^53 a double no longer holds every integer: nothing sane
	 * lives there. The range first, written so a NaN fails it too: a
	 * conversion of a double outside long long's range is undefined.
	 */
	if (!(d <= 9007199254740992.0 && d >= -9007199254740992.0) || d != (double)(long long)d)
		return conf_invalid(err, FIELD_FMT ": must be an integer (got %g)", FIELD(where, key), d);
	if ((long long)d < min || (long long)d > max)
		return conf_invalid(err, FIELD_FMT ": %lld is out of range (%lld-%lld)",
				FIELD(where, key), (long long)d, min, max);
	*out = (long long)d;
	if (present)
		*present = true;
	return 0;
}

int conf_bool(const cJSON *obj, const char *where, const char *key, bool *out, bool *present,
	      struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);

	if (present)
		*present = false;
	if (!v)
		return 0;
	if (!cJSON_IsBool(v))
		return conf_invalid(err, FIELD_FMT ": must be true or false (got %s)", FIELD(where, key),
				type_name(v));
	*out = cJSON_IsTrue(v);
	if (present)
		*present = true;
	return 0;
}

int conf_onoff(const cJSON *obj, const char *where, const char *key, int *out,
	       struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);

	if (!v)
		return 0;
	if (cJSON_IsBool(v)) {
		*out = cJSON_IsTrue(v);
		return 0;
	}
	if (cJSON_IsString(v) && strcasecmp(v->valuestring, "on") == 0) {
		*out = 1;
		return 0;
	}
	if (cJSON_IsString(v) && strcasecmp(v->valuestring, "off") == 0) {
		*out = 0;
		return 0;
	}
	if (cJSON_IsString(v))
		return conf_invalid(err, FIELD_FMT ": must be \"on\" or \"off\" (got \"%s\")",
				FIELD(where, key), v->valuestring);
	return conf_invalid(err, FIELD_FMT ": must be \"on\" or \"off\" (got %s)", FIELD(where, key),
			type_name(v));
}

int conf_enum(const cJSON *obj, const char *where, const char *key, const char *const choices[],
	      int *idx, struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);
	char list[256];
	size_t n = 0;

	*idx = -1;
	if (!v)
		return 0;
	for (int i = 0; cJSON_IsString(v) && choices[i]; i++) {
		if (strcasecmp(v->valuestring, choices[i]) == 0) {
			*idx = i;
			return 0;
		}
	}
	list[0] = '\0';
	for (int i = 0; choices[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i ? ", " : "",
				      choices[i]);
	if (cJSON_IsString(v))
		return conf_invalid(err, FIELD_FMT ": must be one of %s (got \"%s\")", FIELD(where, key),
				list, v->valuestring);
	return conf_invalid(err, FIELD_FMT ": must be one of %s (got %s)", FIELD(where, key), list,
			type_name(v));
}

int conf_object(const cJSON *obj, const char *where, const char *key, const cJSON **out,
		struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	if (!cJSON_IsObject(v))
		return conf_invalid(err, FIELD_FMT ": must be an object (got %s)", FIELD(where, key),
				type_name(v));
	*out = v;
	return 0;
}

int conf_array(const cJSON *obj, const char *where, const char *key, const cJSON **out,
	       struct cni_error *err)
{
	const cJSON *v = conf_member(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	if (!cJSON_IsArray(v))
		return conf_invalid(err, FIELD_FMT ": must be an array (got %s)", FIELD(where, key),
				type_name(v));
	*out = v;
	return 0;
}

#define MAX_KEY 64

int conf_edit_distance(const char *a, const char *b, int cap)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[MAX_KEY + 1];

	if (cap < 0)
		cap = 0;
	if ((la > lb ? la - lb : lb - la) > (size_t)cap)
		return cap + 1;
	if (la > MAX_KEY || lb > MAX_KEY)
		return strcasecmp(a, b) == 0 ? 0 : cap + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0], best;

		row[0] = (int)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int sub = diag + (tolower((unsigned char)a[i - 1]) !=
					  tolower((unsigned char)b[j - 1]));
			int v = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;

			row[j] = sub < v ? sub : v;
			diag = up;
			if (row[j] < best)
				best = row[j];
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

/* known's entry that key spells in another case, or NULL. */
static const char *case_variant(const char *key, const char *const known[])
{
	for (int i = 0; known[i]; i++)
		if (!strcmp(key, known[i]))
			return NULL;
	for (int i = 0; known[i]; i++)
		if (!strcasecmp(key, known[i]))
			return known[i];
	return NULL;
}

static int case_refused(struct cni_error *err, const char *where, const char *key,
			const char *known)
{
	return conf_invalid(err, FIELD_FMT ": keys are case-sensitive; write \"%s\"",
			    FIELD(where, key), known);
}

int conf_check_case(const cJSON *obj, const char *where, const char *const known[],
		    struct cni_error *err)
{
	const cJSON *e;
	const char *k;

	if (!cJSON_IsObject(obj))
		return 0;
	cJSON_ArrayForEach(e, obj)
		if (e->string && (k = case_variant(e->string, known)))
			return case_refused(err, where, e->string, k);
	return 0;
}

int conf_check_keys(const cJSON *obj, const char *where, const char *const known[],
		    struct cni_error *err)
{
	const cJSON *e;

	if (conf_check_case(obj, where, known, err))
		return -EINVAL;
	if (!cJSON_IsObject(obj))
		return 0;
	cJSON_ArrayForEach(e, obj) {
		const char *best = NULL;
		int best_d = 3, i;

		/* Every exec checks every key: the distances only for one that is not known. */
		for (i = 0; known[i] && strcmp(e->string, known[i]); i++)
			;
		if (known[i])
			continue;
		for (i = 0; known[i]; i++) {
			/* Short keys are close to many words: one edit is a typo there, two is not. */
			size_t len = strlen(known[i]);
			int cap = len < 5 ? 1 : 2;
			int d = conf_edit_distance(e->string, known[i], cap);

			if (d <= cap && d < best_d) {
				best = known[i];
				best_d = d;
			}
		}
		if (best)
			return conf_invalid(err, FIELD_FMT ": unknown key; did you mean \"%s\"?",
					FIELD(where, e->string), best);
	}
	return 0;
}
