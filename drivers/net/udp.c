// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 sockets: UDP 4791 on IPv4 and IPv6 in init_net, and the receive
 * entry point that turns a datagram into a parsed sroce_pkt.
 */
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/udp_tunnel.h>
#include <net/ipv6.h>
#include <net/addrconf.h>
#include <linux/inetdevice.h>

#include "sroce/sroce.h"
#include "sroce/net.h"
#include "sroce/wire/icrc.h"
#include "sroce/wire/udp.h"

static struct socket *sroce_sock4;
static struct socket *sroce_sock6;

struct socket *sroce_net_sock6(void)
{
	return sroce_sock6;
}

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

/* ICRC check: covers IP header .. end of payload, with the variant fields
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

/* A UD datagram to a multicast GID goes to every QP attached to it. */
static void sroce_rcv_mcast(struct sroce_pkt *pkt)
{
	struct sroce_qp *qps[SROCE_MAX_MCAST_QP_ATTACH];
	int i, n;

	if (!(pkt->h.info->mask & SROCE_M_UD)) {
		sroce_count(pkt->sdev, SROCE_CNT_RX_DROP_OPCODE);
		return;
	}
	n = sroce_mcast_qps(pkt->sdev, &pkt->dgid, qps, ARRAY_SIZE(qps));
	if (!n)
		sroce_count(pkt->sdev, SROCE_CNT_RX_DROP_NO_QP);
	for (i = 0; i < n; i++) {
		pkt->qp = qps[i];
		sroce_resp_rcv(pkt);
		sroce_qp_put(qps[i]);
	}
}

/* Process one RoCEv2 packet; skb->data at BTH, network and transport
 * headers set.  @local: it came from our own loopback queue, so it carries
 * no ICRC.  Always consumes the skb.
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb, bool local)
{
	struct sroce_pkt pkt = { .sdev = sdev, .skb = skb };
	u32 len = skb->len, hlen, mask;
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	struct sroce_qp *qp;
	int err;

	sroce_count(sdev, SROCE_CNT_RX_PKTS);
	hlen = min_t(u32, len, SROCE_MAX_HDR_BYTES);
	if (len < SROCE_BTH_BYTES + SROCE_ICRC_BYTES || !pskb_may_pull(skb, hlen)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		goto drop;
	}
	err = sroce_hdrs_parse(skb->data, len, &pkt.h);
	if (err) {
		sroce_count(sdev, err == -SROCE_DROP_UNKNOWN_OPCODE ?
				  SROCE_CNT_RX_DROP_OPCODE :
				  SROCE_CNT_RX_DROP_MALFORMED);
		goto drop;
	}
	if (!local && !sroce_icrc_ok(skb, len, ipv6)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_ICRC);
		goto drop;
	}
	if (!sroce_pkey_match(pkt.h.bth.pkey, SROCE_PKEY_DEFAULT)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_PKEY);
		goto drop;
	}
	mask = pkt.h.info->mask;
	pkt.payload_off = pkt.h.hdr_len;
	pkt.net_type = ipv6 ? SROCE_NET_TYPE_IPV6 : SROCE_NET_TYPE_IPV4;
	if (ipv6) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		memcpy(pkt.sgid.raw, &ip6->saddr, 16);
		memcpy(pkt.dgid.raw, &ip6->daddr, 16);
	} else {
		const struct iphdr *ip4 = ip_hdr(skb);

		ipv6_addr_set_v4mapped(ip4->saddr,
				       (struct in6_addr *)pkt.sgid.raw);
		ipv6_addr_set_v4mapped(ip4->daddr,
				       (struct in6_addr *)pkt.dgid.raw);
	}

	if (pkt.h.bth.dqpn == SROCE_MCAST_QPN) {
		sroce_rcv_mcast(&pkt);
		goto drop;
	}
	qp = sroce_qp_get(sdev, pkt.h.bth.dqpn);
	if (!qp) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_NO_QP);
		goto drop;
	}
	pkt.qp = qp;
	if (!sroce_transport_matches(qp, mask)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_OPCODE);
		goto put;
	}
	if (mask & SROCE_M_REQ)
		sroce_resp_rcv(&pkt);
	else
		sroce_comp_rcv(&pkt);
put:
	sroce_qp_put(qp);
drop:
	kfree_skb(skb);
}

static struct sroce_dev *sroce_rx_dev(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;

	/* a packet to another local address arrives on lo */
	if (ndev && (ndev->flags & IFF_LOOPBACK) &&
	    skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(dev_net(ndev), ip_hdr(skb)->daddr, false);
	return ndev ? sroce_dev_by_netdev(ndev) : NULL;
}

static int sroce_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;

	rcu_read_lock();
	sdev = sroce_rx_dev(skb);
	if (!sdev || !pskb_may_pull(skb, sizeof(struct udphdr))) {
		rcu_read_unlock();
		kfree_skb(skb);
		return 0;
	}
	skb_pull(skb, sizeof(struct udphdr));
	sroce_rcv(sdev, skb, false);
	rcu_read_unlock();
	return 0;
}

static struct socket *sroce_sock_open(bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = sroce_encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(SROCE_ROCEV2_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
		/* RoCEv2 senders, rxe among them, leave the UDP checksum zero */
		cfg.use_udp6_rx_checksums = 0;
	} else {
		cfg.family = AF_INET;
	}
	err = udp_sock_create(&init_net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(&init_net, sock, &tcfg);
	return sock;
}

int sroce_net_init(void)
{
	struct socket *s4, *s6;

	s4 = sroce_sock_open(false);
	if (IS_ERR(s4)) {
		if (PTR_ERR(s4) == -EADDRINUSE)
			pr_err("sroce: UDP port %d is taken (rdma_rxe loaded?): refusing to load\n",
			       SROCE_ROCEV2_PORT);
		return PTR_ERR(s4);
	}
	s6 = NULL;
	if (IS_ENABLED(CONFIG_IPV6)) {
		s6 = sroce_sock_open(true);
		if (IS_ERR(s6)) {
			/* IPv6 may be disabled at boot: run IPv4-only then */
			if (PTR_ERR(s6) != -EAFNOSUPPORT) {
				udp_tunnel_sock_release(s4);
				return PTR_ERR(s6);
			}
			s6 = NULL;
		}
	}
	sroce_sock4 = s4;
	sroce_sock6 = s6;
	return 0;
}

void sroce_net_exit(void)
{
	if (sroce_sock6)
		udp_tunnel_sock_release(sroce_sock6);
	if (sroce_sock4)
		udp_tunnel_sock_release(sroce_sock4);
	sroce_sock4 = NULL;
	sroce_sock6 = NULL;
}
