// SPDX-License-Identifier: GPL-2.0
/*
 * C glue for UD and GSI receive completions (see glue_gsi.h). Not compiled
 * on its own: rxe/rxe_glue.c includes it.
 */
#include <linux/if_vlan.h>
#include <linux/skbuff.h>

#include "glue_gsi.h"

u16 rrxe_skb_rx_vlan_id(const struct sk_buff *skb)
{
	return skb->dev && is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) : 0xffff;
}
