// SPDX-License-Identifier: GPL-2.0
/*
 * hostspeed: how fast the host's own CPUs run, sampled through a benchmark.
 *
 *   hostspeed OUT STOPFILE
 *
 * Every 25 ms, on each of the host's CPUs in turn (pinned there), times a
 * fixed loop three times and writes the fastest as "realtime_s cpu ns" to
 * OUT, until STOPFILE exists. The fastest of three leaves out a sample
 * the host scheduler cut into; what stays is the CPU's own speed. On the
 * machine of Documentation/benchmarks.rst ("The host's two speeds") each
 * CPU ran the loop in either ~27 or ~50 us, switching every few seconds,
 * whether guests ran or not: the guests' vCPUs run at the speed of the
 * CPU under them. About 0.3% of one CPU.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define LOOP 100000UL
#define TRIES 3
#define PERIOD_US 25000

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The fastest of TRIES runs of the loop, in ns. */
static double loop_ns(void)
{
	volatile unsigned long sink = 0;
	double best = 1e18;

	for (int r = 0; r < TRIES; r++) {
		double t0 = clock_s(CLOCK_MONOTONIC);

		for (unsigned long i = 0; i < LOOP; i++)
			sink += i * 3;
		double t = (clock_s(CLOCK_MONOTONIC) - t0) * 1e9;

		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *out;
	int cpu = 0;

	if (argc != 3 || ncpu < 1) {
		fprintf(stderr, "usage: hostspeed OUT STOPFILE\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	while (access(argv[2], F_OK) != 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) == 0) {
			/* Let the migration settle before timing. */
			usleep(1000);
			fprintf(out, "%.3f %d %.0f\n", clock_s(CLOCK_REALTIME), cpu, loop_ns());
			fflush(out);
		}
		cpu = (cpu + 1) % ncpu;
		usleep(PERIOD_US);
	}
	fclose(out);
	return 0;
}
