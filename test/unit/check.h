/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check: the smallest test harness that tells what failed.
 *
 *	static void test_parse(void) { CHECK(x == 1); CHECK_STR(s, "a"); }
 *	int main(void) { RUN(test_parse); return check_summary(); }
 *
 * Prints "ok - name" / "not ok - name" per test, the failing expression
 * with file:line, and a closing "N passed, N failed" line.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failed_now;
static int check_passed, check_failed;

#define CHECK(cond) do {							\
	if (!(cond)) {								\
		fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",			\
			__FILE__, __LINE__, #cond);				\
		check_failed_now = 1;						\
	}									\
} while (0)

#define CHECK_INT(a, b) do {							\
	long long check_a_ = (long long)(a), check_b_ = (long long)(b);	\
	if (check_a_ != check_b_) {						\
		fprintf(stderr, "  %s:%d: %s == %lld, want %lld\n",		\
			__FILE__, __LINE__, #a, check_a_, check_b_);		\
		check_failed_now = 1;						\
	}									\
} while (0)

#define CHECK_STR(a, b) do {							\
	const char *check_a_ = (a), *check_b_ = (b);				\
	if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {	\
		fprintf(stderr, "  %s:%d: %s == \"%s\", want \"%s\"\n",		\
			__FILE__, __LINE__, #a, check_a_ ? check_a_ : "(null)",	\
			check_b_ ? check_b_ : "(null)");			\
		check_failed_now = 1;						\
	}									\
} while (0)

/* Substring match, for error messages. */
#define CHECK_HAS(hay, needle) do {						\
	const char *check_h_ = (hay), *check_n_ = (needle);			\
	if (!check_h_ || !strstr(check_h_, check_n_)) {				\
		fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n",	\
			__FILE__, __LINE__, check_h_ ? check_h_ : "(null)",	\
			check_n_);						\
		check_failed_now = 1;						\
	}									\
} while (0)

#define RUN(fn) do {								\
	check_failed_now = 0;							\
	fn();									\
	printf("%s - %s\n", check_failed_now ? "not ok" : "ok", #fn);		\
	if (check_failed_now)							\
		check_failed++;							\
	else									\
		check_passed++;							\
} while (0)

static inline int check_summary(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
