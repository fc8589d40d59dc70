// SPDX-License-Identifier: GPL-2.0
/*
 * The target of the packet injector (rxe_inject.sh, rxe_inject.py): QPs of
 * every transport in known states for the crafted packets to reach.
 *
 *   rxe_inject DEV GID_INDEX PEER_IPV4 INFO_FILE
 *
 * Creates, on DEV, UD QPs (Q_Key 0x11111111) in RTS, RC and UC QPs in RTS
 * whose path is PEER_IPV4 (so the peer's packets pass the address check),
 * one RC QP whose path is its own address, one UD and one RC QP left in
 * INIT, one UD QP destroyed at once, an MR with every remote access and an
 * MR of another PD; writes their numbers and keys to INFO_FILE as
 * "name value" lines, then posts receives and reposts them as they
 * complete until INFO_FILE.stop exists; rc_key, rc_any and uc_any, which
 * bad packets put in error, are reset to RTS as soon as they are found
 * there (every 50 ms). Prints then, per QP, the receive
 * completions by status, the QP's state, and the port's P_Key and Q_Key
 * violation counters (before and after).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf(" (errno %d)\n", errno);			\
			exit(1);					\
		}							\
	} while (0)

#define QKEY 0x11111111
#define RECV_LEN 4096
#define MR_LEN 65536
#define NQP 16

enum kind { UD, RC, UC };

struct tqp {
	const char *name;
	enum kind kind;
	int depth;		/* receives kept posted; 0: left in INIT */
	int revive;		/* reset to RTS when found in error */
	unsigned long revived, repost_err;
	struct ibv_qp *qp;
	char *buf;
	struct ibv_mr *mr;
	unsigned long ok, err, status[32];
};

static struct ibv_pd *pd;
static struct ibv_cq *cq;
static int gid_index;
static union ibv_gid peer_gid, other_gid;

/* 0 or the errno of ibv_post_recv(). */
static int post_recv(struct tqp *t, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->buf + (size_t)slot * RECV_LEN,
		.length = RECV_LEN,
		.lkey = t->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(t->qp, &wr, &bad);
}

/* 0 or the errno of the first transition refused. */
static int to_rts(struct tqp *t, const union ibv_gid *dgid, uint32_t dqpn, int rts)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
		.qkey = QKEY,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= t->kind == UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (t->kind == UC)
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(t->qp, &a, mask))
		return errno;
	if (!rts)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t->kind != UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = gid_index;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t->kind == RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(t->qp, &a, mask))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t->kind == RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(t->qp, &a, mask) ? errno : 0;
}

/* Back to RTS from the error state a bad packet left it in. */
static void revive(struct tqp *t, const union ibv_gid *dgid, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_init_attr ia;
	int j;

	CHECK(!ibv_query_qp(t->qp, &a, IBV_QP_STATE, &ia), "query_qp");
	if (a.qp_state != IBV_QPS_ERR)
		return;
	a.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(t->qp, &a, IBV_QP_STATE), "%s to RESET", t->name);
	/* A bad packet arriving meanwhile may put it in error again. */
	if (to_rts(t, dgid, dqpn, 1))
		return;
	/* Refused if the QP is in error again, or still full. */
	for (j = 0; j < t->depth; j++)
		if (post_recv(t, j))
			break;
	t->revived++;
}

static struct ibv_qp *create(enum kind kind, int depth)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = depth ? depth : 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = kind == UD ? IBV_QPT_UD : kind == RC ? IBV_QPT_RC : IBV_QPT_UC,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	CHECK(qp, "create_qp");
	return qp;
}

static void port_counters(struct ibv_context *ctx, const char *when)
{
	struct ibv_port_attr pa;

	CHECK(!ibv_query_port(ctx, 1, &pa), "query_port");
	printf("bad_pkey_cntr_%s %u\nqkey_viol_cntr_%s %u\n", when, pa.bad_pkey_cntr,
	       when, pa.qkey_viol_cntr);
}

static const char *const state_name[] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
};

int main(int argc, char **argv)
{
	struct tqp qps[NQP] = {
		{ .name = "ud", .kind = UD, .depth = 512 },
		{ .name = "ud2", .kind = UD, .depth = 64 },
		{ .name = "ud_init", .kind = UD, .depth = 0 },
		{ .name = "rc_seq", .kind = RC, .depth = 256 },
		{ .name = "rc_psn", .kind = RC, .depth = 64 },
		{ .revive = 1, .name = "rc_key", .kind = RC, .depth = 64 },
		{ .name = "rc_resp", .kind = RC, .depth = 64 },
		{ .revive = 1, .name = "rc_any", .kind = RC, .depth = 64 },
		{ .name = "rc_path", .kind = RC, .depth = 64 },
		{ .name = "rc_init", .kind = RC, .depth = 0 },
		{ .revive = 1, .name = "uc_any", .kind = UC, .depth = 64 },
	};
	int n = 11, i, j, ne;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd2;
	struct ibv_mr *mr, *mr2;
	struct ibv_qp *dead;
	struct ibv_wc wc[64];
	char *mem, stop[512], tmp[512];
	struct timespec now, last = { 0 };
	FILE *f;

	CHECK(argc == 5, "usage: rxe_inject DEV GID_INDEX PEER_IPV4 INFO_FILE");
	gid_index = atoi(argv[2]);
	memset(&peer_gid, 0, sizeof(peer_gid));
	peer_gid.raw[10] = peer_gid.raw[11] = 0xff;
	CHECK(inet_pton(AF_INET, argv[3], &peer_gid.raw[12]) == 1, "bad address %s", argv[3]);
	snprintf(stop, sizeof(stop), "%s.stop", argv[4]);

	list = ibv_get_device_list(NULL);
	CHECK(list, "no devices");
	for (i = 0; list[i] && strcmp(ibv_get_device_name(list[i]), argv[1]); i++)
		;
	CHECK(list[i], "no device %s", argv[1]);
	ctx = ibv_open_device(list[i]);
	CHECK(ctx, "open_device");
	/* A path that is not the peer's: this device's own address. */
	CHECK(!ibv_query_gid(ctx, 1, gid_index, &other_gid), "query_gid");
	port_counters(ctx, "before");
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd && pd2, "alloc_pd");
	ch = ibv_create_comp_channel(ctx);
	CHECK(ch, "create_comp_channel");
	cq = ibv_create_cq(ctx, 4096, NULL, ch, 0);
	CHECK(cq, "create_cq");
	CHECK(!ibv_req_notify_cq(cq, 0), "req_notify_cq");
	mem = aligned_alloc(4096, MR_LEN);
	CHECK(mem, "alloc");
	memset(mem, 0x5a, MR_LEN);
	mr = ibv_reg_mr(pd, mem, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr, "reg_mr");
	mr2 = ibv_reg_mr(pd2, mem, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	CHECK(mr2, "reg_mr (second PD)");
	dead = create(UD, 4);
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[4]);
	f = fopen(tmp, "w");
	CHECK(f, "open %s", tmp);
	fprintf(f, "dead %u\n", dead->qp_num);
	CHECK(!ibv_destroy_qp(dead), "destroy_qp");

	for (i = 0; i < n; i++) {
		struct tqp *t = &qps[i];
		int slots = t->depth ? t->depth : 1;

		t->qp = create(t->kind, t->depth);
		t->buf = aligned_alloc(4096, (size_t)slots * RECV_LEN);
		CHECK(t->buf, "alloc");
		t->mr = ibv_reg_mr(pd, t->buf, (size_t)slots * RECV_LEN, IBV_ACCESS_LOCAL_WRITE);
		CHECK(t->mr, "reg_mr");
		CHECK(!to_rts(t, strcmp(t->name, "rc_path") ? &peer_gid : &other_gid,
			      0xabc00 + i, t->depth != 0), "%s to RTS", t->name);
		for (j = 0; j < t->depth; j++)
			CHECK(!post_recv(t, j), "post_recv on %s", t->name);
		fprintf(f, "%s %u\n", t->name, t->qp->qp_num);
	}
	fprintf(f, "rkey %u\naddr %llu\nlen %u\nrkey2 %u\n", mr->rkey,
		(unsigned long long)(uintptr_t)mem, MR_LEN, mr2->rkey);
	fclose(f);
	CHECK(!rename(tmp, argv[4]), "rename %s", tmp);
	printf("target ready: %d QPs\n", n);
	fflush(stdout);

	while (access(stop, F_OK)) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - last.tv_sec) * 1000 + (now.tv_nsec - last.tv_nsec) / 1000000 >= 50) {
			last = now;
			for (i = 0; i < n; i++)
				if (qps[i].revive)
					revive(&qps[i], &peer_gid, 0xabc00 + i);
		}
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		CHECK(!ibv_get_cq_event(ch, &ev_cq, &ev_ctx), "get_cq_event");
		ibv_ack_cq_events(ev_cq, 1);
		CHECK(!ibv_req_notify_cq(cq, 0), "req_notify_cq");
		while ((ne = ibv_poll_cq(cq, 64, wc)) > 0) {
			for (j = 0; j < ne; j++) {
				struct tqp *t = NULL;

				for (i = 0; i < n; i++)
					if (qps[i].qp->qp_num == wc[j].qp_num)
						t = &qps[i];
				CHECK(t, "completion of QP %u", wc[j].qp_num);
				t->status[wc[j].status & 31]++;
				if (wc[j].status == IBV_WC_SUCCESS) {
					t->ok++;
					if ((wc[j].opcode & IBV_WC_RECV) &&
					    post_recv(t, wc[j].wr_id))
						t->repost_err++;
				} else {
					t->err++;
				}
			}
		}
		CHECK(ne >= 0, "poll_cq");
	}

	for (i = 0; i < n; i++) {
		struct tqp *t = &qps[i];
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		CHECK(!ibv_query_qp(t->qp, &a, IBV_QP_STATE, &ia), "query_qp");
		printf("qp %s %u state %s ok %lu err %lu revived %lu repost_err %lu", t->name,
		       t->qp->qp_num, a.qp_state < 7 ? state_name[a.qp_state] : "?", t->ok, t->err,
		       t->revived, t->repost_err);
		for (j = 1; j < 32; j++)
			if (t->status[j])
				printf(" %s:%lu", ibv_wc_status_str(j), t->status[j]);
		printf("\n");
	}
	port_counters(ctx, "after");
	for (i = 0; i < n; i++) {
		CHECK(!ibv_destroy_qp(qps[i].qp), "destroy_qp");
		CHECK(!ibv_dereg_mr(qps[i].mr), "dereg_mr");
		free(qps[i].buf);
	}
	CHECK(!ibv_dereg_mr(mr) && !ibv_dereg_mr(mr2), "dereg_mr");
	CHECK(!ibv_destroy_cq(cq), "destroy_cq");
	CHECK(!ibv_destroy_comp_channel(ch), "destroy_comp_channel");
	CHECK(!ibv_dealloc_pd(pd) && !ibv_dealloc_pd(pd2), "dealloc_pd");
	CHECK(!ibv_close_device(ctx), "close_device");
	free(mem);
	ibv_free_device_list(list);
	printf("target done\n");
	return 0;
}
