// SPDX-License-Identifier: GPL-2.0
/*
 * calltrace.so: an LD_PRELOAD shim that times a librdmacm program's calls
 * into the kernel's RDMA character devices, to see which of them a module
 * set makes slower (cmtime's connect step: which thread waits where).
 *
 * Each write() and ioctl() on /dev/infiniband/rdma_cm or uverbs*, each
 * mmap() of a uverbs file and each munmap() of the process (the queues'
 * unmapping among them), and cmtime's own calls of librdmacm's
 * rdma_create_qp, rdma_accept, rdma_connect, rdma_disconnect,
 * rdma_destroy_qp and rdma_destroy_id, are stored with their thread, start
 * and end (CLOCK_MONOTONIC, ns) and result (cmtime's calls also with the
 * CPU time their thread used in them and its voluntary and involuntary
 * context switches meanwhile: whether a call's wall time was its own work,
 * a wait, or other threads' turns) in a buffer in memory; the buffer
 * is written to $CALLTRACE_OUT at exit or on SIGTERM (cmtime's server is
 * stopped with it; written from the handler with stdio, which is not
 * async-signal-safe: good enough for a server whose threads wait in the
 * kernel when it is stopped, not for general use), one call a line:
 *	tid start_ns end_ns kind code result [cpu_ns voluntary involuntary]
 * kind: ucma (code: the RDMA_USER_CM_CMD_ number; for GET_EVENT the
 * event's number is added as "+event"), uverbs-write (the command number),
 * uverbs-ioctl ("object.method", and "+cmd" for a write command sent as
 * an ioctl), mmap, munmap (code: the length) or api
 * (code: the function's name). Nothing is printed while the program runs:
 * a call costs two clock reads and a store, so the timing it takes is near
 * the program's own. tests/bench/calltrace-report.py reads the files.
 * Build: gcc -O2 -shared -fPIC -o calltrace.so calltrace.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_user_cm.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_cmds.h>

enum kind { K_UCMA, K_UVERBS_WRITE, K_UVERBS_IOCTL, K_MMAP, K_MUNMAP, K_API };
static const char *const kind_name[] = {
	"ucma", "uverbs-write", "uverbs-ioctl", "mmap", "munmap", "api",
};

struct call {
	uint64_t start, end;
	int64_t result;
	uint64_t code; /* a number, or a const char * for K_API */
	uint32_t extra; /* GET_EVENT's event + 1, 0 for none */
	uint32_t tid;
	uint8_t kind;
	/* K_API only: the thread's CPU time and context switches in the call. */
	uint64_t cpu;
	uint32_t vcsw, ivcsw;
};

#define MAX_CALLS (1 << 17)
static struct call *calls;
static unsigned int ncalls; /* claimed with an atomic add */
static unsigned int lost;

/* Which device each file descriptor is: 1 rdma_cm, 2 uverbs, 0 other. */
#define MAX_FD 4096
static unsigned char fd_kind[MAX_FD];

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_ioctl)(int, unsigned long, ...);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);
static int (*real_close)(int);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct call *claim(void)
{
	unsigned int i;

	if (!calls)
		return NULL;
	i = __atomic_fetch_add(&ncalls, 1, __ATOMIC_RELAXED);
	if (i >= MAX_CALLS) {
		__atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return &calls[i];
}

/* Stores a call begun at start; returns its record, NULL if none was free. */
static struct call *store(uint8_t kind, uint64_t code, uint64_t start,
			  int64_t result, uint32_t extra)
{
	uint64_t end = now_ns();
	struct call *c = claim();

	if (!c)
		return NULL;
	c->start = start;
	c->end = end;
	c->result = result;
	c->code = code;
	c->extra = extra;
	c->tid = syscall(SYS_gettid);
	c->kind = kind;
	return c;
}

static void dump(void)
{
	const char *path = getenv("CALLTRACE_OUT");
	unsigned int i, n = ncalls < MAX_CALLS ? ncalls : MAX_CALLS;
	FILE *f;

	if (!path || !calls)
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "# pid %d calls %u lost %u\n", getpid(), n, lost);
	for (i = 0; i < n; i++) {
		struct call *c = &calls[i];

		if (!c->start)
			continue;
		fprintf(f, "%u %llu %llu %s ", c->tid, (unsigned long long)c->start,
			(unsigned long long)c->end, kind_name[c->kind]);
		if (c->kind == K_API)
			fputs((const char *)(uintptr_t)c->code, f);
		else if (c->kind == K_UVERBS_IOCTL)
			fprintf(f, "%llu.%llu", (unsigned long long)(c->code >> 16),
				(unsigned long long)(c->code & 0xffff));
		else
			fprintf(f, "%llu", (unsigned long long)c->code);
		if (c->extra)
			fprintf(f, "+%u", c->extra - 1);
		fprintf(f, " %lld", (long long)c->result);
		if (c->kind == K_API)
			fprintf(f, " %llu %u %u", (unsigned long long)c->cpu, c->vcsw,
				c->ivcsw);
		fputc('\n', f);
	}
	fclose(f);
	calls = NULL;
}

static void on_term(int sig)
{
	dump();
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void calltrace_init(void)
{
	real_write = dlsym(RTLD_NEXT, "write");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	real_open = dlsym(RTLD_NEXT, "open");
	real_open64 = dlsym(RTLD_NEXT, "open64");
	real_openat = dlsym(RTLD_NEXT, "openat");
	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_munmap = dlsym(RTLD_NEXT, "munmap");
	real_close = dlsym(RTLD_NEXT, "close");
	if (!getenv("CALLTRACE_OUT"))
		return;
	calls = calloc(MAX_CALLS, sizeof(*calls));
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
}

__attribute__((destructor)) static void calltrace_fini(void)
{
	dump();
}

static void note_fd(int fd, const char *path)
{
	if (fd < 0 || fd >= MAX_FD)
		return;
	if (!strcmp(path, "/dev/infiniband/rdma_cm"))
		fd_kind[fd] = 1;
	else if (!strncmp(path, "/dev/infiniband/uverbs", 22))
		fd_kind[fd] = 2;
	else
		fd_kind[fd] = 0;
}

/* The mode open() and openat() take after @last with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, last)                                      \
	({                                                          \
		mode_t m = 0;                                       \
		va_list ap;                                         \
		va_start(ap, last);                                 \
		if ((flags) & (O_CREAT | O_TMPFILE))                \
			m = va_arg(ap, mode_t);                     \
		va_end(ap);                                         \
		m;                                                  \
	})

int open(const char *path, int flags, ...)
{
	int fd = real_open(path, flags, OPEN_MODE(flags, flags));

	note_fd(fd, path);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	int fd = real_open64(path, flags, OPEN_MODE(flags, flags));

	note_fd(fd, path);
	return fd;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	int fd = real_openat(dirfd, path, flags, OPEN_MODE(flags, flags));

	note_fd(fd, path);
	return fd;
}

int close(int fd)
{
	if (fd >= 0 && fd < MAX_FD)
		fd_kind[fd] = 0;
	return real_close(fd);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	unsigned char k = fd >= 0 && fd < MAX_FD ? fd_kind[fd] : 0;
	uint64_t start;
	uint32_t cmd, extra = 0;
	ssize_t ret;

	if (!k || len < sizeof(cmd) || !calls)
		return real_write(fd, buf, len);
	memcpy(&cmd, buf, sizeof(cmd));
	start = now_ns();
	ret = real_write(fd, buf, len);
	if (k == 1 && cmd == RDMA_USER_CM_CMD_GET_EVENT && ret > 0 &&
	    len >= sizeof(struct rdma_ucm_cmd_hdr) + sizeof(struct rdma_ucm_get_event)) {
		struct rdma_ucm_get_event ge;
		struct rdma_ucm_event_resp *resp;

		memcpy(&ge, (const char *)buf + sizeof(struct rdma_ucm_cmd_hdr), sizeof(ge));
		resp = (struct rdma_ucm_event_resp *)(uintptr_t)ge.response;
		extra = resp->event + 1;
	}
	store(k == 1 ? K_UCMA : K_UVERBS_WRITE, cmd, start, ret, extra);
	return ret;
}

int ioctl(int fd, unsigned long req, ...)
{
	unsigned char k = fd >= 0 && fd < MAX_FD ? fd_kind[fd] : 0;
	uint64_t start, code;
	uint32_t extra = 0;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (k != 2 || req != RDMA_VERBS_IOCTL || !calls)
		return real_ioctl(fd, req, arg);
	{
		const struct ib_uverbs_ioctl_hdr *h = arg;
		unsigned int i;

		code = (uint64_t)h->object_id << 16 | h->method_id;
		/* A write command sent as an ioctl: which one (as "+cmd"). */
		if (h->object_id == UVERBS_OBJECT_DEVICE &&
		    h->method_id == UVERBS_METHOD_INVOKE_WRITE)
			for (i = 0; i < h->num_attrs; i++)
				if (h->attrs[i].attr_id == UVERBS_ATTR_WRITE_CMD)
					extra = h->attrs[i].data + 1;
	}
	start = now_ns();
	ret = real_ioctl(fd, req, arg);
	store(K_UVERBS_IOCTL, code, start, ret, extra);
	return ret;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uint64_t start;
	void *ret;

	if (!calls || fd < 0 || fd >= MAX_FD || fd_kind[fd] != 2)
		return real_mmap(addr, len, prot, flags, fd, off);
	start = now_ns();
	ret = real_mmap(addr, len, prot, flags, fd, off);
	store(K_MMAP, len, start, ret == MAP_FAILED ? -1 : 0, 0);
	return ret;
}

int munmap(void *addr, size_t len)
{
	uint64_t start;
	int ret;

	if (!calls)
		return real_munmap(addr, len);
	start = now_ns();
	ret = real_munmap(addr, len);
	store(K_MUNMAP, len, start, ret, 0);
	return ret;
}

/* The calling thread's CPU time (ns) and context switches so far. */
struct thread_use {
	uint64_t cpu;
	long vcsw, ivcsw;
};

static void thread_use(struct thread_use *u)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	u->cpu = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	getrusage(RUSAGE_THREAD, &ru);
	u->vcsw = ru.ru_nvcsw;
	u->ivcsw = ru.ru_nivcsw;
}

/* Stores an API call begun at start, with the thread's use since before. */
static void store_api(const char *name, uint64_t start, int64_t ret,
		      const struct thread_use *before)
{
	struct thread_use after;
	struct call *c;

	thread_use(&after);
	c = store(K_API, (uintptr_t)name, start, ret, 0);
	if (!c)
		return;
	c->cpu = after.cpu - before->cpu;
	c->vcsw = after.vcsw - before->vcsw;
	c->ivcsw = after.ivcsw - before->ivcsw;
}

/* librdmacm's entry points cmtime calls: the whole of each, as its thread saw it. */
#define WRAP_API(name, params, args)                                   \
	int name params                                                \
	{                                                              \
		static int (*real) params;                             \
		struct thread_use before;                              \
		uint64_t start;                                        \
		int ret;                                               \
		if (!real)                                             \
			real = dlsym(RTLD_NEXT, #name);                \
		thread_use(&before);                                   \
		start = now_ns();                                      \
		ret = real args;                                       \
		store_api(#name, start, ret, &before);                 \
		return ret;                                            \
	}

struct rdma_cm_id;
struct ibv_pd;
struct ibv_qp_init_attr;
struct rdma_conn_param;

WRAP_API(rdma_create_qp, (struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr),
	 (id, pd, attr))
WRAP_API(rdma_accept, (struct rdma_cm_id *id, struct rdma_conn_param *p), (id, p))
WRAP_API(rdma_connect, (struct rdma_cm_id *id, struct rdma_conn_param *p), (id, p))
WRAP_API(rdma_disconnect, (struct rdma_cm_id *id), (id))
WRAP_API(rdma_destroy_id, (struct rdma_cm_id *id), (id))

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	static void (*real)(struct rdma_cm_id *);
	struct thread_use before;
	uint64_t start;

	if (!real)
		real = dlsym(RTLD_NEXT, "rdma_destroy_qp");
	thread_use(&before);
	start = now_ns();
	real(id);
	store_api("rdma_destroy_qp", start, 0, &before);
}
