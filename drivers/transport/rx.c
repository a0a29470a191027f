// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive pipeline: check a RoCEv2 packet (length, headers, ICRC, P_Key),
 * find its QP and queue it for that QP's engine.  Runs in softirq, or in
 * the sending QP's pass for loopback (whose hand-off slot it fills:
 * sroce_rx_enqueue), so it does a bounded amount of work per packet and
 * never touches the receiving QP's transport state.
 */
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>

#include "sroce/transport.h"
#include "sroce/wire/icrc.h"
#include "sroce/trace.h"

/* CRC over a possibly non-linear skb range without copying it. */
static u32 sroce_skb_icrc_update(const struct sk_buff *skb, u32 off, u32 len,
				 u32 crc)
{
	struct skb_seq_state st;
	const u8 *data;
	u32 consumed = 0, n;

	if (!skb_is_nonlinear(skb))
		return sroce_icrc_update(crc, skb->data + off, len);

	skb_prepare_seq_read((struct sk_buff *)skb, off, off + len, &st);
	while (consumed < len && (n = skb_seq_read(consumed, &data, &st))) {
		/* a chunk may run past the upper offset (into the ICRC) */
		n = min(n, len - consumed);
		crc = sroce_icrc_update(crc, data, n);
		consumed += n;
	}
	if (consumed >= len)
		skb_abort_seq_read(&st);
	return crc;
}

/*
 * ICRC check: covers IP header .. end of payload, with the variant fields
 * masked.  skb->data is at BTH; the network header is set.
 */
static bool sroce_icrc_ok(struct sk_buff *skb, u32 pkt_len, bool ipv6)
{
	const u8 *l3 = skb_network_header(skb);
	const u8 *udp = skb_transport_header(skb);
	u8 icrc_wire[4];
	u32 crc;

	crc = sroce_icrc_begin(l3, ipv6, udp, skb->data);
	crc = sroce_skb_icrc_update(skb, SROCE_BTH_BYTES,
				    pkt_len - SROCE_BTH_BYTES - SROCE_ICRC_BYTES,
				    crc);
	if (skb_copy_bits(skb, pkt_len - SROCE_ICRC_BYTES, icrc_wire, 4))
		return false;
	return sroce_icrc_final(crc) == sroce_icrc_get(icrc_wire);
}

static bool sroce_pkey_match(u16 a, u16 b)
{
	/* 15-bit key must match and at least one side must be a full member */
	return ((a ^ b) & 0x7fff) == 0 && ((a | b) & 0x8000);
}

static bool sroce_transport_matches(const struct sroce_qp *qp, u32 mask)
{
	switch (qp->type) {
	case IB_QPT_RC:
		return mask & SROCE_M_RC;
	case IB_QPT_UC:
		return mask & SROCE_M_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return mask & SROCE_M_UD;
	default:
		return false;
	}
}

/*
 * Hand a packet to its QP's engine; the queue is bounded, RC recovers.
 * @from: the QP whose engine pass is delivering it, here and now, or
 * NULL: the loopback sender, or the pass that sent it to another device
 * of this host and whose transmit runs this softirq (sroce_rx_runner).
 * That pass runs @qp's engine itself once it is done (sroce_engine_chain),
 * which saves a worker wakeup per hop, or, when @qp is @from, another
 * pass under the same hold.  With no such pass, @here asks for
 * the worker on this CPU (sroce_qp_sched_here).
 */
static void sroce_rx_enqueue(struct sroce_qp *qp, struct sk_buff *skb,
			     bool req, struct sroce_qp *from, bool here)
{
	struct sk_buff_head *q = req ? &qp->req_rxq : &qp->resp_rxq;

	if (unlikely(skb_queue_len(q) >= sroce_rxq_cap(qp))) {
		sroce_qp_count_n(qp, SROCE_CNT_RX_DROP_BACKLOG,
				 sroce_skb_pkts(skb));
		kfree_skb(skb);
		return;
	}
	/* the route may be RCU-only: the packet outlives this softirq */
	skb_dst_drop(skb);
	skb_queue_tail(q, skb);
	if (from && from->in_pass) {
		sroce_assert_engine(from);
		if (from == qp) {
			/* a QP connected to itself: the holding pass goes round */
			set_bit(SROCE_QPEV_KICK, &qp->events);
			return;
		}
		if (from->handoff == qp)
			return;
		if (!from->handoff) {
			refcount_inc(&qp->ref);
			from->handoff = qp;
			return;
		}
	}
	if (here)
		sroce_qp_sched_here(qp);
	else
		sroce_qp_sched(qp);
}

/* A UD datagram to a multicast GID goes to every QP attached to it. */
static void sroce_rcv_mcast(struct sroce_dev *sdev, struct sk_buff *skb,
			    const union ib_gid *mgid, u32 mask,
			    struct sroce_qp *from)
{
	struct sroce_qp *qps[SROCE_MAX_MCAST_QP_ATTACH];
	int i, n;

	if (!(mask & SROCE_M_UD)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_OPCODE);
		kfree_skb(skb);
		return;
	}
	n = sroce_mcast_qps(sdev, mgid, qps, ARRAY_SIZE(qps));
	if (!n)
		sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP);
	/* IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: not back to its sender */
	if (from && from->block_mc_loop) {
		for (i = 0; i < n && qps[i] != from; i++)
			;
		if (i < n) {
			sroce_qp_put(qps[i]);
			qps[i] = qps[--n];
		}
	}
	for (i = 0; i < n; i++) {
		struct sk_buff *c = i == n - 1 ? skb : skb_clone(skb, GFP_ATOMIC);

		if (c)
			sroce_rx_enqueue(qps[i], c, true, from, false);
		sroce_qp_put(qps[i]);
	}
	if (!n)
		kfree_skb(skb);
}

static bool sroce_pkt_to_mcast(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr);
	return ipv4_is_multicast(ip_hdr(skb)->daddr);
}

static void sroce_pkt_gids(struct sk_buff *skb, union ib_gid *sgid,
			   union ib_gid *dgid)
{
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		memcpy(sgid->raw, &ip6->saddr, 16);
		memcpy(dgid->raw, &ip6->daddr, 16);
	} else {
		const struct iphdr *ip4 = ip_hdr(skb);

		ipv6_addr_set_v4mapped(ip4->saddr, (struct in6_addr *)sgid->raw);
		ipv6_addr_set_v4mapped(ip4->daddr, (struct in6_addr *)dgid->raw);
	}
}

/* Why a parsed packet was dropped, for `module sroce +p` (rate-limited). */
static void sroce_rx_dbg(struct sroce_dev *sdev, const char *why,
			 const struct sroce_pkt_hdrs *h)
{
	ibdev_dbg_ratelimited(&sdev->ib_dev,
			      "drop (%s): opcode %#x dqpn %#x psn %#x pkey %#x\n",
			      why, h->bth.opcode, h->bth.dqpn, h->bth.psn,
			      h->bth.pkey);
}

/*
 * Make the BTH and the headers its opcode has linear, and no more: pulling
 * a fixed maximum would move payload out of a fragment into the head on
 * every packet.  False if the packet is too short to hold them.
 */
static bool sroce_rx_pull_hdrs(struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;

	if (!pskb_may_pull(skb, SROCE_BTH_BYTES))
		return false;
	info = sroce_opcode_info(skb->data[0]);
	return !info || pskb_may_pull(skb, info->hdr_len);
}

/*
 * Process one RoCEv2 packet; skb->data at BTH, network and transport
 * headers set, called under rcu_read_lock.  @from: the sending QP when it
 * came from our own transmit path (loopback: no ICRC), else NULL.  Always
 * consumes the skb.
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
	       struct sroce_qp *from)
{
	struct sroce_train *t = sroce_train(skb);
	struct sroce_pkt_hdrs h;
	u32 len = skb->len, npkts;
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	union ib_gid sgid, dgid;
	struct sroce_qp *qp;
	int err;

	/* only our own transmit makes trains; a NIC's skb->cb is the stack's */
	if (!from)
		memset(t, 0, sizeof(*t));
	npkts = sroce_skb_pkts(skb);
	if (len < SROCE_BTH_BYTES + SROCE_ICRC_BYTES || !sroce_rx_pull_hdrs(skb)) {
		sroce_count_n(sdev, SROCE_CNT_RX_DROP_MALFORMED, npkts);
		goto drop;
	}
	err = sroce_hdrs_parse(skb->data, len, &h);
	if (err || (npkts > 1 && !sroce_train_ok(t, &h))) {
		sroce_count_n(sdev, err == -SROCE_DROP_UNKNOWN_OPCODE ?
				  SROCE_CNT_RX_DROP_OPCODE :
				  SROCE_CNT_RX_DROP_MALFORMED, npkts);
		goto drop;
	}
	if (trace_sroce_pkt_rx_enabled())
		sroce_trace_pkts(sdev, &h, t, len, false);
	if (!from && !sroce_icrc_ok(skb, len, ipv6)) {
		sroce_count_n(sdev, SROCE_CNT_RX_DROP_ICRC, npkts);
		sroce_rx_dbg(sdev, "ICRC error", &h);
		goto drop;
	}
	if (!sroce_pkey_match(h.bth.pkey, SROCE_PKEY_DEFAULT)) {
		sroce_count_n(sdev, SROCE_CNT_RX_DROP_PKEY, npkts);
		sroce_rx_dbg(sdev, "P_Key mismatch", &h);
		goto drop;
	}
	if (h.bth.dqpn == SROCE_MCAST_QPN) {
		sroce_count_n(sdev, SROCE_CNT_RX_PKTS, npkts);
		sroce_pkt_gids(skb, &sgid, &dgid);
		sroce_rcv_mcast(sdev, skb, &dgid, h.info->mask,
				from ?: sroce_rx_runner(skb, h.bth.dqpn));
		return;
	}
	/* o10-35: to a multicast GID only the multicast QPN is valid */
	if (sroce_pkt_to_mcast(skb)) {
		sroce_count_n(sdev, SROCE_CNT_RX_DROP_NO_QP, npkts);
		goto drop;
	}
	qp = sroce_qp_get(sdev, h.bth.dqpn);
	if (!qp) {
		sroce_count_n(sdev, SROCE_CNT_RX_DROP_NO_QP, npkts);
		sroce_rx_dbg(sdev, "no such QP", &h);
		goto drop;
	}
	if (!sroce_transport_matches(qp, h.info->mask)) {
		sroce_count_n(sdev, SROCE_CNT_RX_DROP_OPCODE, npkts);
		sroce_qp_put(qp);
		goto drop;
	}
	/*
	 * Every QP of the device shares its GID, so for loopback the engine's
	 * peer check cannot tell our peer from another local QP: the QPN can.
	 * (A forged ACK could complete a WQE whose payload the peer has yet
	 * to read by reference.)  A QP before RTR takes nothing, and has no
	 * peer yet (Reset clears it).
	 */
	if (from && (qp->type == IB_QPT_RC || qp->type == IB_QPT_UC)) {
		bool early = READ_ONCE(qp->state) < IB_QPS_RTR;

		if (early || from->qpn != READ_ONCE(qp->dest_qpn)) {
			sroce_qp_count_n(qp, early ? SROCE_CNT_RX_DROP_QP_STATE :
					 SROCE_CNT_RX_DROP_PEER, npkts);
			sroce_qp_put(qp);
			goto drop;
		}
	}
	/* counted once: on its QP (which may be bound to a counter) or here */
	sroce_qp_count_n(qp, SROCE_CNT_RX_PKTS, npkts);
	if (!from)
		from = sroce_rx_runner(skb, h.bth.dqpn);
	/*
	 * From a NIC: what ends a message (or acknowledges) is what a peer
	 * waits for; a stream's earlier packets keep to the QP's CPU, so that
	 * this softirq overlaps with its passes there.
	 */
	sroce_rx_enqueue(qp, skb, h.info->mask & SROCE_M_REQ, from,
			 !from && (h.info->mask & (SROCE_M_LAST | SROCE_M_ACK)));
	sroce_qp_put(qp);
	return;
drop:
	sroce_count_n(sdev, SROCE_CNT_RX_PKTS, npkts);
	kfree_skb(skb);
}

/*
 * In the engine: parse a queued packet again (it passed sroce_rcv, so this
 * only fails if it was corrupted in between, which it cannot be).
 */
int sroce_pkt_init(struct sroce_pkt *pkt, struct sroce_qp *qp,
		   struct sk_buff *skb)
{
	int err;

	pkt->sdev = qp->sdev;
	pkt->qp = qp;
	pkt->skb = skb;
	pkt->dropped = false;
	err = sroce_hdrs_parse(skb->data, skb->len, &pkt->h);
	if (err)
		return err;
	pkt->payload_off = pkt->h.hdr_len;
	pkt->net_type = skb->protocol == htons(ETH_P_IPV6) ?
			SROCE_NET_TYPE_IPV6 : SROCE_NET_TYPE_IPV4;
	sroce_pkt_gids(skb, &pkt->sgid, &pkt->dgid);
	return 0;
}
