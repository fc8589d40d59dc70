// SPDX-License-Identifier: GPL-2.0
/*
 * tbcount: a QEMU TCG plugin that counts the guest instructions executed,
 * the blocks entered and the memory accesses made, by the address of the
 * translation block they were in: an exact,
 * noise-free profile of where a guest's CPU goes, for comparing two
 * drivers doing the same work (a sampling profiler under TCG gets ~250
 * samples a second and delays those that fall while interrupts are off).
 *
 *   cc -O2 -shared -fPIC -o tbcount.so tbcount.c -lpthread
 *   qemu-system-x86_64 ... -plugin ./tbcount.so,dir=DIR
 *
 * The guest asks for a reset or a dump by creating DIR/req.NAME holding
 * "reset" or "dump": a thread of the plugin looks every 20 ms, zeroes the
 * counts or writes DIR/NAME.tb ("address instructions entries accesses
 * translations exit-kind locked-instructions" per block start counted
 * since the reset, the address in hexadecimal), then
 * creates DIR/done.NAME.
 * tests/bench/tb-report.py turns a dump into instructions per symbol with
 * the guest's /proc/kallsyms. With TBCOUNT_PAGES=1 in QEMU's environment
 * a dump also writes DIR/NAME.pg, the software-TLB fills by guest page
 * (see "struct page" below; tests/bench/pg-report.py sums them).
 *
 * A block is counted whole when it starts (an interrupt or fault in its
 * middle overcounts by the rest of it, rare). Blocks translated again at
 * the same address share their count. The counts are bumped by the vCPU
 * thread without a lock and read by the dump thread: on x86-64 a 64-bit
 * load sees a whole value; a dump taken while the guest runs is as of
 * some moment during it.
 *
 * Only the few calls of QEMU's plugin API (version 1, QEMU 7.2) this
 * needs are declared here.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };

extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
						     enum qemu_plugin_op op, void *ptr,
						     uint64_t imm);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
							size_t idx);
extern void qemu_plugin_register_vcpu_mem_inline(struct qemu_plugin_insn *insn,
						 enum qemu_plugin_mem_rw rw,
						 enum qemu_plugin_op op, void *ptr,
						 uint64_t imm);
extern char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
extern uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
typedef void (*vcpu_udata_cb)(unsigned int vcpu, void *userdata);
typedef void (*vcpu_mem_cb)(unsigned int vcpu, uint32_t meminfo, uint64_t vaddr, void *userdata);
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb cb,
						 enum qemu_plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
						   vcpu_udata_cb cb,
						   enum qemu_plugin_cb_flags flags, void *userdata);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, vcpu_mem_cb cb,
					     enum qemu_plugin_cb_flags flags,
					     enum qemu_plugin_mem_rw rw, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/*
 * One block start address: the instructions executed from it, the times
 * it was entered (each entry costs TCG a chained jump or, after an
 * indirect branch or a return, a lookup) and the memory accesses made
 * (each a software TLB lookup).
 */
struct block {
	uint64_t addr;
	uint64_t insns;
	uint64_t execs;
	uint64_t mems;
	/* Translations of it (more than one: its code was flushed). */
	uint64_t trans;
	/* How it ends (enum exit_kind) and its locked instructions, from
	 * its last translation. */
	uint32_t exit;
	uint32_t locked;
	/* With TBCOUNT_TIME=1: host TSC cycles from its entries to the next
	 * block's (see on_block_time). */
	uint64_t cycles;
};

/*
 * How a block hands over to the next, by its last instruction: TCG chains
 * a direct jump to a block on the same guest page (cheap), looks the next
 * block up for a return, an indirect or a cross-page jump (a hash lookup
 * in a helper), and leaves its execution loop for an instruction that can
 * change the interrupt state or needs the machine (sti, popf, iret, port
 * I/O, hlt, ...), the most expensive.
 */
enum exit_kind { EXIT_CHAIN, EXIT_RET, EXIT_INDIRECT, EXIT_XPAGE, EXIT_LOOP };

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static uint32_t exit_kind(struct qemu_plugin_tb *tb, size_t n)
{
	struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);
	uint64_t page = qemu_plugin_tb_vaddr(tb) >> 12;
	uint64_t next = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
	char *d = qemu_plugin_insn_disas(last);
	uint32_t kind = (next >> 12) == page ? EXIT_CHAIN : EXIT_XPAGE;
	const char *target;

	if (!d)
		return kind;
	if (starts(d, "ret"))
		kind = EXIT_RET;
	else if (starts(d, "sti") || starts(d, "popf") || starts(d, "iret") ||
		 starts(d, "sysret") || starts(d, "hlt") || starts(d, "pause") ||
		 starts(d, "wrmsr") || starts(d, "out") || starts(d, "in ") ||
		 starts(d, "inb") || starts(d, "inl") || starts(d, "inw") ||
		 starts(d, "syscall") || starts(d, "int") || strstr(d, "%cr"))
		kind = EXIT_LOOP;
	else if (starts(d, "j") || starts(d, "call")) {
		if (strchr(d, '*'))
			kind = EXIT_INDIRECT;
		else if ((target = strstr(d, "0x")) &&
			 (strtoull(target, NULL, 16) >> 12) != page)
			kind = EXIT_XPAGE;
	}
	free(d);
	return kind;
}

static uint32_t locked_insns(struct qemu_plugin_tb *tb, size_t n)
{
	uint32_t locked = 0;

	for (size_t i = 0; i < n; i++) {
		char *d = qemu_plugin_insn_disas(qemu_plugin_tb_get_insn(tb, i));

		if (d && (starts(d, "lock") || (starts(d, "xchg") && strchr(d, '('))))
			locked++;
		free(d);
	}
	return locked;
}

/*
 * An open-addressing table that never shrinks or moves its entries (the
 * translated code holds pointers to the counts): a fixed array, large
 * enough for every block a guest kernel and its programs translate.
 */
#define TABLE_BITS 21
#define TABLE_SIZE (1u << TABLE_BITS)
static struct block *table;
static size_t used;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[1024];
/* Counted here when the table is full (never seen). */
static struct block overflow;

static struct block *lookup(uint64_t addr)
{
	uint64_t h = (addr * 0x9e3779b97f4a7c15ull) >> (64 - TABLE_BITS);

	for (size_t n = 0; n < TABLE_SIZE; n++, h = (h + 1) & (TABLE_SIZE - 1)) {
		struct block *b = &table[h];

		if (b->addr == addr && (addr || b->insns))
			return b;
		if (!b->addr && !b->insns) {
			if (used * 10 > (size_t)TABLE_SIZE * 9)
				return &overflow;
			b->addr = addr;
			used++;
			return b;
		}
	}
	return &overflow;
}

/*
 * With TBCOUNT_PAGES=1 in QEMU's environment, the plugin also counts the
 * guest pages touched between two writes of CR3. QEMU's x86 TCG flushes
 * its whole software TLB (and the virtual-address block cache) at every
 * CR3 write, so the first touch of a page after one is a TLB fill (a page
 * table walk in a helper): these counts are the fills a page cost, by
 * code (a block started there) and data (a load or store there), a lower
 * bound that ignores the TLB's capacity. Every access becomes a call into
 * the plugin: the guest runs several times slower; the counts stay exact.
 */
struct page {
	uint64_t page;
	uint64_t epoch;
	uint64_t code;
	uint64_t data;
};

#define PAGE_BITS 20
#define PAGE_TABLE_SIZE (1u << PAGE_BITS)
static struct page *pages;
static size_t pages_used;
static uint64_t epoch = 1, epochs;
static struct page page_overflow;

static struct page *page_lookup(uint64_t page)
{
	uint64_t h = (page * 0x9e3779b97f4a7c15ull) >> (64 - PAGE_BITS);

	for (;; h = (h + 1) & (PAGE_TABLE_SIZE - 1)) {
		struct page *p = &pages[h];

		if (p->epoch && p->page == page)
			return p;
		if (!p->epoch) {
			if (pages_used * 10 > (size_t)PAGE_TABLE_SIZE * 9)
				return &page_overflow;
			p->page = page;
			pages_used++;
			return p;
		}
	}
}

/* Called by the one vCPU thread only (the guests have one vCPU each). */
static void page_touch(uint64_t vaddr, int code)
{
	struct page *p;

	pthread_mutex_lock(&table_lock);
	p = page_lookup(vaddr >> 12);
	if (p->epoch != epoch) {
		p->epoch = epoch;
		if (code)
			p->code++;
		else
			p->data++;
	}
	pthread_mutex_unlock(&table_lock);
}

static void on_block(unsigned int vcpu, void *addr)
{
	(void)vcpu;
	page_touch((uint64_t)(uintptr_t)addr, 1);
}

static void on_mem(unsigned int vcpu, uint32_t info, uint64_t vaddr, void *u)
{
	(void)vcpu;
	(void)info;
	(void)u;
	page_touch(vaddr, 0);
}

static void on_cr3_write(unsigned int vcpu, void *u)
{
	(void)vcpu;
	(void)u;
	pthread_mutex_lock(&table_lock);
	epoch++;
	epochs++;
	pthread_mutex_unlock(&table_lock);
}

/* "mov %reg, %cr3" in either disassembler's spelling: CR3 is the target. */
static int writes_cr3(const char *d)
{
	size_t n = strlen(d);

	while (n && d[n - 1] == ' ')
		n--;
	return starts(d, "mov") && n >= 4 && !strncmp(d + n - 4, "%cr3", 4);
}

static void pages_trans(struct qemu_plugin_tb *tb, size_t n)
{
	uint64_t start = qemu_plugin_tb_vaddr(tb);

	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)start);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		char *d = qemu_plugin_insn_disas(insn);
		uint64_t at = qemu_plugin_insn_vaddr(insn);

		/* A block that runs on into the next page touches it too. */
		if ((at >> 12) != (start >> 12) && (i == 0 ||
		    (qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i - 1)) >> 12) != (at >> 12)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_block,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)at);
		qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (d && writes_cr3(d))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_cr3_write,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		free(d);
	}
}

/*
 * With TBCOUNT_TIME=1 in QEMU's environment, the host time between one
 * block's entry and the next block's is charged to the first: what the
 * guest's code costs the host, with what TCG does for it in between (its
 * software-TLB fills, block lookups, helpers, interrupts taken; an idle
 * guest's wait falls on its hlt). Every block entry becomes a call into
 * the plugin, a cost of its own charged to each block entered alike: the
 * guest runs several times slower, and times compare between two runs of
 * the same counter, not with the guest's own clock.
 */
static int timing;
static struct block *time_prev;
static uint64_t time_last;

/* Called by the one vCPU thread only (the guests have one vCPU each). */
static void on_block_time(unsigned int vcpu, void *b)
{
	uint64_t now = __builtin_ia32_rdtsc();

	(void)vcpu;
	if (time_prev)
		time_prev->cycles += now - time_last;
	time_prev = b;
	time_last = now;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint32_t kind = exit_kind(tb, n), locked = locked_insns(tb, n);
	struct block *b;

	(void)id;
	pthread_mutex_lock(&table_lock);
	b = lookup(qemu_plugin_tb_vaddr(tb));
	b->trans++;
	b->exit = kind;
	b->locked = locked;
	pthread_mutex_unlock(&table_lock);

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->insns, n);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
	for (size_t i = 0; i < n; i++)
		qemu_plugin_register_vcpu_mem_inline(qemu_plugin_tb_get_insn(tb, i),
						     QEMU_PLUGIN_MEM_RW,
						     QEMU_PLUGIN_INLINE_ADD_U64, &b->mems, 1);
	if (pages)
		pages_trans(tb, n);
	if (timing)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block_time, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void reset(void)
{
	pthread_mutex_lock(&table_lock);
	for (size_t i = 0; i < TABLE_SIZE; i++) {
		__atomic_store_n(&table[i].insns, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&table[i].execs, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&table[i].mems, 0, __ATOMIC_RELAXED);
		table[i].trans = 0;
		__atomic_store_n(&table[i].cycles, 0, __ATOMIC_RELAXED);
	}
	overflow.insns = overflow.execs = overflow.mems = overflow.trans = 0;
	time_prev = NULL;
	if (pages) {
		for (size_t i = 0; i < PAGE_TABLE_SIZE; i++)
			pages[i].code = pages[i].data = 0;
		epochs = 0;
		epoch++;
	}
	pthread_mutex_unlock(&table_lock);
}

/*
 * Writes PATH through a temporary file renamed into place (the guest never
 * reads half a dump), with BODY run under the table's lock.
 */
static void write_dump(const char *path, void (*body)(FILE *f))
{
	char tmp[1500];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	pthread_mutex_lock(&table_lock);
	body(f);
	pthread_mutex_unlock(&table_lock);
	fclose(f);
	rename(tmp, path);
}

static void write_blocks(FILE *f)
{
	for (size_t i = 0; i < TABLE_SIZE; i++) {
		uint64_t n = __atomic_load_n(&table[i].insns, __ATOMIC_RELAXED);

		if (n || table[i].trans)
			fprintf(f, "%016llx %llu %llu %llu %llu %u %u %llu\n",
				(unsigned long long)table[i].addr, (unsigned long long)n,
				(unsigned long long)__atomic_load_n(&table[i].execs, __ATOMIC_RELAXED),
				(unsigned long long)__atomic_load_n(&table[i].mems, __ATOMIC_RELAXED),
				(unsigned long long)table[i].trans, table[i].exit, table[i].locked,
				(unsigned long long)__atomic_load_n(&table[i].cycles, __ATOMIC_RELAXED));
	}
	if (overflow.insns)
		fprintf(f, "overflow %llu %llu %llu %llu\n", (unsigned long long)overflow.insns,
			(unsigned long long)overflow.execs, (unsigned long long)overflow.mems,
			(unsigned long long)overflow.trans);
}

/* "epochs N" then "page code-fills data-fills" (hexadecimal page number). */
static void write_pages(FILE *f)
{
	fprintf(f, "epochs %llu\n", (unsigned long long)epochs);
	for (size_t i = 0; i < PAGE_TABLE_SIZE; i++)
		if (pages[i].code || pages[i].data)
			fprintf(f, "%013llx %llu %llu\n", (unsigned long long)pages[i].page,
				(unsigned long long)pages[i].code,
				(unsigned long long)pages[i].data);
	if (page_overflow.code || page_overflow.data)
		fprintf(f, "overflow %llu %llu\n", (unsigned long long)page_overflow.code,
			(unsigned long long)page_overflow.data);
}

/* Serves DIR/req.NAME files until QEMU exits. */
static void *watcher(void *arg)
{
	(void)arg;
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char req[1400], out[1400], what[16] = "";
			const char *name;
			FILE *f;

			if (strncmp(e->d_name, "req.", 4))
				continue;
			name = e->d_name + 4;
			snprintf(req, sizeof(req), "%s/%s", dir, e->d_name);
			f = fopen(req, "r");
			if (!f)
				continue;
			if (!fgets(what, sizeof(what), f))
				what[0] = 0;
			fclose(f);
			/*
			 * The guest creates the file, then writes it: one read
			 * between the two finds it empty. It is served once its
			 * word is there.
			 */
			if (!strncmp(what, "reset", 5)) {
				reset();
			} else if (!strncmp(what, "dump", 4)) {
				snprintf(out, sizeof(out), "%s/%s.tb", dir, name);
				write_dump(out, write_blocks);
				if (pages) {
					snprintf(out, sizeof(out), "%s/%s.pg", dir, name);
					write_dump(out, write_pages);
				}
			} else {
				continue;
			}
			unlink(req);
			snprintf(out, sizeof(out), "%s/done.%s", dir, name);
			f = fopen(out, "w");
			if (f)
				fclose(f);
		}
		if (d)
			closedir(d);
		usleep(20000);
	}
	return NULL;
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	char out[1100];

	(void)id;
	(void)userdata;
	snprintf(out, sizeof(out), "%s/exit.tb", dir);
	write_dump(out, write_blocks);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv)
{
	pthread_t t;

	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "dir=", 4))
			snprintf(dir, sizeof(dir), "%s", argv[i] + 4);
	if (!dir[0]) {
		fprintf(stderr, "tbcount: dir=DIR is required\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table)
		return -1;
	if (getenv("TBCOUNT_PAGES") && !strcmp(getenv("TBCOUNT_PAGES"), "1")) {
		pages = calloc(PAGE_TABLE_SIZE, sizeof(*pages));
		if (!pages)
			return -1;
	}
	timing = getenv("TBCOUNT_TIME") && !strcmp(getenv("TBCOUNT_TIME"), "1");
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	if (pthread_create(&t, NULL, watcher, NULL))
		return -1;
	pthread_detach(t);
	return 0;
}
