/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the work completions of UD and GSI receives (rxe/ud.rs):
 * static inlines of the VLAN header.
 */
#ifndef RRXE_GLUE_GSI_H
#define RRXE_GLUE_GSI_H

#include <linux/skbuff.h>

/*
 * The VLAN ID of the device @skb was received on if it is a VLAN device
 * (is_vlan_dev(), vlan_dev_vlan_id()), else 0xffff.
 */
u16 rrxe_skb_rx_vlan_id(const struct sk_buff *skb);

#endif
