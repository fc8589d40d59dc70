// SPDX-License-Identifier: GPL-2.0
/*
 * The RC timers between the guests (tests/scenarios/rxe_rc_retry.sh), the
 * client's requester against the server's responder:
 *  1. RNR retry: a SEND reaches a QP with no receive posted; the server
 *     posts the receive a second later; the SEND completes (rnr_retry 7)
 *     and the data arrives.
 *  2. RNR retries exhausted: rnr_retry 2, no receive ever posted: the SEND
 *     completes with IB_WC_RNR_RETRY_EXC_ERR.
 *  3. Retries exhausted: SENDs to a QP number the server does not have, so
 *     nothing answers (timeout 12, retry_cnt 2): IB_WC_RETRY_EXC_ERR.
 * The QP numbers and GIDs go over TCP (port 18600).
 *
 * Usage: rxe_rc_retry DEV GID_INDEX server|client PEER_IP
 */
#include "verbs_common.h"

#define PORT 18600
#define LEN 64
#define NO_SUCH_QPN 0xfffe00

struct info {
	uint32_t qpn[3];
	union ibv_gid gid;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char buf[4096];
static int gidx;

static struct ibv_qp *create_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("create_qp: %s", strerror(errno));
	qp_to_init(qp, IBV_ACCESS_LOCAL_WRITE);
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, union ibv_gid *gid,
		       int min_rnr, int timeout, int retry, int rnr_retry)
{
	qp_to_rts(qp, dqpn, gid, gidx, 1, min_rnr, timeout, retry, rnr_retry);
}

static void post_send(struct ibv_qp *qp, int id)
{
	struct ibv_sge sge = { (uintptr_t)buf, LEN, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("post_send: %s", strerror(errno));
}

static int expect(struct ibv_cq *cq, enum ibv_wc_status want, const char *what)
{
	struct timespec t0, t1;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	wc = poll_one(cq, 20, what);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s: %s after %ld ms\n", what, ibv_wc_status_str(wc.status),
	       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	if (wc.status != want) {
		printf("FAIL %s: wanted %s\n", what, ibv_wc_status_str(want));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_cq *cq[3];
	struct ibv_qp *qp[3];
	struct info mine = {}, theirs;
	int server, s, i, fail = 0;

	if (argc != 5)
		die("usage: %s DEV GID_INDEX server|client PEER_IP", argv[0]);
	gidx = atoi(argv[2]);
	server = !strcmp(argv[3], "server");
	ctx = open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		die("pd/mr: %s", strerror(errno));
	for (i = 0; i < 3; i++) {
		cq[i] = ibv_create_cq(ctx, 8, NULL, NULL, 0);
		if (!cq[i])
			die("create_cq: %s", strerror(errno));
		qp[i] = create_qp(cq[i]);
		mine.qpn[i] = qp[i]->qp_num;
	}
	if (ibv_query_gid(ctx, 1, gidx, &mine.gid))
		die("query_gid");
	s = tcp_exchange(server, argv[4], PORT, &mine, &theirs, sizeof(mine));

	if (server) {
		struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;
		struct ibv_wc wc;

		/* RNR NAK timer code 1 (0.01 ms): the client retries often. */
		connect_qp(qp[0], theirs.qpn[0], &theirs.gid, 1, 14, 7, 7);
		connect_qp(qp[1], theirs.qpn[1], &theirs.gid, 1, 14, 7, 7);
		sync_byte(s, 1);	/* connected */
		sync_byte(s, 0);	/* the client posted its SEND */
		sleep(1);
		if (ibv_post_recv(qp[0], &wr, &bad))
			die("post_recv: %s", strerror(errno));
		wc = poll_one(cq[0], 20, "receive after RNR");
		for (i = 0; i < LEN; i++)
			if (buf[i] != (char)(i * 7 + 1))
				break;
		printf("receive after RNR: %s, %u bytes, data %s\n",
		       ibv_wc_status_str(wc.status), wc.byte_len,
		       i == LEN ? "ok" : "WRONG");
		fail = wc.status != IBV_WC_SUCCESS || wc.byte_len != LEN || i != LEN;
		sync_byte(s, 1);	/* received */
		sync_byte(s, 0);	/* the client is done */
	} else {
		for (i = 0; i < LEN; i++)
			buf[i] = i * 7 + 1;
		connect_qp(qp[0], theirs.qpn[0], &theirs.gid, 1, 14, 7, 7);
		connect_qp(qp[1], theirs.qpn[1], &theirs.gid, 1, 14, 7, 2);
		connect_qp(qp[2], NO_SUCH_QPN, &theirs.gid, 1, 12, 2, 0);
		sync_byte(s, 0);	/* the server is connected */
		post_send(qp[0], 1);
		sync_byte(s, 1);
		fail |= expect(cq[0], IBV_WC_SUCCESS, "send retried after RNR NAKs");
		sync_byte(s, 0);	/* the server received */
		post_send(qp[1], 2);
		fail |= expect(cq[1], IBV_WC_RNR_RETRY_EXC_ERR, "send, no receive ever");
		post_send(qp[2], 3);
		fail |= expect(cq[2], IBV_WC_RETRY_EXC_ERR, "send, nothing answers");
		sync_byte(s, 1);
	}
	close(s);
	for (i = 0; i < 3; i++) {
		ibv_destroy_qp(qp[i]);
		ibv_destroy_cq(cq[i]);
	}
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%s\n", fail ? "FAIL" : "PASS");
	return fail;
}
