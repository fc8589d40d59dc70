// SPDX-License-Identifier: GPL-2.0
/*
 * C glue for the data path's memory access (see glue_data.h). Not compiled
 * on its own: rxe/rxe_glue.c includes it.
 */
#include <linux/highmem.h>
#include <linux/libnvdimm.h>

#include "glue_data.h"

void rrxe_wb_cache_pmem(void *addr, size_t size)
{
	arch_wb_cache_pmem(addr, size);
}
