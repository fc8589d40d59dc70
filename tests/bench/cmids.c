// SPDX-License-Identifier: GPL-2.0
//
// cmids N [ROUNDS]: cmtime's create id and destroy steps alone. Each round
// creates N RDMA CM ids (RDMA_PS_TCP) on one event channel, one call at a
// time, then destroys them; prints each round's median, mean and first
// call in microseconds. Nothing is resolved or connected: only rdma_ucm's
// CREATE_ID and DESTROY_ID and the core's rdma_create_user_id() and
// rdma_destroy_id() run in the kernel, so an instruction count over it
// (tests/scenarios/bench_profile.sh PROF_OP=cmids) is theirs and the
// system calls'. Built and run by bench_profile.sh in guest a.
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_time.h"

static void report(int round, const char *name, double *v, int n)
{
	struct call_stats st = call_stats(v, n);

	printf("round %d %-10s n %5d  first %8.1f  median %7.2f  mean %7.2f  max %8.1f us\n",
	       round, name, n, st.first, st.median, st.mean, st.max);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 1;

	if (n <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: cmids N [ROUNDS]\n");
		return 2;
	}
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id **ids = calloc(n, sizeof(*ids));
	double *create = calloc(n, sizeof(*create));
	double *destroy = calloc(n, sizeof(*destroy));

	if (!ch || !ids || !create || !destroy) {
		perror("cmids: setup");
		return 1;
	}
	for (int r = 1; r <= rounds; r++) {
		for (int i = 0; i < n; i++) {
			double t0 = now_us();

			if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP)) {
				perror("cmids: rdma_create_id");
				return 1;
			}
			create[i] = now_us() - t0;
		}
		for (int i = 0; i < n; i++) {
			double t0 = now_us();

			if (rdma_destroy_id(ids[i])) {
				perror("cmids: rdma_destroy_id");
				return 1;
			}
			destroy[i] = now_us() - t0;
		}
		report(r, "create_id", create, n);
		report(r, "destroy_id", destroy, n);
	}
	rdma_destroy_event_channel(ch);
	return 0;
}
