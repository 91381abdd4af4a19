/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include "timing.h"

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6;
}

static void now_of(const struct timing *t, struct timespec *ts)
{
	if (t->now)
		t->now(ts);
	else
		clock_gettime(CLOCK_MONOTONIC, ts);
}

void timing_start(struct timing *t)
{
	memset(t, 0, sizeof(*t));
	clock_gettime(CLOCK_MONOTONIC, &t->start);
	t->last = t->start;
}

void timing_lap(struct timing *t, const char *name)
{
	struct timespec now;
	int i;

	if (!t)
		return;
	now_of(t, &now);
	for (i = 0; i < t->n && strcmp(t->steps[i].name, name); i++)
		;
	if (i == t->n) {
		if (t->n == TIMING_MAX_STEPS)
			return;
		t->steps[t->n].name = name;
		t->steps[t->n++].ms = 0;
	}
	t->steps[i].ms += ms_between(&t->last, &now);
	t->last = now;
}

void timing_format(const struct timing *t, char *out, size_t len)
{
	struct timespec now;
	size_t off = 0;
	int i, n;

	if (!len)
		return;
	out[0] = '\0';
	for (i = 0; i < t->n && off < len; i++) {
		n = snprintf(out + off, len - off, "%s=%.2fms ", t->steps[i].name, t->steps[i].ms);
		if (n < 0 || (size_t)n >= len - off) {
			out[off] = '\0';
			return;
		}
		off += (size_t)n;
	}
	now_of(t, &now);
	n = snprintf(out + off, len - off, "total=%.2fms", ms_between(&t->start, &now));
	for (i = 0; i < t->n_waits && n >= 0 && (size_t)n < len - off; i++) {
		off += (size_t)n;
		n = snprintf(out + off, len - off, "%s%s=%.2fms", i ? " " : ", lock waits ",
			     t->waits[i].name, t->waits[i].ms);
	}
}

void timing_wait(struct timing *t, const char *name, double ms)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->n_waits; i++)
		if (!strcmp(t->waits[i].name, name))
			break;
	if (i == TIMING_MAX_WAITS)
		return;
	if (i == t->n_waits) {
		t->waits[i].name = name;
		t->waits[i].ms = 0;
		t->n_waits++;
	}
	t->waits[i].ms += ms;
}

static bool lower_hex(const char *s, size_t n, bool *zero)
{
	size_t i;

	*zero = true;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
		if (s[i] != '0')
			*zero = false;
	}
	return true;
}

bool timing_trace_id(const char *tp, char id[33])
{
	bool zero;

	/* version-traceid-parentid-flags: 2+1+32+1+16+1+2 characters. */
	if (!tp || strlen(tp) != 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-')
		return false;
	if (!lower_hex(tp, 2, &zero) || !strncmp(tp, "ff", 2))
		return false;
	if (!lower_hex(tp + 3, 32, &zero) || zero)
		return false;
	if (!lower_hex(tp + 36, 16, &zero) || zero)
		return false;
	if (!lower_hex(tp + 53, 2, &zero))
		return false;
	memcpy(id, tp + 3, 32);
	id[32] = '\0';
	return true;
}
