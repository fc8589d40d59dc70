/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The helpers tests/bench's timing programs (cmlat.c, objmem.c) share:
 * included by each, as they are built one file at a time.
 */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

/* The monotonic clock in microseconds. */
static inline double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* qsort()'s comparison of doubles, smallest first. */
static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* What the timing programs report of n call times (n > 0). */
struct call_stats {
	double first;	/* the first call's, in call order */
	double median;
	double mean;
	double max;
	double sum;
};

/* The statistics of the n call times in v; sorts v. */
static inline struct call_stats call_stats(double *v, int n)
{
	struct call_stats st = { .first = v[0] };

	for (int i = 0; i < n; i++)
		st.sum += v[i];
	qsort(v, n, sizeof(*v), cmp_double);
	st.median = v[n / 2];
	st.mean = st.sum / n;
	st.max = v[n - 1];
	return st;
}

#endif /* BENCH_TIME_H */
