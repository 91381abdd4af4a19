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

static void test_laps(void)
{
	struct timespec nap = { 0, 2000000 };
	struct timing t;
	char out[256], small[12];
	double a, b;

	timing_start(&t);
	nanosleep(&nap, NULL);
	timing_lap(&t, "a");
	timing_lap(&t, "b");
	nanosleep(&nap, NULL);
	timing_lap(&t, "a");
	CHECK_INT(t.n, 2);
	timing_format(&t, out, sizeof(out));
	CHECK(sscanf(out, "a=%lfms b=%lfms total=", &a, &b) == 2);
	CHECK(a >= 4.0);
	CHECK(b < a);
	CHECK(strstr(out, " total=") != NULL);
	/* Cut between steps, never inside one. */
	timing_format(&t, small, sizeof(small));
	CHECK(!strncmp(small, "a=", 2) && !strstr(small, "b="));
}

int main(void)
{
	RUN(test_trace_id);
	RUN(test_laps);
	return check_summary();
}
