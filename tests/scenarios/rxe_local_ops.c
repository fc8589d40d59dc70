// SPDX-License-Identifier: GPL-2.0
/*
 * Local operations, ATOMIC WRITE and FLUSH between the guests
 * (tests/scenarios/rxe_local_ops.sh). The server owns the memory and does
 * the local operations on its send queue; the client reaches the memory:
 *  1. server: a type 2 window bound with IBV_WR_BIND_MW (ibv_post_send)
 *     and a type 1 window bound with ibv_bind_mw; both complete
 *     IBV_WC_BIND_MW successfully;
 *  2. client: RDMA WRITE through the type 2 window, RDMA READ back through
 *     it (data compared), RDMA WRITE through the type 1 window, ATOMIC
 *     WRITE (ibv_wr_atomic_write) of 8 bytes, FLUSH (global visibility,
 *     range) of a region registered with IBV_ACCESS_FLUSH_GLOBAL: all
 *     succeed; the server then finds the data in its memory;
 *  2b. client: an RDMA WRITE WITH IMMEDIATE of 100 bytes (one packet)
 *     after the 128-byte write: the server's receive completion is
 *     IBV_WC_RECV_RDMA_WITH_IMM with byte_len 100 (this write's length,
 *     not the one before) and the immediate;
 *  3. server: IBV_WR_LOCAL_INV of the type 2 window's rkey succeeds;
 *     client: an RDMA WRITE with that rkey completes with
 *     IBV_WC_REM_ACCESS_ERR;
 *  4. client, on a second QP: FLUSH of the whole region succeeds, FLUSH
 *     of a region without IBV_ACCESS_FLUSH_GLOBAL completes with
 *     IBV_WC_REM_ACCESS_ERR.
 * rdma-core 44 has no ibv_wr_flush (45 has): the client builds the FLUSH
 * by posting an RDMA WRITE with ibv_wr_rdma_write and rewriting its WQE
 * (struct rxe_send_wqe, uapi rdma_user_rxe.h) in the send queue that the
 * provider maps from /dev/infiniband/uverbs*, before wr_complete rings
 * the doorbell; the WQE is found by its unique wr_id and address.
 * The QP numbers, GIDs and keys go over TCP (port 18640).
 *
 * Usage: rxe_local_ops DEV GID_INDEX server|client PEER_IP
 */
#include "verbs_common.h"

#include <endian.h>

#define PORT 18640
#define NQP 2
#define PAGE 4096
/* Not in rdma-core 44's headers (the kernel's values). */
#define ACCESS_FLUSH_GLOBAL (1 << 8)
#define WR_FLUSH 14
#define WC_FLUSH 8
#define FLUSH_GLOBAL 1
#define FLUSH_RANGE 0
#define FLUSH_MR 1
/* struct rxe_send_wqe offsets (uapi rdma_user_rxe.h). */
#define WQE_OPCODE 12
#define WQE_FLUSH_ADDR 24
#define WQE_FLUSH_LEN 32
#define WQE_FLUSH_RKEY 36
#define WQE_FLUSH_TYPE 40
#define WQE_FLUSH_LEVEL 41
#define WQE_DMA_LENGTH 184
#define WQE_DMA_RESID 188

struct info {
	uint32_t qpn[NQP];
	union ibv_gid gid;
};

struct keys {
	uint64_t tbuf, nbuf;
	uint32_t mw2_rkey, mw1_rkey, tmr_rkey, nmr_rkey;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp[NQP];
static int gidx, fail;

static struct ibv_qp *create_qp(void)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_qp *q = ibv_create_qp_ex(ctx, &ia);

	if (!q)
		die("create_qp_ex: %s", strerror(errno));
	qp_to_init(q, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		   ACCESS_FLUSH_GLOBAL);
	return q;
}

/* The next completion (within 20 s): its status and opcode as expected. */
static void expect(uint64_t id, enum ibv_wc_status status, int opcode,
		   const char *what)
{
	struct ibv_wc wc = poll_one(cq, 20, what);

	printf("%s: wr_id %llu %s opcode %d\n", what,
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	       wc.status == IBV_WC_SUCCESS ? (int)wc.opcode : -1);
	if (wc.wr_id != id || wc.status != status ||
	    (status == IBV_WC_SUCCESS && (int)wc.opcode != opcode)) {
		printf("FAIL %s: wanted wr_id %llu %s opcode %d\n", what,
		       (unsigned long long)id, ibv_wc_status_str(status), opcode);
		fail = 1;
	}
}

static void post(struct ibv_qp *q, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;

	if (ibv_post_send(q, wr, &bad))
		die("%s: post_send: %s", what, strerror(errno));
}

static void rdma(struct ibv_qp *q, uint64_t id, enum ibv_wr_opcode op,
		 struct ibv_mr *mr, void *local, uint32_t len, uint64_t raddr,
		 uint32_t rkey, const char *what)
{
	struct ibv_sge sge = { (uintptr_t)local, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	post(q, &wr, what);
}

/* The WQE of wr_id `id` and address `addr` in a mapped uverbs queue. */
static unsigned char *find_wqe(uint64_t id, uint64_t addr)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned char *found = NULL;

	if (!f)
		die("maps: %s", strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (off = 0; off + 192 <= hi - lo; off += 8) {
			unsigned char *p = (unsigned char *)lo + off;
			uint64_t v, a;
			uint32_t op;

			memcpy(&v, p, 8);
			memcpy(&op, p + WQE_OPCODE, 4);
			memcpy(&a, p + WQE_FLUSH_ADDR, 8);
			if (v == id && op == IBV_WR_RDMA_WRITE && a == addr) {
				found = p;
				break;
			}
		}
	}
	fclose(f);
	return found;
}

/* A FLUSH through the extended API: an RDMA WRITE's WQE made a FLUSH. */
static void post_flush(struct ibv_qp *q, uint64_t id, uint32_t rkey,
		       uint64_t addr, uint32_t len, uint8_t level,
		       const char *what)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(q);
	unsigned char *w;
	uint32_t op = WR_FLUSH;

	ibv_wr_start(x);
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, rkey, addr);
	ibv_wr_set_sge(x, 0, 0, 0);
	w = find_wqe(id, addr);
	if (!w)
		die("%s: the WQE is not in a mapped queue", what);
	memcpy(w + WQE_OPCODE, &op, 4);
	memcpy(w + WQE_FLUSH_LEN, &len, 4);
	memcpy(w + WQE_FLUSH_RKEY, &rkey, 4);
	w[WQE_FLUSH_TYPE] = FLUSH_GLOBAL;
	w[WQE_FLUSH_LEVEL] = level;
	memcpy(w + WQE_DMA_LENGTH, &len, 4);
	memcpy(w + WQE_DMA_RESID, &len, 4);
	if (ibv_wr_complete(x))
		die("%s: wr_complete: %s", what, strerror(errno));
}

static void fill(unsigned char *p, int len, int seed)
{
	for (int i = 0; i < len; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

static void check(const unsigned char *p, int len, int seed, const char *what)
{
	for (int i = 0; i < len; i++) {
		if (p[i] != (unsigned char)(seed + i * 7)) {
			printf("FAIL %s: byte %d is %#x\n", what, i, p[i]);
			fail = 1;
			return;
		}
	}
	printf("%s: %d bytes as written\n", what, len);
}

static void server(int s)
{
	static unsigned char tbuf[4 * PAGE] __attribute__((aligned(PAGE)));
	static unsigned char nbuf[PAGE] __attribute__((aligned(PAGE)));
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *tmr = ibv_reg_mr(pd, tbuf, sizeof(tbuf),
					acc | IBV_ACCESS_MW_BIND | ACCESS_FLUSH_GLOBAL);
	struct ibv_mr *nmr = ibv_reg_mr(pd, nbuf, sizeof(nbuf), acc);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct keys k = {};
	uint64_t want = 0x1122334455667788ull, got;
	char c;

	if (!tmr || !nmr)
		die("reg_mr: %s", strerror(errno));
	if (!mw2 || !mw1)
		die("alloc_mw: %s", strerror(errno));

	/* 1. The type 2 window, bound through the send queue. */
	struct ibv_send_wr wr = {
		.wr_id = 1, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = {
			.mw = mw2, .rkey = ibv_inc_rkey(mw2->rkey),
			.bind_info = { .mr = tmr, .addr = (uintptr_t)tbuf,
				       .length = 1024,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
							  IBV_ACCESS_REMOTE_READ },
		},
	};
	post(qp[0], &wr, "bind type 2");
	expect(1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "bind type 2");
	k.mw2_rkey = wr.bind_mw.rkey;

	struct ibv_mw_bind b = {
		.wr_id = 2, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = tmr, .addr = (uintptr_t)tbuf + 1024,
			       .length = 1024,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ },
	};
	if (ibv_bind_mw(qp[0], mw1, &b))
		die("ibv_bind_mw: %s", strerror(errno));
	expect(2, IBV_WC_SUCCESS, IBV_WC_BIND_MW, "bind type 1");
	k.mw1_rkey = mw1->rkey;
	k.tbuf = (uintptr_t)tbuf;
	k.nbuf = (uintptr_t)nbuf;
	k.tmr_rkey = tmr->rkey;
	k.nmr_rkey = nmr->rkey;
	/* 2b's receive: a write with immediate takes one, and no bytes. */
	struct ibv_recv_wr rwr = { .wr_id = 20 }, *rbad;

	if (ibv_post_recv(qp[0], &rwr, &rbad))
		die("post_recv: %s", strerror(errno));
	xfer(s, &k, sizeof(k), 1);

	/* 2. The client's accesses. */
	xfer(s, &c, 1, 0);
	struct ibv_wc wc = poll_one(cq, 20, "write with immediate");

	printf("write with immediate: wr_id %llu %s opcode %d byte_len %u imm %#x\n",
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	       (int)wc.opcode, wc.byte_len, be32toh(wc.imm_data));
	if (wc.wr_id != 20 || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || wc.byte_len != 100 ||
	    !(wc.wc_flags & IBV_WC_WITH_IMM) || be32toh(wc.imm_data) != 0x5a5a0001) {
		printf("FAIL write with immediate: wanted wr_id 20 success opcode %d byte_len 100 imm 0x5a5a0001\n",
		       IBV_WC_RECV_RDMA_WITH_IMM);
		fail = 1;
	}
	check(tbuf + 3072, 100, 3, "write with immediate");
	check(tbuf + 64, 256, 1, "write through the type 2 window");
	check(tbuf + 1032, 128, 2, "write through the type 1 window");
	memcpy(&got, tbuf + 2048, 8);
	printf("atomic write: %#llx\n", (unsigned long long)got);
	if (got != want) {
		printf("FAIL atomic write: wanted %#llx\n", (unsigned long long)want);
		fail = 1;
	}

	/* 3. The type 2 window invalidated. */
	struct ibv_send_wr inv = {
		.wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = k.mw2_rkey,
	};
	post(qp[0], &inv, "local invalidate");
	expect(3, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, "local invalidate");
	xfer(s, &c, 1, 1);
	/* 4. Until the client is done. */
	xfer(s, &c, 1, 0);
	ibv_dealloc_mw(mw1);
	ibv_dealloc_mw(mw2);
}

static void client(int s)
{
	static unsigned char lbuf[2 * PAGE] __attribute__((aligned(PAGE)));
	struct ibv_mr *mr = ibv_reg_mr(pd, lbuf, sizeof(lbuf),
				       IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qp[0]);
	uint64_t v = 0x1122334455667788ull;
	struct keys k;
	char c = 'x';

	if (!mr)
		die("reg_mr: %s", strerror(errno));
	xfer(s, &k, sizeof(k), 0);

	/* 2. */
	fill(lbuf, 256, 1);
	rdma(qp[0], 10, IBV_WR_RDMA_WRITE, mr, lbuf, 256, k.tbuf + 64,
	     k.mw2_rkey, "write type 2");
	expect(10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "write type 2");
	memset(lbuf + PAGE, 0, 256);
	rdma(qp[0], 11, IBV_WR_RDMA_READ, mr, lbuf + PAGE, 256, k.tbuf + 64,
	     k.mw2_rkey, "read type 2");
	expect(11, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, "read type 2");
	check(lbuf + PAGE, 256, 1, "read through the type 2 window");
	fill(lbuf, 128, 2);
	rdma(qp[0], 12, IBV_WR_RDMA_WRITE, mr, lbuf, 128, k.tbuf + 1032,
	     k.mw1_rkey, "write type 1");
	expect(12, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "write type 1");

	/* 2b. */
	fill(lbuf, 100, 3);
	struct ibv_sge isge = { (uintptr_t)lbuf, 100, mr->lkey };
	struct ibv_send_wr iwr = {
		.wr_id = 18, .sg_list = &isge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x5a5a0001),
		.wr.rdma = { .remote_addr = k.tbuf + 3072, .rkey = k.tmr_rkey },
	};
	post(qp[0], &iwr, "write with immediate");
	expect(18, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, "write with immediate");

	ibv_wr_start(x);
	x->wr_id = 13;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, k.tmr_rkey, k.tbuf + 2048, &v);
	if (ibv_wr_complete(x))
		die("atomic write: wr_complete: %s", strerror(errno));
	expect(13, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, "atomic write");

	post_flush(qp[0], 14, k.tmr_rkey, k.tbuf, 2 * PAGE, FLUSH_RANGE,
		   "flush range");
	expect(14, IBV_WC_SUCCESS, WC_FLUSH, "flush range");
	xfer(s, &c, 1, 1);

	/* 3. */
	xfer(s, &c, 1, 0);
	rdma(qp[0], 15, IBV_WR_RDMA_WRITE, mr, lbuf, 64, k.tbuf + 64,
	     k.mw2_rkey, "write invalidated");
	expect(15, IBV_WC_REM_ACCESS_ERR, 0, "write invalidated");

	/* 4. */
	post_flush(qp[1], 16, k.tmr_rkey, k.tbuf, 0, FLUSH_MR, "flush mr");
	expect(16, IBV_WC_SUCCESS, WC_FLUSH, "flush mr");
	post_flush(qp[1], 17, k.nmr_rkey, k.nbuf, 64, FLUSH_RANGE,
		   "flush without access");
	expect(17, IBV_WC_REM_ACCESS_ERR, 0, "flush without access");
	xfer(s, &c, 1, 1);
}

int main(int argc, char **argv)
{
	struct info mine = {}, theirs;
	int is_server, s, i;

	if (argc != 5)
		die("usage: %s DEV GID_INDEX server|client PEER_IP", argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	gidx = atoi(argv[2]);
	is_server = !strcmp(argv[3], "server");
	ctx = open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		die("pd/cq: %s", strerror(errno));
	for (i = 0; i < NQP; i++) {
		qp[i] = create_qp();
		mine.qpn[i] = qp[i]->qp_num;
	}
	if (ibv_query_gid(ctx, 1, gidx, &mine.gid))
		die("query_gid");
	s = tcp_exchange(is_server, argv[4], PORT, &mine, &theirs, sizeof(mine));
	for (i = 0; i < NQP; i++)
		qp_to_rts(qp[i], theirs.qpn[i], &theirs.gid, gidx, 4, 1, 14, 7, 7);
	if (is_server)
		server(s);
	else
		client(s);
	close(s);
	printf("%s: %s\n", argv[3], fail ? "FAIL" : "ok");
	return fail;
}
