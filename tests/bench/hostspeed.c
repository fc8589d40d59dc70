// SPDX-License-Identifier: GPL-2.0
/*
 * hostspeed: how fast the host's own CPUs run, sampled through a benchmark.
 *
 *   hostspeed OUT STOPFILE
 *
 * Every 25 ms, on each of the host's CPUs in turn (pinned there), times a
 * fixed loop three times and writes the fastest as "realtime_s cpu ns
 * cpu_a cpu_b" to OUT, until STOPFILE exists: cpu_a and cpu_b are the host
 * CPUs the vCPU threads of guests a and b last ran on (-1 before they
 * start), so that a reader knows at what speed each guest ran. The
 * fastest of three leaves out a sample the host scheduler cut into; what
 * stays is the CPU's own speed. On the machine of
 * Documentation/benchmarks.rst ("The host's two speeds") each CPU ran the
 * loop in either ~27 or ~50 us, switching every few seconds, whether
 * guests ran or not, and more often fast while kept busy: the guests'
 * vCPUs run at the speed of the CPU under them. About 0.3% of one CPU.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* /proc/PID/task/TID/stat of guest a's and b's vCPU thread, or "". */
static char vcpu_stat[2][600];

/* Whether QEMU process pid is guest a's (0) or b's (1): tests/guest/run-pair.sh
 * names its console log console-<role>.log; -1 for anything else. */
static int qemu_role(const char *pid)
{
	char path[64], cmd[8192];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	cmd[n] = 0;
	if (strncmp(cmd, "qemu-system", 11) != 0 && !strstr(cmd, "/qemu-system"))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	if (strstr(cmd, "console-a.log"))
		return 0;
	if (strstr(cmd, "console-b.log"))
		return 1;
	return -1;
}

/* Finds the guests' vCPU threads (with tests/guest/run-pair.sh's
 * "-name ...,debug-threads=on" QEMU names them "CPU 0/TCG"). */
static void find_vcpus(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	if (!proc)
		return;
	while ((p = readdir(proc))) {
		char path[600], comm[32];
		struct dirent *t;
		DIR *tasks;
		int role;

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		role = qemu_role(p->d_name);
		if (role < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while ((t = readdir(tasks))) {
			FILE *f;

			if (t->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", p->d_name, t->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fgets(comm, sizeof(comm), f) && strncmp(comm, "CPU 0/", 6) == 0)
				snprintf(vcpu_stat[role], sizeof(vcpu_stat[role]), "/proc/%s/task/%s/stat",
					 p->d_name, t->d_name);
			fclose(f);
		}
		closedir(tasks);
	}
	closedir(proc);
}

/* The host CPU guest role's vCPU thread last ran on, or -1. */
static int vcpu_cpu(int role)
{
	char buf[1024], *p;
	int field = 2, cpu = -1;
	FILE *f;

	if (!vcpu_stat[role][0])
		return -1;
	f = fopen(vcpu_stat[role], "r");
	if (!f) {
		vcpu_stat[role][0] = 0;
		return -1;
	}
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		/* Field 39 (processor), counting from the state, field 3. */
		for (p += 2; *p && field < 38; p++)
			if (*p == ' ')
				field++;
		if (field == 38)
			cpu = atoi(p);
	}
	fclose(f);
	return cpu;
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
			double ns = loop_ns();

			if (!vcpu_stat[0][0] || !vcpu_stat[1][0])
				find_vcpus();
			fprintf(out, "%.3f %d %.0f %d %d\n", clock_s(CLOCK_REALTIME), cpu, ns,
				vcpu_cpu(0), vcpu_cpu(1));
			fflush(out);
		}
		cpu = (cpu + 1) % ncpu;
		usleep(PERIOD_US);
	}
	fclose(out);
	return 0;
}
