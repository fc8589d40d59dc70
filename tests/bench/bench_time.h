/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The helpers tests/bench's timing programs (cmlat.c, objmem.c) share:
 * included by each, as they are built one file at a time.
 */
#ifndef BENCH_TIME_H
#define BENCH_TIME_H

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

#endif /* BENCH_TIME_H */
