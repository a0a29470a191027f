/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AETH syndrome encoding: bit 7 reserved, bits 6:5 type, bits 4:0 value
 * (credit count for ACK, timer code for RNR NAK, NAK code for NAK).
 */
#ifndef SROCE_WIRE_AETH_H
#define SROCE_WIRE_AETH_H

#include "sroce/wire/types.h"

#define SROCE_AETH_TYPE_MASK	0x60
#define SROCE_AETH_VALUE_MASK	0x1f

enum sroce_aeth_type {
	SROCE_AETH_ACK		= 0x00,
	SROCE_AETH_RNR_NAK	= 0x20,
	SROCE_AETH_RSVD		= 0x40,
	SROCE_AETH_NAK		= 0x60,
};

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR		= 0,
	SROCE_NAK_INVALID_REQ		= 1,
	SROCE_NAK_REM_ACCESS_ERR	= 2,
	SROCE_NAK_REM_OP_ERR		= 3,
	SROCE_NAK_INVALID_RD_REQ	= 4,
};

/* Credit code meaning "no end-to-end credits advertised". */
#define SROCE_AETH_CREDIT_INVALID	0x1f

static inline u8 sroce_aeth_syn(u8 type, u8 value)
{
	return (u8)((type & SROCE_AETH_TYPE_MASK) |
		    (value & SROCE_AETH_VALUE_MASK));
}

static inline u8 sroce_aeth_syn_ack(u8 credit_code)
{
	return sroce_aeth_syn(SROCE_AETH_ACK, credit_code);
}

static inline u8 sroce_aeth_syn_rnr(u8 timer_code)
{
	return sroce_aeth_syn(SROCE_AETH_RNR_NAK, timer_code);
}

static inline u8 sroce_aeth_syn_nak(u8 nak_code)
{
	return sroce_aeth_syn(SROCE_AETH_NAK, nak_code);
}

static inline u8 sroce_aeth_type(u8 syndrome)
{
	return syndrome & SROCE_AETH_TYPE_MASK;
}

static inline u8 sroce_aeth_value(u8 syndrome)
{
	return syndrome & SROCE_AETH_VALUE_MASK;
}

static inline bool sroce_aeth_is_ack(u8 syndrome)
{
	return sroce_aeth_type(syndrome) == SROCE_AETH_ACK;
}

static inline bool sroce_aeth_is_rnr(u8 syndrome)
{
	return sroce_aeth_type(syndrome) == SROCE_AETH_RNR_NAK;
}

static inline bool sroce_aeth_is_nak(u8 syndrome)
{
	return sroce_aeth_type(syndrome) == SROCE_AETH_NAK;
}

/* IBA RNR NAK timer encoding: 5-bit code -> microseconds (0 is the max). */
static inline u32 sroce_rnr_timer_us(u8 code)
{
	static const u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return us[code & SROCE_AETH_VALUE_MASK];
}

/* Smallest code whose timer is >= @usec (code 0, 655.36 ms, if none). */
static inline u8 sroce_rnr_timer_code(u32 usec)
{
	u8 c;

	for (c = 1; c < 32; c++)
		if (sroce_rnr_timer_us(c) >= usec)
			return c;
	return 0;
}

/*
 * IBA credit count encoding: 5-bit code -> credits. Returns -1 for
 * SROCE_AETH_CREDIT_INVALID (credits not used / unlimited).
 */
static inline int sroce_aeth_credits(u8 code)
{
	static const u16 credits[31] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768,
	};

	code &= SROCE_AETH_VALUE_MASK;
	if (code == SROCE_AETH_CREDIT_INVALID)
		return -1;
	return credits[code];
}

/* Largest code advertising no more than @n credits. */
static inline u8 sroce_aeth_credit_code(u32 n)
{
	u8 c = 0;

	while (c + 1 < SROCE_AETH_CREDIT_INVALID &&
	       (u32)sroce_aeth_credits(c + 1) <= n)
		c++;
	return c;
}

#endif /* SROCE_WIRE_AETH_H */
