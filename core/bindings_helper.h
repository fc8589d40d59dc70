/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers bindgen reads to produce core/bindings_generated.rs: the RDMA core,
 * verbs, RDMA CM, MAD, netlink link ops, netdevice, UDP tunnel, misc device
 * and the RDMA uapi. Types the kernel crate's own bindings already have are
 * taken from there (see RRXE_BINDGEN_ALLOW in Kbuild).
 */
#include <linux/crc32.h>
#include <linux/netdevice.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>
#include <rdma/ib_marshall.h>
#include <rdma/rdma_netlink.h>
#include <rdma/uverbs_ioctl.h>
#include <uapi/rdma/ib_user_verbs.h>
#include <uapi/rdma/rdma_user_cm.h>
#include <uapi/rdma/rdma_user_rxe.h>

#include "glue.h"
#include "glue_ib.h"
#include "glue_queue.h"
#include "glue_qp.h"
#include "glue_mr.h"
#include "glue_data.h"
#include "cm/glue_cm.h"
#include "glue_net.h"
#include "glue_ucma.h"
#include "glue_gsi.h"
