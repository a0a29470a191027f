// SPDX-License-Identifier: GPL-2.0
/*
 * CRC-32 and RoCEv2 ICRC header masking.  In the kernel the CRC is the
 * kernel's own (accelerated) crc32_le; the slice-by-8 table is only for
 * the host build of the codec.
 */
#include "sroce/wire/icrc.h"
#include "sroce/wire/opcode.h"

#ifdef __KERNEL__
#include <linux/crc32.h>

u32 sroce_crc32(u32 crc, const void *buf, size_t len)
{
	return ~crc32_le(~crc, buf, len);
}
#else
#include "crc32_table.h"

static inline u32 sroce_get_le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

u32 sroce_crc32(u32 crc, const void *buf, size_t len)
{
	const u32 (*t)[256] = sroce_crc32_tab;
	const u8 *p = buf;

	crc = ~crc;
	while (len >= 8) {
		u32 lo = crc ^ sroce_get_le32(p);
		u32 hi = sroce_get_le32(p + 4);

		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		      t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
#endif

/*
 * Fields that routers may rewrite are replaced by ones so the CRC stays
 * invariant end to end: IPv4 TOS/TTL/checksum, IPv6 traffic class/flow
 * label/hop limit, UDP checksum and the BTH byte holding FECN/BECN.
 */
u32 sroce_icrc_begin(const u8 *l3, bool ipv6, const u8 *udp, const u8 *bth)
{
	static const u8 ones[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};
	u8 buf[SROCE_IPV6_HDR_BYTES + SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES];
	u32 crc;

	crc = sroce_crc32(0, ones, sizeof(ones));

	if (ipv6) {
		memcpy(buf, l3, SROCE_IPV6_HDR_BYTES);
		buf[0] |= 0x0f;		/* keep version nibble */
		buf[1] = 0xff;
		buf[2] = 0xff;
		buf[3] = 0xff;
		buf[7] = 0xff;		/* hop limit */
		crc = sroce_crc32(crc, buf, SROCE_IPV6_HDR_BYTES);
	} else {
		u32 ihl = (u32)(l3[0] & 0x0f) * 4;

		memcpy(buf, l3, SROCE_IPV4_HDR_BYTES);
		buf[1] = 0xff;		/* TOS */
		buf[8] = 0xff;		/* TTL */
		buf[10] = 0xff;		/* header checksum */
		buf[11] = 0xff;
		crc = sroce_crc32(crc, buf, SROCE_IPV4_HDR_BYTES);
		if (ihl > SROCE_IPV4_HDR_BYTES)
			crc = sroce_crc32(crc, l3 + SROCE_IPV4_HDR_BYTES,
					  ihl - SROCE_IPV4_HDR_BYTES);
	}

	memcpy(buf, udp, SROCE_UDP_HDR_BYTES);
	buf[6] = 0xff;			/* checksum */
	buf[7] = 0xff;
	memcpy(buf + SROCE_UDP_HDR_BYTES, bth, SROCE_BTH_BYTES);
	buf[SROCE_UDP_HDR_BYTES + 4] = 0xff;	/* FECN, BECN, resv6 */
	return sroce_crc32(crc, buf, SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES);
}
