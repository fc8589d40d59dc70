/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the queues shared with user space (core/rdma/mmap.rs): the
 * vmalloc_user() macro, cache_line_size(), the user context of a verbs
 * command's udata and the udata request macro. One-line forwards.
 */
#ifndef RRXE_GLUE_QUEUE_H
#define RRXE_GLUE_QUEUE_H

#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

void *rrxe_vmalloc_user(unsigned long size);
void rrxe_vfree(const void *addr);
int rrxe_remap_vmalloc_range(struct vm_area_struct *vma, void *addr);
unsigned int rrxe_cache_line_size(void);
/* The user context of the uverbs command whose driver udata this is. */
struct ib_ucontext *rrxe_udata_ucontext(struct ib_udata *udata);

/* ib_copy_validate_udata_in() of the provider's modify_srq command. */
struct rxe_modify_srq_cmd;
int rrxe_modify_srq_cmd_in(struct ib_udata *udata, struct rxe_modify_srq_cmd *cmd);

#endif /* RRXE_GLUE_QUEUE_H */
