// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit side of the network glue: wrap BTH..payload in UDP/IP, seal it
 * with the ICRC and hand it to the IP stack, or, when the destination is
 * our own GID, to the loopback queue so it never touches the wire.
 */
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/dst_cache.h>

#include "sroce/sroce.h"
#include "sroce/net.h"
#include "sroce/wire/icrc.h"
#include "sroce/wire/udp.h"
#include "sroce/trace.h"

#define SROCE_L3L4_ROOM	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/* Wake QPs that stopped transmitting for want of skb room. */
static void sroce_tx_wake(struct sroce_dev *sdev, struct sroce_qp *only)
{
	struct sroce_qp *qp, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&sdev->stall_lock, flags);
	if (only) {
		if (!list_empty(&only->stall_node)) {
			list_del_init(&only->stall_node);
			WRITE_ONCE(only->tx_stalled, false);
			sroce_qp_sched(only);
		}
	} else {
		list_for_each_entry_safe(qp, tmp, &sdev->stalled, stall_node) {
			list_del_init(&qp->stall_node);
			WRITE_ONCE(qp->tx_stalled, false);
			sroce_qp_sched(qp);
		}
	}
	spin_unlock_irqrestore(&sdev->stall_lock, flags);
}

/* Every skb we make is charged to its QP and device until the stack (or
 * the peer QP, for loopback) frees it: that bounds what a QP can have in
 * qdiscs, driver rings and peer queues.  Destroy waits for the charge to
 * drain; RCU keeps the QP alive until this returns.
 */
static void sroce_skb_uncharge(struct sk_buff *skb)
{
	struct sroce_qp *qp = skb_shinfo(skb)->destructor_arg;
	struct sroce_dev *sdev = qp->sdev;
	int qout, dout;

	rcu_read_lock();
	qout = atomic_dec_return(&qp->skb_out);
	dout = atomic_dec_return(&sdev->skb_out);
	if (unlikely(READ_ONCE(qp->tx_stalled)) && qout <= SROCE_QP_SKB_MAX / 2)
		sroce_tx_wake(sdev, qp);
	if (unlikely(dout <= SROCE_DEV_SKB_MAX / 2 &&
		     !list_empty_careful(&sdev->stalled)))
		sroce_tx_wake(sdev, NULL);
	if (unlikely(!qout && READ_ONCE(qp->dying)))
		wake_up(&qp->skb_wait);
	rcu_read_unlock();
}

static void sroce_skb_tx_dtor(struct sk_buff *skb)
{
	sroce_skb_uncharge(skb);
}

/* A payload by reference (loopback zero copy, drivers/transport/pkt.c)
 * holds its MR, so deregistration waits for the packet, and counts in
 * its QP's zc_out, so the QP reports no failed WQE and does not reset or
 * go away while the peer may still read the pages (sroce_qp_zc_busy).
 */

static void sroce_skb_zc_release(struct sk_buff *skb)
{
	struct sroce_qp *qp = skb_shinfo(skb)->destructor_arg;

	rcu_read_lock();
	sroce_mr_unref(sroce_skb_cb(skb)->zc_mr);
	/* fully ordered: pairs with the barrier in sroce_qp_zc_busy() */
	if (atomic_dec_and_test(&qp->zc_out) && READ_ONCE(qp->zc_wait)) {
		wake_up(&qp->skb_wait);
		sroce_qp_sched(qp);
	}
	rcu_read_unlock();
}

/* Freed before it reached the loopback queue (e.g. a build error). */
static void sroce_skb_zc_tx_dtor(struct sk_buff *skb)
{
	sroce_skb_uncharge(skb);
	sroce_skb_zc_release(skb);
}

/* Once a peer QP queued it: no skb_out charge any more (sroce_loopback). */
static void sroce_skb_zc_dtor(struct sk_buff *skb)
{
	sroce_skb_zc_release(skb);
}

/* The first piece of a payload by reference: hold its MR (the only one). */
void sroce_pkt_zc_hold(struct sk_buff *skb, struct sroce_mr *mr)
{
	struct sroce_qp *qp = skb_shinfo(skb)->destructor_arg;

	refcount_inc(&mr->ref);
	sroce_skb_cb(skb)->zc_mr = mr;
	atomic_inc(&qp->zc_out);
	skb->destructor = sroce_skb_zc_tx_dtor;
}

struct sroce_mr *sroce_pkt_zc_mr(const struct sk_buff *skb)
{
	return skb->destructor == sroce_skb_zc_tx_dtor ?
	       sroce_skb_cb(skb)->zc_mr : NULL;
}

/* May the QP let its consumer have send buffers back outside a normal
 * completion (a failed WQE, a flush, RESET)?  Not while a peer may still
 * read them: the last such packet's destructor schedules the QP again.
 */
bool sroce_qp_zc_busy(struct sroce_qp *qp)
{
	if (likely(!atomic_read(&qp->zc_out))) {
		/* callers hold eng_lock: no other waiter to keep it for */
		if (unlikely(qp->zc_wait))
			WRITE_ONCE(qp->zc_wait, false);
		return false;
	}
	WRITE_ONCE(qp->zc_wait, true);
	/* pairs with atomic_dec_and_test() in sroce_skb_zc_release() */
	smp_mb();
	return atomic_read(&qp->zc_out) != 0;
}

/* RESET and destroy: wait until no peer holds a packet of ours by reference. */
void sroce_qp_zc_drain(struct sroce_qp *qp)
{
	if (!sroce_qp_zc_busy(qp))
		return;
	while (!wait_event_timeout(qp->skb_wait, !atomic_read(&qp->zc_out),
				   10 * HZ))
		pr_warn_ratelimited("sroce: QP %u waits for %d packets a peer still reads\n",
				    qp->qpn, atomic_read(&qp->zc_out));
}

static bool sroce_tx_has_room(struct sroce_qp *qp)
{
	return atomic_read(&qp->skb_out) < SROCE_QP_SKB_MAX &&
	       atomic_read(&qp->sdev->skb_out) < SROCE_DEV_SKB_MAX;
}

/* May the engine transmit another packet?  If not, the QP is parked and
 * the destructor of one of the outstanding skbs queues it again.
 */
bool sroce_tx_room(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	unsigned long flags;

	if (likely(sroce_tx_has_room(qp)))
		return true;
	spin_lock_irqsave(&sdev->stall_lock, flags);
	WRITE_ONCE(qp->tx_stalled, true);
	if (list_empty(&qp->stall_node))
		list_add_tail(&qp->stall_node, &sdev->stalled);
	spin_unlock_irqrestore(&sdev->stall_lock, flags);
	/* pairs with the atomic_dec_return()s in the destructor */
	smp_mb();
	if (sroce_tx_has_room(qp)) {
		sroce_tx_wake(sdev, qp);
		return true;
	}
	sroce_qp_count(qp, SROCE_CNT_TX_STALL);
	return false;
}

struct sk_buff *sroce_pkt_alloc(struct sroce_qp *qp,
				const struct sroce_av *av, u32 bth_len,
				u32 payload_len, u8 **bth)
{
	struct sroce_dev *sdev = qp->sdev;
	struct net_device *ndev = sdev->ndev;
	unsigned int hroom = LL_RESERVED_SPACE(ndev) + SROCE_L3L4_ROOM;
	struct sk_buff *skb;

	skb = sroce_txbuf_skb(hroom + bth_len + payload_len + SROCE_ICRC_BYTES +
			      ndev->needed_tailroom);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, hroom);
	*bth = skb_put(skb, bth_len + payload_len + SROCE_ICRC_BYTES);
	/* a recycled head holds old packets: a driver padding a short frame must find zeros */
	memset(skb_tail_pointer(skb), 0, min_t(int, skb_tailroom(skb), 16));
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = sroce_skb_tx_dtor;
	atomic_inc(&qp->skb_out);
	atomic_inc(&sdev->skb_out);
	skb->protocol = av->net_type == SROCE_NET_TYPE_IPV6 ?
			htons(ETH_P_IPV6) : htons(ETH_P_IP);
	return skb;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(SROCE_ROCEV2_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/* ICRC over IP header .. payload; skb->data at the IP header. */
static void sroce_seal(struct sk_buff *skb, bool ipv6)
{
	u8 *bth = skb_transport_header(skb) + sizeof(struct udphdr);
	u32 tail = skb->len - SROCE_ICRC_BYTES;
	u32 crc;

	crc = sroce_icrc_begin(skb_network_header(skb), ipv6,
			       skb_transport_header(skb), bth);
	crc = sroce_icrc_update(crc, bth + SROCE_BTH_BYTES,
				skb->data + tail - bth - SROCE_BTH_BYTES);
	sroce_icrc_put(skb->data + tail, sroce_icrc_final(crc));
}

/* Our own GID, or another of our GIDs (sroce_route_is_ours): straight
 * into the receive pipeline, which queues it on the peer and hands the
 * peer to the sending pass (sroce_rx_enqueue).
 */
static void sroce_loopback(struct sroce_dev *sdev, struct sk_buff *skb)
{
	/* every packet we send is charged to its QP (sroce_pkt_alloc) */
	struct sroce_qp *from = skb_shinfo(skb)->destructor_arg;
	u32 npkts = sroce_skb_pkts(skb);

	sroce_qp_count_n(from, SROCE_CNT_LOOPBACK, npkts);
	if (npkts > 1)
		sroce_qp_count(from, SROCE_CNT_LOOPBACK_TRAIN);
	/* Uncharge it: a peer that holds it in its (bounded) queue must not
	 * stop us, or two QPs waiting on each other's room would deadlock.
	 * A payload by reference stays counted in zc_out until it is freed.
	 */
	if (skb->destructor == sroce_skb_zc_tx_dtor) {
		sroce_qp_count_n(from, SROCE_CNT_LOOPBACK_ZCOPY, npkts);
		sroce_skb_uncharge(skb);
		skb->destructor = sroce_skb_zc_dtor;
	} else {
		skb_orphan(skb);
	}
	skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	rcu_read_lock();
	sroce_rcv(sdev, skb, from);
	rcu_read_unlock();
}

/* o10-36: a datagram to a multicast group also reaches the QPs of this
 * device attached to it, as an HCA loops it back.  IP's loopback is off on
 * our sockets (see sroce_sock_open): it delivered only when the host had
 * joined the group at the IP level, and would then deliver twice.
 */
static void sroce_mcast_loop(struct sroce_dev *sdev, const struct sroce_av *av,
			     const struct sk_buff *skb)
{
	/* every packet we send is charged to its QP (sroce_pkt_alloc) */
	struct sroce_qp *from = skb_shinfo(skb)->destructor_arg;
	struct sk_buff *c;

	/* most senders have no listener here: no copy, no drop counted */
	if (!sroce_mcast_attached(sdev, &av->dgid))
		return;
	c = skb_copy(skb, GFP_ATOMIC);
	if (!c) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_BACKLOG);
		return;
	}
	skb_pull(c, skb_transport_offset(c) + sizeof(struct udphdr));
	rcu_read_lock();
	sroce_rcv(sdev, c, from);
	rcu_read_unlock();
}

/* Our own address: the packet goes to the loopback queue (sroce_loopback). */
bool sroce_av_is_local(const struct sroce_av *av)
{
	if (av->net_type == SROCE_NET_TYPE_IPV6)
		return ipv6_addr_equal(&av->daddr.v6, &av->saddr.v6);
	return av->daddr.v4.s_addr == av->saddr.v4.s_addr;
}

/* Another address of our netdev: its route (bound to our netdev) goes
 * through lo, where the packet would be refused (lo_rx, drivers/net/udp.c:
 * any local process can send there, so it must not tell us who sent it).
 * It is ours: loop it back as for our own GID.  Another netdev's address
 * is not (over IPv6 its route goes through lo too): only lo_rx lets that in.
 */
static bool sroce_route_is_ours(struct net *net, const struct sroce_av *av,
				const struct dst_entry *dst,
				struct net_device *ndev)
{
	bool ours;

	if (!(dst->dev->flags & IFF_LOOPBACK))
		return false;
	if (av->net_type == SROCE_NET_TYPE_IPV6)
		return IS_ENABLED(CONFIG_IPV6) &&
		       ipv6_chk_addr(net, &av->daddr.v6, ndev, 1);
	rcu_read_lock();
	ours = __ip_dev_find(net, av->daddr.v4.s_addr, false) == ndev;
	rcu_read_unlock();
	return ours;
}

static int sroce_send4(struct sroce_dev *sdev, const struct sroce_av *av,
		       struct dst_cache *dc, u16 sport, struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	bool local = sroce_av_is_local(av);
	struct rtable *rt = NULL;
	struct sock *sk = NULL;
	struct iphdr *iph;
	int err;

	if (!local) {
		struct flowi4 fl = {
			.flowi4_oif = sdev->ndev->ifindex,
			.flowi4_proto = IPPROTO_UDP,
			.daddr = av->daddr.v4.s_addr,
			.saddr = av->saddr.v4.s_addr,
		};
		__be32 saddr;

		rt = dc ? dst_cache_get_ip4(dc, &saddr) : NULL;
		if (!rt) {
			rt = ip_route_output_key(net, &fl);
			if (IS_ERR(rt)) {
				kfree_skb(skb);
				return PTR_ERR(rt);
			}
			if (dc)
				dst_cache_set_ip4(dc, &rt->dst, fl.saddr);
		}
		if (sroce_route_is_ours(net, av, &rt->dst, sdev->ndev)) {
			ip_rt_put(rt);
			rt = NULL;
			local = true;
		}
	}
	sroce_push_udp(skb, sport);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->id = 0;
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit > 1 ? av->hop_limit : 64;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->saddr.v4.s_addr;
	iph->daddr = av->daddr.v4.s_addr;
	ip_send_check(iph);

	/* local delivery never crosses a wire: no ICRC to make or check */
	if (local) {
		sroce_loopback(sdev, skb);
		return 0;
	}
	sroce_seal(skb, false);
	if (ipv4_is_multicast(iph->daddr)) {
		struct socket *sock = sroce_net_sock4(sdev->net);

		sroce_mcast_loop(sdev, av, skb);
		/* its mc_loop is off: IP must not loop it back as well */
		sk = sock ? sock->sk : NULL;
	}
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_dst_set(skb, &rt->dst);
	/* net_xmit_eval() evaluates its argument twice: never pass a call */
	err = ip_local_out(net, sk, skb);
	return net_xmit_eval(err);
}

static int sroce_send6(struct sroce_dev *sdev, const struct sroce_av *av,
		       struct dst_cache *dc, u16 sport, struct sk_buff *skb)
{
	struct net *net = dev_net(sdev->ndev);
	bool local = sroce_av_is_local(av);
	struct socket *sock = sroce_net_sock6(sdev->net);
	struct dst_entry *dst = NULL;
	struct ipv6hdr *ip6h;
	int err;

	if (!IS_ENABLED(CONFIG_IPV6) || !sock) {
		kfree_skb(skb);
		return -EAFNOSUPPORT;
	}
	if (!local) {
		struct flowi6 fl6 = {
			.flowi6_oif = sdev->ndev->ifindex,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = av->daddr.v6,
			.saddr = av->saddr.v6,
		};

		dst = dc ? dst_cache_get_ip6(dc, &fl6.saddr) : NULL;
		if (!dst) {
			dst = ip6_dst_lookup_flow(net, sock->sk, &fl6, NULL);
			if (IS_ERR(dst)) {
				kfree_skb(skb);
				return PTR_ERR(dst);
			}
			if (dc)
				dst_cache_set_ip6(dc, dst, &fl6.saddr);
		}
		if (sroce_route_is_ours(net, av, dst, sdev->ndev)) {
			dst_release(dst);
			dst = NULL;
			local = true;
		}
	}
	sroce_push_udp(skb, sport);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, av->traffic_class,
		     htonl(av->flow_label & 0xfffff));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit > 1 ? av->hop_limit : 64;
	ip6h->saddr = av->saddr.v6;
	ip6h->daddr = av->daddr.v6;

	if (local) {
		sroce_loopback(sdev, skb);
		return 0;
	}
	sroce_seal(skb, true);
	if (ipv6_addr_is_multicast(&ip6h->daddr))
		sroce_mcast_loop(sdev, av, skb);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	skb_dst_set(skb, dst);
	err = ip6_local_out(net, sock->sk, skb);
	return net_xmit_eval(err);
}

/* What an engine pass is transmitting on this CPU while the softirqs its
 * transmit raised run (sroce_pkt_send), or a NULL qp.  The packet it sent
 * to another sroce device of this host (a veth pair into another
 * namespace, lo) is received in that softirq: it may hand its QP to the
 * pass, as loopback does (sroce_rx_enqueue), instead of waking a worker.
 */
struct sroce_xmit {
	struct sroce_qp		*qp;
	const struct sroce_av	*av;
	u32			dqpn;
};

static DEFINE_PER_CPU(struct sroce_xmit, sroce_xmit);

/* The pass that sent @skb (to @dqpn) and runs this softirq, or NULL.
 * Those softirqs also poll NICs and backlogs: any other packet, which no
 * pass of ours sent, goes to its QP's worker.
 */
struct sroce_qp *sroce_rx_runner(const struct sk_buff *skb, u32 dqpn)
{
	const struct sroce_xmit *x;
	const struct sroce_av *av;

	if (!in_serving_softirq())
		return NULL;
	x = this_cpu_ptr(&sroce_xmit);
	if (!x->qp || x->dqpn != dqpn)
		return NULL;
	av = x->av;
	if (av->net_type == SROCE_NET_TYPE_IPV6) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		if (skb->protocol != htons(ETH_P_IPV6) ||
		    !ipv6_addr_equal(&ip6->saddr, &av->saddr.v6) ||
		    !ipv6_addr_equal(&ip6->daddr, &av->daddr.v6))
			return NULL;
	} else {
		const struct iphdr *ip4 = ip_hdr(skb);

		if (skb->protocol != htons(ETH_P_IP) ||
		    ip4->saddr != av->saddr.v4.s_addr ||
		    ip4->daddr != av->daddr.v4.s_addr)
			return NULL;
	}
	return x->qp;
}

/* Consumes skb.  Returns 0 or a negative errno (packet dropped).  @dc caches
 * the route of a connected QP's fixed path; NULL for datagrams.
 */
int sroce_pkt_send(struct sroce_dev *sdev, const struct sroce_av *av,
		   struct dst_cache *dc, u16 sport, struct sk_buff *skb)
{
	/* every packet we send is charged to its QP (sroce_pkt_alloc) */
	struct sroce_qp *qp = skb_shinfo(skb)->destructor_arg;
	u32 dqpn = sroce_bth_dqpn(skb->data), npkts = sroce_skb_pkts(skb);
	int err;

	lockdep_assert_held(&qp->eng_lock);	/* only its engine sends */
	if (trace_sroce_pkt_tx_enabled()) {
		struct sroce_pkt_hdrs h;

		/* skb->data is at the BTH: what the peer will parse */
		if (!sroce_hdrs_parse(skb->data, skb->len, &h))
			sroce_trace_pkts(sdev, &h, sroce_train(skb), skb->len,
					 true);
	}
	if (unlikely(!net_eq(dev_net(sdev->ndev), sdev->net))) {
		/* the netdev left: the device is being unregistered */
		kfree_skb(skb);
		err = -ENETUNREACH;
		goto out;
	}
	/* Engines run in process context: the route cache and xmit want BHs
	 * off.  Preemption stays off until the softirqs run by
	 * local_bh_enable() are over, so that only they see this pass.
	 */
	preempt_disable();
	local_bh_disable();
	if (av->net_type == SROCE_NET_TYPE_IPV6)
		err = sroce_send6(sdev, av, dc, sport, skb);
	else
		err = sroce_send4(sdev, av, dc, sport, skb);
	if (qp->in_pass) {
		struct sroce_xmit *x = this_cpu_ptr(&sroce_xmit);

		x->av = av;
		x->dqpn = dqpn;
		x->qp = qp;
	}
	local_bh_enable();
	this_cpu_ptr(&sroce_xmit)->qp = NULL;
	preempt_enable();
out:
	sroce_qp_count_n(qp, err ? SROCE_CNT_TX_ERR : SROCE_CNT_TX_PKTS, npkts);
	return err;
}
