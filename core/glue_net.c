// SPDX-License-Identifier: GPL-2.0
/*
 * C glue for the rxe network I/O (see glue_net.h). Not compiled on its own:
 * rxe/rxe_glue.c includes it.
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/sock.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_verbs.h>

#include "glue_net.h"

struct net *rrxe_dev_net(const struct net_device *ndev)
{
	return dev_net(ndev);
}

void *rrxe_net_generic(const struct net *net, unsigned int id)
{
	return net_generic(net, id);
}

struct net *rrxe_init_net(void)
{
	return &init_net;
}

int rrxe_netdev_ifindex(const struct net_device *ndev)
{
	return ndev->ifindex;
}

void rrxe_netdev_hold(struct net_device *ndev)
{
	dev_hold(ndev);
}

struct net_device *rrxe_vlan_dev_real_dev(const struct net_device *ndev)
{
	return vlan_dev_real_dev(ndev);
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/*
 * As rxe_net.c: the receive sockets get lock classes of their own, so that
 * lockdep does not connect them with user sockets of the same family (false
 * circular dependencies seen with ksmbd and cifs switching transports).
 */
static struct lock_class_key rrxe_recv_sk_key[2];
static struct lock_class_key rrxe_recv_slock_key[2];

static void rrxe_reclassify_recv_socket(struct sock *sk)
{
	if (WARN_ON_ONCE(!sock_allow_reclassification(sk)))
		return;
	if (sk->sk_family == AF_INET)
		sock_lock_init_class_and_name(sk, "slock-AF_INET-RDMA-RXE-RECV",
					      &rrxe_recv_slock_key[0],
					      "sk_lock-AF_INET-RDMA-RXE-RECV",
					      &rrxe_recv_sk_key[0]);
	else
		sock_lock_init_class_and_name(sk, "slock-AF_INET6-RDMA-RXE-RECV",
					      &rrxe_recv_slock_key[1],
					      "sk_lock-AF_INET6-RDMA-RXE-RECV",
					      &rrxe_recv_sk_key[1]);
	/*
	 * The class names a module reference (sk_owner_set()); the sockets are
	 * always released before the module goes away, and the reference would
	 * keep the module from unloading, so drop it (as rxe_net.c does).
	 */
	sk_owner_put(sk);
	sk_owner_clear(sk);
}
#else
static void rrxe_reclassify_recv_socket(struct sock *sk)
{
}
#endif

int rrxe_udp_tunnel_open(struct net *net, bool ipv6, __be16 port,
			 int (*rcv)(struct sock *sk, struct sk_buff *skb),
			 struct sock **skp)
{
	struct udp_port_cfg udp_cfg = {};
	struct udp_tunnel_sock_cfg tnl_cfg = {};
	struct socket *sock;
	int err;

	udp_cfg.family = ipv6 ? AF_INET6 : AF_INET;
	udp_cfg.ipv6_v6only = ipv6;
	udp_cfg.local_udp_port = port;
	err = udp_sock_create(net, &udp_cfg, &sock);
	if (err < 0)
		return err;
	rrxe_reclassify_recv_socket(sock->sk);
	tnl_cfg.encap_type = 1;
	tnl_cfg.encap_rcv = rcv;
	setup_udp_tunnel_sock(net, sock->sk, &tnl_cfg);
	*skp = sock->sk;
	return 0;
}

void rrxe_udp_tunnel_release(struct sock *sk)
{
	udp_tunnel_sock_release(sk);
}

void rrxe_kfree_skb(struct sk_buff *skb)
{
	kfree_skb(skb);
}

void rrxe_consume_skb(struct sk_buff *skb)
{
	consume_skb(skb);
}

struct sk_buff *rrxe_skb_clone_atomic(struct sk_buff *skb)
{
	return skb_clone(skb, GFP_ATOMIC);
}

unsigned char *rrxe_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

void rrxe_skb_pull(struct sk_buff *skb, unsigned int len)
{
	skb_pull(skb, len);
}

int rrxe_udp_rx_take(struct sk_buff *skb, struct rrxe_udp_rx *rx)
{
	unsigned int ulen;

	rx->dev = skb->dev;
	if (!rx->dev)
		return -ENODEV;
	if (skb_linearize(skb))
		return -ENOMEM;
	switch (skb->protocol) {
	case htons(ETH_P_IP):
		rx->ipv6 = false;
		memcpy(rx->saddr, &ip_hdr(skb)->saddr, 4);
		memcpy(rx->daddr, &ip_hdr(skb)->daddr, 4);
		break;
	case htons(ETH_P_IPV6):
		rx->ipv6 = true;
		memcpy(rx->saddr, &ipv6_hdr(skb)->saddr, 16);
		memcpy(rx->daddr, &ipv6_hdr(skb)->daddr, 16);
		break;
	default:
		return -EPROTONOSUPPORT;
	}
	/* The UDP layer trimmed the skb to the UDP length, header included. */
	ulen = udp_get_len_short(udp_hdr(skb));
	if (ulen < sizeof(struct udphdr) || skb_headlen(skb) < sizeof(struct udphdr))
		return -EINVAL;
	rx->paylen = ulen - sizeof(struct udphdr);
	__skb_pull(skb, sizeof(struct udphdr));
	return 0;
}

struct sk_buff *rrxe_alloc_tx_skb(struct net_device *ndev, unsigned int hdr_len,
				  unsigned int paylen, bool ipv6)
{
	unsigned int room = hdr_len + LL_RESERVED_SPACE(ndev);
	struct sk_buff *skb = alloc_skb(paylen + room, GFP_ATOMIC);

	if (!skb)
		return NULL;
	skb->tstamp = ktime_get();
	skb->dev = ndev;
	skb_reserve(skb, room);
	skb->protocol = ipv6 ? htons(ETH_P_IPV6) : htons(ETH_P_IP);
	skb_put(skb, paylen);
	return skb;
}

struct dst_entry *rrxe_route4(struct net *net, int oif, __be32 saddr, __be32 daddr)
{
	struct flowi4 fl = {
		.flowi4_oif = oif,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = saddr,
		.daddr = daddr,
	};
	struct rtable *rt = ip_route_output_key(net, &fl);

	return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
}

struct dst_entry *rrxe_route6(struct net *net, int oif, const struct in6_addr *saddr,
			      const struct in6_addr *daddr)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = {
		.flowi6_oif = oif,
		.flowi6_proto = IPPROTO_UDP,
		.saddr = *saddr,
		.daddr = *daddr,
	};
	struct dst_entry *dst = ip6_dst_lookup_flow(net, NULL, &fl6, NULL);

	if (!IS_ERR(dst) && dst->error) {
		dst_release(dst);
		return ERR_PTR(-EHOSTUNREACH);
	}
	return dst;
#else
	return ERR_PTR(-EAFNOSUPPORT);
#endif
}

void rrxe_dst_release(struct dst_entry *dst)
{
	dst_release(dst);
}

struct dst_entry *rrxe_sk_dst_get(struct sock *sk, u32 cookie)
{
	return sk_dst_check(sk, cookie);
}

void rrxe_sk_dst_set(struct sock *sk, struct dst_entry *dst)
{
	if (dst)
		dst_hold(dst);
	sk_dst_set(sk, dst);
}

u32 rrxe_dst_cookie(struct dst_entry *dst)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (dst->ops->family == AF_INET6)
		return rt6_get_cookie(dst_rt6_info(dst));
#endif
	return 0;
}

void rrxe_prepare4(struct sk_buff *skb, struct dst_entry *dst, __be32 saddr,
		   __be32 daddr, u8 tos, u8 ttl, __be16 sport, __be16 dport)
{
	struct udphdr *udph;
	struct iphdr *iph;

	__skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph = udp_hdr(skb);
	udph->dest = dport;
	udph->source = sport;
	udp_set_len_short(udph, skb->len);
	udph->check = 0;

	skb_scrub_packet(skb, false);
	skb_clear_hash(skb);
	skb_dst_set(skb, dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));

	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = IPVERSION;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->protocol = IPPROTO_UDP;
	iph->tos = tos;
	iph->daddr = daddr;
	iph->saddr = saddr;
	iph->ttl = ttl;
	__ip_select_ident(dev_net(dst->dev), iph, skb_shinfo(skb)->gso_segs ?: 1);
}

void rrxe_prepare6(struct sk_buff *skb, struct dst_entry *dst,
		   const struct in6_addr *saddr, const struct in6_addr *daddr,
		   u8 prio, u8 ttl, __be16 sport, __be16 dport)
{
	struct ipv6hdr *ip6h;
	struct udphdr *udph;

	__skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph = udp_hdr(skb);
	udph->dest = dport;
	udph->source = sport;
	udp_set_len_short(udph, skb->len);
	udph->check = 0;

	memset(&(IPCB(skb)->opt), 0, sizeof(IPCB(skb)->opt));
	IPCB(skb)->flags &= ~(IPSKB_XFRM_TUNNEL_SIZE | IPSKB_XFRM_TRANSFORMED |
			      IPSKB_REROUTED);
	skb_dst_set(skb, dst);

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, prio, htonl(0));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = ttl;
	ip6h->daddr = *daddr;
	ip6h->saddr = *saddr;
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
}

int rrxe_ip_local_out(struct sk_buff *skb)
{
	struct net *net = dev_net(skb_dst(skb)->dev);

	if (skb->protocol == htons(ETH_P_IP))
		return ip_local_out(net, skb->sk, skb);
#if IS_ENABLED(CONFIG_IPV6)
	return ip6_local_out(net, skb->sk, skb);
#else
	kfree_skb(skb);
	return -EAFNOSUPPORT;
#endif
}

unsigned char *rrxe_skb_network_header(const struct sk_buff *skb)
{
	return skb_network_header(skb);
}

bool rrxe_ib_device_try_get(struct ib_device *dev)
{
	return ib_device_try_get(dev);
}

int rrxe_sock_create_kern_udp(struct socket **sockp)
{
	return sock_create_kern(&init_net, AF_INET, SOCK_DGRAM, 0, sockp);
}

void rrxe_sk_set_user_data(struct sock *sk, void *data)
{
	sk->sk_user_data = data;
}

void *rrxe_sk_user_data(const struct sock *sk)
{
	return sk->sk_user_data;
}

void rrxe_sock_put(struct sock *sk)
{
	sock_put(sk);
}

void rrxe_skb_set_owner(struct sk_buff *skb, struct sock *sk,
			void (*dtor)(struct sk_buff *skb))
{
	sock_hold(sk);
	skb->sk = sk;
	skb->destructor = dtor;
	/* The destructor's argument ("must remain valid until skb
	 * destructor"): not zeroed by the allocation, set here. */
	skb_shinfo(skb)->destructor_arg = (void *)1UL;
}

unsigned long rrxe_skb_packets(const struct sk_buff *skb)
{
	return (unsigned long)skb_shinfo(skb)->destructor_arg;
}

void rrxe_gso_append(struct sk_buff *head, struct sk_buff *seg)
{
	struct sk_buff **tail = &skb_shinfo(head)->frag_list;

	/* A batch is a few packets (BATCH_MAX_PACKETS, core/rdma/udp.rs): no
	 * tail pointer. */
	while (*tail)
		tail = &(*tail)->next;
	seg->next = NULL;
	*tail = seg;
	head->len += seg->len;
	head->data_len += seg->len;
	head->truesize += seg->truesize;
	skb_shinfo(head)->destructor_arg =
		(void *)((unsigned long)skb_shinfo(head)->destructor_arg + 1);
}

int rrxe_gso_send(struct sk_buff *head)
{
	struct skb_shared_info *shinfo = skb_shinfo(head);
	unsigned int thoff = skb_transport_offset(head);

	shinfo->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	shinfo->gso_size = skb_headlen(head) - thoff - sizeof(struct udphdr);
	shinfo->gso_segs = (unsigned long)shinfo->destructor_arg;
	/* No UDP checksum to fill in (the packets carry none, IPv4 or IPv6,
	 * as the C driver's): what the segmentation takes as an skb it need
	 * not check. */
	head->ip_summed = CHECKSUM_UNNECESSARY;
	/* The whole datagram's length, as a UDP GSO skb of a socket has it
	 * until segmentation gives each packet its own (the head's: its
	 * ICRC was computed over that). */
	udp_hdr(head)->len = htons(head->len - thoff);
	return rrxe_ip_local_out(head);
}
