// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues and shared receive queues through the unmodified rxe
 * provider of rdma-core: create (the provider maps the queue the response
 * names), resize (it remaps), poll/post through the mapping, the limits'
 * errnos, destroy. Prints one line per step; exits 1 at the first surprise.
 * Built and run by rxe_cq_srq.sh; the same expectations hold for the C
 * driver.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static struct ibv_srq *srq_create(struct ibv_pd *pd, unsigned int wr, unsigned int sge)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = wr, .max_sge = sge } };
	struct ibv_srq *srq = ibv_create_srq(pd, &init);

	if (srq)
		printf("srq max_wr %u -> %u, max_sge %u\n", wr, init.attr.max_wr,
		       init.attr.max_sge);
	return srq;
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_srq_attr sa;
	struct ibv_wc wc[4];
	struct ibv_sge sge = { .addr = 0, .length = 64, .lkey = 0 };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i, ret;

	CHECK(list && list[0], "no device");
	ctx = ibv_open_device(list[0]);
	CHECK(ctx, "open %s", ibv_get_device_name(list[0]));
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");

	/* CQ: sizes round up to a power of two minus one. */
	cq = ibv_create_cq(ctx, 100, NULL, NULL, 0);
	CHECK(cq, "create_cq 100");
	printf("cq cqe 100 -> %d\n", cq->cqe);
	CHECK(cq->cqe == 127, "cqe %d", cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll of an empty cq");
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "req_notify");
	CHECK(ibv_req_notify_cq(cq, 1) == 0, "req_notify solicited");
	ret = ibv_resize_cq(cq, 1000);
	CHECK(ret == 0, "resize_cq 1000: %d", ret);
	printf("cq resized 1000 -> %d\n", cq->cqe);
	CHECK(cq->cqe == 1023, "cqe %d", cq->cqe);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll after resize");
	ret = ibv_resize_cq(cq, 10);
	CHECK(ret == 0 && cq->cqe == 15, "shrink to 10: %d, cqe %d", ret, cq->cqe);
	ret = ibv_resize_cq(cq, 32768);
	printf("resize_cq 32768: %d\n", ret);
	CHECK(ret == EINVAL && cq->cqe == 15, "resize over max_cqe: %d", ret);
	CHECK(ibv_poll_cq(cq, 4, wc) == 0, "poll after refused resize");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");

	errno = 0;
	cq = ibv_create_cq(ctx, 32768, NULL, NULL, 0);
	printf("create_cq 32768: %s errno %d\n", cq ? "created" : "refused", errno);
	CHECK(!cq && errno == EINVAL, "create over max_cqe");
	cq = ibv_create_cq(ctx, 32767, NULL, NULL, 0);
	CHECK(cq && cq->cqe == 32767, "create_cq 32767");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq 32767");

	/* Many at once, destroyed in another order. */
	{
		struct ibv_cq *cqs[16];

		for (i = 0; i < 16; i++) {
			cqs[i] = ibv_create_cq(ctx, i + 1, NULL, NULL, 0);
			CHECK(cqs[i], "create_cq %d", i + 1);
		}
		for (i = 15; i >= 0; i -= 2)
			CHECK(ibv_destroy_cq(cqs[i]) == 0, "destroy %d", i);
		for (i = 0; i < 16; i += 2)
			CHECK(ibv_destroy_cq(cqs[i]) == 0, "destroy %d", i);
	}

	/* SRQ */
	srq = srq_create(pd, 100, 2);
	CHECK(srq, "create_srq 100/2");
	CHECK(ibv_query_srq(srq, &sa) == 0, "query_srq");
	printf("srq query max_wr %u max_sge %u limit %u\n", sa.max_wr, sa.max_sge, sa.srq_limit);
	CHECK(sa.max_wr == 127 && sa.max_sge == 2 && sa.srq_limit == 0, "query values");
	for (i = 0; i < 10; i++) {
		wr.wr_id = i;
		ret = ibv_post_srq_recv(srq, &wr, &bad);
		CHECK(ret == 0, "post_srq_recv %d: %d", i, ret);
	}
	memset(&sa, 0, sizeof(sa));
	sa.max_wr = 300;
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	CHECK(ret == 0, "modify_srq max_wr 300: %d", ret);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == 511, "max_wr after resize %u", sa.max_wr);
	for (i = 10; i < 20; i++) {
		wr.wr_id = i;
		ret = ibv_post_srq_recv(srq, &wr, &bad);
		CHECK(ret == 0, "post_srq_recv %d after resize: %d", i, ret);
	}
	sa.srq_limit = 5;
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
	CHECK(ret == 0, "modify_srq limit 5: %d", ret);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 5, "limit %u", sa.srq_limit);
	sa.srq_limit = 512;
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT);
	printf("modify_srq limit 512: %d\n", ret);
	CHECK(ret == EINVAL, "limit over max_wr: %d", ret);
	sa.max_wr = 4;
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	printf("modify_srq max_wr 4 (limit 5): %d\n", ret);
	CHECK(ret == EINVAL, "max_wr under limit: %d", ret);
	sa.srq_limit = 0;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0, "disarm");
	sa.max_wr = 8;
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	printf("modify_srq max_wr 8 with 20 posted: %d\n", ret);
	CHECK(ret == EINVAL, "shrink below count: %d", ret);
	sa.max_wr = 20;
	ret = ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR);
	CHECK(ret == 0, "shrink to 20 with 20 posted: %d", ret);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == 31, "max_wr %u", sa.max_wr);
	for (i = 20; i < 31; i++) {
		wr.wr_id = i;
		ret = ibv_post_srq_recv(srq, &wr, &bad);
		CHECK(ret == 0, "post_srq_recv %d after shrink: %d", i, ret);
	}
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	printf("post_srq_recv to a full srq: %d\n", ret);
	CHECK(ret != 0, "post to a full srq");
	CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq");

	errno = 0;
	srq = srq_create(pd, 0, 1);
	printf("create_srq max_wr 0: errno %d\n", errno);
	CHECK(!srq && errno == EINVAL, "max_wr 0");
	errno = 0;
	srq = srq_create(pd, 16, 28);
	printf("create_srq max_sge 28: errno %d\n", errno);
	CHECK(!srq && errno == EINVAL, "max_sge 28");
	srq = srq_create(pd, 1, 0);
	CHECK(srq, "create_srq 1/0");
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_sge == 1 && sa.max_wr == 1,
	      "minimums: max_wr %u max_sge %u", sa.max_wr, sa.max_sge);
	CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq 1/0");

	/* Left for the process exit to clean up: the core destroys them. */
	CHECK(ibv_create_cq(ctx, 50, NULL, NULL, 0), "leftover cq");
	CHECK(srq_create(pd, 50, 4), "leftover srq");
	printf("ok\n");
	return 0;
}
