/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC-32 (IEEE 802.3, reflected) and the RoCEv2 invariant CRC.
 */
#ifndef SROCE_WIRE_ICRC_H
#define SROCE_WIRE_ICRC_H

#include "sroce/wire/types.h"

#define SROCE_IPV4_HDR_BYTES	20
#define SROCE_IPV6_HDR_BYTES	40
#define SROCE_UDP_HDR_BYTES	8

/* zlib convention: sroce_crc32(0, buf, n) == zlib.crc32(buf); chainable. */
u32 sroce_crc32(u32 crc, const void *p, size_t len);

/*
 * Start an ICRC: 8 bytes of 0xff, the masked IP header (IPv4 including
 * options, per IHL; IPv6 fixed header only), the masked UDP header and the
 * masked 12-byte BTH. Input buffers are not modified. The extension
 * headers, payload and pad are then fed with sroce_icrc_update().
 */
u32 sroce_icrc_begin(const u8 *l3, bool ipv6, const u8 *udp, const u8 *bth);

static inline u32 sroce_icrc_update(u32 state, const void *p, size_t len)
{
	return sroce_crc32(state, p, len);
}

/* The state is already the finished CRC value (zlib convention). */
static inline u32 sroce_icrc_final(u32 state)
{
	return state;
}

/*
 * The ICRC goes on the wire least significant byte first (the CRC register
 * is shifted out LSB first), i.e. zlib.crc32(data).to_bytes(4, "little").
 */
static inline void sroce_icrc_put(u8 *p, u32 icrc)
{
	p[0] = (u8)icrc;
	p[1] = (u8)(icrc >> 8);
	p[2] = (u8)(icrc >> 16);
	p[3] = (u8)(icrc >> 24);
}

static inline u32 sroce_icrc_get(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

#endif /* SROCE_WIRE_ICRC_H */
