/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timing: where an ADD or a DEL spent its time, step by step, on
 * CLOCK_MONOTONIC, for the one log line that ends the command; and the
 * caller's trace id from OpenTelemetry's TRACEPARENT, which libcni passes
 * to plugins, so that line can be found from the runtime's trace.
 */
#ifndef TIMING_H
#define TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define TIMING_MAX_STEPS	24
#define TIMING_MAX_WAITS	4

struct timing {
	/* NULL: CLOCK_MONOTONIC; a test's clock, set after timing_start (with start and last). */
	void (*now)(struct timespec *ts);
	struct timespec start, last;
	int n;
	struct {
		const char *name;	/* static storage: the caller's step names */
		double ms;
	} steps[TIMING_MAX_STEPS];
	int n_waits;
	struct {
		const char *name;	/* static storage, as a step's */
		double ms;
	} waits[TIMING_MAX_WAITS];
};

void timing_start(struct timing *t);
/*
 * The time since the last lap (or the start) goes to step `name`, added
 * up when it repeats. t NULL: nothing (a release that logs no steps).
 */
void timing_lap(struct timing *t, const char *name);
/*
 * Time spent waiting for lock `name` (inside the steps, not beside them),
 * added up per name; a name beyond TIMING_MAX_WAITS is dropped. t NULL:
 * nothing.
 */
void timing_wait(struct timing *t, const char *name, double ms);
/*
 * "claim=0.12ms record=0.40ms ... total=3.10ms", then the lock waits, if
 * any were noted: ", lock waits vf=0.00ms pf=1.20ms"; what does not fit
 * the buffer is cut.
 */
void timing_format(const struct timing *t, char *out, size_t len);

/*
 * The trace id of a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>", lower
 * case; version ff and all-zero ids are invalid): false, id untouched, for
 * anything else, NULL included.
 */
bool timing_trace_id(const char *traceparent, char id[33]);

#endif
