/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RoCEv2 UDP encapsulation constants.
 */
#ifndef SROCE_WIRE_UDP_H
#define SROCE_WIRE_UDP_H

#include "sroce/wire/types.h"

#define SROCE_ROCEV2_PORT	4791
#define SROCE_UDP_SPORT_MIN	0xc000

/*
 * Source port from the QP pair so each connection hashes to one ECMP path
 * while different connections spread; always in 0xc000..0xffff.
 */
static inline u16 sroce_udp_sport(u32 lqpn, u32 rqpn)
{
	u32 h = (lqpn & 0xffffff) * 0x9e3779b1u;

	h ^= (rqpn & 0xffffff) * 0x85ebca77u;
	h ^= h >> 15;
	h *= 0xc2b2ae3du;
	h ^= h >> 13;
	h ^= h >> 16;
	return (u16)(SROCE_UDP_SPORT_MIN | (h & 0x3fff));
}

#endif /* SROCE_WIRE_UDP_H */
