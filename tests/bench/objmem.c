// SPDX-License-Identifier: GPL-2.0
/*
 * objmem DEVICE N: the kernel memory N queue pairs and N memory regions of
 * DEVICE take, for the benchmark's memory rows. Prints "name value" lines:
 *
 *   mem_slab_per1000_qp_kB      slab growth per 1000 RC QPs (with their CQ share)
 *   mem_vmalloc_per1000_qp_kB   vmalloc growth per 1000 QPs (the mmapped queues)
 *   mem_slab_per1000_mr_kB      slab growth per 1000 4 KiB user MRs
 *   mem_vmalloc_per1000_mr_kB   vmalloc growth per 1000 MRs
 *   mem_percpu_per1000_{qp,mr}_kB  per-CPU memory growth (all CPUs' copies)
 *   mem_slabobj_per1000_{qp,mr}_kB the slab objects' own bytes (objects in
 *                               use times their size, /proc/slabinfo)
 *
 * Growth is read from /proc/meminfo (Slab, VmallocUsed, Percpu) around the creation,
 * so it includes everything the kernel allocates for the objects: the RDMA
 * core's share as well as the driver's. The Slab growth counts pages, so it
 * also moves with how full the caches' slabs were before; the objects'
 * bytes do not (read by root only: not printed otherwise). Every slab
 * cache is shrunk before each reading (shrink_slabs()).
 *
 * objmem DEVICE N -t also prints the median time of one call, in
 * microseconds (time_<verb>_us), of each of the four loops, for
 * tests/scenarios/bench_profile.sh (PROF_OP=objmem); the benchmark does not
 * ask for them.
 *
 * With OBJMEM_SLABINFO=PREFIX in the environment, /proc/slabinfo is also
 * copied where the growth is read: PREFIX.qp.0 and PREFIX.qp.1 around the
 * QPs' creation, PREFIX.mr.0 and PREFIX.mr.1 around the MRs', for
 * tests/bench/slab-diff.py (which caches grew, by how many objects).
 */
#include <dirent.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_time.h"

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

/* What objects can take of the kernel's memory, in kB. */
struct kmem {
	long slab, vmalloc, percpu;
	double slabobj;
};

/*
 * The bytes of the slab objects in use, in kB: each cache's active
 * objects times its object size (/proc/slabinfo, version 2.1); -1 if it
 * cannot be read. With OBJMEM_SLABINFO=PREFIX, the same reading is also
 * copied to PREFIX.obj.k.
 */
static double slab_objects_kb(const char *obj, int k)
{
	const char *prefix = getenv("OBJMEM_SLABINFO");
	char line[512], name[128], path[4096];
	unsigned long active, total, size;
	double kb = 0;
	FILE *f = fopen("/proc/slabinfo", "r"), *copy = NULL;

	if (!f)
		return -1;
	if (prefix) {
		snprintf(path, sizeof(path), "%s.%s.%d", prefix, obj, k);
		copy = fopen(path, "w");
	}
	while (fgets(line, sizeof(line), f)) {
		if (copy)
			fputs(line, copy);
		if (sscanf(line, "%127s %lu %lu %lu", name, &active, &total, &size) == 4)
			kb += (double)active * size / 1024;
	}
	if (copy)
		fclose(copy);
	fclose(f);
	return kb;
}

/* The memory now; with OBJMEM_SLABINFO, slabinfo's copy k for obj. */
static void kmem_read(struct kmem *m, const char *obj, int k)
{
	m->slab = meminfo_kb("Slab");
	m->vmalloc = meminfo_kb("VmallocUsed");
	m->percpu = meminfo_kb("Percpu");
	m->slabobj = slab_objects_kb(obj, k);
}

/* The growth from a to b per 1000 of the n objects named obj. */
static void kmem_print(const char *obj, const struct kmem *a, const struct kmem *b, int n)
{
	printf("mem_slab_per1000_%s_kB %.1f\n", obj, (b->slab - a->slab) * 1000.0 / n);
	printf("mem_vmalloc_per1000_%s_kB %.1f\n", obj, (b->vmalloc - a->vmalloc) * 1000.0 / n);
	printf("mem_percpu_per1000_%s_kB %.1f\n", obj, (b->percpu - a->percpu) * 1000.0 / n);
	if (a->slabobj >= 0 && b->slabobj >= 0)
		printf("mem_slabobj_per1000_%s_kB %.1f\n", obj, (b->slabobj - a->slabobj) * 1000.0 / n);
}

/*
 * With -t: the median of the n call times in t, as "time_<name>_us", and
 * how often a call slept and was preempted (the process's voluntary and
 * involuntary context switches since r0, taken before the loop).
 */
static void print_median(int timed, const char *name, double *t, int n,
			 const struct rusage *r0)
{
	struct rusage r;

	if (!timed || n <= 0 || getrusage(RUSAGE_SELF, &r))
		return;
	qsort(t, n, sizeof(*t), cmp_double);
	printf("time_%s_us %.1f\n", name, t[n / 2]);
	printf("sleeps_%s %.2f\n", name, (double)(r.ru_nvcsw - r0->ru_nvcsw) / n);
	printf("preempted_%s %.2f\n", name, (double)(r.ru_nivcsw - r0->ru_nivcsw) / n);
}

/*
 * Has every slab cache give back its empty slabs and its CPUs' partial
 * lists (SLUB's /sys/kernel/slab/<cache>/shrink; root only, skipped
 * otherwise). Without it, what one run leaves in the caches serves the
 * next: two sets measured one after the other in one boot, the second
 * grew about 1 MB less per 1000 QPs whichever set it was (2026-12-06,
 * Documentation/benchmarks.rst).
 */
static void shrink_slabs(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d))) {
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		if (write(fd, "1", 1) < 0) {
			/* A cache that cannot shrink keeps its slabs. */
		}
		close(fd);
	}
	if (d)
		closedir(d);
}

static void settle(void)
{
	/* Let deferred frees (RCU, work) finish before reading. */
	sync();
	usleep(300000);
	shrink_slabs();
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
	int timed = argc > 3 && !strcmp(argv[3], "-t");
	double *t = calloc(n > 0 ? n : 1, sizeof(*t));
	double t0;
	struct rusage r0;
	struct kmem m0, m1;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx || !qps || !mrs || !buf || !t) {
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
	kmem_read(&m0, "qp", 0);
	getrusage(RUSAGE_SELF, &r0);
	for (i = 0; i < n; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_recv_wr = 16,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		t0 = now_us();
		qps[i] = ibv_create_qp(pd, &a);
		t[i] = now_us() - t0;
		if (!qps[i]) {
			perror("ibv_create_qp");
			return 1;
		}
	}
	settle();
	kmem_read(&m1, "qp", 1);
	kmem_print("qp", &m0, &m1, n);
	print_median(timed, "create_qp", t, n, &r0);
	getrusage(RUSAGE_SELF, &r0);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		ibv_destroy_qp(qps[i]);
		t[i] = now_us() - t0;
	}
	print_median(timed, "destroy_qp", t, n, &r0);

	memset(buf, 0, (size_t)n * 4096);
	settle();
	kmem_read(&m0, "mr", 0);
	getrusage(RUSAGE_SELF, &r0);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		mrs[i] = ibv_reg_mr(pd, buf + (size_t)i * 4096, 4096,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		t[i] = now_us() - t0;
		if (!mrs[i]) {
			perror("ibv_reg_mr");
			return 1;
		}
	}
	settle();
	kmem_read(&m1, "mr", 1);
	kmem_print("mr", &m0, &m1, n);
	print_median(timed, "reg_mr", t, n, &r0);
	getrusage(RUSAGE_SELF, &r0);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		ibv_dereg_mr(mrs[i]);
		t[i] = now_us() - t0;
	}
	print_median(timed, "dereg_mr", t, n, &r0);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
