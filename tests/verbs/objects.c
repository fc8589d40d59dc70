// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_objects [DEVICE] [SECTION...]
 *
 * Creates, queries, modifies and destroys every verbs object type of an RDMA
 * device through libibverbs (the provider of the device, rdma-core's rxe for
 * rxe devices), without any traffic: device and port, PD, AH, CQ and
 * completion channel, SRQ, QP (RC, UC, UD; states, attributes, receive
 * queue), MR, MW, multicast, plus counts and the RDMA core's resource
 * tracking (`rdma resource show`).
 *
 * One line per check, "PASS section: what" or "FAIL section: what: why",
 * then a summary line; exit status 0 only if every check passed.
 *
 * Each section runs in a child process of its own, bounded by an alarm, so
 * that a driver which lacks an object, crashes the process (e.g. a bad queue
 * mapping) or hangs costs that section only: the program measures how much of
 * a driver works. Expected errnos are the C rdma_rxe's (the reference); where
 * that differs from what one might guess, a comment says so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SECTION_TIMEOUT 60 /* seconds, per section */
#define COUNT_N 16	   /* objects per kind in the counts section */

/* Shared with the section children. */
struct tally {
	int pass, fail;
};
static struct tally *tally;
static const char *section;
static const char *devname;

/* Per section: the opened device and what was learnt of it. */
static struct ibv_context *ctx;
static struct ibv_device_attr dattr;
static struct ibv_port_attr pattr;
static union ibv_gid gid;	/* this port's IPv4-mapped RoCE v2 GID */
static int gidx = -1;		/* its index */

static void vreport(int ok, const char *why, const char *fmt, va_list ap)
{
	char what[256];

	vsnprintf(what, sizeof(what), fmt, ap);
	if (ok) {
		__atomic_add_fetch(&tally->pass, 1, __ATOMIC_SEQ_CST);
		printf("PASS %s: %s\n", section, what);
	} else {
		__atomic_add_fetch(&tally->fail, 1, __ATOMIC_SEQ_CST);
		printf("FAIL %s: %s: %s\n", section, what, why);
	}
	fflush(stdout);
}

static int report(int ok, const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ok, why, fmt, ap);
	va_end(ap);
	return ok;
}

/* The errno of a verb that returns an errno, or -1 and sets errno. */
static int rc_errno(int rc)
{
	return rc < 0 ? errno : rc;
}

static const char *ename(int e)
{
	static char buf[64];

	if (!e)
		return "success";
	snprintf(buf, sizeof(buf), "%s (%d)", strerrorname_np(e) ?: "?", e);
	return buf;
}

/* want_ok(rc, ...): the verb succeeded. */
static int want_ok(int rc, const char *fmt, ...)
{
	char why[96];
	va_list ap;
	int e = rc_errno(rc);

	snprintf(why, sizeof(why), "failed with %s", ename(e));
	va_start(ap, fmt);
	vreport(rc == 0, why, fmt, ap);
	va_end(ap);
	return rc == 0;
}

/* want_err(rc, err, ...): the verb failed with errno err. */
static int want_err(int rc, int err, const char *fmt, ...)
{
	char why[128];
	va_list ap;
	int e = rc_errno(rc);

	if (rc == 0)
		snprintf(why, sizeof(why), "succeeded, want %s", ename(err));
	else
		snprintf(why, sizeof(why), "errno %s, want %s", ename(e),
			 strerrorname_np(err));
	va_start(ap, fmt);
	vreport(rc != 0 && e == err, why, fmt, ap);
	va_end(ap);
	return rc != 0 && e == err;
}

/* want_ptr(p, ...): an object was returned (errno is checked on failure). */
static int want_ptr(const void *p, const char *fmt, ...)
{
	char why[96];
	va_list ap;

	snprintf(why, sizeof(why), "failed with %s", ename(errno));
	va_start(ap, fmt);
	vreport(p != NULL, why, fmt, ap);
	va_end(ap);
	return p != NULL;
}

/* want_null(p, err, ...): no object, errno err. */
static int want_null(const void *p, int err, const char *fmt, ...)
{
	char why[128];
	va_list ap;
	int e = errno;

	if (p)
		snprintf(why, sizeof(why), "succeeded, want %s", ename(err));
	else
		snprintf(why, sizeof(why), "errno %s, want %s", ename(e),
			 strerrorname_np(err));
	va_start(ap, fmt);
	vreport(!p && e == err, why, fmt, ap);
	va_end(ap);
	return !p && e == err;
}

static int want_eq(long long got, long long exp, const char *fmt, ...)
{
	char why[96];
	va_list ap;

	snprintf(why, sizeof(why), "got %lld (0x%llx), want %lld (0x%llx)",
		 got, got, exp, exp);
	va_start(ap, fmt);
	vreport(got == exp, why, fmt, ap);
	va_end(ap);
	return got == exp;
}

static int want_ge(long long got, long long min, const char *fmt, ...)
{
	char why[96];
	va_list ap;

	snprintf(why, sizeof(why), "got %lld, want >= %lld", got, min);
	va_start(ap, fmt);
	vreport(got >= min, why, fmt, ap);
	va_end(ap);
	return got >= min;
}

static int want_true(int cond, const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cond, why, fmt, ap);
	va_end(ap);
	return cond;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Mappings of the uverbs device in this process: the queues the provider
 * mmapped (one per CQ, SRQ, QP receive queue and QP send queue).
 */
static int uverbs_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs"))
			n++;
	fclose(f);
	return n;
}

/* ---- device opening, shared by the sections --------------------------- */

static int is_v4_mapped(const union ibv_gid *g)
{
	static const unsigned char pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

/* Open the device, query it and find its RoCE v2 IPv4-mapped GID. Reports
 * only failures (the device section checks the successes).
 */
static int open_dev(int quiet)
{
	struct ibv_device **list;
	struct ibv_gid_entry ent[1024];
	ssize_t n;
	int i, num;

	list = ibv_get_device_list(&num);
	if (!list)
		return want_ptr(NULL, "ibv_get_device_list");
	for (i = 0; i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			break;
	if (i == num) {
		ibv_free_device_list(list);
		return report(0, "not listed", "device %s", devname);
	}
	ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		return want_ptr(NULL, "ibv_open_device(%s)", devname);
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, 1, &pattr))
		return report(0, ename(errno), "query device and port");
	n = ibv_query_gid_table(ctx, ent, 1024, 0);
	for (i = 0; i < n; i++)
		if (ent[i].port_num == 1 && ent[i].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    is_v4_mapped(&ent[i].gid)) {
			gid = ent[i].gid;
			gidx = ent[i].gid_index;
			break;
		}
	if (gidx < 0 && !quiet)
		return report(0, "none in the GID table", "RoCE v2 IPv4-mapped GID");
	return 1;
}

static struct ibv_cq *mk_cq(int cqe)
{
	return ibv_create_cq(ctx, cqe, NULL, NULL, 0);
}

static struct ibv_qp *mk_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    enum ibv_qp_type type, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void fill_av(struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->grh.dgid = gid;
	ah->grh.sgid_index = gidx;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

/* The attributes and mask of a legal transition to `to` for a QP type. */
static int trans_attr(enum ibv_qp_type t, enum ibv_qp_state to,
		      struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE;

	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	switch (to) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (t == IBV_QPT_UD) {
			a->qkey = 0x11111111;
			mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
					     (t == IBV_QPT_RC ? IBV_ACCESS_REMOTE_READ : 0);
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		break;
	case IBV_QPS_RTR:
		if (t == IBV_QPT_UD)
			break;
		fill_av(&a->ah_attr);
		a->path_mtu = IBV_MTU_1024;
		a->dest_qp_num = 0x123;
		a->rq_psn = 0x1234;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (t == IBV_QPT_RC) {
			a->max_dest_rd_atomic = 4;
			a->min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
		break;
	case IBV_QPS_RTS:
		a->sq_psn = 0x5678;
		mask |= IBV_QP_SQ_PSN;
		if (t == IBV_QPT_RC) {
			a->timeout = 14;
			a->retry_cnt = 7;
			a->rnr_retry = 7;
			a->max_rd_atomic = 4;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		}
		break;
	default:
		break;
	}
	return mask;
}

static const char *qpt_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : t == IBV_QPT_UD ? "UD" : "?";
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

/* Move a QP from RESET through the legal states up to `to`, unchecked. */
static int qp_to(struct ibv_qp *qp, enum ibv_qp_state to)
{
	static const enum ibv_qp_state seq[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	struct ibv_qp_attr a;
	unsigned int i;
	int mask, rc;

	for (i = 0; i < 3; i++) {
		mask = trans_attr(qp->qp_type, seq[i], &a);
		rc = ibv_modify_qp(qp, &a, mask);
		if (rc)
			return rc;
		if (seq[i] == to)
			break;
	}
	return 0;
}

/* Wait up to ms for n completions; returns how many were polled into wc. */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return got ? got : r;
		got += r;
		if (got >= n || ms <= 0)
			break;
		msleep(10);
		ms -= 10;
	}
	return got;
}

/* ---- sections ---------------------------------------------------------- */

static void sec_device(void)
{
	struct ibv_device_attr_ex dx;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ent[1024];
	union ibv_gid g;
	__be16 pkey;
	char path[256], sys[64] = "";
	FILE *f;
	ssize_t n;
	int i, v2 = 0;

	if (!open_dev(1))
		return;
	report(1, "", "open %s, query_device, query_port(1)", devname);
	want_eq(dattr.phys_port_cnt, 1, "device: phys_port_cnt");
	/* The C driver's model: vendor 0xffffff, node GUID from the MAC. */
	want_eq(dattr.vendor_id, 0xffffff, "device: vendor_id");
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_guid", devname);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(sys, sizeof(sys), f))
			sys[0] = 0;
		fclose(f);
	}
	sys[strcspn(sys, "\n")] = 0;
	{
		unsigned long long gu = be64toh(dattr.node_guid);
		char mine[64];

		snprintf(mine, sizeof(mine), "%04llx:%04llx:%04llx:%04llx",
			 gu >> 48, (gu >> 32) & 0xffff, (gu >> 16) & 0xffff, gu & 0xffff);
		want_true(!strcmp(mine, sys), sys, "device: node_guid %s equals sysfs", mine);
	}
	want_ge(dattr.max_qp, 1, "device: max_qp");
	want_ge(dattr.max_qp_wr, 1, "device: max_qp_wr");
	want_ge(dattr.max_sge, 1, "device: max_sge");
	want_ge(dattr.max_cq, 1, "device: max_cq");
	want_ge(dattr.max_cqe, 1, "device: max_cqe");
	want_ge(dattr.max_mr, 1, "device: max_mr");
	want_ge(dattr.max_pd, 1, "device: max_pd");
	want_true(dattr.max_mr_size >= 1ull << 31, "too small", "device: max_mr_size 0x%llx",
		  (unsigned long long)dattr.max_mr_size);
	want_true(dattr.page_size_cap & sysconf(_SC_PAGESIZE), "no page size bit",
		  "device: page_size_cap 0x%llx has the page size",
		  (unsigned long long)dattr.page_size_cap);
	want_ge(dattr.max_srq, 1, "device: max_srq");
	want_ge(dattr.max_srq_wr, 1, "device: max_srq_wr");
	want_ge(dattr.max_srq_sge, 1, "device: max_srq_sge");
	want_ge(dattr.max_sge, dattr.max_srq_sge, "device: max_sge >= max_srq_sge");
	want_ge(dattr.max_ah, 1, "device: max_ah");
	want_ge(dattr.max_mcast_grp, 1, "device: max_mcast_grp");
	want_ge(dattr.max_mcast_qp_attach, 1, "device: max_mcast_qp_attach");
	want_ge(dattr.max_total_mcast_qp_attach, dattr.max_mcast_qp_attach,
		"device: max_total_mcast_qp_attach >= max_mcast_qp_attach");
	want_ge(dattr.max_qp_rd_atom, 1, "device: max_qp_rd_atom");
	want_ge(dattr.max_qp_init_rd_atom, 1, "device: max_qp_init_rd_atom");
	want_ge(dattr.max_pkeys, 1, "device: max_pkeys");
	if (want_ok(ibv_query_device_ex(ctx, NULL, &dx), "query_device_ex"))
		want_true(!memcmp(&dx.orig_attr, &dattr, sizeof(dattr)), "differs",
			  "query_device_ex: orig_attr equals query_device");

	want_eq(pattr.state, IBV_PORT_ACTIVE, "port: state ACTIVE");
	want_eq(pattr.link_layer, IBV_LINK_LAYER_ETHERNET, "port: link_layer Ethernet");
	want_ge(pattr.gid_tbl_len, 1, "port: gid_tbl_len");
	want_ge(pattr.pkey_tbl_len, 1, "port: pkey_tbl_len");
	want_ge(pattr.max_mtu, pattr.active_mtu, "port: max_mtu >= active_mtu");
	want_ge(pattr.active_mtu, IBV_MTU_256, "port: active_mtu valid");
	want_ge(pattr.max_msg_sz, 1 << 20, "port: max_msg_sz");
	want_eq(pattr.lid, 0, "port: lid 0 (RoCE)");
	want_true(pattr.port_cap_flags & IBV_PORT_CM_SUP, "no CM_SUP", "port: port_cap_flags has CM_SUP");
	want_err(ibv_query_port(ctx, 2, &pa), EINVAL, "query_port(2)");
	want_err(ibv_query_port(ctx, 0, &pa), EINVAL, "query_port(0)");

	n = ibv_query_gid_table(ctx, ent, 1024, 0);
	want_ge(n, 1, "query_gid_table: entries");
	for (i = 0; i < n; i++) {
		if (ent[i].gid_type == IBV_GID_TYPE_ROCE_V2)
			v2++;
		if ((int)ent[i].gid_index >= pattr.gid_tbl_len)
			report(0, "beyond gid_tbl_len", "gid entry %u", ent[i].gid_index);
	}
	want_ge(v2, 1, "query_gid_table: RoCE v2 entries");
	want_ge(gidx, 0, "query_gid_table: an IPv4-mapped RoCE v2 GID");
	if (gidx >= 0 && want_ok(ibv_query_gid(ctx, 1, gidx, &g), "query_gid(%d)", gidx))
		want_true(!memcmp(&g, &gid, sizeof(g)), "differs", "query_gid(%d) equals the table's", gidx);
	want_true(ibv_query_gid(ctx, 1, pattr.gid_tbl_len, &g) != 0, "succeeded",
		  "query_gid(gid_tbl_len %d) refused", pattr.gid_tbl_len);
	if (want_ok(ibv_query_pkey(ctx, 1, 0, &pkey), "query_pkey(0)"))
		want_eq(ntohs(pkey), 0xffff, "query_pkey(0) is the default full pkey");
	want_true(ibv_query_pkey(ctx, 1, pattr.pkey_tbl_len, &pkey) != 0, "succeeded",
		  "query_pkey(pkey_tbl_len %d) refused", pattr.pkey_tbl_len);
	want_ok(ibv_close_device(ctx), "close_device");
}

static void sec_pd(void)
{
	struct ibv_pd *a, *b;

	if (!open_dev(1))
		return;
	a = ibv_alloc_pd(ctx);
	if (!want_ptr(a, "alloc_pd"))
		return;
	b = ibv_alloc_pd(ctx);
	if (want_ptr(b, "alloc_pd (second)")) {
		want_true(a->handle != b->handle, "same handle", "two PDs have distinct handles");
		want_ok(ibv_dealloc_pd(b), "dealloc_pd (second)");
	}
	want_ok(ibv_dealloc_pd(a), "dealloc_pd");
}

static void sec_ah(void)
{
	struct ibv_ah_attr av;
	struct ibv_pd *pd;
	struct ibv_ah *ah, *ah2;

	if (!open_dev(0))
		return;
	pd = ibv_alloc_pd(ctx);
	if (!want_ptr(pd, "alloc_pd"))
		return;
	fill_av(&av);
	ah = ibv_create_ah(pd, &av);
	if (want_ptr(ah, "create_ah (GID index %d, own GID as destination)", gidx)) {
		ah2 = ibv_create_ah(pd, &av);
		if (want_ptr(ah2, "create_ah (second, same attributes)"))
			want_ok(ibv_destroy_ah(ah2), "destroy_ah (second)");
		want_err(ibv_dealloc_pd(pd), EBUSY, "dealloc_pd with an AH");
		want_ok(ibv_destroy_ah(ah), "destroy_ah");
	}
	/* Bad GIDs (sgid_index is 8 bits, the table 1024 entries: no index
	 * beyond it). An empty entry: the RDMA core's ENODATA
	 * (rdma_get_gid_attr) before the driver sees it.
	 */
	fill_av(&av);
	av.grh.sgid_index = 255;
	ah = ibv_create_ah(pd, &av);
	if (!want_null(ah, ENODATA, "create_ah with GID index 255 (empty entry)") && ah)
		ibv_destroy_ah(ah);
	/* The default GID (fe80::, IPv6) towards an IPv4-mapped GID: the
	 * RDMA core's address resolution refuses the mix with EINVAL.
	 */
	if (gidx != 0) {
		av.grh.sgid_index = 0;
		ah = ibv_create_ah(pd, &av);
		if (!want_null(ah, EINVAL, "create_ah from GID 0 (link-local) to an IPv4-mapped GID") && ah)
			ibv_destroy_ah(ah);
	}
	/* RoCE needs a GRH. */
	fill_av(&av);
	av.is_global = 0;
	ah = ibv_create_ah(pd, &av);
	if (!want_null(ah, EINVAL, "create_ah without GRH") && ah)
		ibv_destroy_ah(ah);
	fill_av(&av);
	av.port_num = 2;
	ah = ibv_create_ah(pd, &av);
	if (!want_null(ah, EINVAL, "create_ah on port 2") && ah)
		ibv_destroy_ah(ah);
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_cq(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_wc wc[4];
	struct pollfd pfd;
	int m0, cqes[3], i;

	if (!open_dev(1))
		return;
	cqes[0] = 1;
	cqes[1] = 100;
	cqes[2] = dattr.max_cqe;
	m0 = uverbs_maps();
	for (i = 0; i < 3; i++) {
		cq = mk_cq(cqes[i]);
		if (!want_ptr(cq, "create_cq(%d)", cqes[i]))
			continue;
		want_ge(cq->cqe, cqes[i], "create_cq(%d): cqe", cqes[i]);
		want_eq(uverbs_maps() - m0, 1, "create_cq(%d): queue mapped", cqes[i]);
		want_ok(ibv_destroy_cq(cq), "destroy_cq(%d)", cqes[i]);
		want_eq(uverbs_maps() - m0, 0, "destroy_cq(%d): queue unmapped", cqes[i]);
	}
	cq = mk_cq(dattr.max_cqe + 1);
	if (!want_null(cq, EINVAL, "create_cq(max_cqe + 1 = %d)", dattr.max_cqe + 1) && cq)
		ibv_destroy_cq(cq);
	/* comp_vector beyond the device's: refused by the RDMA core. */
	cq = ibv_create_cq(ctx, 10, NULL, NULL, ctx->num_comp_vectors);
	if (!want_null(cq, EINVAL, "create_cq with comp_vector %d (num_comp_vectors)", ctx->num_comp_vectors) && cq)
		ibv_destroy_cq(cq);

	cq = mk_cq(100);
	if (want_ptr(cq, "create_cq(100) for resize")) {
		if (want_ok(ibv_resize_cq(cq, 1000), "resize_cq 100 -> 1000"))
			want_ge(cq->cqe, 1000, "resize_cq 100 -> 1000: cqe");
		want_eq(uverbs_maps() - m0, 1, "resize_cq: one queue mapping");
		if (want_ok(ibv_resize_cq(cq, 10), "resize_cq 1000 -> 10"))
			want_true(cq->cqe >= 10 && cq->cqe < 1000, "not in [10, 1000)",
				  "resize_cq 1000 -> 10: cqe %d", cq->cqe);
		want_err(ibv_resize_cq(cq, dattr.max_cqe + 1), EINVAL, "resize_cq beyond max_cqe");
		if (want_ok(ibv_resize_cq(cq, dattr.max_cqe), "resize_cq to max_cqe"))
			want_ge(cq->cqe, dattr.max_cqe, "resize_cq to max_cqe: cqe");
		want_eq(ibv_poll_cq(cq, 4, wc), 0, "poll_cq on an empty CQ");
		want_ok(ibv_req_notify_cq(cq, 0), "req_notify_cq (any)");
		want_ok(ibv_req_notify_cq(cq, 1), "req_notify_cq (solicited)");
		want_eq(ibv_poll_cq(cq, 4, wc), 0, "poll_cq on an empty CQ after resizes");
		want_ok(ibv_destroy_cq(cq), "destroy_cq");
	}

	ch = ibv_create_comp_channel(ctx);
	if (!want_ptr(ch, "create_comp_channel"))
		return;
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	if (want_ptr(cq, "create_cq on the channel")) {
		want_ok(ibv_req_notify_cq(cq, 0), "req_notify_cq on the channel's CQ");
		pfd.fd = ch->fd;
		pfd.events = POLLIN;
		want_eq(poll(&pfd, 1, 100), 0, "no event on the channel without completions");
		/* The library refuses while a CQ uses the channel. */
		want_err(ibv_destroy_comp_channel(ch), EBUSY, "destroy_comp_channel with a CQ");
		want_ok(ibv_destroy_cq(cq), "destroy_cq on the channel");
	}
	want_ok(ibv_destroy_comp_channel(ch), "destroy_comp_channel");
	want_eq(uverbs_maps() - m0, 0, "no queue mapping left");
}

/* Completions without traffic: receives flushed when the QP goes to ERR. */
static void sec_cq_flush(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_recv_wr wr, *bad;
	struct ibv_qp_attr a;
	struct ibv_wc wc[16];
	struct ibv_pd *pd;
	struct ibv_cq *cq, *ecq;
	struct ibv_qp *qp;
	struct pollfd pfd;
	void *ectx;
	int i, n, ok;

	if (!open_dev(0))
		return;
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(ch, "create_comp_channel"))
		return;
	cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	if (!want_ptr(cq, "create_cq(16) on a channel"))
		return;
	qp = mk_qp(pd, cq, IBV_QPT_RC, NULL);
	if (!want_ptr(qp, "create_qp RC"))
		return;
	if (!want_ok(qp_to(qp, IBV_QPS_INIT), "modify_qp to INIT"))
		return;
	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < 5; i++) {
		wr.wr_id = 100 + i;
		want_ok(ibv_post_recv(qp, &wr, &bad), "post_recv %d (no SGE)", i);
	}
	want_ok(ibv_req_notify_cq(cq, 0), "req_notify_cq");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "modify_qp INIT -> ERR");
	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	if (want_eq(poll(&pfd, 1, 5000), 1, "completion event on the channel after the flush")) {
		if (want_ok(ibv_get_cq_event(ch, &ecq, &ectx), "get_cq_event"))
			want_true(ecq == cq, "other CQ", "get_cq_event names the CQ");
		ibv_ack_cq_events(cq, 1);
	}
	msleep(300); /* the flush posts all five in one go */
	want_err(ibv_resize_cq(cq, 2), EINVAL, "resize_cq(2) below 5 pending completions");
	if (want_ok(ibv_resize_cq(cq, 64), "resize_cq(64) with 5 pending completions"))
		want_ge(cq->cqe, 64, "resize_cq(64): cqe");
	n = poll_n(cq, wc, 16, 1000);
	want_eq(n, 5, "poll_cq: the 5 flushed receives (kept across the resize)");
	for (i = 0, ok = 1; i < n && i < 5; i++)
		ok &= wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == 100u + i &&
		      wc[i].qp_num == qp->qp_num;
	want_true(n == 5 && ok, "wrong status, wr_id or qp_num",
		  "completions: WR_FLUSH_ERR, wr_id 100..104 in order, qp_num");
	want_eq(ibv_poll_cq(cq, 16, wc), 0, "poll_cq empty afterwards");
	want_ok(ibv_destroy_qp(qp), "destroy_qp");
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_destroy_comp_channel(ch), "destroy_comp_channel");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_srq(void)
{
	struct ibv_srq_init_attr ia;
	struct ibv_srq_attr sa;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge[64];
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	int m0, i, rc, maxwr;

	if (!open_dev(1))
		return;
	pd = ibv_alloc_pd(ctx);
	if (!want_ptr(pd, "alloc_pd"))
		return;
	m0 = uverbs_maps();

	memset(&ia, 0, sizeof(ia));
	ia.attr.max_wr = dattr.max_srq_wr + 1;
	ia.attr.max_sge = 1;
	srq = ibv_create_srq(pd, &ia);
	if (!want_null(srq, EINVAL, "create_srq max_wr max_srq_wr + 1") && srq)
		ibv_destroy_srq(srq);
	ia.attr.max_wr = 16;
	ia.attr.max_sge = dattr.max_srq_sge + 1;
	srq = ibv_create_srq(pd, &ia);
	if (!want_null(srq, EINVAL, "create_srq max_sge max_srq_sge + 1") && srq)
		ibv_destroy_srq(srq);
	ia.attr.max_wr = 0;
	ia.attr.max_sge = 1;
	srq = ibv_create_srq(pd, &ia);
	if (!want_null(srq, EINVAL, "create_srq max_wr 0") && srq)
		ibv_destroy_srq(srq);

	ia.attr.max_wr = 8;
	ia.attr.max_sge = dattr.max_srq_sge;
	srq = ibv_create_srq(pd, &ia);
	if (want_ptr(srq, "create_srq with max_srq_sge (%d) SGEs", dattr.max_srq_sge)) {
		want_ge(ia.attr.max_sge, dattr.max_srq_sge, "max_srq_sge SRQ: returned max_sge");
		want_ok(ibv_destroy_srq(srq), "destroy_srq (max_srq_sge)");
	}

	ia.attr.max_wr = 64;
	ia.attr.max_sge = 4;
	srq = ibv_create_srq(pd, &ia);
	if (!want_ptr(srq, "create_srq max_wr 64 max_sge 4"))
		goto out;
	want_ge(ia.attr.max_wr, 64, "create_srq: returned max_wr");
	want_ge(ia.attr.max_sge, 4, "create_srq: returned max_sge");
	want_eq(uverbs_maps() - m0, 1, "create_srq: queue mapped");
	if (want_ok(ibv_query_srq(srq, &sa), "query_srq")) {
		want_eq(sa.max_wr, ia.attr.max_wr, "query_srq: max_wr");
		want_eq(sa.max_sge, ia.attr.max_sge, "query_srq: max_sge");
		want_eq(sa.srq_limit, 0, "query_srq: srq_limit");
	}
	sa.srq_limit = 10;
	if (want_ok(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), "modify_srq limit 10") &&
	    want_ok(ibv_query_srq(srq, &sa), "query_srq"))
		want_eq(sa.srq_limit, 10, "query_srq: srq_limit after modify");
	sa.srq_limit = ia.attr.max_wr + 100;
	want_err(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL, "modify_srq limit beyond the queue");
	sa.max_wr = 200;
	if (want_ok(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), "modify_srq max_wr 200 (resize)") &&
	    want_ok(ibv_query_srq(srq, &sa), "query_srq")) {
		want_ge(sa.max_wr, 200, "query_srq: max_wr after resize");
		want_eq(sa.srq_limit, 10, "query_srq: srq_limit kept across resize");
	}
	want_eq(uverbs_maps() - m0, 1, "modify_srq resize: one queue mapping");
	sa.max_wr = 5;
	want_err(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL, "modify_srq max_wr 5 below limit 10");
	sa.max_wr = dattr.max_srq_wr + 1;
	want_err(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL, "modify_srq max_wr beyond max_srq_wr");
	if (ibv_query_srq(srq, &sa))
		sa.max_wr = 0;
	maxwr = sa.max_wr;

	/* Receives go straight into the mmapped queue: exactly its size fits. */
	memset(sge, 0, sizeof(sge));
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge;
	wr.num_sge = sa.max_sge + 1;
	want_err(ibv_post_srq_recv(srq, &wr, &bad), EINVAL, "post_srq_recv with max_sge + 1 SGEs");
	wr.num_sge = 0;
	for (i = 0, rc = 0; i < maxwr && !rc; i++) {
		wr.wr_id = i;
		rc = ibv_post_srq_recv(srq, &wr, &bad);
	}
	want_true(maxwr > 0 && !rc, ename(rc), "post_srq_recv x %d (max_wr)", maxwr);
	want_err(ibv_post_srq_recv(srq, &wr, &bad), ENOMEM, "post_srq_recv beyond max_wr (queue full)");
	want_ok(ibv_destroy_srq(srq), "destroy_srq");
	want_eq(uverbs_maps() - m0, 0, "destroy_srq: queue unmapped");
out:
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_qp_create(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	struct ibv_qp_init_attr ia, qia;
	struct ibv_qp_attr qa;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp;
	struct {
		const char *what;
		struct ibv_qp_cap cap;
	} bad[5];
	unsigned int i;
	int m0;

	if (!open_dev(1))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(32);
	cq2 = mk_cq(32);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq") || !want_ptr(cq2, "create_cq"))
		return;
	m0 = uverbs_maps();
	for (i = 0; i < 3; i++) {
		const char *t = qpt_name(types[i]);

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq2;
		ia.qp_type = types[i];
		ia.cap.max_send_wr = 16;
		ia.cap.max_recv_wr = 16;
		ia.cap.max_send_sge = 2;
		ia.cap.max_recv_sge = 2;
		ia.cap.max_inline_data = 64;
		ia.sq_sig_all = 1;
		qp = ibv_create_qp(pd, &ia);
		if (!want_ptr(qp, "create_qp %s (wr 16/16, sge 2/2, inline 64)", t))
			continue;
		want_ge(ia.cap.max_send_wr, 16, "%s: returned max_send_wr", t);
		want_ge(ia.cap.max_recv_wr, 16, "%s: returned max_recv_wr", t);
		want_ge(ia.cap.max_send_sge, 2, "%s: returned max_send_sge", t);
		want_ge(ia.cap.max_recv_sge, 2, "%s: returned max_recv_sge", t);
		want_ge(ia.cap.max_inline_data, 64, "%s: returned max_inline_data", t);
		want_true(qp->qp_num > 1, "QP0/QP1 number", "%s: qp_num %u is not 0 or 1", t, qp->qp_num);
		want_eq(qp->state, IBV_QPS_RESET, "%s: state RESET", t);
		want_eq(uverbs_maps() - m0, 2, "%s: send and receive queues mapped", t);
		if (want_ok(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qia), "%s: query_qp", t)) {
			want_eq(qa.qp_state, IBV_QPS_RESET, "%s: query_qp state", t);
			want_eq(qia.qp_type, types[i], "%s: query_qp qp_type", t);
			want_eq(qia.cap.max_send_wr, ia.cap.max_send_wr, "%s: query_qp max_send_wr", t);
			want_eq(qia.cap.max_recv_wr, ia.cap.max_recv_wr, "%s: query_qp max_recv_wr", t);
			want_eq(qia.cap.max_send_sge, ia.cap.max_send_sge, "%s: query_qp max_send_sge", t);
			want_eq(qia.cap.max_recv_sge, ia.cap.max_recv_sge, "%s: query_qp max_recv_sge", t);
			want_eq(qia.cap.max_inline_data, ia.cap.max_inline_data, "%s: query_qp max_inline_data", t);
			want_eq(qia.sq_sig_all, 1, "%s: query_qp sq_sig_all", t);
			want_true(qia.send_cq == cq && qia.recv_cq == cq2, "other CQs", "%s: query_qp CQs", t);
		}
		want_ok(ibv_destroy_qp(qp), "destroy_qp %s", t);
		want_eq(uverbs_maps() - m0, 0, "%s: queues unmapped", t);
	}

	/* At the device's limits (not at max_qp_wr: its queue would be
	 * hundreds of MiB).
	 */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = (struct ibv_qp_cap){ 4, 4, dattr.max_sge, dattr.max_sge, 0 };
	qp = ibv_create_qp(pd, &ia);
	if (want_ptr(qp, "create_qp RC with max_sge (%d) send and receive SGEs", dattr.max_sge)) {
		want_ge(ia.cap.max_send_sge, dattr.max_sge, "max_sge QP: returned max_send_sge");
		want_ge(ia.cap.max_inline_data, 1, "max_sge QP: returned max_inline_data");
		want_ok(ibv_destroy_qp(qp), "destroy_qp (max_sge)");
	}

	memset(bad, 0, sizeof(bad));
	for (i = 0; i < 5; i++)
		bad[i].cap = (struct ibv_qp_cap){ 8, 8, 1, 1, 0 };
	bad[0].what = "max_send_wr max_qp_wr + 1";
	bad[0].cap.max_send_wr = dattr.max_qp_wr + 1;
	bad[1].what = "max_recv_wr max_qp_wr + 1";
	bad[1].cap.max_recv_wr = dattr.max_qp_wr + 1;
	bad[2].what = "max_send_sge max_sge + 1";
	bad[2].cap.max_send_sge = dattr.max_sge + 1;
	bad[3].what = "max_recv_sge max_sge + 1";
	bad[3].cap.max_recv_sge = dattr.max_sge + 1;
	bad[4].what = "max_inline_data 1 MiB";
	bad[4].cap.max_inline_data = 1 << 20;
	for (i = 0; i < 5; i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap = bad[i].cap;
		qp = ibv_create_qp(pd, &ia);
		if (!want_null(qp, EINVAL, "create_qp RC %s", bad[i].what) && qp)
			ibv_destroy_qp(qp);
	}
	/* A type rxe does not implement: the driver's EOPNOTSUPP. */
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RAW_PACKET;
	ia.cap = bad[0].cap;
	ia.cap.max_send_wr = 8;
	qp = ibv_create_qp(pd, &ia);
	if (!want_null(qp, EOPNOTSUPP, "create_qp RAW_PACKET") && qp)
		ibv_destroy_qp(qp);

	qp = mk_qp(pd, cq, IBV_QPT_RC, NULL);
	if (want_ptr(qp, "create_qp RC on the CQ")) {
		want_err(ibv_destroy_cq(cq), EBUSY, "destroy_cq used by a QP");
		want_err(ibv_dealloc_pd(pd), EBUSY, "dealloc_pd used by a QP");
		want_ok(ibv_destroy_qp(qp), "destroy_qp");
	}
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_destroy_cq(cq2), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

/* Every legal transition of one QP type, with query_qp after each. */
static void qp_states(enum ibv_qp_type t)
{
	const char *tn = qpt_name(t);
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr a, q;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int mask, n;

	if (!open_dev(0))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(16);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq"))
		return;
	qp = mk_qp(pd, cq, t, NULL);
	if (!want_ptr(qp, "create_qp %s", tn))
		return;
#define QUERY(what) want_ok(ibv_query_qp(qp, &q, 0x1fffff, &qia), "%s: query_qp after %s", tn, what)

	mask = trans_attr(t, IBV_QPS_INIT, &a);
	if (want_ok(ibv_modify_qp(qp, &a, mask), "%s: RESET -> INIT", tn) && QUERY("INIT")) {
		want_eq(q.qp_state, IBV_QPS_INIT, "%s: state INIT", tn);
		want_eq(q.port_num, 1, "%s: INIT port_num", tn);
		want_eq(q.pkey_index, 0, "%s: INIT pkey_index", tn);
		if (t == IBV_QPT_UD)
			want_eq(q.qkey, a.qkey, "%s: INIT qkey", tn);
		else
			want_eq(q.qp_access_flags, a.qp_access_flags, "%s: INIT qp_access_flags", tn);
	}
	/* INIT -> INIT with an optional attribute only. */
	a.qp_state = IBV_QPS_INIT;
	if (t == IBV_QPT_UD) {
		a.qkey = 0x22222222;
		mask = IBV_QP_STATE | IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
	}
	if (want_ok(ibv_modify_qp(qp, &a, mask), "%s: INIT -> INIT", tn) && QUERY("INIT -> INIT")) {
		if (t == IBV_QPT_UD)
			want_eq(q.qkey, 0x22222222, "%s: INIT -> INIT qkey", tn);
		else
			want_eq(q.qp_access_flags, IBV_ACCESS_REMOTE_WRITE, "%s: INIT -> INIT qp_access_flags", tn);
	}

	mask = trans_attr(t, IBV_QPS_RTR, &a);
	if (want_ok(ibv_modify_qp(qp, &a, mask), "%s: INIT -> RTR", tn) && QUERY("RTR")) {
		want_eq(q.qp_state, IBV_QPS_RTR, "%s: state RTR", tn);
		if (t != IBV_QPT_UD) {
			want_eq(q.path_mtu, IBV_MTU_1024, "%s: RTR path_mtu", tn);
			want_eq(q.dest_qp_num, 0x123, "%s: RTR dest_qp_num", tn);
			want_eq(q.rq_psn, 0x1234, "%s: RTR rq_psn", tn);
			want_eq(q.ah_attr.is_global, 1, "%s: RTR ah_attr.is_global", tn);
			want_true(!memcmp(&q.ah_attr.grh.dgid, &gid, sizeof(gid)), "differs",
				  "%s: RTR ah_attr.grh.dgid", tn);
			want_eq(q.ah_attr.grh.sgid_index, gidx, "%s: RTR ah_attr.grh.sgid_index", tn);
			want_eq(q.ah_attr.grh.hop_limit, 64, "%s: RTR ah_attr.grh.hop_limit", tn);
			want_eq(q.ah_attr.port_num, 1, "%s: RTR ah_attr.port_num", tn);
		}
		if (t == IBV_QPT_RC) {
			want_eq(q.max_dest_rd_atomic, 4, "%s: RTR max_dest_rd_atomic", tn);
			want_eq(q.min_rnr_timer, 12, "%s: RTR min_rnr_timer", tn);
		}
	}

	mask = trans_attr(t, IBV_QPS_RTS, &a);
	if (want_ok(ibv_modify_qp(qp, &a, mask), "%s: RTR -> RTS", tn) && QUERY("RTS")) {
		want_eq(q.qp_state, IBV_QPS_RTS, "%s: state RTS", tn);
		want_eq(q.sq_psn, 0x5678, "%s: RTS sq_psn", tn);
		if (t == IBV_QPT_RC) {
			want_eq(q.timeout, 14, "%s: RTS timeout", tn);
			want_eq(q.retry_cnt, 7, "%s: RTS retry_cnt", tn);
			want_eq(q.rnr_retry, 7, "%s: RTS rnr_retry", tn);
			want_eq(q.max_rd_atomic, 4, "%s: RTS max_rd_atomic", tn);
		}
	}
	if (t == IBV_QPT_RC) {
		/* RTS -> RTS with an optional attribute. */
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.min_rnr_timer = 20;
		if (want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), "%s: RTS -> RTS", tn) &&
		    QUERY("RTS -> RTS"))
			want_eq(q.min_rnr_timer, 20, "%s: RTS -> RTS min_rnr_timer", tn);
	}

	/* SQ drain: RTS -> SQD, then back once the (empty) SQ has drained. */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_SQD;
	if (want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "%s: RTS -> SQD", tn) && QUERY("SQD")) {
		want_eq(q.qp_state, IBV_QPS_SQD, "%s: state SQD", tn);
		for (n = 0; n < 200 && q.sq_draining; n++) {
			msleep(10);
			ibv_query_qp(qp, &q, IBV_QP_STATE, &qia);
		}
		want_eq(q.sq_draining, 0, "%s: empty SQ drained", tn);
		a.qp_state = IBV_QPS_RTS;
		if (want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "%s: SQD -> RTS", tn))
			want_eq(qp_state(qp), IBV_QPS_RTS, "%s: state RTS after SQD", tn);
	}
	a.qp_state = IBV_QPS_ERR;
	if (want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "%s: RTS -> ERR", tn))
		want_eq(qp_state(qp), IBV_QPS_ERR, "%s: state ERR", tn);
	a.qp_state = IBV_QPS_RESET;
	if (want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "%s: ERR -> RESET", tn))
		want_eq(qp_state(qp), IBV_QPS_RESET, "%s: state RESET", tn);
	/* A reset QP starts over. */
	want_ok(qp_to(qp, IBV_QPS_RTS), "%s: RESET -> INIT -> RTR -> RTS again", tn);
	want_eq(qp_state(qp), IBV_QPS_RTS, "%s: state RTS again", tn);
	a.qp_state = IBV_QPS_RESET;
	want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "%s: RTS -> RESET", tn);
	want_ok(ibv_destroy_qp(qp), "%s: destroy_qp", tn);
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
#undef QUERY
}

static void sec_qp_rc(void)
{
	qp_states(IBV_QPT_RC);
}

static void sec_qp_uc(void)
{
	qp_states(IBV_QPT_UC);
}

static void sec_qp_ud(void)
{
	qp_states(IBV_QPT_UD);
}

/* Refused modifications leave the QP as it was. */
static void sec_qp_bad(void)
{
	struct ibv_qp_attr a;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp, *ud;
	int mask;

	if (!open_dev(0))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(16);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq"))
		return;
	qp = mk_qp(pd, cq, IBV_QPT_RC, NULL);
	if (!want_ptr(qp, "create_qp RC"))
		return;

	mask = trans_attr(IBV_QPT_RC, IBV_QPS_RTR, &a);
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RESET -> RTR");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_RTS, &a);
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RESET -> RTS");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_INIT, &a);
	want_err(ibv_modify_qp(qp, &a, mask & ~IBV_QP_ACCESS_FLAGS), EINVAL,
		 "RESET -> INIT without ACCESS_FLAGS (required)");
	want_err(ibv_modify_qp(qp, &a, mask & ~IBV_QP_PKEY_INDEX), EINVAL,
		 "RESET -> INIT without PKEY_INDEX (required)");
	a.sq_psn = 1;
	want_err(ibv_modify_qp(qp, &a, mask | IBV_QP_SQ_PSN), EINVAL, "RESET -> INIT with SQ_PSN (not allowed)");
	a.qkey = 1;
	want_err(ibv_modify_qp(qp, &a, mask | IBV_QP_QKEY), EINVAL, "RESET -> INIT with QKEY on RC (not allowed)");
	a.port_num = 2;
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RESET -> INIT on port 2");
	a.port_num = 1;
	a.qp_state = 7; /* beyond IBV_QPS_ERR */
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "modify to state 7 (no such state)");
	want_eq(qp_state(qp), IBV_QPS_RESET, "still RESET after the refusals");

	mask = trans_attr(IBV_QPT_RC, IBV_QPS_INIT, &a);
	want_ok(ibv_modify_qp(qp, &a, mask), "RESET -> INIT");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_RTS, &a);
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "INIT -> RTS");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_RTR, &a);
	want_err(ibv_modify_qp(qp, &a, mask & ~IBV_QP_DEST_QPN), EINVAL, "INIT -> RTR without DEST_QPN (required)");
	want_err(ibv_modify_qp(qp, &a, mask & ~IBV_QP_AV), EINVAL, "INIT -> RTR without AV (required)");
	want_err(ibv_modify_qp(qp, &a, mask & ~IBV_QP_MIN_RNR_TIMER), EINVAL,
		 "INIT -> RTR without MIN_RNR_TIMER (required)");
	a.sq_psn = 1;
	want_err(ibv_modify_qp(qp, &a, mask | IBV_QP_SQ_PSN), EINVAL, "INIT -> RTR with SQ_PSN (not allowed)");
	a.path_mtu = IBV_MTU_4096 + 1;
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "INIT -> RTR with path_mtu beyond 4096");
	a.path_mtu = IBV_MTU_1024;
	a.ah_attr.grh.sgid_index = 255;
	want_err(ibv_modify_qp(qp, &a, mask), ENODATA, "INIT -> RTR with sgid_index 255 (empty GID entry)");
	a.ah_attr.grh.sgid_index = gidx;
	want_eq(qp_state(qp), IBV_QPS_INIT, "still INIT after the refusals");

	want_ok(ibv_modify_qp(qp, &a, mask), "INIT -> RTR");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_RTS, &a);
	want_err(ibv_modify_qp(qp, &a, mask & ~IBV_QP_SQ_PSN), EINVAL, "RTR -> RTS without SQ_PSN (required)");
	a.timeout = 32;
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RTR -> RTS with timeout 32 (> 31)");
	a.timeout = 14;
	a.max_rd_atomic = dattr.max_qp_rd_atom + 1;
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RTR -> RTS with max_rd_atomic max_qp_rd_atom + 1");
	a.max_rd_atomic = 4;
	want_eq(qp_state(qp), IBV_QPS_RTR, "still RTR after the refusals");
	want_ok(ibv_modify_qp(qp, &a, mask), "RTR -> RTS");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_RTR, &a);
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RTS -> RTR");
	mask = trans_attr(IBV_QPT_RC, IBV_QPS_INIT, &a);
	want_err(ibv_modify_qp(qp, &a, mask), EINVAL, "RTS -> INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.dest_qp_num = 5;
	want_err(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN), EINVAL, "RTS -> RTS with DEST_QPN (not allowed)");
	want_eq(qp_state(qp), IBV_QPS_RTS, "still RTS after the refusals");
	want_ok(ibv_destroy_qp(qp), "destroy_qp RC");

	ud = mk_qp(pd, cq, IBV_QPT_UD, NULL);
	if (want_ptr(ud, "create_qp UD")) {
		mask = trans_attr(IBV_QPT_UD, IBV_QPS_INIT, &a);
		want_err(ibv_modify_qp(ud, &a, mask & ~IBV_QP_QKEY), EINVAL, "UD RESET -> INIT without QKEY (required)");
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		want_err(ibv_modify_qp(ud, &a, mask | IBV_QP_ACCESS_FLAGS), EINVAL,
			 "UD RESET -> INIT with ACCESS_FLAGS (not allowed)");
		want_ok(ibv_modify_qp(ud, &a, mask), "UD RESET -> INIT");
		trans_attr(IBV_QPT_RC, IBV_QPS_RTR, &a);
		want_err(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_AV), EINVAL, "UD INIT -> RTR with AV (not allowed)");
		want_eq(qp_state(ud), IBV_QPS_INIT, "UD still INIT after the refusals");
		want_ok(ibv_destroy_qp(ud), "destroy_qp UD");
	}
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

/* The receive queue the provider writes into directly: its size is what
 * the driver sized and mapped.
 */
static void sec_qp_recv(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge[64];
	struct ibv_qp_attr a;
	struct ibv_wc wc[64];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int i, rc, n, ok;

	if (!open_dev(0))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(64);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq"))
		return;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap = (struct ibv_qp_cap){ 4, 8, 1, 2, 0 };
	qp = ibv_create_qp(pd, &ia);
	if (!want_ptr(qp, "create_qp UD max_recv_wr 8 max_recv_sge 2"))
		return;
	memset(&wr, 0, sizeof(wr));
	memset(sge, 0, sizeof(sge));
	wr.sg_list = sge;
	/* The provider refuses in RESET (C10-97.2.1). */
	want_err(ibv_post_recv(qp, &wr, &bad), EINVAL, "post_recv in RESET");
	want_ok(qp_to(qp, IBV_QPS_INIT), "modify_qp to INIT");
	wr.num_sge = ia.cap.max_recv_sge + 1;
	want_err(ibv_post_recv(qp, &wr, &bad), EINVAL, "post_recv with max_recv_sge + 1 SGEs");
	wr.num_sge = 0;
	for (i = 0, rc = 0; i < (int)ia.cap.max_recv_wr && !rc && i < 64; i++) {
		wr.wr_id = 1000 + i;
		rc = ibv_post_recv(qp, &wr, &bad);
	}
	want_true(!rc, ename(rc), "post_recv x %u (max_recv_wr)", ia.cap.max_recv_wr);
	want_err(ibv_post_recv(qp, &wr, &bad), ENOMEM, "post_recv beyond max_recv_wr (queue full)");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	want_ok(ibv_modify_qp(qp, &a, IBV_QP_STATE), "modify_qp INIT -> ERR");
	n = poll_n(cq, wc, ia.cap.max_recv_wr, 5000);
	want_eq(n, ia.cap.max_recv_wr, "every posted receive flushed to the CQ");
	for (i = 0, ok = 1; i < n; i++)
		ok &= wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == 1000u + i &&
		      wc[i].qp_num == qp->qp_num;
	want_true(n > 0 && ok, "wrong status, wr_id or qp_num", "flushed receives: WR_FLUSH_ERR, wr_ids in order");
	want_ok(ibv_destroy_qp(qp), "destroy_qp");
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_qp_srq(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_qp_init_attr qia;
	struct ibv_recv_wr wr, *bad;
	struct ibv_qp_attr q;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int m0;

	if (!open_dev(0))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(16);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq"))
		return;
	srq = ibv_create_srq(pd, &sia);
	if (!want_ptr(srq, "create_srq"))
		return;
	m0 = uverbs_maps();
	qp = mk_qp(pd, cq, IBV_QPT_RC, srq);
	if (want_ptr(qp, "create_qp RC with the SRQ")) {
		/* No receive queue of its own: only the send queue is mapped. */
		want_eq(uverbs_maps() - m0, 1, "only the send queue mapped");
		if (want_ok(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_CAP, &qia), "query_qp"))
			want_true(qia.srq == srq, "no SRQ", "query_qp names the SRQ");
		want_ok(qp_to(qp, IBV_QPS_RTS), "modify_qp to RTS");
		memset(&wr, 0, sizeof(wr));
		want_err(ibv_post_recv(qp, &wr, &bad), EINVAL, "post_recv on a QP with an SRQ");
		want_ok(ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv");
		want_err(ibv_destroy_srq(srq), EBUSY, "destroy_srq used by a QP");
		want_ok(ibv_destroy_qp(qp), "destroy_qp");
	}
	want_ok(ibv_destroy_srq(srq), "destroy_srq");
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_mr(void)
{
	static const struct {
		int access;
		const char *name;
	} ok_access[] = {
		{ 0, "local read" },
		{ IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE" },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		  "LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ" },
		{ IBV_ACCESS_REMOTE_READ, "REMOTE_READ" },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, "LOCAL_WRITE|REMOTE_ATOMIC" },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, "LOCAL_WRITE|MW_BIND" },
	};
	size_t len = 64 * 1024;
	struct ibv_mr *mr, *mr2;
	struct ibv_pd *pd;
	unsigned int i;
	char *buf, *hole;

	if (!open_dev(1))
		return;
	pd = ibv_alloc_pd(ctx);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!want_ptr(pd, "alloc_pd") || !want_true(buf != MAP_FAILED, "mmap", "64 KiB buffer"))
		return;
	memset(buf, 0x5a, len);
	for (i = 0; i < sizeof(ok_access) / sizeof(ok_access[0]); i++) {
		mr = ibv_reg_mr(pd, buf, len, ok_access[i].access);
		if (!want_ptr(mr, "reg_mr 64 KiB %s", ok_access[i].name))
			continue;
		want_true(mr->addr == buf && mr->length == len, "other addr/length",
			  "reg_mr %s: addr and length", ok_access[i].name);
		want_ok(ibv_dereg_mr(mr), "dereg_mr %s", ok_access[i].name);
	}
	/* The RDMA core's rule: remote write or atomic needs local write. */
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_WRITE);
	if (!want_null(mr, EINVAL, "reg_mr REMOTE_WRITE without LOCAL_WRITE") && mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC);
	if (!want_null(mr, EINVAL, "reg_mr REMOTE_ATOMIC without LOCAL_WRITE") && mr)
		ibv_dereg_mr(mr);

	mr = ibv_reg_mr(pd, buf + 100, 1000, IBV_ACCESS_LOCAL_WRITE);
	if (want_ptr(mr, "reg_mr unaligned (offset 100, 1000 bytes)")) {
		mr2 = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
		if (want_ptr(mr2, "reg_mr over the same memory again")) {
			want_true(mr->lkey != mr2->lkey && mr->rkey != mr2->rkey, "same keys",
				  "two MRs have distinct lkeys and rkeys");
			want_ok(ibv_dereg_mr(mr2), "dereg_mr (second)");
		}
		want_err(ibv_dealloc_pd(pd), EBUSY, "dealloc_pd with an MR");
		want_ok(ibv_dereg_mr(mr), "dereg_mr unaligned");
	}
	/* Memory that is not mapped: pinning the pages fails. */
	hole = mmap(NULL, 4 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, 4 * 4096);
	mr = ibv_reg_mr(pd, hole, 4 * 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!want_null(mr, EFAULT, "reg_mr over unmapped memory") && mr)
		ibv_dereg_mr(mr);
	/* Larger than what is mapped after the buffer. */
	mr = ibv_reg_mr(pd, buf, 1ull << 40, IBV_ACCESS_LOCAL_WRITE);
	if (!want_null(mr, EFAULT, "reg_mr 1 TiB from a 64 KiB buffer") && mr)
		ibv_dereg_mr(mr);
	/* addr + length wraps around: the RDMA core's EINVAL. */
	mr = ibv_reg_mr(pd, buf, ~(size_t)0 - 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!want_null(mr, EINVAL, "reg_mr with addr + length beyond the address space") && mr)
		ibv_dereg_mr(mr);
	munmap(buf, len);
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_mw(void)
{
	struct ibv_pd *pd;
	struct ibv_mw *mw, *mw2;

	if (!open_dev(1))
		return;
	pd = ibv_alloc_pd(ctx);
	if (!want_ptr(pd, "alloc_pd"))
		return;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (want_ptr(mw, "alloc_mw type 1")) {
		want_eq(mw->type, IBV_MW_TYPE_1, "alloc_mw type 1: type");
		want_ok(ibv_dealloc_mw(mw), "dealloc_mw type 1");
	}
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (want_ptr(mw, "alloc_mw type 2")) {
		want_eq(mw->type, IBV_MW_TYPE_2, "alloc_mw type 2: type");
		mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (want_ptr(mw2, "alloc_mw type 2 (second)")) {
			want_true(mw->rkey != mw2->rkey, "same rkey", "two MWs have distinct rkeys");
			want_ok(ibv_dealloc_mw(mw2), "dealloc_mw (second)");
		}
		want_err(ibv_dealloc_pd(pd), EBUSY, "dealloc_pd with an MW");
		want_ok(ibv_dealloc_mw(mw), "dealloc_mw type 2");
	}
	mw = ibv_alloc_mw(pd, 3);
	if (!want_null(mw, EINVAL, "alloc_mw type 3 (no such type)") && mw)
		ibv_dealloc_mw(mw);
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

static void sec_mcast(void)
{
	union ibv_gid mg = { .raw = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xe0, 0, 0, 0x51 } };
	union ibv_gid mg2 = mg, uni = gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *ud, *ud2, *rc;

	if (!open_dev(0))
		return;
	mg2.raw[15] = 0x52;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(16);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq"))
		return;
	ud = mk_qp(pd, cq, IBV_QPT_UD, NULL);
	ud2 = mk_qp(pd, cq, IBV_QPT_UD, NULL);
	rc = mk_qp(pd, cq, IBV_QPT_RC, NULL);
	if (!want_ptr(ud, "create_qp UD") || !want_ptr(ud2, "create_qp UD") || !want_ptr(rc, "create_qp RC"))
		return;
	want_ok(qp_to(ud, IBV_QPS_RTS), "UD QP to RTS");
	if (want_ok(ibv_attach_mcast(ud, &mg, 0), "attach_mcast ff0e::e000:51")) {
		want_ok(ibv_attach_mcast(ud2, &mg, 0), "attach_mcast a second QP to the group");
		want_ok(ibv_attach_mcast(ud, &mg2, 0), "attach_mcast a second group");
		/* The uverbs layer keeps the QP while groups are attached. */
		want_err(ibv_destroy_qp(ud), EBUSY, "destroy_qp while attached");
		want_ok(ibv_detach_mcast(ud, &mg, 0), "detach_mcast");
		want_ok(ibv_detach_mcast(ud2, &mg, 0), "detach_mcast (second QP)");
		want_ok(ibv_detach_mcast(ud, &mg2, 0), "detach_mcast (second group)");
	}
	/* uverbs answers a detach of a group it has no record of. */
	want_err(ibv_detach_mcast(ud, &mg, 0), EINVAL, "detach_mcast of a group not attached");
	want_err(ibv_attach_mcast(rc, &mg, 0), EINVAL, "attach_mcast on an RC QP");
	want_err(ibv_attach_mcast(ud, &uni, 0), EINVAL, "attach_mcast with a unicast GID");
	want_ok(ibv_destroy_qp(rc), "destroy_qp RC");
	want_ok(ibv_destroy_qp(ud2), "destroy_qp UD (second)");
	want_ok(ibv_destroy_qp(ud), "destroy_qp UD");
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
}

/* ---- rdma resource show -------------------------------------------------- */

/* The count of `kind` for this device in `rdma resource show`'s summary
 * ("0: rxe0: pd 1 cq 2 qp 1 cm_id 0 mr 0 ctx 0 srq 0"), or -1.
 */
static int res_count(const char *kind)
{
	char line[512], key[40], *p;
	int n = -1;
	FILE *f;

	f = popen("rdma resource show 2>/dev/null", "r");
	if (!f)
		return -1;
	snprintf(key, sizeof(key), " %s ", kind);
	while (fgets(line, sizeof(line), f)) {
		char dev[64];

		snprintf(dev, sizeof(dev), " %s: ", devname);
		if (!strstr(line, dev))
			continue;
		p = strstr(line, key);
		if (p)
			n = atoi(p + strlen(key));
	}
	pclose(f);
	return n;
}

/* Lines of `rdma resource show KIND` naming this device and this process
 * (and containing `also` if not NULL).
 */
static int res_lines(const char *kind, const char *also)
{
	char cmd[128], line[1024], pid[32], dev[64];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "rdma resource show %s 2>/dev/null", kind);
	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		snprintf(dev, sizeof(dev), " %s", devname);
		line[strcspn(line, "\n")] = ' ';
		if (strstr(line, pid) && strstr(line, dev) && (!also || strstr(line, also)))
			n++;
	}
	pclose(f);
	return n;
}

static void sec_counts(void)
{
	static const char *const kinds[] = { "pd", "cq", "qp", "mr", "srq" };
	void *obj[COUNT_N];
	struct ibv_srq_init_attr sia;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char *buf;
	unsigned int k;
	int i, made, before, during, after, m0, distinct;

	if (!open_dev(1))
		return;
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(16);
	buf = malloc(4096);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq"))
		return;
	m0 = uverbs_maps();
	for (k = 0; k < 5; k++) {
		before = res_count(kinds[k]);
		if (!want_ge(before, 0, "rdma resource show: %s count", kinds[k]))
			continue;
		for (made = 0; made < COUNT_N; made++) {
			switch (k) {
			case 0:
				obj[made] = ibv_alloc_pd(ctx);
				break;
			case 1:
				obj[made] = mk_cq(8);
				break;
			case 2:
				obj[made] = mk_qp(pd, cq, IBV_QPT_RC, NULL);
				break;
			case 3:
				obj[made] = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
				break;
			case 4:
				memset(&sia, 0, sizeof(sia));
				sia.attr.max_wr = 4;
				sia.attr.max_sge = 1;
				obj[made] = ibv_create_srq(pd, &sia);
				break;
			}
			if (!obj[made])
				break;
		}
		want_eq(made, COUNT_N, "create %d %s", COUNT_N, kinds[k]);
		during = res_count(kinds[k]);
		want_eq(during - before, made, "rdma resource show: %s count up by %d", kinds[k], made);
		if (k == 2) {
			for (i = 0, distinct = 1; i < made; i++)
				distinct &= i == 0 || ((struct ibv_qp *)obj[i])->qp_num !=
							      ((struct ibv_qp *)obj[i - 1])->qp_num;
			want_true(distinct, "repeated", "%d QPs have distinct numbers", made);
		}
		for (i = made - 1; i >= 0; i--) {
			int rc = 0;

			switch (k) {
			case 0:
				rc = ibv_dealloc_pd(obj[i]);
				break;
			case 1:
				rc = ibv_destroy_cq(obj[i]);
				break;
			case 2:
				rc = ibv_destroy_qp(obj[i]);
				break;
			case 3:
				rc = ibv_dereg_mr(obj[i]);
				break;
			case 4:
				rc = ibv_destroy_srq(obj[i]);
				break;
			}
			if (rc) {
				want_ok(rc, "destroy %s %d", kinds[k], i);
				break;
			}
		}
		if (i < 0)
			report(1, "", "destroy %d %s", made, kinds[k]);
		after = res_count(kinds[k]);
		want_eq(after, before, "rdma resource show: %s count back to %d", kinds[k], before);
		want_eq(uverbs_maps() - m0, 0, "%s: no queue mapping left", kinds[k]);
	}
	want_ok(ibv_destroy_cq(cq), "destroy_cq");
	want_ok(ibv_dealloc_pd(pd), "dealloc_pd");
	free(buf);
}

/* `rdma resource show KIND` lists this process's objects while they live. */
static void sec_restrack(void)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 4, .max_sge = 1 } };
	char lqpn[32], mrlen[32];
	struct ibv_pd *pd;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	char *buf;

	if (!open_dev(0))
		return;
	buf = malloc(3 * 4096);
	pd = ibv_alloc_pd(ctx);
	cq = mk_cq(16);
	cq2 = mk_cq(16);
	if (!want_ptr(pd, "alloc_pd") || !want_ptr(cq, "create_cq") || !want_ptr(cq2, "create_cq"))
		return;
	qp = mk_qp(pd, cq, IBV_QPT_RC, NULL);
	mr = ibv_reg_mr(pd, buf, 3 * 4096, IBV_ACCESS_LOCAL_WRITE);
	srq = ibv_create_srq(pd, &sia);
	want_ptr(qp, "create_qp RC");
	want_ptr(mr, "reg_mr 12 KiB");
	want_ptr(srq, "create_srq");
	if (qp)
		qp_to(qp, IBV_QPS_RTS);
	want_eq(res_lines("pd", NULL), 1, "rdma resource show pd: this process's PD");
	want_eq(res_lines("cq", NULL), 2, "rdma resource show cq: this process's 2 CQs");
	if (qp) {
		snprintf(lqpn, sizeof(lqpn), " lqpn %u ", qp->qp_num);
		want_eq(res_lines("qp", lqpn), 1, "rdma resource show qp: lqpn %u", qp->qp_num);
		want_eq(res_lines("qp", " type RC "), 1, "rdma resource show qp: type RC");
		want_eq(res_lines("qp", " state RTS "), 1, "rdma resource show qp: state RTS");
	}
	if (mr) {
		snprintf(mrlen, sizeof(mrlen), " mrlen %d ", 3 * 4096);
		want_eq(res_lines("mr", mrlen), 1, "rdma resource show mr: mrlen %d", 3 * 4096);
	}
	if (srq)
		want_eq(res_lines("srq", NULL), 1, "rdma resource show srq: this process's SRQ");
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		ibv_dereg_mr(mr);
	if (srq)
		ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(cq2);
	ibv_dealloc_pd(pd);
	want_eq(res_lines("pd", NULL) + res_lines("cq", NULL) + res_lines("qp", NULL) +
			res_lines("mr", NULL) + res_lines("srq", NULL),
		0, "rdma resource show: nothing of this process's left after destroy");
	free(buf);
}

/* ---- driver ------------------------------------------------------------ */

static const struct {
	const char *name;
	void (*fn)(void);
} sections[] = {
	{ "device", sec_device },   { "pd", sec_pd },
	{ "ah", sec_ah },	    { "cq", sec_cq },
	{ "cq_flush", sec_cq_flush }, { "srq", sec_srq },
	{ "qp_create", sec_qp_create }, { "qp_rc", sec_qp_rc },
	{ "qp_uc", sec_qp_uc },	    { "qp_ud", sec_qp_ud },
	{ "qp_bad", sec_qp_bad },   { "qp_recv", sec_qp_recv },
	{ "qp_srq", sec_qp_srq },   { "mr", sec_mr },
	{ "mw", sec_mw },	    { "mcast", sec_mcast },
	{ "counts", sec_counts },   { "restrack", sec_restrack },
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static int wanted(int argc, char **argv, int first, const char *name)
{
	int i;

	if (first >= argc)
		return 1;
	for (i = first; i < argc; i++)
		if (!strcmp(argv[i], name))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	char bad[1024] = "";
	unsigned int s;
	int num, first = 1, status, sections_bad = 0;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (s = 0; s < NSECTIONS; s++)
			printf("%s\n", sections[s].name);
		return 0;
	}
	list = ibv_get_device_list(&num);
	if (!list || !num) {
		printf("FAIL: no RDMA device\n");
		return 1;
	}
	devname = strdup(ibv_get_device_name(list[0]));
	for (int i = 0; argc > 1 && i < num; i++)
		if (!strcmp(argv[1], ibv_get_device_name(list[i]))) {
			devname = argv[1];
			first = 2;
		}
	ibv_free_device_list(list);

	tally = mmap(NULL, sizeof(*tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tally == MAP_FAILED)
		return 1;
	printf("device %s, pid %d\n", devname, (int)getpid());
	for (s = 0; s < NSECTIONS; s++) {
		int before, pbefore;

		if (!wanted(argc, argv, first, sections[s].name))
			continue;
		section = sections[s].name;
		before = tally->fail;
		pbefore = tally->pass;
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			alarm(SECTION_TIMEOUT);
			sections[s].fn();
			fflush(stdout);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0) {
			report(0, strerror(errno), "section ran");
		} else if (WIFSIGNALED(status)) {
			report(0, WTERMSIG(status) == SIGALRM ? "timed out" : strsignal(WTERMSIG(status)),
			       "section ran to its end");
		} else if (WEXITSTATUS(status)) {
			report(0, "non-zero exit", "section ran to its end");
		}
		printf("---- %s: %d passed, %d failed\n", section, tally->pass - pbefore,
		       tally->fail - before);
		if (tally->fail != before) {
			sections_bad++;
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s", section);
		}
	}
	printf("SUMMARY: %d checks, %d passed, %d failed; sections with failures: %d%s\n",
	       tally->pass + tally->fail, tally->pass, tally->fail, sections_bad, sections_bad ? bad : "");
	return tally->fail ? 1 : 0;
}
