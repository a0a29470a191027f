// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 sockets: UDP 4791 on IPv4 and IPv6 in init_net.  A datagram is
 * handed to the transport's receive pipeline (sroce_rcv) as it arrives.
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
#include "sroce/wire/udp.h"

static struct socket *sroce_sock4;
static struct socket *sroce_sock6;

struct socket *sroce_net_sock6(void)
{
	return sroce_sock6;
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
	sroce_rcv(sdev, skb, NULL);
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
