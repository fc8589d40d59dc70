// SPDX-License-Identifier: GPL-2.0
/*
 * The device's limits through the unmodified rxe provider, on one device
 * looped back to itself (a UD QP sends to its own GID):
 *   - objects up to a device limit and one beyond (address handles,
 *     multicast attachments), the errno of the one beyond, all freed after
 *     (the same number can be created again);
 *   - QP capabilities one beyond each maximum at create time, and work
 *     requests beyond what the created QP returned (SGEs, inline data);
 *   - zero-length and over-MTU UD sends;
 *   - completion queue overflow: IBV_EVENT_CQ_ERR on the full CQ, the QP to
 *     the error state where the responder overflowed (receive CQ), the
 *     completions already queued intact;
 *   - a remote access error between two RC QPs: the requester's
 *     completion, the responder's IBV_EVENT_QP_ACCESS_ERR.
 * Usage: rxe_limits DEVICE GID_INDEX [objects|transport|hold]
 * "objects": the object and work request limits (scenario rxe_limits);
 * "transport": the over-MTU send, CQ overflow and the access error, which need the
 * requester and responder (scenario rxe_cq_overflow); neither: both.
 * "hold" only creates one of each object, prints "holding" and sleeps (for
 * the teardown scenario, rxe_lifecycle). Prints one line per check; exit 1 if any failed.
 * Built and run by rxe_limits.sh and rxe_lifecycle.sh; the same results are
 * expected from the C driver.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>

#include "verbs_common.h"

#define QKEY 0x11111111
#define GRH 40

static int failures;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr da;
static union ibv_gid my_gid;
static int gid_index;

static void want(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

/* A step the checks cannot go on without failed: say so and exit. */
#define fatal(what) die("FAIL %s (errno %d %s)", what, errno, strerror(errno))

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static struct ibv_ah *self_ah(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = 1,
		.grh = { .dgid = my_gid, .sgid_index = gid_index, .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &a);
}

static struct ibv_qp *ud_qp(struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_UD,
		.cap = *cap,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
				 .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		return NULL;
	*cap = ia.cap;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		fatal("modify_qp INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		fatal("modify_qp RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fatal("modify_qp RTS");
	return qp;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		fatal("query_qp");
	return a.qp_state;
}

/* Polls cq until n completions or timeout seconds; returns how many. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, double timeout)
{
	double end = now() + timeout;
	int got = 0, r;

	while (got < n && now() < end) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			fatal("poll_cq");
		got += r;
		if (!r)
			usleep(1000);
	}
	return got;
}

/* The async events that arrive within timeout seconds. */
struct events {
	int n;
	struct ibv_async_event ev[64];
};

static void read_events(struct events *e, double timeout)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	double end = now() + timeout;

	while (e->n < 64 && now() < end) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &e->ev[e->n]))
			break;
		printf("     async event %s\n", ibv_event_type_str(e->ev[e->n].event_type));
		ibv_ack_async_event(&e->ev[e->n]);
		e->n++;
	}
}

static int has_event(struct events *e, enum ibv_event_type t, void *element)
{
	for (int i = 0; i < e->n; i++)
		if (e->ev[i].event_type == t && (!element || e->ev[i].element.cq == element))
			return 1;
	return 0;
}

static void send_to_self(struct ibv_qp *qp, struct ibv_ah *ah, struct ibv_sge *sg, int nsge,
			 uint64_t id, unsigned int flags)
{
	struct ibv_send_wr w = {
		.wr_id = id, .sg_list = sg, .num_sge = nsge, .opcode = IBV_WR_SEND,
		.send_flags = flags,
		.wr.ud = { .ah = ah, .remote_qpn = qp->qp_num, .remote_qkey = QKEY },
	}, *bad;
	int r = ibv_post_send(qp, &w, &bad);

	if (r) {
		errno = r;
		fatal("post_send");
	}
}

static void post_recv(struct ibv_qp *qp, struct ibv_sge *sg, uint64_t id)
{
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = sg, .num_sge = 1 }, *bad;
	int r = ibv_post_recv(qp, &w, &bad);

	if (r) {
		errno = r;
		fatal("post_recv");
	}
}

/* Address handles: max_ah of them, then one more. */
static void ah_limit(void)
{
	int n = da.max_ah, i, made = 0, err, skipped = 0;
	struct ibv_ah **ahs = calloc(n + 1, sizeof(*ahs));
	double t = now();

	for (i = 0; i <= n; i++) {
		errno = 0;
		ahs[i] = self_ah();
		if (!ahs[i])
			break;
		made++;
		/*
		 * On a slow kernel (KASAN, kmemleak under TCG) creating and
		 * destroying them all would take minutes: stop and say so.
		 */
		if (made == 2048 && (now() - t) * 2 * n / made > 60) {
			printf("     skipped: %d address handles took %.1f s, all %d would take %.0f s\n",
			       made, now() - t, n, (now() - t) * 2 * n / made);
			skipped = 1;
			break;
		}
	}
	err = errno;
	printf("     %d address handles in %.1f s\n", made, now() - t);
	if (made >= n) {
		want(made == n, "create_ah: max_ah (%d) created, got %d", n, made);
		want(made == n && err == EINVAL, "create_ah beyond max_ah: errno %d (want %d)", err,
		     EINVAL);
	} else if (!skipped) {
		want(0, "create_ah failed after %d of %d: errno %d", made, n, err);
	}
	for (i = 0; i < made; i++)
		if (ibv_destroy_ah(ahs[i]))
			fatal("destroy_ah");
	/* Everything was given back: the pool takes a second round. */
	for (i = 0, made = 0; i < 64; i++) {
		ahs[i] = self_ah();
		if (ahs[i])
			made++;
	}
	want(made == 64, "create_ah after destroying them all");
	for (i = 0; i < made; i++)
		ibv_destroy_ah(ahs[i]);
	free(ahs);
}

/* Multicast: max_mcast_qp_attach QPs in one group, then one more. */
static void mcast_limit(void)
{
	int n = da.max_mcast_qp_attach, i, made = 0, r = 0;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp **qps = calloc(n + 1, sizeof(*qps));
	union ibv_gid mgid = { .raw = { 0xff, 0x0e, [15] = 0x42 } };

	if (!cq || !qps)
		fatal("mcast set-up");
	for (i = 0; i <= n; i++) {
		struct ibv_qp_cap cap = { .max_send_wr = 1, .max_recv_wr = 1,
					  .max_send_sge = 1, .max_recv_sge = 1 };

		qps[i] = ud_qp(cq, cq, &cap);
		if (!qps[i])
			fatal("create_qp for multicast");
	}
	for (i = 0; i <= n; i++) {
		r = ibv_attach_mcast(qps[i], &mgid, 0);
		if (r)
			break;
		made++;
	}
	want(made == n, "attach_mcast: max_mcast_qp_attach (%d) QPs attached, got %d", n, made);
	want(made == n && r == ENOMEM, "attach_mcast beyond max_mcast_qp_attach: %d (want %d)", r, ENOMEM);
	for (i = 0; i < made; i++)
		if (ibv_detach_mcast(qps[i], &mgid, 0))
			fatal("detach_mcast");
	r = ibv_attach_mcast(qps[n], &mgid, 0);
	want(!r, "attach_mcast after detaching all: %d", r);
	if (!r)
		ibv_detach_mcast(qps[n], &mgid, 0);
	for (i = 0; i <= n; i++)
		ibv_destroy_qp(qps[i]);
	ibv_destroy_cq(cq);
	free(qps);
}

/* QP capabilities one beyond each maximum. */
static void qp_caps(struct ibv_cq *cq)
{
	static const struct {
		const char *what;
		struct ibv_qp_cap cap;
	} bad[] = {
		{ "max_send_wr max_qp_wr + 1", { .max_send_wr = 0, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } },
		{ "max_recv_wr max_qp_wr + 1", { .max_send_wr = 1, .max_recv_wr = 0, .max_send_sge = 1, .max_recv_sge = 1 } },
		{ "max_send_sge max_sge + 1", { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 0, .max_recv_sge = 1 } },
		{ "max_recv_sge max_sge + 1", { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 0 } },
		{ "max_inline_data 513", { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 513 } },
	};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
					       .cap = bad[i].cap };
		struct ibv_qp *qp;

		if (!ia.cap.max_send_wr)
			ia.cap.max_send_wr = da.max_qp_wr + 1;
		if (!ia.cap.max_recv_wr)
			ia.cap.max_recv_wr = da.max_qp_wr + 1;
		if (!ia.cap.max_send_sge)
			ia.cap.max_send_sge = da.max_sge + 1;
		if (!ia.cap.max_recv_sge)
			ia.cap.max_recv_sge = da.max_sge + 1;
		errno = 0;
		qp = ibv_create_qp(pd, &ia);
		want(!qp && errno == EINVAL, "create_qp %s: errno %d (want %d)", bad[i].what, errno, EINVAL);
		if (qp)
			ibv_destroy_qp(qp);
	}
	{
		/* At the maxima (the inline maximum is the C driver's 512). */
		struct ibv_qp_cap cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = da.max_sge,
					  .max_recv_sge = da.max_sge, .max_inline_data = 512 };
		struct ibv_qp *qp = ud_qp(cq, cq, &cap);

		want(qp != NULL, "create_qp at max_sge (%d) and max_inline_data 512", da.max_sge);
		if (qp) {
			printf("     returned caps: send_sge %u recv_sge %u inline %u\n", cap.max_send_sge,
			       cap.max_recv_sge, cap.max_inline_data);
			ibv_destroy_qp(qp);
		}
	}
}

/* Work requests beyond the QP's caps, a zero-length send. */
static void wr_limits(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp;
	struct ibv_ah *ah = self_ah();
	char *buf = calloc(1, 16384);
	struct ibv_mr *mr;
	struct ibv_sge sg[2], rs;
	struct ibv_send_wr w = { .opcode = IBV_WR_SEND, .sg_list = sg }, *bad;
	struct ibv_recv_wr rw = { .sg_list = sg }, *rbad;
	struct ibv_wc wc[4];
	int r, got;

	if (!cq || !ah || !buf)
		fatal("wr set-up");
	qp_caps(cq);
	qp = ud_qp(cq, cq, &cap);
	if (!qp)
		fatal("create_qp 4/4/1/1");
	mr = ibv_reg_mr(pd, buf, 16384, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fatal("reg_mr");
	printf("     qp caps: send_sge %u recv_sge %u inline %u\n", cap.max_send_sge, cap.max_recv_sge,
	       cap.max_inline_data);
	for (int i = 0; i < 2; i++)
		sg[i] = (struct ibv_sge){ .addr = (uintptr_t)buf + 8192, .length = 8, .lkey = mr->lkey };
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = qp->qp_num;
	w.wr.ud.remote_qkey = QKEY;
	w.num_sge = cap.max_send_sge + 1;
	r = ibv_post_send(qp, &w, &bad);
	want(r == EINVAL, "post_send with max_send_sge + 1 SGEs: %d (want %d)", r, EINVAL);
	rw.num_sge = cap.max_recv_sge + 1;
	r = ibv_post_recv(qp, &rw, &rbad);
	want(r == EINVAL, "post_recv with max_recv_sge + 1 SGEs: %d (want %d)", r, EINVAL);
	w.num_sge = 1;
	w.send_flags = IBV_SEND_INLINE;
	sg[0].length = cap.max_inline_data + 1;
	r = ibv_post_send(qp, &w, &bad);
	want(r == EINVAL, "post_send inline of max_inline_data + 1 bytes: %d (want %d)", r, EINVAL);

	/* A zero-length send: the receiver gets the GRH alone. */
	rs = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 4096, .lkey = mr->lkey };
	post_recv(qp, &rs, 100);
	send_to_self(qp, ah, NULL, 0, 200, IBV_SEND_SIGNALED);
	got = poll_n(cq, wc, 2, 10);
	want(got == 2 && wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS,
	     "zero-length send to self: %d completions", got);
	for (int i = 0; i < got; i++)
		if (wc[i].opcode == IBV_WC_RECV)
			want(wc[i].byte_len == GRH, "zero-length receive: byte_len %u (want %d)",
			     wc[i].byte_len, GRH);

	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_ah(ah);
	ibv_destroy_cq(cq);
	free(buf);
}

/*
 * A UD send beyond the path MTU: no packet, a successful send completion
 * (C10-93.1.1, as the C requester fakes it); the posted receive stays (a
 * following small send lands in it).
 */
static void ud_over_mtu(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp;
	struct ibv_ah *ah = self_ah();
	char *buf = calloc(1, 16384);
	struct ibv_mr *mr;
	struct ibv_sge sg[1], rs;
	struct ibv_wc wc[4];
	int got;

	if (!cq || !ah || !buf)
		fatal("over-MTU set-up");
	qp = ud_qp(cq, cq, &cap);
	if (!qp)
		fatal("create_qp 4/4/1/1");
	mr = ibv_reg_mr(pd, buf, 16384, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fatal("reg_mr");
	rs = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 4096, .lkey = mr->lkey };
	post_recv(qp, &rs, 101);
	sg[0] = (struct ibv_sge){ .addr = (uintptr_t)buf + 8192, .length = 8192, .lkey = mr->lkey };
	send_to_self(qp, ah, sg, 1, 201, IBV_SEND_SIGNALED);
	got = poll_n(cq, wc, 2, 2);
	want(got == 1 && wc[0].opcode == IBV_WC_SEND && wc[0].status == IBV_WC_SUCCESS,
	     "8192-byte UD send: %d completion(s), first %s status %d (want one successful send)",
	     got, got && wc[0].opcode == IBV_WC_SEND ? "send" : "recv", got ? (int)wc[0].status : -1);
	memset(buf + 8192, 0x5a, 64);
	sg[0].length = 64;
	send_to_self(qp, ah, sg, 1, 202, IBV_SEND_SIGNALED);
	got = poll_n(cq, wc, 2, 10);
	want(got == 2, "64-byte send after it: %d completions", got);
	for (int i = 0; i < got; i++)
		if (wc[i].opcode == IBV_WC_RECV)
			want(wc[i].wr_id == 101 && wc[i].byte_len == GRH + 64 &&
			     buf[GRH] == 0x5a && buf[GRH + 63] == 0x5a,
			     "it lands in the receive posted before the big one (wr_id %llu, %u bytes)",
			     (unsigned long long)wc[i].wr_id, wc[i].byte_len);
	want(qp_state(qp) == IBV_QPS_RTS, "the QP stays in RTS (state %d)", qp_state(qp));
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_ah(ah);
	ibv_destroy_cq(cq);
	free(buf);
}

/*
 * Completion queue overflow. Send side: the completer's CQ overflows, the
 * owner gets IBV_EVENT_CQ_ERR, the QP stays usable (C's do_complete drops
 * the completion). Receive side: the responder's CQ overflows, CQ_ERR and
 * the QP goes to the error state (C: RESPST_ERR_CQ_OVERFLOW, class G).
 */
static void cq_overflow(void)
{
	struct ibv_cq *big = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_cq *small = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_cq *small2 = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_ah *ah = self_ah();
	char *buf = calloc(1, 65536);
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_sge sg, rs;
	struct ibv_wc wc[16];
	struct events ev = { 0 };
	int got, fill, i;

	if (!big || !small || !small2 || !ah || !buf)
		fatal("cq overflow set-up");
	mr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fatal("reg_mr");
	fill = small->cqe;
	printf("     small cq: cqe %d\n", fill);
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);

	/* Send CQ overflow. */
	qp = ud_qp(small, big, &cap);
	if (!qp)
		fatal("create_qp (small send cq)");
	for (i = 0; i < fill + 3; i++) {
		rs = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096 * i, .length = 4096,
				       .lkey = mr->lkey };
		post_recv(qp, &rs, 300 + i);
		sg = (struct ibv_sge){ .addr = (uintptr_t)buf + 32768 + 64 * i, .length = 64,
				       .lkey = mr->lkey };
		send_to_self(qp, ah, &sg, 1, 400 + i, IBV_SEND_SIGNALED);
	}
	got = poll_n(big, wc, fill + 3, 10);
	want(got == fill + 3, "send cq overflow: all %d datagrams received (%d)", fill + 3, got);
	read_events(&ev, 2);
	want(has_event(&ev, IBV_EVENT_CQ_ERR, small), "send cq overflow: IBV_EVENT_CQ_ERR on it");
	got = poll_n(small, wc, 16, 1);
	want(got == fill && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 400,
	     "send cq overflow: the %d completion(s) that fit are intact (%d, first wr_id %llu)",
	     fill, got, got ? (unsigned long long)wc[0].wr_id : 0ULL);
	want(qp_state(qp) == IBV_QPS_RTS, "send cq overflow: the QP stays in RTS (state %d)",
	     qp_state(qp));
	ibv_destroy_qp(qp);

	/* Receive CQ overflow. */
	ev.n = 0;
	qp = ud_qp(big, small2, &cap);
	if (!qp)
		fatal("create_qp (small recv cq)");
	memset(buf, 0, 65536);
	for (i = 0; i < fill + 3; i++) {
		rs = (struct ibv_sge){ .addr = (uintptr_t)buf + 4096 * i, .length = 4096,
				       .lkey = mr->lkey };
		post_recv(qp, &rs, 500 + i);
	}
	for (i = 0; i < fill + 3; i++) {
		memset(buf + 32768 + 64 * i, 0x30 + i, 64);
		sg = (struct ibv_sge){ .addr = (uintptr_t)buf + 32768 + 64 * i, .length = 64,
				       .lkey = mr->lkey };
		send_to_self(qp, ah, &sg, 1, 600 + i, IBV_SEND_SIGNALED);
	}
	got = poll_n(big, wc, fill + 3, 10);
	want(got == fill + 3, "recv cq overflow: all %d sends completed (%d)", fill + 3, got);
	read_events(&ev, 2);
	want(has_event(&ev, IBV_EVENT_CQ_ERR, small2), "recv cq overflow: IBV_EVENT_CQ_ERR on it");
	got = poll_n(small2, wc, 16, 1);
	want(got >= 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 500 &&
	     wc[0].byte_len == GRH + 64 && buf[GRH] == 0x30 && buf[GRH + 63] == 0x30,
	     "recv cq overflow: the first completion intact (%d polled, wr_id %llu)", got,
	     got ? (unsigned long long)wc[0].wr_id : 0ULL);
	want(qp_state(qp) == IBV_QPS_ERR, "recv cq overflow: the QP goes to the error state (state %d)",
	     qp_state(qp));
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_ah(ah);
	ibv_destroy_cq(small2);
	ibv_destroy_cq(small);
	ibv_destroy_cq(big);
	free(buf);
}

/* An RC QP connected to dest_qpn on this device's own GID, in RTS. */
static void rc_connect(struct ibv_qp *qp, uint32_t dest_qpn)
{
	qp_to_init(qp, IBV_ACCESS_REMOTE_WRITE);
	qp_to_rts(qp, dest_qpn, &my_gid, gid_index, 1, 12, 14, 1, 1);
}

/*
 * A remote access error (IBA C9-222.1): an RDMA WRITE through an rkey the
 * target's region does not grant remote write to. The requester completes
 * with IBV_WC_REM_ACCESS_ERR; the responder's QP, with no receive WQE to
 * report it on, raises IBV_EVENT_QP_ACCESS_ERR and goes to the error
 * state (C: RESPST_ERR_RKEY_VIOLATION_EVENT).
 */
static void access_error(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *req, *resp;
	char *buf = calloc(1, 8192);
	struct ibv_mr *src, *dst;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_wc wc;
	struct events ev = { 0 };
	int got;

	if (!cq || !buf)
		fatal("access error set-up");
	req = ibv_create_qp(pd, &ia);
	resp = ibv_create_qp(pd, &ia);
	src = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	/* No IBV_ACCESS_REMOTE_WRITE: a write through its rkey is refused. */
	dst = ibv_reg_mr(pd, buf + 4096, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!req || !resp || !src || !dst)
		fatal("access error: create");
	rc_connect(req, resp->qp_num);
	rc_connect(resp, req->qp_num);
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	memset(buf, 0x5a, 64);
	sg = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = 64, .lkey = src->lkey };
	wr.wr_id = 700;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)buf + 4096;
	wr.wr.rdma.rkey = dst->rkey;
	if (ibv_post_send(req, &wr, &bad))
		fatal("access error: post_send");
	got = poll_n(cq, &wc, 1, 10);
	want(got == 1 && wc.wr_id == 700 && wc.status == IBV_WC_REM_ACCESS_ERR,
	     "access error: the write completes with IBV_WC_REM_ACCESS_ERR (%d polled, status %s)",
	     got, got ? ibv_wc_status_str(wc.status) : "-");
	read_events(&ev, 2);
	want(has_event(&ev, IBV_EVENT_QP_ACCESS_ERR, resp),
	     "access error: IBV_EVENT_QP_ACCESS_ERR on the responder's QP");
	want(!has_event(&ev, IBV_EVENT_QP_ACCESS_ERR, req), "access error: none on the requester's QP");
	want(qp_state(resp) == IBV_QPS_ERR, "access error: the responder's QP is in ERR (state %d)",
	     qp_state(resp));
	want(buf[4096] == 0, "access error: nothing written to the region");
	ibv_destroy_qp(req);
	ibv_destroy_qp(resp);
	ibv_dereg_mr(dst);
	ibv_dereg_mr(src);
	ibv_destroy_cq(cq);
	free(buf);
}

/* One of each object, then wait to be killed (rxe_lifecycle.sh). */
static void hold(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp = ud_qp(cq, cq, &cap);
	struct ibv_ah *ah = self_ah();
	char *buf = calloc(1, 65536);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_sge s = { .addr = (uintptr_t)buf, .length = 4096, .lkey = mr ? mr->lkey : 0 };

	if (!cq || !srq || !qp || !ah || !mr)
		fatal("hold: create");
	for (int i = 0; i < 8; i++)
		post_recv(qp, &s, i);
	/* Datagrams in flight to itself, some left unpolled. */
	for (int i = 0; i < 4; i++)
		send_to_self(qp, ah, &s, 1, i, IBV_SEND_SIGNALED);
	printf("holding (mw %s)\n", mw ? "allocated" : "refused");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "rxe0";
	const char *part = argc > 3 && *argv[3] ? argv[3] : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [objects|transport|hold]\n", argv[0]);
		return 2;
	}
	gid_index = atoi(argv[2]);
	ctx = open_device(name);
	if (ibv_query_device(ctx, &da))
		fatal("query_device");
	if (ibv_query_gid(ctx, 1, gid_index, &my_gid))
		fatal("query_gid");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		fatal("alloc_pd");
	if (part && !strcmp(part, "hold"))
		hold();
	printf("     max_ah %d max_mcast_grp %d max_mcast_qp_attach %d max_qp_wr %d max_sge %d\n",
	       da.max_ah, da.max_mcast_grp, da.max_mcast_qp_attach, da.max_qp_wr, da.max_sge);
	/*
	 * Not tried: max_pd, max_cq, max_qp, max_srq, max_mr and max_mw are
	 * 2^19..2^20 objects, minutes under TCG; the pools' counting is the
	 * one max_ah exercises. max_mcast_grp (8192 groups) would put as many
	 * addresses on the netdev's multicast list.
	 */
	printf("     not tried: max_pd %d, max_cq %d, max_qp %d, max_srq %d, max_mr %d (too many for TCG)\n",
	       da.max_pd, da.max_cq, da.max_qp, da.max_srq, da.max_mr);
	if (!part || !strcmp(part, "objects")) {
		ah_limit();
		mcast_limit();
		wr_limits();
	}
	if (!part || !strcmp(part, "transport")) {
		ud_over_mtu();
		cq_overflow();
		access_error();
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%s\n", failures ? "failed" : "ok");
	return failures ? 1 : 0;
}
