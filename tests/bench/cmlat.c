// SPDX-License-Identifier: GPL-2.0
//
// cmlat DST_IP [N]: where cmtime's time goes. First the steps cmtime -c N
// times (create id, resolve addr and route, create qp, destroy), one call at
// a time with its event, each call's latency (first, median, mean, max);
// create qp split into its verbs (two CQs, the QP, the INIT transition).
// Then cmtime's own pattern, twice: N resolves issued back to back while a
// second thread takes the events, with when the last event came and the
// five longest waits between events (a slow event path shows there, not in
// the one-at-a-time figures). Needs no server: the address and route are
// resolved to DST_IP, nothing connects. Run by tests/scenarios/bench_cmlat.sh.
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include "bench_time.h"

static void report(const char *name, double *v, int n)
{
	struct call_stats st = call_stats(v, n);

	printf("%-22s n %4d  first %9.1f  median %8.1f  mean %8.1f  max %9.1f  sum %10.1f us\n",
	       name, n, st.first, st.median, st.mean, st.max, st.sum);
}

static int wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want,
		      struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return -1;
	int ok = ev->event == want;
	if (!ok)
		fprintf(stderr, "event %s, want %s\n", rdma_event_str(ev->event), rdma_event_str(want));
	*id = ev->id;
	rdma_ack_cm_event(ev);
	return ok ? 0 : -1;
}

// Resolves the address (route 0) or the route (route 1) of id, as cmtime.
static int resolve(struct rdma_cm_id *id, int route, struct sockaddr *dst)
{
	return route ? rdma_resolve_route(id, 2000) : rdma_resolve_addr(id, NULL, dst, 2000);
}

static enum rdma_cm_event_type resolved_event(int route)
{
	return route ? RDMA_CM_EVENT_ROUTE_RESOLVED : RDMA_CM_EVENT_ADDR_RESOLVED;
}

// One at a time: each call (its time in call[i]), then the wait for its
// event and librdmacm's processing of it (event[i]).
static int one_by_one(struct rdma_event_channel *ch, struct rdma_cm_id **ids, int n, int route,
		      struct sockaddr *dst, double *call, double *event)
{
	struct rdma_cm_id *got;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		if (resolve(ids[i], route, dst))
			return perror(route ? "resolve_route" : "resolve_addr"), 1;
		double b = now_us();
		call[i] = b - a;
		if (wait_event(ch, resolved_event(route), &got))
			return 1;
		event[i] = now_us() - b;
	}
	return 0;
}

struct burst {
	struct rdma_event_channel *ch;
	int n;
	enum rdma_cm_event_type want;
	double *ev_t;
	int *ev_idx;
	struct rdma_cm_id **ids;
	int got; // events taken
};

static void *burst_events(void *arg)
{
	struct burst *b = arg;
	for (int k = 0; k < b->n; k++) {
		struct rdma_cm_event *ev;
		if (rdma_get_cm_event(b->ch, &ev))
			break;
		double t = now_us();
		int idx = -1;
		for (int i = 0; i < b->n; i++)
			if (b->ids[i] == ev->id)
				idx = i;
		if (ev->event != b->want)
			fprintf(stderr, "burst: event %s\n", rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		b->ev_t[k] = t;
		b->ev_idx[k] = idx;
		b->got = k + 1;
	}
	return NULL;
}

// cmtime's pattern: all calls back to back while a thread takes the events.
static int burst(struct rdma_event_channel *ch, struct rdma_cm_id **ids, int n, int route,
		 struct sockaddr *dst)
{
	struct burst b = { .ch = ch, .n = n, .want = resolved_event(route), .ids = ids };
	double *call_t = calloc(n, sizeof(double)), *issue = calloc(n, sizeof(double));
	b.ev_t = calloc(n, sizeof(double));
	b.ev_idx = calloc(n, sizeof(int));
	pthread_t th;
	pthread_create(&th, NULL, burst_events, &b);
	double t0 = now_us();
	for (int i = 0; i < n; i++) {
		double a = now_us();
		issue[i] = a - t0;
		if (resolve(ids[i], route, dst))
			return perror("burst"), 1;
		call_t[i] = now_us() - a;
	}
	double t_issued = now_us() - t0;
	pthread_join(th, NULL);
	if (b.got != n) {
		fprintf(stderr, "burst: %d events of %d\n", b.got, n);
		return 1;
	}
	double total = b.ev_t[n - 1] - t0;
	printf("burst %s: issued in %.1f us, last event at %.1f us\n", route ? "route" : "addr",
	       t_issued, total);
	// Event arrival timeline: the largest gaps.
	double *gap = calloc(n, sizeof(double));
	for (int k = 0; k < n; k++)
		gap[k] = b.ev_t[k] - (k ? b.ev_t[k - 1] : t0);
	for (int rep = 0; rep < 5; rep++) {
		int bk = 0;
		for (int k = 0; k < n; k++)
			if (gap[k] > gap[bk])
				bk = k;
		int id = b.ev_idx[bk];
		printf("  gap %.1f us before event #%d (id %d, issued at %.1f, call took %.1f), at %.1f\n",
		       gap[bk], bk, id, id >= 0 ? issue[id] : -1, id >= 0 ? call_t[id] : -1,
		       b.ev_t[bk] - t0);
		gap[bk] = -1;
	}
	report(route ? "burst route call" : "burst addr call", call_t, n);
	free(gap);
	free(call_t);
	free(issue);
	free(b.ev_t);
	free(b.ev_idx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: cmlat DST_IP [N]\n");
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 100;
	if (n < 1)
		return 2;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(7471) };
	inet_pton(AF_INET, argv[1], &dst.sin_addr);
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id **ids = calloc(n, sizeof(*ids));
	double *t = calloc(n, sizeof(*t)), *t2 = calloc(n, sizeof(*t2));
	double *t3 = calloc(n, sizeof(*t3));
	double a, b;

	for (int i = 0; i < n; i++) {
		a = now_us();
		if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP))
			return perror("create_id"), 1;
		t[i] = now_us() - a;
	}
	report("create_id", t, n);

	for (int route = 0; route < 2; route++) {
		if (one_by_one(ch, ids, n, route, (struct sockaddr *)&dst, t, t2))
			return 1;
		report(route ? "resolve_route call" : "resolve_addr call", t, n);
		report(route ? "route_resolved event" : "addr_resolved event", t2, n);
	}

	// cmtime's create qp: two CQs and the QP (rdma_create_qp moves it to INIT).
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq **cqs = calloc(2 * n, sizeof(*cqs));
	for (int i = 0; i < n; i++) {
		a = now_us();
		cqs[2 * i] = ibv_create_cq(ids[i]->verbs, 1, NULL, NULL, 0);
		cqs[2 * i + 1] = ibv_create_cq(ids[i]->verbs, 1, NULL, NULL, 0);
		if (!cqs[2 * i] || !cqs[2 * i + 1])
			return perror("create_cq"), 1;
		b = now_us();
		t[i] = b - a;
		qa.send_cq = cqs[2 * i];
		qa.recv_cq = cqs[2 * i + 1];
		if (rdma_create_qp(ids[i], NULL, &qa))
			return perror("create_qp"), 1;
		t2[i] = now_us() - b;
	}
	report("2x ibv_create_cq", t, n);
	report("rdma_create_qp", t2, n);

	// The same, split: plain ibv_create_qp, and the INIT transition.
	struct ibv_pd *pd = ibv_alloc_pd(ids[0]->verbs);
	for (int i = 0; i < n; i++) {
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
		qa.send_cq = cqs[2 * i];
		qa.recv_cq = cqs[2 * i + 1];
		a = now_us();
		struct ibv_qp *qp = ibv_create_qp(pd, &qa);
		if (!qp)
			return perror("ibv_create_qp"), 1;
		b = now_us();
		t[i] = b - a;
		if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					   IBV_QP_ACCESS_FLAGS))
			return perror("modify"), 1;
		a = now_us();
		t2[i] = a - b;
		ibv_destroy_qp(qp);
		t3[i] = now_us() - a;
	}
	report("ibv_create_qp", t, n);
	report("ibv_modify_qp INIT", t2, n);
	report("ibv_destroy_qp", t3, n);
	ibv_dealloc_pd(pd);

	for (int i = 0; i < n; i++) {
		a = now_us();
		rdma_destroy_qp(ids[i]);
		b = now_us();
		t[i] = b - a;
		ibv_destroy_cq(cqs[2 * i]);
		ibv_destroy_cq(cqs[2 * i + 1]);
		t2[i] = now_us() - b;
		a = now_us();
		rdma_destroy_id(ids[i]);
		t3[i] = now_us() - a;
	}
	report("rdma_destroy_qp", t, n);
	report("2x ibv_destroy_cq", t2, n);
	report("rdma_destroy_id", t3, n);
	for (int r = 0; r < 2; r++) {
		for (int i = 0; i < n; i++)
			if (rdma_create_id(ch, &ids[i], NULL, RDMA_PS_TCP))
				return perror("create_id"), 1;
		if (burst(ch, ids, n, 0, (struct sockaddr *)&dst) || burst(ch, ids, n, 1, NULL))
			return 1;
		for (int i = 0; i < n; i++)
			rdma_destroy_id(ids[i]);
	}
	return 0;
}
