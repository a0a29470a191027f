// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 sockets: UDP 4791 on IPv4 and IPv6, one pair per network
 * namespace that has a device (init_net's from module load).  A datagram is
 * handed to the transport's receive pipeline (sroce_rcv) as it arrives.
 */
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/udp_tunnel.h>
#include <net/route.h>
#include <net/ipv6.h>
#include <net/addrconf.h>
#include <linux/inetdevice.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "sroce/sroce.h"
#include "sroce/net.h"
#include "sroce/wire/udp.h"

struct sroce_net {
	struct socket	*sock4;
	struct socket	*sock6;		/* NULL when IPv6 is off */
	atomic_t	ndevs;		/* devices whose netdev is here */
};

static unsigned int sroce_net_id __read_mostly;
/* orders socket creation against itself; pernet exit needs no lock */
static DEFINE_MUTEX(sroce_net_lock);
static DECLARE_WAIT_QUEUE_HEAD(sroce_net_wait);

static struct sroce_net *sroce_net(const struct net *net)
{
	return net_generic(net, sroce_net_id);
}

struct socket *sroce_net_sock4(const struct net *net)
{
	return sroce_net(net)->sock4;
}

struct socket *sroce_net_sock6(const struct net *net)
{
	return sroce_net(net)->sock6;
}

/* A datagram to another local address arrives on lo, and one a local
 * process broadcast or multicast comes back looped (PACKET_LOOPBACK), from
 * a sroce device of this host or from any process's UDP socket: nothing
 * tells the two apart, and a forged packet there needs no access to any
 * wire (rdma_rxe drops them all).  Our own multicast never loops through
 * IP (sroce_mcast_loop).  Only root may let them in, e.g. for a packet
 * generator.
 */
static bool sroce_lo_rx;
module_param_named(lo_rx, sroce_lo_rx, bool, 0644);
MODULE_PARM_DESC(lo_rx,
		 "accept RoCEv2 packets that arrive on lo, which any local process can forge (default: no)");

static struct sroce_dev *sroce_rx_dev(struct sk_buff *skb, bool *lo)
{
	struct net_device *ndev = skb->dev;
	bool on_lo = ndev && (ndev->flags & IFF_LOOPBACK);

	*lo = on_lo || skb->pkt_type == PACKET_LOOPBACK;
	/* a packet to another local address arrives on lo */
	if (on_lo && skb->protocol == htons(ETH_P_IP))
		ndev = __ip_dev_find(dev_net(ndev), ip_hdr(skb)->daddr, false);
	else if (on_lo && skb->protocol == htons(ETH_P_IPV6))
		ndev = IS_ENABLED(CONFIG_IPV6) ?
		       ipv6_dev_find(dev_net(ndev), &ipv6_hdr(skb)->daddr, NULL) :
		       NULL;
	return ndev ? sroce_dev_by_netdev(ndev) : NULL;
}

/* RoCEv2 has no broadcast: no GID names one, in the frame or the packet */
static bool sroce_rx_bcast(struct sk_buff *skb)
{
	const struct rtable *rt;

	if (skb->pkt_type == PACKET_BROADCAST)
		return true;
	if (skb->protocol != htons(ETH_P_IP))
		return false;
	rt = skb_rtable(skb);
	return rt && (rt->rt_flags & RTCF_BROADCAST);
}

static int sroce_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_dev *sdev;
	bool lo;

	rcu_read_lock();
	sdev = sroce_rx_dev(skb, &lo);
	if (sdev && lo && !READ_ONCE(sroce_lo_rx)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_LOCAL);
		sdev = NULL;
	}
	if (sdev && sroce_rx_bcast(skb)) {
		sroce_count(sdev, SROCE_CNT_RX_DROP_MALFORMED);
		sdev = NULL;
	}
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

static struct socket *sroce_sock_open(struct net *net, bool ipv6)
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
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	/* our multicast reaches local QPs through sroce_mcast_loop(), once */
	if (ipv6)
		sroce_sk6_mc_loop_off(sock->sk);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static int sroce_net_open(struct net *net, struct sroce_net *sn)
{
	struct socket *s4, *s6 = NULL;

	lockdep_assert_held(&sroce_net_lock);
	if (sn->sock4)
		return 0;
	s4 = sroce_sock_open(net, false);
	if (IS_ERR(s4))
		return PTR_ERR(s4);
	if (IS_ENABLED(CONFIG_IPV6)) {
		s6 = sroce_sock_open(net, true);
		if (IS_ERR(s6)) {
			/* IPv6 may be disabled at boot: run IPv4-only then */
			if (PTR_ERR(s6) != -EAFNOSUPPORT) {
				udp_tunnel_sock_release(s4);
				return PTR_ERR(s6);
			}
			s6 = NULL;
		}
	}
	sn->sock4 = s4;
	sn->sock6 = s6;
	return 0;
}

static void sroce_net_close(struct sroce_net *sn)
{
	if (sn->sock6)
		udp_tunnel_sock_release(sn->sock6);
	if (sn->sock4)
		udp_tunnel_sock_release(sn->sock4);
	sn->sock4 = NULL;
	sn->sock6 = NULL;
}

/* A device on a netdev in @net: that namespace's sockets, opened once. */
int sroce_net_get(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);
	int err;

	mutex_lock(&sroce_net_lock);
	err = sroce_net_open(net, sn);
	if (!err)
		atomic_inc(&sn->ndevs);
	mutex_unlock(&sroce_net_lock);
	if (err == -EADDRINUSE)
		pr_err("sroce: UDP port %d is taken in the netdev's network namespace\n",
		       SROCE_ROCEV2_PORT);
	return err;
}

void sroce_net_put(struct net *net)
{
	if (atomic_dec_and_test(&sroce_net(net)->ndevs))
		wake_up_all(&sroce_net_wait);
}

/* The namespace is going: its netdevs already left it, so each device on
 * one is unregistering (NETDEV_UNREGISTER).  Wait for them: until the last
 * is freed it may still send through this namespace.
 */
static void __net_exit sroce_net_exit_net(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	/* an unregistration that never ends must not hang silently */
	while (!wait_event_timeout(sroce_net_wait, !atomic_read(&sn->ndevs),
				   30 * HZ))
		pr_warn("sroce: network namespace exit still waits for %d device(s) to unregister\n",
			atomic_read(&sn->ndevs));
	sroce_net_close(sn);
}

static struct pernet_operations sroce_net_ops = {
	.exit = sroce_net_exit_net,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

/* init_net's sockets open at load, so a taken port refuses the module. */
int sroce_net_init(void)
{
	int err;

	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		return err;
	mutex_lock(&sroce_net_lock);
	err = sroce_net_open(&init_net, sroce_net(&init_net));
	mutex_unlock(&sroce_net_lock);
	if (err) {
		if (err == -EADDRINUSE)
			pr_err("sroce: UDP port %d is taken (rdma_rxe loaded?): refusing to load\n",
			       SROCE_ROCEV2_PORT);
		unregister_pernet_subsys(&sroce_net_ops);
	}
	return err;
}

/* After every device is gone: closes each namespace's sockets. */
void sroce_net_exit(void)
{
	unregister_pernet_subsys(&sroce_net_ops);
}
