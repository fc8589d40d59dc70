// SPDX-License-Identifier: GPL-2.0
/*
 * objmem DEVICE N: the kernel memory N queue pairs and N memory regions of
 * DEVICE take, for the benchmark's memory rows. Prints "name value" lines:
 *
 *   mem_slab_per1000_qp_kB      slab growth per 1000 RC QPs (with their CQ share)
 *   mem_vmalloc_per1000_qp_kB   vmalloc growth per 1000 QPs (the mmapped queues)
 *   mem_slab_per1000_mr_kB      slab growth per 1000 4 KiB user MRs
 *   mem_vmalloc_per1000_mr_kB   vmalloc growth per 1000 MRs
 *
 * Growth is read from /proc/meminfo (Slab, VmallocUsed) around the creation,
 * so it includes everything the kernel allocates for the objects: the RDMA
 * core's share as well as the driver's.
 */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
			v = atol(line + strlen(key) + 1);
			break;
		}
	fclose(f);
	return v;
}

static void settle(void)
{
	/* Let deferred frees (RCU, work) finish before reading. */
	sync();
	usleep(300000);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "rxe0";
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_qp **qps = calloc(n, sizeof(*qps));
	struct ibv_mr **mrs = calloc(n, sizeof(*mrs));
	char *buf = aligned_alloc(4096, (size_t)n * 4096);
	long slab0, vm0, slab1, vm1;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx || !qps || !mrs || !buf) {
		fprintf(stderr, "cannot open %s\n", name);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "cannot create PD/CQ\n");
		return 1;
	}

	settle();
	slab0 = meminfo_kb("Slab");
	vm0 = meminfo_kb("VmallocUsed");
	for (i = 0; i < n; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		qps[i] = ibv_create_qp(pd, &a);
		if (!qps[i]) {
			perror("ibv_create_qp");
			return 1;
		}
	}
	settle();
	slab1 = meminfo_kb("Slab");
	vm1 = meminfo_kb("VmallocUsed");
	printf("mem_slab_per1000_qp_kB %.1f\n", (slab1 - slab0) * 1000.0 / n);
	printf("mem_vmalloc_per1000_qp_kB %.1f\n", (vm1 - vm0) * 1000.0 / n);
	for (i = 0; i < n; i++)
		ibv_destroy_qp(qps[i]);

	memset(buf, 0, (size_t)n * 4096);
	settle();
	slab0 = meminfo_kb("Slab");
	vm0 = meminfo_kb("VmallocUsed");
	for (i = 0; i < n; i++) {
		mrs[i] = ibv_reg_mr(pd, buf + (size_t)i * 4096, 4096,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		if (!mrs[i]) {
			perror("ibv_reg_mr");
			return 1;
		}
	}
	settle();
	slab1 = meminfo_kb("Slab");
	vm1 = meminfo_kb("VmallocUsed");
	printf("mem_slab_per1000_mr_kB %.1f\n", (slab1 - slab0) * 1000.0 / n);
	printf("mem_vmalloc_per1000_mr_kB %.1f\n", (vm1 - vm0) * 1000.0 / n);
	for (i = 0; i < n; i++)
		ibv_dereg_mr(mrs[i]);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
