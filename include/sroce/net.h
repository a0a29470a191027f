/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Network glue internals shared by the files under drivers/net. */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include <linux/net.h>

struct net;

struct socket *sroce_net_sock4(const struct net *net);
struct socket *sroce_net_sock6(const struct net *net);

#endif /* SROCE_NET_H */
