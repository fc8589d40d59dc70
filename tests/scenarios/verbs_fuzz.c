// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: the uverbs ABI of one device under random and mutated use
 * (issue #7 part 5), for tests/scenarios/verbs_fuzz.sh.
 *
 *   verbs_fuzz DEVICE GID_INDEX SECONDS [THREADS]
 *
 * THREADS threads (4) share a few device contexts and run random sequences
 * of libibverbs calls with random, boundary and invalid arguments: PDs; MRs
 * of random lengths, addresses (NULL, unaligned, unmapped, kernel) and
 * access flags; MWs and binds; CQs created, resized, polled, armed with
 * random cqe (0, negative, huge); SRQs with random attributes, modified and
 * posted to; QPs of every type with random capabilities, random
 * modify_qp masks, states and values, and QPs brought up properly
 * (looped back to themselves or to another QP) so that random send and
 * receive WRs (opcodes, flags, SGE lists, lkeys, rkeys) really run; AHs,
 * multicast attach and detach; objects destroyed in random order while
 * other objects still use them (EBUSY expected). Contexts are closed with
 * everything in them and reopened while the other threads go on.
 * One more thread writes raw commands to its own uverbs file (the legacy
 * write ABI: struct ib_uverbs_cmd_hdr and a payload, extended commands
 * too): random and mutated commands, random handles, truncated and
 * oversized lengths; it also builds a QP by hand, maps its queues and the
 * CQ's, and scribbles random WQEs and indices into them before ringing
 * the doorbell, and maps random offsets of the file.
 *
 * Only the kernel is judged (the harness fails the run on any kernel
 * report); the calls just have to answer. The program fails only if it
 * crashes or hangs. The seed is printed; RRXE_FUZZ_SEED replays it (the
 * threads' interleaving is not replayed). At the end it prints how many
 * calls were made and how many ended with each errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NCTX 3
#define NSLOT 48
#define ARENA (1 << 20)
#define NERR 140

enum kind { K_NONE, K_PD, K_MR, K_MW, K_CQ, K_SRQ, K_QP, K_AH };

struct slot {
	pthread_rwlock_t lock;
	enum kind kind;
	void *obj;
	int ready;		/* QP: brought up to RTS by the proper path */
};

struct ctx {
	pthread_rwlock_t lock;	/* ops read-lock it, close/reopen write-locks */
	struct ibv_context *c;
	struct ibv_comp_channel *ch;
	struct slot s[NSLOT];
};

static struct ctx ctxs[NCTX];
static const char *devname;
static int gid_index;
/* RRXE_FUZZ_MCAST_LIDS=1: random LIDs in attach and detach (see main). */
static int mcast_lids;
/* RRXE_FUZZ_SCRIBBLE=0: no WQEs written into the raw QP's queues. */
static int scribbling = 1;
static union ibv_gid my_gid;
static struct timespec deadline;
static char *arena;		/* memory registered by the MRs */
static atomic_ulong calls, errs[NERR + 1];
static atomic_ulong left_mapped, opens, closes, raw_writes, scribbles, mmaps, sends_ok, wcs;

static int expired(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/* xorshift64*: one state per thread. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static uint32_t below(uint64_t *s, uint32_t n)
{
	return n ? rnd(s) % n : 0;
}

static int chance(uint64_t *s, int pct)
{
	return (int)below(s, 100) < pct;
}

/* A 32-bit value biased to boundaries. */
static uint32_t val32(uint64_t *s)
{
	static const uint32_t special[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, 1023,
		1024, 4095, 4096, 4097, 16384, 32767, 32768, 65535, 65536,
		0x7fffffff, 0x80000000u, 0xfffffffeu, 0xffffffffu,
	};

	switch (below(s, 4)) {
	case 0:
		return special[below(s, sizeof(special) / sizeof(special[0]))];
	case 1:
		return below(s, 16);
	case 2:
		return below(s, 4096);
	default:
		return (uint32_t)rnd(s);
	}
}

/* An address for the kernel: mostly in the arena, else bad ones. */
static uint64_t addr(uint64_t *s)
{
	switch (below(s, 10)) {
	case 0:
		return 0;
	case 1:
		return 0xffff888000000000ULL + below(s, 1 << 20);	/* kernel */
	case 2:
		return 0x10 + below(s, 4096);	/* unmapped */
	case 3:
		return (uint64_t)(uintptr_t)arena + ARENA - below(s, 64);
	case 4:
		return rnd(s);
	default:
		return (uint64_t)(uintptr_t)arena + below(s, ARENA);
	}
}

static void count(int ret)
{
	atomic_fetch_add(&calls, 1);
	if (ret < 0)
		ret = -ret;
	atomic_fetch_add(&errs[ret > NERR ? NERR : ret], 1);
}

/* Errno of a call returning a pointer (NULL and errno on failure). */
static void *countp(void *p)
{
	count(p ? 0 : (errno ? errno : NERR));
	return p;
}

/* --- the object table ------------------------------------------------------ */

/* A random slot of KIND, read-locked; NULL if none (or all busy). */
static struct slot *pick(struct ctx *x, uint64_t *s, enum kind kind)
{
	int i, start = below(s, NSLOT);

	for (i = 0; i < NSLOT; i++) {
		struct slot *sl = &x->s[(start + i) % NSLOT];

		if (sl->kind != kind || pthread_rwlock_tryrdlock(&sl->lock))
			continue;
		if (sl->kind == kind)
			return sl;
		pthread_rwlock_unlock(&sl->lock);
	}
	return NULL;
}

/* A random slot of KIND, write-locked (to destroy or resize it). */
static struct slot *pick_w(struct ctx *x, uint64_t *s, enum kind kind)
{
	int i, start = below(s, NSLOT);

	for (i = 0; i < NSLOT; i++) {
		struct slot *sl = &x->s[(start + i) % NSLOT];

		if (sl->kind != kind || pthread_rwlock_trywrlock(&sl->lock))
			continue;
		if (sl->kind == kind)
			return sl;
		pthread_rwlock_unlock(&sl->lock);
	}
	return NULL;
}

/* A free slot, write-locked. */
static struct slot *pick_free(struct ctx *x, uint64_t *s)
{
	return pick_w(x, s, K_NONE);
}

static void put(struct slot *sl)
{
	if (sl)
		pthread_rwlock_unlock(&sl->lock);
}

static void fill(struct slot *sl, enum kind kind, void *obj)
{
	if (obj) {
		sl->kind = kind;
		sl->obj = obj;
		sl->ready = 0;
	}
	put(sl);
}

/* --- libibverbs operations -------------------------------------------------- */

static int access_flags(uint64_t *s)
{
	static const int good[] = {
		0, IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND,
		IBV_ACCESS_REMOTE_WRITE,	/* invalid without LOCAL_WRITE */
	};

	if (chance(s, 20))
		return val32(s);
	return good[below(s, 5)] | (chance(s, 20) ? IBV_ACCESS_ZERO_BASED : 0);
}

static void op_pd(struct ctx *x, uint64_t *s)
{
	struct slot *sl;

	if (chance(s, 60)) {
		if (!(sl = pick_free(x, s)))
			return;
		fill(sl, K_PD, countp(ibv_alloc_pd(x->c)));
	} else if ((sl = pick_w(x, s, K_PD))) {
		int r = ibv_dealloc_pd(sl->obj);

		count(r);
		if (!r)
			sl->kind = K_NONE;
		put(sl);
	}
}

static void op_mr(struct ctx *x, uint64_t *s)
{
	struct slot *sl, *pd;
	size_t len;
	void *a;

	if (chance(s, 55)) {
		if (!(pd = pick(x, s, K_PD)))
			return;
		if (!(sl = pick_free(x, s))) {
			put(pd);
			return;
		}
		a = (void *)(uintptr_t)addr(s);
		switch (below(s, 5)) {
		case 0: len = 0; break;
		case 1: len = val32(s); break;
		case 2: len = rnd(s); break;
		default: len = 1 + below(s, 65536); break;
		}
		fill(sl, K_MR, countp(ibv_reg_mr(((struct ibv_pd *)pd->obj), a, len, access_flags(s))));
		put(pd);
	} else if (chance(s, 70)) {
		if ((sl = pick_w(x, s, K_MR))) {
			int r = ibv_dereg_mr(sl->obj);

			count(r);
			if (!r)
				sl->kind = K_NONE;
			put(sl);
		}
	} else if ((sl = pick_w(x, s, K_MR))) {
		/* rereg: libibverbs keeps the MR on failure (IBV_REREG_MR_ERR_*). */
		pd = pick(x, s, K_PD);
		int r = ibv_rereg_mr(sl->obj, below(s, 8), pd ? pd->obj : NULL,
				     (void *)(uintptr_t)addr(s), below(s, 65536), access_flags(s));
		count(r < 0 ? errno : r);
		put(pd);
		put(sl);
	}
}

static void op_mw(struct ctx *x, uint64_t *s)
{
	struct slot *sl, *pd;

	if (chance(s, 60)) {
		if (!(pd = pick(x, s, K_PD)))
			return;
		if ((sl = pick_free(x, s)))
			fill(sl, K_MW, countp(ibv_alloc_mw(pd->obj, chance(s, 90) ?
							 1 + below(s, 2) : val32(s))));
		put(pd);
	} else if ((sl = pick_w(x, s, K_MW))) {
		int r = ibv_dealloc_mw(sl->obj);

		count(r);
		if (!r)
			sl->kind = K_NONE;
		put(sl);
	}
}

static int cqe_val(uint64_t *s)
{
	switch (below(s, 6)) {
	case 0: return 0;
	case 1: return -(int)below(s, 3) - 1;
	case 2: return val32(s);
	default: return 1 + below(s, 256);
	}
}

static void op_cq(struct ctx *x, uint64_t *s)
{
	struct slot *sl;
	struct ibv_wc wc[16];
	int r;

	switch (below(s, 6)) {
	case 0:
		if ((sl = pick_free(x, s)))
			fill(sl, K_CQ, countp(ibv_create_cq(x->c, cqe_val(s), NULL,
							    chance(s, 50) ? x->ch : NULL,
							    chance(s, 90) ? 0 : val32(s))));
		break;
	case 1:
		if ((sl = pick_w(x, s, K_CQ))) {
			r = ibv_destroy_cq(sl->obj);
			count(r);
			if (!r)
				sl->kind = K_NONE;
			put(sl);
		}
		break;
	case 2:
		if ((sl = pick_w(x, s, K_CQ))) {
			count(ibv_resize_cq(sl->obj, cqe_val(s)));
			put(sl);
		}
		break;
	case 3:
		if ((sl = pick(x, s, K_CQ))) {
			count(ibv_req_notify_cq(sl->obj, below(s, 2)));
			put(sl);
		}
		break;
	default:
		if ((sl = pick(x, s, K_CQ))) {
			r = ibv_poll_cq(sl->obj, 1 + below(s, 16), wc);
			count(r < 0 ? r : 0);
			if (r > 0)
				atomic_fetch_add(&wcs, r);
			put(sl);
		}
		break;
	}
}

static void op_srq(struct ctx *x, uint64_t *s)
{
	struct ibv_srq_init_attr ia = {};
	struct ibv_srq_attr a = {};
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge[4];
	struct slot *sl, *pd, *mr;
	int r, i;

	switch (below(s, 5)) {
	case 0:
		if (!(pd = pick(x, s, K_PD)))
			return;
		ia.attr.max_wr = chance(s, 70) ? 1 + below(s, 64) : val32(s);
		ia.attr.max_sge = chance(s, 70) ? 1 + below(s, 4) : val32(s);
		ia.attr.srq_limit = chance(s, 70) ? below(s, 8) : val32(s);
		if ((sl = pick_free(x, s)))
			fill(sl, K_SRQ, countp(ibv_create_srq(pd->obj, &ia)));
		put(pd);
		break;
	case 1:
		if ((sl = pick_w(x, s, K_SRQ))) {
			r = ibv_destroy_srq(sl->obj);
			count(r);
			if (!r)
				sl->kind = K_NONE;
			put(sl);
		}
		break;
	case 2:
		if ((sl = pick_w(x, s, K_SRQ))) {
			a.max_wr = chance(s, 60) ? 1 + below(s, 128) : val32(s);
			a.srq_limit = chance(s, 60) ? below(s, 64) : val32(s);
			count(ibv_modify_srq(sl->obj, &a, chance(s, 80) ? (int)below(s, 4) : (int)val32(s)));
			put(sl);
		}
		break;
	case 3:
		if ((sl = pick(x, s, K_SRQ))) {
			count(ibv_query_srq(sl->obj, &a));
			put(sl);
		}
		break;
	default:
		if (!(sl = pick(x, s, K_SRQ)))
			return;
		mr = pick(x, s, K_MR);
		wr.num_sge = below(s, 6);
		wr.sg_list = sge;
		for (i = 0; i < 4; i++) {
			sge[i].addr = addr(s);
			sge[i].length = val32(s);
			sge[i].lkey = mr && chance(s, 70) ? ((struct ibv_mr *)mr->obj)->lkey : val32(s);
		}
		if (wr.num_sge > 4)
			wr.num_sge = 4;
		count(ibv_post_srq_recv(sl->obj, &wr, &bad));
		put(mr);
		put(sl);
	}
}

static enum ibv_qp_type qp_type(uint64_t *s)
{
	static const enum ibv_qp_type t[] = {
		IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_UD,
		IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV,
	};

	return chance(s, 95) ? t[below(s, 8)] : (enum ibv_qp_type)below(s, 256);
}

static void op_qp_create(struct ctx *x, uint64_t *s)
{
	struct ibv_qp_init_attr a = {};
	struct slot *pd, *scq, *rcq, *srq = NULL, *sl;

	if (!(pd = pick(x, s, K_PD)))
		return;
	scq = pick(x, s, K_CQ);
	rcq = chance(s, 50) ? NULL : pick(x, s, K_CQ);
	if (!scq) {
		put(rcq);
		put(pd);
		return;
	}
	if (chance(s, 25))
		srq = pick(x, s, K_SRQ);
	a.send_cq = scq->obj;
	a.recv_cq = rcq ? rcq->obj : scq->obj;
	a.srq = srq ? srq->obj : NULL;
	a.qp_type = qp_type(s);
	a.sq_sig_all = below(s, 2);
	a.cap.max_send_wr = chance(s, 80) ? 1 + below(s, 64) : val32(s);
	a.cap.max_recv_wr = chance(s, 80) ? 1 + below(s, 64) : val32(s);
	a.cap.max_send_sge = chance(s, 80) ? 1 + below(s, 4) : val32(s);
	a.cap.max_recv_sge = chance(s, 80) ? 1 + below(s, 4) : val32(s);
	a.cap.max_inline_data = chance(s, 80) ? below(s, 128) : val32(s);
	if ((sl = pick_free(x, s)))
		fill(sl, K_QP, countp(ibv_create_qp(pd->obj, &a)));
	put(srq);
	put(rcq);
	put(scq);
	put(pd);
}

/* The QP up to RTS with sane values, its destination DEST (itself or
 * another QP of the table): so that its WRs are executed. */
static int qp_up(uint64_t *s, struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {};
	int r, ud = qp->qp_type == IBV_QPT_UD;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	count(r);
	if (r)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = 1 + below(s, 5);
	a.dest_qp_num = dest;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1 + below(s, 4);
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = my_gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	r = ibv_modify_qp(qp, &a, ud ? IBV_QP_STATE :
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | (qp->qp_type == IBV_QPT_RC ?
					   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
	count(r);
	if (r)
		return r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 1 + below(s, 3);	/* retries run out in milliseconds */
	a.retry_cnt = below(s, 3);
	a.rnr_retry = below(s, 2);
	a.max_rd_atomic = 1 + below(s, 4);
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  (qp->qp_type == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
	count(r);
	return r;
}

static void op_qp_modify(struct ctx *x, uint64_t *s)
{
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr ia;
	struct slot *sl, *other;
	uint8_t *p = (uint8_t *)&a;
	unsigned int i;

	if (!(sl = pick(x, s, K_QP)))
		return;
	struct ibv_qp *qp = sl->obj;

	switch (below(s, 4)) {
	case 0: /* properly up, to itself or to another QP */
		other = chance(s, 50) ? pick(x, s, K_QP) : NULL;
		if (!qp_up(s, qp, other ? ((struct ibv_qp *)other->obj)->qp_num : qp->qp_num))
			sl->ready = 1;
		put(other);
		break;
	case 1: /* random mask and values, the values near sane ones */
		a.qp_state = below(s, 8);
		a.cur_qp_state = below(s, 8);
		a.path_mtu = below(s, 7);
		a.qkey = val32(s);
		a.rq_psn = val32(s);
		a.sq_psn = val32(s);
		a.dest_qp_num = chance(s, 50) ? qp->qp_num : val32(s);
		a.qp_access_flags = access_flags(s);
		a.pkey_index = below(s, 3);
		a.port_num = below(s, 3);
		a.timeout = below(s, 32);
		a.retry_cnt = below(s, 9);
		a.rnr_retry = below(s, 9);
		a.min_rnr_timer = below(s, 33);
		a.max_rd_atomic = below(s, 200);
		a.max_dest_rd_atomic = below(s, 200);
		a.sq_draining = below(s, 2);
		a.en_sqd_async_notify = below(s, 2);
		a.path_mig_state = below(s, 4);
		a.cap.max_send_wr = val32(s);
		a.cap.max_recv_wr = val32(s);
		a.ah_attr.is_global = below(s, 2);
		a.ah_attr.grh.dgid = my_gid;
		if (chance(s, 30))
			for (i = 0; i < 16; i++)
				a.ah_attr.grh.dgid.raw[i] = rnd(s);
		a.ah_attr.grh.sgid_index = chance(s, 70) ? (uint32_t)gid_index : below(s, 256);
		a.ah_attr.grh.hop_limit = rnd(s);
		a.ah_attr.grh.flow_label = val32(s);
		a.ah_attr.port_num = below(s, 3);
		a.ah_attr.dlid = rnd(s);
		a.ah_attr.sl = below(s, 16);
		a.ah_attr.static_rate = below(s, 20);
		a.alt_ah_attr = a.ah_attr;
		a.alt_port_num = below(s, 3);
		a.alt_timeout = below(s, 32);
		a.rate_limit = val32(s);
		count(ibv_modify_qp(qp, &a, chance(s, 50) ? (int)(rnd(s) & 0x3fffff) :
				    (int)(IBV_QP_STATE | (rnd(s) & rnd(s) & 0x3fffff))));
		break;
	case 2: /* random bytes */
		for (i = 0; i < sizeof(a); i++)
			p[i] = rnd(s);
		count(ibv_modify_qp(qp, &a, (int)val32(s)));
		break;
	default:
		count(ibv_query_qp(qp, &a, (int)val32(s), &ia));
		break;
	}
	put(sl);
}

static void op_qp_destroy(struct ctx *x, uint64_t *s)
{
	struct slot *sl;
	int r;

	if ((sl = pick_w(x, s, K_QP))) {
		r = ibv_destroy_qp(sl->obj);
		count(r);
		if (!r)
			sl->kind = K_NONE;
		put(sl);
	}
}

static void op_ah(struct ctx *x, uint64_t *s)
{
	struct ibv_ah_attr a = {};
	struct slot *pd, *sl;
	int i, r;

	if (chance(s, 60)) {
		if (!(pd = pick(x, s, K_PD)))
			return;
		a.is_global = chance(s, 90);
		a.grh.dgid = my_gid;
		if (chance(s, 30))
			for (i = 0; i < 16; i++)
				a.grh.dgid.raw[i] = rnd(s);
		a.grh.sgid_index = chance(s, 80) ? (uint32_t)gid_index : below(s, 256);
		a.grh.hop_limit = rnd(s);
		a.grh.traffic_class = rnd(s);
		a.grh.flow_label = val32(s);
		a.dlid = rnd(s);
		a.sl = below(s, 16);
		a.static_rate = below(s, 20);
		a.port_num = chance(s, 90) ? 1 : below(s, 4);
		if ((sl = pick_free(x, s)))
			fill(sl, K_AH, countp(ibv_create_ah(pd->obj, &a)));
		put(pd);
	} else if ((sl = pick_w(x, s, K_AH))) {
		r = ibv_destroy_ah(sl->obj);
		count(r);
		if (!r)
			sl->kind = K_NONE;
		put(sl);
	}
}

static void op_mcast(struct ctx *x, uint64_t *s)
{
	union ibv_gid g = { .raw = { 0xff, 0x0e } };
	struct slot *sl;
	int i;

	if (!(sl = pick(x, s, K_QP)))
		return;
	g.raw[15] = below(s, 4);
	if (chance(s, 20))
		for (i = 0; i < 16; i++)
			g.raw[i] = rnd(s);
	if (chance(s, 60))
		count(ibv_attach_mcast(sl->obj, &g, mcast_lids ? rnd(s) : 0));
	else
		count(ibv_detach_mcast(sl->obj, &g, mcast_lids ? rnd(s) : 0));
	put(sl);
}

static void op_post(struct ctx *x, uint64_t *s)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_SEND_WITH_INV,
		IBV_WR_BIND_MW, IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE,
	};
	struct ibv_send_wr wr[3] = {}, *bad;
	struct ibv_recv_wr rwr[3] = {}, *rbad;
	struct ibv_sge sge[3][4];
	struct slot *sl, *mr, *ah = NULL, *mw = NULL;
	struct ibv_qp *qp;
	int i, j, n, inl;

	if (!(sl = pick(x, s, K_QP)))
		return;
	qp = sl->obj;
	mr = pick(x, s, K_MR);
	n = 1 + below(s, 3);
	for (i = 0; i < n; i++) {
		inl = chance(s, 15);
		for (j = 0; j < 4; j++) {
			if (inl) {
				/* The provider copies inline data itself: keep it in the arena. */
				sge[i][j].length = below(s, 256);
				sge[i][j].addr = (uintptr_t)arena + below(s, ARENA - 256);
			} else if (mr && chance(s, 70)) {
				struct ibv_mr *m = mr->obj;

				sge[i][j].addr = (uintptr_t)m->addr + below(s, m->length + 8);
				sge[i][j].length = chance(s, 80) ? below(s, 4096) : val32(s);
			} else {
				sge[i][j].addr = addr(s);
				sge[i][j].length = val32(s);
			}
			sge[i][j].lkey = mr && chance(s, 80) ? ((struct ibv_mr *)mr->obj)->lkey : val32(s);
		}
		if (chance(s, 50)) {
			rwr[i].wr_id = i;
			rwr[i].sg_list = sge[i];
			rwr[i].num_sge = below(s, 5);
			rwr[i].next = i + 1 < n ? &rwr[i + 1] : NULL;
		}
		wr[i].wr_id = i;
		wr[i].sg_list = sge[i];
		wr[i].num_sge = below(s, 5);
		wr[i].opcode = chance(s, 95) ? ops[below(s, sizeof(ops) / sizeof(ops[0]))] :
			       (enum ibv_wr_opcode)below(s, 64);
		wr[i].send_flags = (inl ? IBV_SEND_INLINE : 0) |
				   (chance(s, 50) ? IBV_SEND_SIGNALED : 0) |
				   (chance(s, 10) ? IBV_SEND_SOLICITED : 0) |
				   (chance(s, 10) ? IBV_SEND_FENCE : 0);
		wr[i].imm_data = val32(s);
		wr[i].wr.rdma.remote_addr = chance(s, 50) && mr ?
			(uintptr_t)((struct ibv_mr *)mr->obj)->addr + below(s, 4096) : addr(s);
		wr[i].wr.rdma.rkey = mr && chance(s, 70) ? ((struct ibv_mr *)mr->obj)->rkey : val32(s);
		if (wr[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[i].wr.atomic.remote_addr = wr[i].wr.rdma.remote_addr & (chance(s, 80) ? ~7ULL : ~0ULL);
			wr[i].wr.atomic.rkey = wr[i].wr.rdma.rkey;
			wr[i].wr.atomic.compare_add = rnd(s);
			wr[i].wr.atomic.swap = rnd(s);
		}
		if (wr[i].opcode == IBV_WR_LOCAL_INV || wr[i].opcode == IBV_WR_SEND_WITH_INV)
			wr[i].invalidate_rkey = mr && chance(s, 50) ? ((struct ibv_mr *)mr->obj)->rkey : val32(s);
		if (wr[i].opcode == IBV_WR_BIND_MW) {
			/* The provider reads the MW and MR: only real ones. */
			if (!mw)
				mw = pick(x, s, K_MW);
			if (!mw || !mr) {
				wr[i].opcode = IBV_WR_SEND;
			} else {
				wr[i].bind_mw.mw = mw->obj;
				wr[i].bind_mw.rkey = chance(s, 70) ? ibv_inc_rkey(((struct ibv_mw *)mw->obj)->rkey) : val32(s);
				wr[i].bind_mw.bind_info.mr = mr->obj;
				wr[i].bind_mw.bind_info.addr = (uintptr_t)((struct ibv_mr *)mr->obj)->addr + below(s, 64);
				wr[i].bind_mw.bind_info.length = chance(s, 80) ? below(s, 4096) : rnd(s);
				wr[i].bind_mw.bind_info.mw_access_flags = access_flags(s);
			}
		}
		if (qp->qp_type == IBV_QPT_UD) {
			/* The provider copies the AH's address vector: only real ones. */
			if (!ah)
				ah = pick(x, s, K_AH);
			if (!ah) {
				n = i;
				break;
			}
			wr[i].wr.ud.ah = ah->obj;
			wr[i].wr.ud.remote_qpn = chance(s, 60) ? qp->qp_num : val32(s);
			wr[i].wr.ud.remote_qkey = chance(s, 70) ? 0x11111111 : val32(s);
		}
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (n) {
		wr[n - 1].next = NULL;
		if (rwr[0].sg_list && chance(s, 50)) {
			for (i = 0; i < n && rwr[i].sg_list; i++)
				;
			rwr[i - 1].next = NULL;
			count(ibv_post_recv(qp, rwr, &rbad));
		} else {
			i = ibv_post_send(qp, wr, &bad);
			count(i);
			if (!i)
				atomic_fetch_add(&sends_ok, n);
		}
	}
	put(mw);
	put(ah);
	put(mr);
	put(sl);
}

static void op_query(struct ctx *x, uint64_t *s)
{
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	union ibv_gid g;
	uint16_t pkey;

	switch (below(s, 4)) {
	case 0: count(ibv_query_device(x->c, &da)); break;
	case 1: count(ibv_query_port(x->c, below(s, 3), &pa)); break;
	case 2: count(ibv_query_gid(x->c, 1, chance(s, 80) ? below(s, 16) : val32(s), &g)); break;
	default: count(ibv_query_pkey(x->c, 1, chance(s, 80) ? below(s, 2) : val32(s), &pkey)); break;
	}
}

static struct ibv_context *open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), devname))
			c = ibv_open_device(l[i]);
	if (l)
		ibv_free_device_list(l);
	return c;
}

/* Close the context with whatever it holds (the kernel destroys it all),
 * then open it again. Write-locked: no call of this context is running. */
static void op_reopen(struct ctx *x, uint64_t *s)
{
	struct ibv_context *c;
	int i;

	if (pthread_rwlock_trywrlock(&x->lock))
		return;
	if (x->c) {
		/*
		 * The kernel destroys what the context holds. The library's
		 * QPs, SRQs and CQs keep their queues mapped until destroyed
		 * here: those left to the kernel are bounded (memory).
		 */
		static const enum kind order[] = { K_QP, K_SRQ, K_CQ };
		int k;

		for (k = 0; k < 3; k++)
			for (i = 0; i < NSLOT; i++) {
				struct slot *sl = &x->s[i];

				if (sl->kind != order[k])
					continue;
				if (atomic_load(&left_mapped) < 300 && chance(s, 20)) {
					atomic_fetch_add(&left_mapped, 1);
					continue;
				}
				if (!(k == 0 ? ibv_destroy_qp(sl->obj) : k == 1 ?
				      ibv_destroy_srq(sl->obj) : ibv_destroy_cq(sl->obj)))
					sl->kind = K_NONE;
			}
		for (i = 0; i < NSLOT; i++)
			x->s[i].kind = K_NONE;	/* the rest's memory is the library's to leak */
		/*
		 * The channel before the context: ibv_destroy_comp_channel()
		 * locks its context's mutex, which ibv_close_device() frees (in
		 * the other order, the lock's zeroes landing in reused memory
		 * are what aborted a CI run in glibc's malloc, as read). A
		 * channel still counting CQs (those left to the kernel above)
		 * cannot be destroyed: close its file; the kernel's CQs keep
		 * the file until the context goes.
		 */
		if (x->ch && ibv_destroy_comp_channel(x->ch))
			close(x->ch->fd);
		x->ch = NULL;
		count(ibv_close_device(x->c));
		atomic_fetch_add(&closes, 1);
	}
	x->c = c = countp(open_dev());
	if (c) {
		x->ch = ibv_create_comp_channel(c);
		atomic_fetch_add(&opens, 1);
	}
	pthread_rwlock_unlock(&x->lock);
}

static void *verbs_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg;

	while (!expired()) {
		struct ctx *x = &ctxs[below(&s, NCTX)];
		int op = below(&s, 100);

		if (op == 0) {
			op_reopen(x, &s);
			continue;
		}
		if (pthread_rwlock_rdlock(&x->lock))
			continue;
		if (!x->c) {
			pthread_rwlock_unlock(&x->lock);
			op_reopen(x, &s);
			continue;
		}
		if (op < 8) op_pd(x, &s);
		else if (op < 18) op_mr(x, &s);
		else if (op < 22) op_mw(x, &s);
		else if (op < 32) op_cq(x, &s);
		else if (op < 38) op_srq(x, &s);
		else if (op < 46) op_qp_create(x, &s);
		else if (op < 58) op_qp_modify(x, &s);
		else if (op < 61) op_qp_destroy(x, &s);
		else if (op < 66) op_ah(x, &s);
		else if (op < 69) op_mcast(x, &s);
		else if (op < 95) op_post(x, &s);
		else op_query(x, &s);
		pthread_rwlock_unlock(&x->lock);
	}
	return NULL;
}

/* --- raw commands on the uverbs file ----------------------------------------- */

#define RESP_SIZE (1 << 19)	/* more than out_words can ask for (0xffff * 4) */
#define GUARD (1 << 20)		/* no access: what runs past the buffers faults */

struct raw {
	int fd, async_fd;
	char *resp;
	uint32_t pd, cq, qp, qpn;
	struct rxe_queue_buf *sq, *rq, *cqq;
	size_t sq_size, rq_size, cq_size;
	uint64_t words[512];
};

static char uverbs_path[64];

/* One legacy command: header then IN bytes of payload; the errno. */
static int raw_cmd(struct raw *r, uint32_t command, void *in, size_t len, uint16_t out_words)
{
	char buf[8 + sizeof(r->words)];
	struct ib_uverbs_cmd_hdr h = {
		.command = command,
		.in_words = (len + 8) / 4,
		.out_words = out_words,
	};

	memcpy(buf, &h, 8);
	memcpy(buf + 8, in, len);
	atomic_fetch_add(&raw_writes, 1);
	if (write(r->fd, buf, len + 8) < 0) {
		count(errno);
		return errno;
	}
	count(0);
	return 0;
}

static void raw_close(struct raw *r)
{
	if (r->sq)
		munmap(r->sq, r->sq_size);
	if (r->rq)
		munmap(r->rq, r->rq_size);
	if (r->cqq)
		munmap(r->cqq, r->cq_size);
	r->sq = r->rq = r->cqq = NULL;
	if (r->async_fd > 2)
		close(r->async_fd);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = r->async_fd = -1;
}

static void *map_queue(struct raw *r, void *mi_p, size_t *size)
{
	struct mminfo mi;
	void *p;

	memcpy(&mi, mi_p, sizeof(mi));
	if (!mi.size)
		return NULL;
	p = mmap(NULL, mi.size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, mi.offset);
	atomic_fetch_add(&mmaps, 1);
	count(p == MAP_FAILED ? errno : 0);
	if (p == MAP_FAILED)
		return NULL;
	*size = mi.size;
	return p;
}

/* Open the file, get a context, and build a PD, a CQ and an RC QP looped
 * back to itself at RTS, with the queues mapped. */
static void raw_open(struct raw *r, uint64_t *s)
{
	struct ib_uverbs_get_context gc = { .response = (uintptr_t)r->resp };
	struct ib_uverbs_alloc_pd pd = { .response = (uintptr_t)r->resp };
	struct ib_uverbs_create_cq cq = { .response = (uintptr_t)r->resp };
	struct ib_uverbs_create_qp qp = { .response = (uintptr_t)r->resp };
	struct ib_uverbs_modify_qp m = {};
	char *resp = r->resp;

	r->fd = open(uverbs_path, O_RDWR | O_CLOEXEC);
	r->async_fd = -1;
	if (r->fd < 0)
		return;
	atomic_fetch_add(&opens, 1);
	if (raw_cmd(r, IB_USER_VERBS_CMD_GET_CONTEXT, &gc, sizeof(gc), 64 / 4))
		return;
	r->async_fd = ((struct ib_uverbs_get_context_resp *)resp)->async_fd;
	if (raw_cmd(r, IB_USER_VERBS_CMD_ALLOC_PD, &pd, sizeof(pd), 64 / 4))
		return;
	r->pd = ((struct ib_uverbs_alloc_pd_resp *)resp)->pd_handle;
	cq.cqe = 1 + below(s, 64);
	cq.comp_channel = -1;
	memset(resp, 0, 64);
	if (raw_cmd(r, IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), 64 / 4))
		return;
	r->cq = ((struct ib_uverbs_create_cq_resp *)resp)->cq_handle;
	r->cqq = map_queue(r, resp + sizeof(struct ib_uverbs_create_cq_resp), &r->cq_size);
	qp.pd_handle = r->pd;
	qp.send_cq_handle = qp.recv_cq_handle = r->cq;
	qp.max_send_wr = qp.max_recv_wr = 1 + below(s, 32);
	qp.max_send_sge = qp.max_recv_sge = 1 + below(s, 4);
	qp.max_inline_data = below(s, 64);
	qp.qp_type = IBV_QPT_RC;
	qp.sq_sig_all = below(s, 2);
	memset(resp, 0, 128);
	if (raw_cmd(r, IB_USER_VERBS_CMD_CREATE_QP, &qp, sizeof(qp), 128 / 4))
		return;
	r->qp = ((struct ib_uverbs_create_qp_resp *)resp)->qp_handle;
	r->qpn = ((struct ib_uverbs_create_qp_resp *)resp)->qpn;
	char *drv = resp + sizeof(struct ib_uverbs_create_qp_resp);
	r->rq = map_queue(r, drv, &r->rq_size);
	r->sq = map_queue(r, drv + sizeof(struct mminfo), &r->sq_size);
	/* INIT, RTR, RTS */
	m.qp_handle = r->qp;
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	m.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	if (raw_cmd(r, IB_USER_VERBS_CMD_MODIFY_QP, &m, sizeof(m), 0))
		return;
	m.qp_state = IBV_QPS_RTR;
	m.path_mtu = IBV_MTU_1024;
	m.dest_qp_num = r->qpn;
	m.max_dest_rd_atomic = 1;
	m.min_rnr_timer = 1;
	memcpy(m.dest.dgid, my_gid.raw, 16);
	m.dest.sgid_index = gid_index;
	m.dest.hop_limit = 1;
	m.dest.is_global = 1;
	m.dest.port_num = 1;
	m.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (raw_cmd(r, IB_USER_VERBS_CMD_MODIFY_QP, &m, sizeof(m), 0))
		return;
	m.qp_state = IBV_QPS_RTS;
	m.timeout = 1;
	m.retry_cnt = 1;
	m.rnr_retry = 1;
	m.max_rd_atomic = 1;
	m.attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		      IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	raw_cmd(r, IB_USER_VERBS_CMD_MODIFY_QP, &m, sizeof(m), 0);
}

/* Write WQEs of random content (plausible or raw bytes) into a mapped
 * queue and move its producer index, or scribble the indices and sizes
 * the kernel must not trust. */
static void scribble(uint64_t *s, struct rxe_queue_buf *q, size_t size, int send)
{
	uint32_t esz, mask, n, i, k, pi;

	if (!q)
		return;
	atomic_fetch_add(&scribbles, 1);
	esz = 1u << (q->log2_elem_size & 15);
	mask = q->index_mask;
	if (chance(s, 5)) {
		/* What the kernel reads back must be its own copy. */
		uint32_t *w = (uint32_t *)q;

		w[below(s, 2)] = val32(s);
		return;
	}
	if (chance(s, 10)) {
		q->producer_index = val32(s);
		q->consumer_index = chance(s, 50) ? val32(s) : q->consumer_index;
		return;
	}
	if (((uint64_t)mask + 1) * esz + sizeof(*q) > size)
		return;	/* we scribbled the header ourselves */
	n = 1 + below(s, 4);
	pi = q->producer_index;
	for (k = 0; k < n; k++) {
		uint8_t *e = q->data + ((pi + k) & mask) * esz;
		/* The element size is the header's, which may be one we
		 * scribbled: a WQE's fixed part may not fit, and written whole
		 * into the last element it ran past the mapping. */
		size_t fixed = send ? sizeof(struct rxe_send_wqe) : sizeof(struct rxe_recv_wqe);

		if (chance(s, 20) || esz < fixed) {
			for (i = 0; i < esz; i++)
				e[i] = rnd(s);
			continue;
		}
		memset(e, 0, esz);
		if (send) {
			struct rxe_send_wqe *w = (void *)e;
			uint32_t ns = chance(s, 85) ? below(s, 5) : val32(s);

			w->wr.wr_id = k;
			w->wr.opcode = chance(s, 80) ? below(s, 16) : val32(s);
			w->wr.send_flags = below(s, 32);
			w->wr.wr.rdma.remote_addr = addr(s);
			w->wr.wr.rdma.rkey = val32(s);
			w->dma.length = val32(s);
			w->dma.resid = chance(s, 50) ? w->dma.length : val32(s);
			w->dma.num_sge = ns;
			w->dma.cur_sge = chance(s, 90) ? 0 : val32(s);
			w->dma.sge_offset = chance(s, 90) ? 0 : val32(s);
			w->iova = addr(s);
			w->state = chance(s, 90) ? 0 : val32(s);
			w->status = chance(s, 90) ? 0 : val32(s);
			for (i = 0; i < 4 && (uint8_t *)&w->dma.sge[i + 1] <= e + esz; i++) {
				w->dma.sge[i].addr = addr(s);
				w->dma.sge[i].length = val32(s);
				w->dma.sge[i].lkey = val32(s);
			}
		} else {
			struct rxe_recv_wqe *w = (void *)e;

			w->wr_id = k;
			w->dma.length = val32(s);
			w->dma.resid = chance(s, 50) ? w->dma.length : val32(s);
			w->dma.num_sge = chance(s, 85) ? below(s, 5) : val32(s);
			w->dma.cur_sge = chance(s, 90) ? 0 : val32(s);
			for (i = 0; i < 4 && (uint8_t *)&w->dma.sge[i + 1] <= e + esz; i++) {
				w->dma.sge[i].addr = addr(s);
				w->dma.sge[i].length = val32(s);
				w->dma.sge[i].lkey = val32(s);
			}
		}
	}
	__atomic_store_n(&q->producer_index, pi + (chance(s, 90) ? n : val32(s)), __ATOMIC_RELEASE);
}

/* Legacy command sizes (the request structs), to build plausible ones. */
static const uint16_t req_size[] = {
	[IB_USER_VERBS_CMD_GET_CONTEXT] = sizeof(struct ib_uverbs_get_context),
	[IB_USER_VERBS_CMD_QUERY_DEVICE] = sizeof(struct ib_uverbs_query_device),
	[IB_USER_VERBS_CMD_QUERY_PORT] = sizeof(struct ib_uverbs_query_port),
	[IB_USER_VERBS_CMD_ALLOC_PD] = sizeof(struct ib_uverbs_alloc_pd),
	[IB_USER_VERBS_CMD_DEALLOC_PD] = sizeof(struct ib_uverbs_dealloc_pd),
	[IB_USER_VERBS_CMD_CREATE_AH] = sizeof(struct ib_uverbs_create_ah),
	[IB_USER_VERBS_CMD_DESTROY_AH] = sizeof(struct ib_uverbs_destroy_ah),
	[IB_USER_VERBS_CMD_REG_MR] = sizeof(struct ib_uverbs_reg_mr),
	[IB_USER_VERBS_CMD_REREG_MR] = sizeof(struct ib_uverbs_rereg_mr),
	[IB_USER_VERBS_CMD_DEREG_MR] = sizeof(struct ib_uverbs_dereg_mr),
	[IB_USER_VERBS_CMD_ALLOC_MW] = sizeof(struct ib_uverbs_alloc_mw),
	[IB_USER_VERBS_CMD_DEALLOC_MW] = sizeof(struct ib_uverbs_dealloc_mw),
	[IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL] = sizeof(struct ib_uverbs_create_comp_channel),
	[IB_USER_VERBS_CMD_CREATE_CQ] = sizeof(struct ib_uverbs_create_cq),
	[IB_USER_VERBS_CMD_RESIZE_CQ] = sizeof(struct ib_uverbs_resize_cq),
	[IB_USER_VERBS_CMD_DESTROY_CQ] = sizeof(struct ib_uverbs_destroy_cq),
	[IB_USER_VERBS_CMD_POLL_CQ] = sizeof(struct ib_uverbs_poll_cq),
	[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ] = sizeof(struct ib_uverbs_req_notify_cq),
	[IB_USER_VERBS_CMD_CREATE_QP] = sizeof(struct ib_uverbs_create_qp),
	[IB_USER_VERBS_CMD_QUERY_QP] = sizeof(struct ib_uverbs_query_qp),
	[IB_USER_VERBS_CMD_MODIFY_QP] = sizeof(struct ib_uverbs_modify_qp),
	[IB_USER_VERBS_CMD_DESTROY_QP] = sizeof(struct ib_uverbs_destroy_qp),
	[IB_USER_VERBS_CMD_POST_SEND] = sizeof(struct ib_uverbs_post_send),
	[IB_USER_VERBS_CMD_POST_RECV] = sizeof(struct ib_uverbs_post_recv),
	[IB_USER_VERBS_CMD_ATTACH_MCAST] = sizeof(struct ib_uverbs_attach_mcast),
	[IB_USER_VERBS_CMD_DETACH_MCAST] = sizeof(struct ib_uverbs_detach_mcast),
	[IB_USER_VERBS_CMD_CREATE_SRQ] = sizeof(struct ib_uverbs_create_srq),
	[IB_USER_VERBS_CMD_MODIFY_SRQ] = sizeof(struct ib_uverbs_modify_srq),
	[IB_USER_VERBS_CMD_QUERY_SRQ] = sizeof(struct ib_uverbs_query_srq),
	[IB_USER_VERBS_CMD_DESTROY_SRQ] = sizeof(struct ib_uverbs_destroy_srq),
	[IB_USER_VERBS_CMD_POST_SRQ_RECV] = sizeof(struct ib_uverbs_post_srq_recv),
	[IB_USER_VERBS_CMD_OPEN_XRCD] = sizeof(struct ib_uverbs_open_xrcd),
	[IB_USER_VERBS_CMD_CLOSE_XRCD] = sizeof(struct ib_uverbs_close_xrcd),
	[IB_USER_VERBS_CMD_CREATE_XSRQ] = sizeof(struct ib_uverbs_create_xsrq),
	[IB_USER_VERBS_CMD_OPEN_QP] = sizeof(struct ib_uverbs_open_qp),
};

/* Commands whose first word is the response pointer. */
static int has_response(uint32_t c)
{
	switch (c) {
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DESTROY_AH:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_DEALLOC_MW:
	case IB_USER_VERBS_CMD_REQ_NOTIFY_CQ:
	case IB_USER_VERBS_CMD_ATTACH_MCAST:
	case IB_USER_VERBS_CMD_DETACH_MCAST:
	case IB_USER_VERBS_CMD_MODIFY_QP:
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
	case IB_USER_VERBS_CMD_CLOSE_XRCD:
		return 0;
	}
	return 1;
}

/* A response address the kernel may write: our buffer, or one it must
 * refuse (never other memory of ours). */
static uint64_t resp_addr(struct raw *r, uint64_t *s)
{
	switch (below(s, 8)) {
	case 0: return 0;
	case 1: return 0xffff888000000000ULL;
	case 2: return (uintptr_t)r->resp + RESP_SIZE - below(s, 64);	/* runs into the guard page */
	default: return (uintptr_t)r->resp + below(s, 64) * 8;
	}
}

static void raw_fuzz(struct raw *r, uint64_t *s)
{
	uint32_t *w32 = (uint32_t *)r->words, c, i, len, out, handles[4];
	char buf[8 + 24 + sizeof(r->words)];
	struct ib_uverbs_cmd_hdr h;
	struct ib_uverbs_ex_cmd_hdr eh = {};
	int ex = chance(s, 15), hlen = 8, mine;
	ssize_t ret;
	uint64_t a;

	handles[0] = r->pd;
	handles[1] = r->cq;
	handles[2] = r->qp;
	handles[3] = below(s, 8);
	c = chance(s, 95) ? below(s, ex ? 0x3a : 0x2a) : val32(s) & 0xff;
	len = c < sizeof(req_size) / sizeof(req_size[0]) && req_size[c] && chance(s, 80) ?
	      req_size[c] : below(s, 256);
	if (chance(s, 50))
		len += 8 * below(s, 40);	/* WRs, SGEs, driver data */
	len &= ~3u;
	for (i = 0; i < sizeof(r->words) / 4; i++)
		w32[i] = chance(s, 40) ? handles[below(s, 4)] : val32(s);
	if (has_response(c) || ex)
		r->words[0] = resp_addr(r, s);
	/* Legacy post_send/recv: counts that fit what is there. */
	if (c == IB_USER_VERBS_CMD_POST_SEND || c == IB_USER_VERBS_CMD_POST_RECV ||
	    c == IB_USER_VERBS_CMD_POST_SRQ_RECV) {
		w32[2] = chance(s, 70) ? r->qp : w32[2];
		w32[3] = chance(s, 80) ? below(s, 4) : w32[3];
		w32[4] = chance(s, 80) ? below(s, 6) : w32[4];
		w32[5] = chance(s, 80) ? (c == IB_USER_VERBS_CMD_POST_SEND ?
			 sizeof(struct ib_uverbs_send_wr) : sizeof(struct ib_uverbs_recv_wr)) : w32[5];
		/* sge addresses inside the words are addresses to read or
		 * write through lkeys: the arena or refused ones only. */
		for (i = 3; i < sizeof(r->words) / 8; i++)
			if (chance(s, 30))
				r->words[i] = addr(s);
	}
	/* The LID of an attach or detach: see mcast_lids. */
	if (!ex && !mcast_lids && (c == IB_USER_VERBS_CMD_ATTACH_MCAST || c == IB_USER_VERBS_CMD_DETACH_MCAST))
		w32[5] = 0;
	out = chance(s, 80) ? below(s, 64) : rnd(s) & 0xffff;
	if (ex) {
		eh.response = resp_addr(r, s);
		eh.provider_in_words = chance(s, 80) ? 0 : below(s, 16);
		eh.provider_out_words = chance(s, 80) ? below(s, 8) : rnd(s);
		eh.cmd_hdr_reserved = chance(s, 90) ? 0 : val32(s);
		c |= IB_USER_VERBS_CMD_FLAG_EXTENDED;
	}
	h.command = c;
	h.in_words = ex ? len / 8 : (len + 8) / 4;
	h.out_words = ex ? below(s, 16) : out;
	if (chance(s, 10))
		h.in_words = rnd(s);
	memcpy(buf, &h, 8);
	if (ex) {
		memcpy(buf + 8, &eh, sizeof(eh));
		hlen += sizeof(eh);
	}
	memcpy(buf + hlen, r->words, len);
	len += hlen;
	if (chance(s, 5))
		len = below(s, len + 1);	/* truncated */
	atomic_fetch_add(&raw_writes, 1);
	a = r->words[0];
	/* No a + 4: a random word near 2^64 would wrap round and pass. */
	mine = !ex && a >= (uintptr_t)r->resp && a <= (uintptr_t)r->resp + RESP_SIZE - 4;
	if (mine)
		*(int *)(uintptr_t)a = -1;
	ret = write(r->fd, buf, len);
	count(ret < 0 ? errno : 0);
	/* A new async event file or completion channel: not ours to keep. */
	if (ret >= 0 && mine && ((c & 0xff) == IB_USER_VERBS_CMD_GET_CONTEXT ||
				 (c & 0xff) == IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL)) {
		int fd = *(int *)(uintptr_t)a;

		if (fd > 2 && fd != r->fd && fd != r->async_fd)
			close(fd);
	}
}

static void *raw_thread(void *arg)
{
	uint64_t s = (uintptr_t)arg;
	struct raw r = { .fd = -1, .async_fd = -1 };
	char *m;

	m = mmap(NULL, RESP_SIZE + GUARD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	mprotect(m + RESP_SIZE, GUARD, PROT_NONE);
	r.resp = m;
	raw_open(&r, &s);
	while (!expired()) {
		int op = below(&s, 100);

		if (op < 2 || r.fd < 0) {
			raw_close(&r);
			atomic_fetch_add(&closes, 1);
			raw_open(&r, &s);
		} else if (op < 40) {
			raw_fuzz(&r, &s);
		} else if (op < 75) {
			if (!scribbling)
				continue;
			scribble(&s, r.sq, r.sq_size, 1);
			struct ib_uverbs_post_send ps = {
				.response = (uintptr_t)r.resp, .qp_handle = r.qp,
				.wqe_size = sizeof(struct ib_uverbs_send_wr),
			};
			raw_cmd(&r, IB_USER_VERBS_CMD_POST_SEND, &ps, sizeof(ps), 1);
		} else if (op < 85) {
			if (!scribbling)
				continue;
			scribble(&s, r.rq, r.rq_size, 0);
		} else if (op < 92) {
			/* The CQ: the consumer index is ours; poll through the kernel too. */
			if (r.cqq) {
				if (chance(&s, 50))
					r.cqq->consumer_index = chance(&s, 50) ? r.cqq->producer_index : val32(&s);
				else
					r.cqq->consumer_index++;
			}
			struct ib_uverbs_req_notify_cq n = { .cq_handle = r.cq, .solicited_only = below(&s, 2) };
			raw_cmd(&r, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &n, sizeof(n), 0);
		} else {
			/* Random offsets and sizes of the file's mappings. */
			size_t len = 4096 * (1 + below(&s, 16));
			void *p = mmap(NULL, len, PROT_READ | (chance(&s, 50) ? PROT_WRITE : 0),
				       chance(&s, 90) ? MAP_SHARED : MAP_PRIVATE, r.fd,
				       chance(&s, 80) ? 4096ULL * below(&s, 64) : rnd(&s) & ~4095ULL);

			atomic_fetch_add(&mmaps, 1);
			count(p == MAP_FAILED ? errno : 0);
			if (p != MAP_FAILED)
				munmap(p, len);
		}
	}
	raw_close(&r);
	munmap(m, RESP_SIZE + GUARD);
	return NULL;
}

static void find_uverbs(void)
{
	char p[128], buf[64];
	int i;

	for (i = 0; i < 32; i++) {
		FILE *f;

		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/uverbs%d/ibdev", i);
		if (!(f = fopen(p, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && !strncmp(buf, devname, strlen(devname)) &&
		    (buf[strlen(devname)] == '\n' || !buf[strlen(devname)])) {
			snprintf(uverbs_path, sizeof(uverbs_path), "/dev/infiniband/uverbs%d", i);
			fclose(f);
			return;
		}
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	int seconds, nthreads = 4, i, j;
	uint64_t seed;
	const char *e;
	pthread_t t[17];
	pthread_rwlockattr_t wa;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX SECONDS [THREADS]\n", argv[0]);
		return 2;
	}
	devname = argv[1];
	gid_index = atoi(argv[2]);
	seconds = atoi(argv[3]);
	if (argc > 4)
		nthreads = atoi(argv[4]);
	if (nthreads < 1 || nthreads > 16)
		nthreads = 4;
	/*
	 * The RDMA core counts each attach the driver accepts in the QP's
	 * usecnt, and keeps one entry per (GID, LID) for the detaches at
	 * close; the drivers (C and this one) accept a second attach to a
	 * group as a no-op and refuse the detach of a QP no longer in it. So
	 * the same GID with two LIDs leaves usecnt above zero for good: the
	 * QP can never be destroyed and closing the file warns
	 * (uverbs_destroy_ufile_hw). RoCE has no LIDs: 0 unless asked.
	 */
	e = getenv("RRXE_FUZZ_MCAST_LIDS");
	mcast_lids = e && *e == '1';
	e = getenv("RRXE_FUZZ_SCRIBBLE");
	scribbling = !(e && *e == '0');
	e = getenv("RRXE_FUZZ_SEED");
	if (e && *e) {
		seed = strtoull(e, NULL, 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
	}
	printf("seed %llu (RRXE_FUZZ_SEED=%llu replays it), %d verbs threads and one raw, %d s\n",
	       (unsigned long long)seed, (unsigned long long)seed, nthreads, seconds);
	fflush(stdout);
	signal(SIGPIPE, SIG_IGN);

	/* MRs may start in the arena and run past it: into no-access pages
	 * (pinning fails), never into other memory of this process. */
	arena = mmap(NULL, ARENA + GUARD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		return 1;
	mprotect(arena + ARENA, GUARD, PROT_NONE);
	memset(arena, 0x5a, ARENA);
	find_uverbs();
	if (!uverbs_path[0]) {
		fprintf(stderr, "no uverbs device for %s\n", devname);
		return 1;
	}
	pthread_rwlockattr_init(&wa);
	pthread_rwlockattr_setkind_np(&wa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (i = 0; i < NCTX; i++) {
		pthread_rwlock_init(&ctxs[i].lock, &wa);
		for (j = 0; j < NSLOT; j++)
			pthread_rwlock_init(&ctxs[i].s[j].lock, NULL);
	}
	{
		struct ibv_context *c = open_dev();

		if (!c || ibv_query_gid(c, 1, gid_index, &my_gid)) {
			fprintf(stderr, "cannot open %s or read GID %d\n", devname, gid_index);
			return 1;
		}
		ibv_close_device(c);
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += seconds;
	for (i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, verbs_thread, (void *)(uintptr_t)(seed * 2654435761ULL + i + 1));
	pthread_create(&t[nthreads], NULL, raw_thread, (void *)(uintptr_t)(seed * 40503ULL + 99));
	for (i = 0; i <= nthreads; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < NCTX; i++)
		if (ctxs[i].c)
			ibv_close_device(ctxs[i].c);

	printf("calls %lu (raw writes %lu, queue scribbles %lu, mmaps %lu), contexts opened %lu closed %lu, "
	       "send WRs posted %lu, completions %lu\n",
	       (unsigned long)calls, (unsigned long)raw_writes, (unsigned long)scribbles,
	       (unsigned long)mmaps, (unsigned long)opens, (unsigned long)closes,
	       (unsigned long)sends_ok, (unsigned long)wcs);
	printf("results:");
	for (i = 0; i <= NERR; i++)
		if (errs[i])
			printf(" %s %lu", i == 0 ? "ok" : i == NERR ? "other" : strerrorname_np(i) ?: "?",
			       (unsigned long)errs[i]);
	printf("\n");
	return 0;
}
