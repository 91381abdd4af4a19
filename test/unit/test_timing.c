/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "timing.h"

static void test_trace_id(void)
{
	char id[33] = "untouched";
	static const char *const bad[] = {
		NULL, "",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",	/* short flags */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",	/* trailing */
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",	/* upper case */
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",	/* version ff */
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",	/* zero trace */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",	/* zero parent */
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!timing_trace_id(bad[i], id));
	CHECK_STR(id, "untouched");
	CHECK(timing_trace_id("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", id));
	CHECK_STR(id, "4bf92f3577b34da6a3ce929d0e0e4736");
}

/* A clock that reads the times of the script, one per call, in microseconds. */
static const long *script;

static void scripted_now(struct timespec *ts)
{
	long us = *script++;

	ts->tv_sec = us / 1000000;
	ts->tv_nsec = (us % 1000000) * 1000;
}

/* A timing on the script's clock, started at its first time. */
static void start_scripted(struct timing *t, const long *times)
{
	timing_start(t);
	script = times;
	t->now = scripted_now;
	scripted_now(&t->start);
	t->last = t->start;
}

static void test_laps(void)
{
	/* start, lap a, lap b, lap a, total, total */
	static const long times[] = { 1000000, 1005000, 1005250, 1009000, 1010000, 1010000 };
	struct timing t;
	char out[256], small[12];

	start_scripted(&t, times);
	timing_lap(&t, "a");
	timing_lap(&t, "b");
	timing_lap(&t, "a");
	CHECK_INT(t.n, 2);
	timing_format(&t, out, sizeof(out));
	/* A repeated step adds up: 5 ms and 3.75 ms. */
	CHECK_STR(out, "a=8.75ms b=0.25ms total=10.00ms");
	/* Cut between steps, never inside one. */
	timing_format(&t, small, sizeof(small));
	CHECK_STR(small, "a=8.75ms ");
}

static void test_lock_waits(void)
{
	static const long times[] = { 1000000, 1002000, 1003000 };
	static const char *const names[] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	struct timing t;
	char out[256];
	int i;

	start_scripted(&t, times);
	timing_lap(&t, "claim");
	/* Waits add up per lock, in the order first noted, after the total. */
	timing_wait(&t, "vf", 0.5);
	timing_wait(&t, "pf", 1.25);
	timing_wait(&t, "vf", 0.25);
	timing_format(&t, out, sizeof(out));
	CHECK_STR(out, "claim=2.00ms total=3.00ms, lock waits vf=0.75ms pf=1.25ms");
	/* Locks beyond the table are dropped, not written past it. */
	for (i = 0; i < TIMING_MAX_WAITS; i++)
		timing_wait(&t, names[i], 1);
	CHECK_INT(t.n_waits, TIMING_MAX_WAITS);
	CHECK_STR(t.waits[TIMING_MAX_WAITS - 1].name, names[TIMING_MAX_WAITS - 3]);
}

static void test_laps_on_the_real_clock(void)
{
	struct timespec nap = { 0, 2000000 };
	struct timing t;
	char out[256];
	double a;

	/* Only what holds on any machine: nanosleep sleeps at least that long. */
	timing_start(&t);
	nanosleep(&nap, NULL);
	timing_lap(&t, "a");
	timing_format(&t, out, sizeof(out));
	CHECK(sscanf(out, "a=%lfms total=", &a) == 1);
	CHECK(a >= 2.0);
}

int main(void)
{
	RUN(test_trace_id);
	RUN(test_laps);
	RUN(test_lock_waits);
	RUN(test_laps_on_the_real_clock);
	return check_summary();
}
