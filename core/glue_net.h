/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C glue for the rxe network I/O (core/rdma/{netns,skb,udp}.rs): static
 * inlines and macros of the skb, netns, routing and UDP tunnel headers,
 * fields of struct sk_buff and struct sock, and the receive sockets' lock
 * classes. One-line forwards, except where noted.
 */
#ifndef RRXE_GLUE_NET_H
#define RRXE_GLUE_NET_H

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/net_namespace.h>
#include <net/sock.h>

/* Namespaces. */
struct net *rrxe_dev_net(const struct net_device *ndev);
void *rrxe_net_generic(const struct net *net, unsigned int id);
struct net *rrxe_init_net(void);
int rrxe_netdev_ifindex(const struct net_device *ndev);
void rrxe_netdev_hold(struct net_device *ndev);
/* vlan_dev_real_dev(); only for a VLAN device (is_vlan_dev()). */
struct net_device *rrxe_vlan_dev_real_dev(const struct net_device *ndev);

/*
 * A kernel UDP socket on @port (network order) in @net, set up as a UDP
 * tunnel whose encap_rcv is @rcv (udp_sock_create(), the lockdep class of
 * the C rxe's receive sockets, setup_udp_tunnel_sock()). IPv6 sockets are
 * v6only. Not a one-line forward: struct udp_port_cfg and
 * udp_tunnel_sock_cfg are bitfields and unions filled the way rxe_net.c
 * fills them.
 */
int rrxe_udp_tunnel_open(struct net *net, bool ipv6, __be16 port,
			 int (*rcv)(struct sock *sk, struct sk_buff *skb),
			 struct sock **skp);
void rrxe_udp_tunnel_release(struct sock *sk);

/* struct sk_buff. */
void rrxe_kfree_skb(struct sk_buff *skb);
void rrxe_consume_skb(struct sk_buff *skb);
struct sk_buff *rrxe_skb_clone_atomic(struct sk_buff *skb);
unsigned char *rrxe_skb_data(const struct sk_buff *skb);
void rrxe_skb_pull(struct sk_buff *skb, unsigned int len);

/* What a UDP tunnel's receiver reads of a datagram (rrxe_udp_rx_take()). */
struct rrxe_udp_rx {
	/* skb->dev: the device it came in on, valid in the receive softirq. */
	struct net_device *dev;
	/* The UDP payload's length (the UDP length less its header). */
	unsigned int paylen;
	/* IPv6 (16 address bytes) or IPv4 (the first 4 bytes). */
	bool ipv6;
	u8 saddr[16];
	u8 daddr[16];
};

/*
 * A received UDP datagram as encap_rcv gets it (data at the UDP header),
 * taken for a tunnel: made linear (skb_linearize()), read into @rx, its
 * UDP header pulled. 0, or -ENODEV (no device), -ENOMEM (cannot be made
 * linear), -EPROTONOSUPPORT (neither IPv4 nor IPv6) or -EINVAL (shorter
 * than a UDP header); the skb is the caller's either way. Not a one-line
 * forward: one call a packet instead of one a field, on the receive path
 * every packet takes.
 */
int rrxe_udp_rx_take(struct sk_buff *skb, struct rrxe_udp_rx *rx);

/*
 * Transmit. rrxe_alloc_tx_skb() is rxe_init_packet()'s allocation: room for
 * @paylen bytes of payload (put) after @hdr_len bytes of IP/UDP/Ethernet
 * headers and the netdev's link-layer reserve, time-stamped, protocol set.
 */
struct sk_buff *rrxe_alloc_tx_skb(struct net_device *ndev, unsigned int hdr_len,
				  unsigned int paylen, bool ipv6);
/* ip_route_output_key() / ip6_dst_lookup_flow() for a UDP flow on @oif;
 * an ERR_PTR when there is no route. */
struct dst_entry *rrxe_route4(struct net *net, int oif, __be32 saddr, __be32 daddr);
struct dst_entry *rrxe_route6(struct net *net, int oif, const struct in6_addr *saddr,
			      const struct in6_addr *daddr);
void rrxe_dst_release(struct dst_entry *dst);
/*
 * The route a socket caches (sk->sk_dst_cache), where the C rxe keeps an
 * RC QP's: rrxe_sk_dst_get() returns it held while it is valid for
 * @cookie (sk_dst_check(), which drops a stale one: its device gone, the
 * routing changed, an IPv6 route's cookie out of date), else NULL;
 * rrxe_sk_dst_set() caches @dst with a reference of its own, or nothing
 * for NULL. rrxe_dst_cookie() is the cookie an IPv6 route is checked
 * against later (rt6_get_cookie()); IPv4's check takes none (0).
 */
struct dst_entry *rrxe_sk_dst_get(struct sock *sk, u32 cookie);
void rrxe_sk_dst_set(struct sock *sk, struct dst_entry *dst);
u32 rrxe_dst_cookie(struct dst_entry *dst);
/*
 * rxe_net.c's prepare4()/prepare6() without the route lookup: push the UDP
 * header (no checksum) and the IPv4 (DF, an IP ID chosen now, so that the
 * ICRC, which covers it, can be computed before sending) or IPv6 header,
 * and set @dst (given away) as the skb's route. Not one-line forwards:
 * the header bitfields are filled as the C driver fills them.
 */
void rrxe_prepare4(struct sk_buff *skb, struct dst_entry *dst, __be32 saddr,
		   __be32 daddr, u8 tos, u8 ttl, __be16 sport, __be16 dport);
void rrxe_prepare6(struct sk_buff *skb, struct dst_entry *dst,
		   const struct in6_addr *saddr, const struct in6_addr *daddr,
		   u8 prio, u8 ttl, __be16 sport, __be16 dport);
/* ip_local_out() / ip6_local_out() by skb->protocol, in the route's netns. */
int rrxe_ip_local_out(struct sk_buff *skb);
/* Bytes from the network header to skb->data (the IP and UDP headers of a
 * received datagram once pulled). */
unsigned char *rrxe_skb_network_header(const struct sk_buff *skb);

/* ib_device_try_get(): a registration reference, unless unregistering. */
struct ib_device;
bool rrxe_ib_device_try_get(struct ib_device *dev);

/* Transmit owners: kernel sockets whose sk_user_data is the owner. */
int rrxe_sock_create_kern_udp(struct socket **sockp);
void rrxe_sk_set_user_data(struct sock *sk, void *data);
void *rrxe_sk_user_data(const struct sock *sk);
void rrxe_sock_put(struct sock *sk);
/* sock_hold(@sk), skb->sk = @sk, skb->destructor = @dtor (which puts it);
 * the skb carries one packet (rrxe_skb_packets). */
void rrxe_skb_set_owner(struct sk_buff *skb, struct sock *sk,
			void (*dtor)(struct sk_buff *skb));
/* The packets an owned skb carries, itself and those appended to it by
 * rrxe_gso_append: what its destructor gives back to the owner's count. */
unsigned long rrxe_skb_packets(const struct sk_buff *skb);

/*
 * A batch of one flow's packets sent as one skb: @head, the first packet
 * (prepared, owned), carries the others (prepared, unowned, data at their
 * IP header) in its frag_list, and is sent as a UDP GSO skb of type
 * SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST. Where the device cannot take it
 * whole, the stack splits it back into the packets as they are
 * (skb_segment_list: each keeps its own headers and payload, the IPv4 ID
 * of the n-th being the head's plus n, an IPv6 payload length each its
 * own) and hands them to the driver as one list. rrxe_gso_append()
 * appends @seg and counts it in the packets @head carries
 * (rrxe_skb_packets: @head must be owned); rrxe_gso_send() sends
 * the batch of more than one packet, whose head's UDP payload is the
 * largest (gso_size), as rrxe_ip_local_out().
 */
void rrxe_gso_append(struct sk_buff *head, struct sk_buff *seg);
int rrxe_gso_send(struct sk_buff *head);

#endif /* RRXE_GLUE_NET_H */
