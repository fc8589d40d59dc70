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
 * With "lossy", the loss check instead: a pingpong of ITERS SENDs of SIZE
 * bytes each way over one RC QP (50 of 3000 by default, TCP port 18601) as
 * ibv_rc_pingpong -s SIZE -n ITERS --chk -m 1024 sets it up (timeout 14,
 * retry_cnt 7, rnr_retry 7), each message's data checked, while the script
 * impairs the link with netem (rxe_rc_retry.sh, rxe_rc_netem.sh). Unlike
 * ibv_rc_pingpong, neither side destroys its QP before the other has all
 * its completions (a byte each way over TCP at the end): the last
 * message's ACK may be lost too, and only the peer's live QP, answering
 * the retransmitted request, recovers that.
 *
 * Usage: rxe_rc_retry DEV GID_INDEX server|client PEER_IP [lossy [SIZE ITERS PORT]]
 */
#include "verbs_common.h"

#define PORT 18600
#define LEN 64
#define NO_SUCH_QPN 0xfffe00
#define LOSSY_MAX_LEN 65536

struct info {
	uint32_t qpn[3];
	union ibv_gid gid;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static char buf[4096];
static int gidx;
/* The lossy pingpong's message size, iterations and TCP port. */
static int lossy_len = 3000, lossy_iters = 50, lossy_port = 18601;

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

/* The byte `i` of the message of iteration `it` from the server or not. */
static char lossy_byte(int i, int it, int server)
{
	return (char)(i * 13 + it * 7 + server * 101);
}

static void lossy_post_recv(struct ibv_qp *qp, char *p, struct ibv_mr *m)
{
	struct ibv_sge sge = { (uintptr_t)p, lossy_len, m->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("post_recv: %s", strerror(errno));
}

static void lossy_post_send(struct ibv_qp *qp, char *p, struct ibv_mr *m)
{
	struct ibv_sge sge = { (uintptr_t)p, lossy_len, m->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("post_send: %s", strerror(errno));
}

/*
 * Whether completion `wc` is a successful one of the kind `wr_id` (1:
 * receive, 2: send), a receive's data that of iteration `it` from the
 * peer; 0 if so.
 */
static int lossy_check(const struct ibv_wc *wc, int wr_id, int it, int server,
		       const char *rx)
{
	int i;

	if (wc->status != IBV_WC_SUCCESS || (int)wc->wr_id != wr_id) {
		printf("FAIL lossy iteration %d: %s %s\n", it,
		       wc->wr_id == 1 ? "receive" : "send",
		       ibv_wc_status_str(wc->status));
		return 1;
	}
	if (wr_id != 1)
		return 0;
	for (i = 0; i < lossy_len; i++)
		if (rx[i] != lossy_byte(i, it, !server))
			break;
	if ((int)wc->byte_len != lossy_len || i != lossy_len) {
		printf("FAIL lossy iteration %d: %u bytes, byte %d wrong\n",
		       it, wc->byte_len, i);
		return 1;
	}
	return 0;
}

/* The pingpong under loss (see the top); 0 when every message arrived. */
static int lossy(int server, const char *peer)
{
	static char tx[LOSSY_MAX_LEN], rx[LOSSY_MAX_LEN];
	struct timespec t0, t1;
	struct ibv_mr *tmr, *rmr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct info mine = {}, theirs;
	int s, it, i, fail = 0, sent = 0, scnt = 0, rcnt = 0;

	tmr = ibv_reg_mr(pd, tx, sizeof(tx), 0);
	rmr = ibv_reg_mr(pd, rx, sizeof(rx), IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!tmr || !rmr || !cq)
		die("lossy mr/cq: %s", strerror(errno));
	qp = create_qp(cq);
	mine.qpn[0] = qp->qp_num;
	if (ibv_query_gid(ctx, 1, gidx, &mine.gid))
		die("query_gid");
	s = tcp_exchange(server, peer, lossy_port, &mine, &theirs, sizeof(mine));
	connect_qp(qp, theirs.qpn[0], &theirs.gid, 1, 14, 7, 7);
	/*
	 * Each side's receive for a message is posted before the message the
	 * peer answers it with is sent: no RNR NAK.
	 */
	lossy_post_recv(qp, rx, rmr);
	sync_byte(s, 1);
	sync_byte(s, 0);	/* both connected, receives posted */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/*
	 * As ibv_rc_pingpong: the client sends ping k once ping k-1 completed
	 * and pong k-1 arrived, the server pong k once ping k arrived and
	 * pong k-1 completed. A send's completion may come after the peer's
	 * next message (its ACK lost, the data not), so completions are taken
	 * as they come.
	 */
	if (!server) {
		for (i = 0; i < lossy_len; i++)
			tx[i] = lossy_byte(i, 0, server);
		lossy_post_send(qp, tx, tmr);
		sent = 1;
	}
	while (!fail && (scnt < lossy_iters || rcnt < lossy_iters)) {
		struct ibv_wc wc = poll_one(cq, 30, "lossy pingpong");

		if (wc.wr_id == 1) {
			fail = lossy_check(&wc, 1, rcnt, server, rx);
			rcnt++;
			lossy_post_recv(qp, rx, rmr);
		} else {
			fail = lossy_check(&wc, 2, scnt, server, rx);
			scnt++;
		}
		if (fail || sent == lossy_iters || scnt != sent ||
		    rcnt != sent + server)
			continue;
		for (i = 0; i < lossy_len; i++)
			tx[i] = lossy_byte(i, sent, server);
		lossy_post_send(qp, tx, tmr);
		sent++;
	}
	it = scnt < rcnt ? scnt : rcnt;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Each side's QP lives until the other has all its completions. */
	sync_byte(s, 1);
	sync_byte(s, 0);
	close(s);
	printf("lossy pingpong (%s): %d of %d iterations of %d bytes each way "
	       "done, %ld ms\n", server ? "server" : "client", it,
	       lossy_iters, lossy_len,
	       (t1.tv_sec - t0.tv_sec) * 1000 +
	       (t1.tv_nsec - t0.tv_nsec) / 1000000);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(tmr);
	ibv_dereg_mr(rmr);
	return fail;
}

int main(int argc, char **argv)
{
	struct ibv_cq *cq[3];
	struct ibv_qp *qp[3];
	struct info mine = {}, theirs;
	int server, s, i, fail = 0;

	if (argc == 9) {
		lossy_len = atoi(argv[6]);
		lossy_iters = atoi(argv[7]);
		lossy_port = atoi(argv[8]);
	}
	if ((argc != 5 && !((argc == 6 || argc == 9) && !strcmp(argv[5], "lossy"))) ||
	    lossy_len < 1 || lossy_len > LOSSY_MAX_LEN || lossy_iters < 1 ||
	    lossy_port < 1 || lossy_port > 65535)
		die("usage: %s DEV GID_INDEX server|client PEER_IP [lossy [SIZE ITERS PORT]]",
		    argv[0]);
	gidx = atoi(argv[2]);
	server = !strcmp(argv[3], "server");
	ctx = open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (pd && argc > 5) {
		fail = lossy(server, argv[4]);
		ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
		printf("%s\n", fail ? "FAIL" : "PASS");
		return fail;
	}
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
